"""The optimizer implementation sets the step's temporaries: foreach a full copy, per-tensor the largest, fused none."""

from __future__ import annotations

from dataclasses import replace

import pytest
from flask.testing import FlaskClient
from sizing_fixtures import training

from catalog.gpus import gpus_by_slug
from workers.sizing import walk_arrays
from workers.sizing.allocator import FREE
from workers.sizing.memory import step_peak
from workers.sizing.overheads import MASTER_WEIGHT_BYTES, largest_tensor
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Dataset, JobSpec, Optimizer, OptimizerImplementation, Precision
from workers.sizing.step_trace import Trace
from workers.sizing.step_walk import Phase, peak_moment, walk_step
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.types import DataParallel
from workers.sizing.walk_arrays import step_peak_moment

FOREACH, PER_TENSOR, FUSED = (OptimizerImplementation.FOREACH, OptimizerImplementation.PER_TENSOR,
                              OptimizerImplementation.FUSED)


def _step_moment(optimizer: Optimizer, implementation: OptimizerImplementation) -> int:
    model = preset_stats("bert-large", sequence_length=512)
    job = training(batch_size=1, optimizer=optimizer, optimizer_implementation=implementation)
    moments = walk_step(model, job, precision=Precision.FP32)
    assert moments[-1].phase is Phase.OPTIMIZER_STEP
    return moments[-1].optimizer_state


def test_a_fused_adam_step_holds_one_fp32_copy_of_the_trainable_parameters_less_than_foreach() -> None:
    model = preset_stats("bert-large", sequence_length=512)
    for optimizer in (Optimizer.ADAM, Optimizer.ADAMW):
        gap = _step_moment(optimizer, FOREACH) - _step_moment(optimizer, FUSED)
        assert gap == model.parameters * MASTER_WEIGHT_BYTES


def test_a_per_tensor_adam_step_holds_copies_of_the_largest_tensor_only() -> None:
    model = preset_stats("bert-large", sequence_length=512)
    largest = largest_tensor(model)
    assert 0 < largest < model.parameters / 10  # BERT-large's word embeddings, 31M of 335M
    per_tensor = _step_moment(Optimizer.ADAMW, PER_TENSOR) - _step_moment(Optimizer.ADAMW, FUSED)
    assert per_tensor == 2 * largest * MASTER_WEIGHT_BYTES  # sqrt and quotient of torch's single-tensor path


def test_sgd_and_momentum_update_in_place_whatever_the_implementation() -> None:
    for optimizer in (Optimizer.SGD, Optimizer.MOMENTUM):
        assert {_step_moment(optimizer, implementation) for implementation in OptimizerImplementation} == {
            _step_moment(optimizer, FOREACH)}


def test_the_replayed_step_allocates_the_temporaries_each_implementation_makes() -> None:
    model = preset_stats("bert-base", sequence_length=128)

    def temporaries(implementation: OptimizerImplementation) -> tuple[int, int]:
        """Return (temporary allocations, the most bytes of them alive at once)."""
        trace = Trace()
        walk_step(model, training(batch_size=2, optimizer=Optimizer.ADAM, optimizer_implementation=implementation),
                  precision=Precision.FP32, trace=trace)
        alive: dict[object, int] = {}
        count = most = 0
        for key, size in trace.events:
            if not (isinstance(key, tuple) and key[0] == "temp"):
                continue
            if size == FREE:
                alive.pop(key, None)
            else:
                alive[key], count = size, count + 1
                most = max(most, sum(alive.values()))
        return count, most

    foreach, per_tensor, fused = (temporaries(i) for i in (FOREACH, PER_TENSOR, FUSED))
    assert fused == (0, 0)
    assert foreach[1] == pytest.approx(model.parameters * 4, abs=len(model.layers))
    assert per_tensor[1] == pytest.approx(2 * largest_tensor(model) * 4, abs=2)
    assert per_tensor[0] == 2 * foreach[0]  # two copies a row, each freed before the next row's


def test_the_arrays_walk_takes_the_implementation_as_the_walk_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk_arrays, "ARRAY_ROWS", 0)
    monkeypatch.setattr(walk_arrays, "IMPORT_ROWS", 0)
    model = preset_stats("gpt2", sequence_length=256)
    for implementation in OptimizerImplementation:
        job = training(batch_size=1, optimizer=Optimizer.ADAMW, optimizer_implementation=implementation)
        assert step_peak_moment(model, job, precision=Precision.BF16_MIXED) == peak_moment(
            walk_step(model, job, precision=Precision.BF16_MIXED))


def test_a_job_peaking_at_the_step_peaks_lower_and_earlier_with_a_fused_optimizer() -> None:
    model = preset_stats("bert-large", sequence_length=512)
    job = training(batch_size=1, recompute=True, optimizer=Optimizer.ADAMW)
    gpu = gpus_by_slug()["v100-16gb"]
    foreach = step_peak(model, job, gpu=gpu)
    fused = step_peak(model, replace(job, optimizer_implementation=FUSED), gpu=gpu)
    assert foreach.phase is Phase.OPTIMIZER_STEP
    assert fused.breakdown.optimizer_state_bytes < foreach.breakdown.optimizer_state_bytes
    assert fused.breakdown.total_bytes < foreach.breakdown.total_bytes


def test_a_sharded_layout_drops_its_shards_temporaries_with_a_fused_optimizer() -> None:
    model = preset_stats("llama-7b", sequence_length=512)
    gpu = gpus_by_slug()["a100-80gb"]
    layout = Layout(DataParallel.ZERO1, gpu_count=8, gpus_per_node=8)

    def peak(implementation: OptimizerImplementation) -> tuple[str, int, int]:
        job = JobSpec(model, training(batch_size=1, precision=Precision.BF16_MIXED, optimizer=Optimizer.ADAMW,
                                      optimizer_implementation=implementation), Dataset(samples=1000))
        memory = layout_memory(job, layout, gpu=gpu, batch_size=1)
        return memory.peak_phase, memory.breakdown.optimizer_state_bytes, memory.breakdown.total_bytes

    foreach, per_tensor, fused = (peak(i) for i in (FOREACH, PER_TENSOR, FUSED))
    assert foreach[0] == per_tensor[0] == "optimizer_step"
    # the state term is the sharded state, plus the temporaries where the step is the peak
    assert foreach[1] - fused[1] == pytest.approx(model.parameters * 4 / 8, rel=0.01)
    assert per_tensor[1] - fused[1] == pytest.approx(2 * largest_tensor(model) * 4, rel=0.01)
    assert fused[2] < per_tensor[2] < foreach[2]


def test_an_unknown_optimizer_implementation_is_422_naming_it(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "bert-base"}, "training": {"batch_size": 8, "sequence_length": 128,
                                                           "optimizer_implementation": "apex"}}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "training.optimizer_implementation" in answer.get_json()["errors"]
    spec["training"]["optimizer_implementation"] = "fused"  # type: ignore[index]
    assert embedded_client.post("/v1/estimate", json=spec).status_code == 200
