"""The optimizer step's time follows its implementation: a per-tensor loop launches and moves more than a fused one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from flask.testing import FlaskClient
from sizing_fixtures import training

from catalog.gpus import gpus_by_slug
from workers.sizing import efficiency
from workers.sizing.optimizer_time import optimizer_step_ms, parameter_tensors, tensor_count
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import GradientClipping, Optimizer, OptimizerImplementation, Precision
from workers.sizing.stats import LayerKind, LayerStats, ModelStats
from workers.sizing.timing import single_gpu_time

FOREACH, PER_TENSOR, FUSED = (OptimizerImplementation.FOREACH, OptimizerImplementation.PER_TENSOR,
                              OptimizerImplementation.FUSED)
V100 = gpus_by_slug()["v100-16gb"]
MS_PER_BYTE = 1.0 / (V100.memory_bandwidth_gb_per_s * 1e6 * efficiency.BANDWIDTH_EFFICIENCY)


def _step(model: ModelStats, **changes: object) -> float:
    traffic, idle = optimizer_step_ms(model, training(batch_size=4, optimizer=Optimizer.ADAMW, **changes),
                                      precision=Precision.FP32, ms_per_byte=MS_PER_BYTE)
    return traffic + idle


def _dense_rows(count: int, parameters: int) -> ModelStats:
    rows = tuple(LayerStats(f"d{i}", "dense", (8,), 8, parameters, 8 * parameters, LayerKind.DENSE, saved_values=8)
                 for i in range(count))
    return ModelStats(name="dense", neurons=8 * count, parameters=count * parameters,
                      multiply_adds=8 * parameters * count, layers=rows)


def test_a_per_tensor_step_is_slower_than_foreach_and_fused_for_the_same_model() -> None:
    model = preset_stats("bert-large", sequence_length=384)
    per_tensor, foreach, fused = (_step(model, optimizer_implementation=i) for i in (PER_TENSOR, FOREACH, FUSED))
    assert per_tensor > foreach == fused
    # traffic-bound on a V100: the loop's extra passes over every parameter
    extra = (efficiency.PER_TENSOR_OPTIMIZER_TRAFFIC_BYTES[Optimizer.ADAMW]
             - efficiency.OPTIMIZER_TRAFFIC_BYTES[Optimizer.ADAMW])
    assert per_tensor - fused >= model.parameters * extra * MS_PER_BYTE * 0.999


def test_the_per_tensor_launches_grow_with_the_tensors_at_the_same_parameters() -> None:
    few, many = _dense_rows(10, 1000), _dense_rows(100, 100)
    assert few.parameters == many.parameters and tensor_count(many) == 10 * tensor_count(few)
    assert _step(many, optimizer_implementation=PER_TENSOR) > _step(few, optimizer_implementation=PER_TENSOR)
    # a fused step moves the same bytes whatever the tensors
    assert _step(many, optimizer_implementation=FUSED) == pytest.approx(_step(few, optimizer_implementation=FUSED))


def test_tensors_count_a_weight_and_a_bias_per_row_and_one_table_per_embedding() -> None:
    model = preset_stats("bert-large", sequence_length=128)
    weighted = [row for row in model.layers if row.parameters > 0]
    tables = sum(row.kind is LayerKind.EMBEDDING for row in weighted)
    assert tensor_count(model) == 2 * (len(weighted) - tables) + tables
    assert sum(size * n for size, n in parameter_tensors(model)) == model.parameters


def test_the_step_is_spread_over_its_update_interval() -> None:
    model = preset_stats("bert-large", sequence_length=128)
    for implementation in (PER_TENSOR, FUSED):
        once = _step(model, optimizer_implementation=implementation)
        assert _step(model, optimizer_implementation=implementation, update_interval=4) == pytest.approx(once / 4)


def test_gradient_clipping_costs_time_and_clipping_each_tensor_waits_at_every_tensor() -> None:
    model = preset_stats("bert-large", sequence_length=128)
    plain = _step(model, optimizer_implementation=PER_TENSOR)
    clipped = _step(model, optimizer_implementation=PER_TENSOR, gradient_clipping=GradientClipping.GLOBAL)
    each = _step(model, optimizer_implementation=PER_TENSOR, gradient_clipping=GradientClipping.PER_TENSOR)
    assert plain < clipped and plain < each
    # the same launches and bytes, run without waiting, take no longer than each tensor waiting for its own
    launches = tensor_count(model) * (efficiency.PER_TENSOR_OPTIMIZER_KERNELS[Optimizer.ADAMW] + 7)
    assert each >= launches * efficiency.KERNEL_LAUNCH_MS[training(batch_size=1).framework] * 0.999


def test_a_per_tensor_optimizer_slows_the_iteration_and_fused_leaves_it_as_foreach() -> None:
    model = preset_stats("bert-large", sequence_length=384)
    job = training(batch_size=4, optimizer=Optimizer.ADAMW, sequence_length=384)
    foreach = single_gpu_time(model, job, V100)
    fused = single_gpu_time(model, replace(job, optimizer_implementation=FUSED), V100)
    per_tensor = single_gpu_time(model, replace(job, optimizer_implementation=PER_TENSOR), V100)
    assert fused.total_ms == pytest.approx(foreach.total_ms)
    assert per_tensor.total_ms > foreach.total_ms and per_tensor.memory_ms > foreach.memory_ms


def test_an_unknown_gradient_clipping_is_422_naming_it(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "bert-base"}, "training": {"batch_size": 8, "sequence_length": 128,
                                                           "gradient_clipping": "value"}}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert "training.gradient_clipping" in answer.get_json()["errors"]
    spec["training"]["gradient_clipping"] = "global"  # type: ignore[index]
    assert embedded_client.post("/v1/estimate", json=spec).status_code == 200
