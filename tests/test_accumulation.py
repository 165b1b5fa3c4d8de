"""Gradient accumulation in the step walk: a later micro-batch runs beside the gradients the earlier
ones made (step_walk.walk_step), checked against the accumulate-2 steps measured here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from sizing_fixtures import training

from validation.step_compare import compare_step_record, load_step_records
from workers.sizing.layers.attention import Attention
from workers.sizing.memory import step_peak
from workers.sizing.overheads import GRADIENT_BYTES
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision
from workers.sizing.step_walk import Phase, walk_step


def _accumulated(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if int(r.get("update_interval") or 1) > 1]


def test_every_forward_moment_of_a_later_micro_batch_holds_every_gradient() -> None:
    vgg = preset_stats("vgg16", input_shape=(3, 32, 32))
    once = walk_step(vgg, training(batch_size=2), precision=Precision.FP32)
    twice = walk_step(vgg, training(batch_size=2, update_interval=2), precision=Precision.FP32)
    gradients = vgg.parameters * GRADIENT_BYTES
    for a, b in zip(once, twice, strict=True):
        if a.phase is Phase.FORWARD:
            assert b.gradients - a.gradients == gradients
        if a.phase is Phase.BACKWARD:
            assert b.gradients >= a.gradients and b.gradients == gradients
    assert once[-1] == twice[-1]  # the optimizer step is the same step


def test_accumulating_never_lowers_the_peak_and_raises_it_where_backward_peaks() -> None:
    for name, shape, seq in [("vgg16", (3, 32, 32), None), ("gpt2", None, 128), ("resnet18", (3, 64, 64), None)]:
        model = preset_stats(name, input_shape=shape) if shape else preset_stats(name, sequence_length=seq)
        job = training(batch_size=2, sequence_length=seq, attention=Attention.MATH, optimizer=Optimizer.SGD)
        one, two = step_peak(model, job), step_peak(model, replace(job, update_interval=2))
        tensors = [p.breakdown.total_bytes - p.breakdown.framework_reserve_bytes for p in (one, two)]
        assert tensors[1] > tensors[0], name
        assert two.breakdown.total_bytes >= one.breakdown.total_bytes, name  # the allocator's cache may absorb it
        assert two.phase is not Phase.OPTIMIZER_STEP, name


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return load_step_records()


def test_accumulation_records_peak_in_the_measured_phase_within_the_tensor_target(
        records: list[dict[str, Any]]) -> None:
    accumulated = _accumulated(records)
    assert len(accumulated) >= 6
    for record in accumulated:
        row = compare_step_record(record)
        print(f"{row.id:55s} {row.error:+.1%}")
        assert abs(row.error) <= 0.15, row.id  # the 90th-percentile target for tensor memory
        assert row.predicted_phase == row.measured_phase, row.id


def test_the_measured_rise_over_one_micro_batch_is_what_the_walk_adds(records: list[dict[str, Any]]) -> None:
    # VGG-16 at 32x32, batch 2, fp32 SGD: backward peaks with its classifier's gradients made first
    by_id = {r["id"]: r for r in records}
    one, two = by_id["here-vgg16-32-b2-fp32-sgd"], by_id["here-vgg16-32-b2-fp32-sgd-accumulate-2"]
    measured_rise = two["measured"]["peak_memory_bytes"] - one["measured"]["peak_memory_bytes"]
    predicted_rise = compare_step_record(two).predicted_bytes - compare_step_record(one).predicted_bytes
    assert measured_rise > 0
    assert abs(predicted_rise - measured_rise) <= 0.05 * measured_rise
