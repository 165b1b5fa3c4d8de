"""The strategy layouts go through the step walk: plain layouts equal the estimate, frozen weights count once."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.gpus import gpus_by_slug
from workers.sizing.memory import step_peak
from workers.sizing.overheads import MASTER_WEIGHT_BYTES, OPTIMIZER_STATE_BYTES, OPTIMIZER_TEMPORARY_BYTES
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Dataset, JobSpec, Optimizer, Precision, Training
from workers.sizing.strategies.footprint import layout_memory, parameter_counts, searched_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel

GPU = gpus_by_slug()["a100-80gb"]


@pytest.mark.parametrize(("preset", "precision", "gpus"), [
    ("gpt2", Precision.BF16_MIXED, 1), ("resnet50", Precision.FP32, 4), ("dqn-atari", Precision.FP32, 1)])
def test_a_plain_layout_is_the_walk_of_the_job_as_given(preset: str, precision: Precision, gpus: int) -> None:
    model = preset_stats(preset)
    training = Training(batch_size=8, precision=precision, optimizer=Optimizer.ADAMW)
    job = JobSpec(model, training, Dataset(samples=1000))
    plain = layout_memory(job, Layout(DataParallel.PLAIN, gpu_count=gpus, gpus_per_node=gpus), gpu=GPU, batch_size=8)
    walked = step_peak(model, training, gpu=GPU, gpu_count=gpus)
    assert plain.breakdown == walked.breakdown
    assert plain.peak_phase == walked.phase.value


def test_frozen_weights_are_counted_once_and_train_nothing() -> None:
    model = preset_stats("dqn-atari")  # the target network is frozen
    assert model.frozen_parameters > 0
    counts = parameter_counts(model, Layout(DataParallel.ZERO3, gpu_count=4, gpus_per_node=4), None)
    assert counts.trainable == model.parameters and counts.frozen == model.frozen_parameters
    training = Training(batch_size=1, precision=Precision.FP32, optimizer=Optimizer.ADAM)
    job = JobSpec(model, training, Dataset(samples=1000))
    one = layout_memory(job, Layout(DataParallel.ZERO1, gpu_count=2, gpus_per_node=2), gpu=GPU, batch_size=1)
    thawed = replace(model, parameters=model.parameters + model.frozen_parameters, frozen_parameters=0)
    more = layout_memory(replace(job, model=thawed), Layout(DataParallel.ZERO1, gpu_count=2, gpus_per_node=2),
                         gpu=GPU, batch_size=1)
    # the same weights either way; training the frozen ones too adds their (sharded) Adam state and
    # foreach temporaries, both alive at the optimizer step where this job peaks
    assert one.peak_phase == more.peak_phase == "optimizer_step"
    assert more.breakdown.parameters_bytes == pytest.approx(one.breakdown.parameters_bytes, rel=0.01)
    extra_state = model.frozen_parameters * (OPTIMIZER_STATE_BYTES[Optimizer.ADAM]
                                             + OPTIMIZER_TEMPORARY_BYTES[Optimizer.ADAM]) / 2
    assert more.breakdown.optimizer_state_bytes - one.breakdown.optimizer_state_bytes == pytest.approx(
        extra_state, rel=0.01)
    assert one.breakdown.parameters_bytes >= (model.parameters + model.frozen_parameters) * MASTER_WEIGHT_BYTES


def test_sharding_a_model_moves_its_peak_toward_the_activations() -> None:
    model = preset_stats("llama-7b", sequence_length=2048)
    job = JobSpec(model, Training(batch_size=1, precision=Precision.BF16_MIXED, optimizer=Optimizer.ADAMW),
                  Dataset(samples=1000))
    plain = layout_memory(job, Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8), gpu=GPU, batch_size=1)
    sharded = layout_memory(job, Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8), gpu=GPU, batch_size=1)
    assert plain.peak_phase == "optimizer_step"  # 16+ bytes per parameter dominate
    assert sharded.total_bytes < plain.total_bytes / 4


@pytest.mark.parametrize("layout", [
    Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8),
    Layout(DataParallel.ZERO2, gpu_count=4, gpus_per_node=4, checkpointing=Checkpointing.FULL),
    Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, adapter=Adapter(kind=AdapterKind.QLORA)),
    Layout(DataParallel.PLAIN, gpu_count=2, gpus_per_node=2, tensor_parallel=2,
           checkpointing=Checkpointing.SELECTIVE_OPS),
    Layout(DataParallel.PLAIN, gpu_count=4, gpus_per_node=4),
])
@pytest.mark.parametrize("batch", [1, 3, 16])
def test_the_search_walks_once_per_layout_and_scales_by_batch_to_the_same_tensors(layout: Layout, batch: int) -> None:
    model = preset_stats("llama-7b", sequence_length=1024)
    job = JobSpec(model, Training(batch_size=batch, precision=Precision.BF16_MIXED, optimizer=Optimizer.ADAMW),
                  Dataset(samples=1000))
    exact = layout_memory(job, layout, gpu=GPU, batch_size=batch)
    searched = searched_memory(job, layout, gpu=GPU, batch_size=batch)
    tensors = exact.total_bytes - exact.breakdown.framework_reserve_bytes
    assert searched.total_bytes - searched.breakdown.framework_reserve_bytes == pytest.approx(tensors, rel=1e-6)
    assert searched.peak_phase == exact.peak_phase
