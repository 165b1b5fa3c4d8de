"""The whole estimate: requirements, per-GPU fit and time, the out-of-memory plan, and bad input."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from sizing_fixtures import GIB, gpu, resnet50, stats_only, training

from catalog.gpus import gpus_by_slug
from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.estimate import estimate_on_gpu, estimate_requirements, resolve_gpus
from workers.sizing.memory import estimate_memory, fits, usable_memory_bytes
from workers.sizing.spec import Constraints, Dataset, JobSpec, Profile
from workers.sizing.stats import ModelStats

KNOWN = gpus_by_slug()
# Activations dominate: 70 M values kept per sample x 4 B x batch 64 = 16.7 GiB, about 20 GiB in all.
BIG_ACTIVATIONS = stats_only(neurons=70_000_000, parameters=10_000_000, multiply_adds=10**9)


def _job(model: ModelStats = BIG_ACTIVATIONS, **changes: object) -> JobSpec:
    return JobSpec(model, training(learning_rate=0.1, **changes), Dataset(samples=50_000, size_bytes=10**9))


def test_a_20_gib_job_on_an_8_gib_card_halves_to_the_first_batch_that_fits() -> None:
    job, card = _job(), gpu("gtx-1080")
    peak = estimate_memory(job.model, job.training, gpu=card).total_bytes
    assert 19 * GIB < peak < 21 * GIB
    result = estimate_requirements(job, gpus=[card], known_gpus=KNOWN)
    (row,) = result.per_gpu
    assert not row.fits
    halving = next(m for m in result.mitigations if m.kind == "smaller-batch")
    assert (halving.batch_size, halving.learning_rate, halving.update_interval) == (16, 0.025, 4)
    assert halving.gpu == "gtx-1080" and halving.gpu_memory_bytes <= usable_memory_bytes(card)
    # 32 would not have fitted: 16 is the first batch that does
    at_32 = estimate_memory(job.model, replace(job.training, batch_size=32), gpu=card).total_bytes
    assert not fits(at_32, card)
    assert "64 -> 32 -> 16" in halving.description and "0.1 -> 0.025" in halving.description
    # the halved rate is for summed gradients; averaged ones keep the rate as given (said beside it)
    assert "summed" in halving.description and "averages them over the accumulation steps, keep 0.1)" \
        in halving.description
    assert halving.time_factor > 0


def test_when_batch_1_does_not_fit_the_batch_is_not_the_problem() -> None:
    huge = stats_only(neurons=1000, parameters=500_000_000, multiply_adds=10**9)
    result = estimate_requirements(_job(huge), gpus=[gpu("gtx-1080")], known_gpus=KNOWN)
    halving = next(m for m in result.mitigations if m.kind == "smaller-batch")
    assert halving.batch_size == 1 and "not the problem" in halving.description
    assert "batch-not-the-problem" in [w.code for w in result.warnings]
    kinds = [m.kind for m in result.mitigations]
    assert "sharding" in kinds and "more-gpus" not in kinds  # splitting the batch cannot help either
    assert "mixed-precision" not in kinds  # 6 B per weight would need more, not less


def test_the_plan_follows_the_domain_order_and_each_step_says_what_it_leaves() -> None:
    job = JobSpec(resnet50(), training(batch_size=256, learning_rate=0.1), Dataset(samples=1_281_167))
    result = estimate_requirements(job, gpus=[gpu("gtx-1080-ti")], known_gpus=KNOWN)
    kinds = [m.kind for m in result.mitigations]
    assert kinds == ["smaller-batch", "change-network", "recompute", "mixed-precision", "more-gpus"]
    by_kind = {m.kind: m for m in result.mitigations}
    assert by_kind["recompute"].time_factor > 1.2
    assert by_kind["recompute"].gpu_memory_bytes < by_kind["change-network"].gpu_memory_bytes
    more = by_kind["more-gpus"]
    assert more.gpu_count is not None and more.batch_size == 256 // more.gpu_count
    assert more.time_factor < 1.0
    assert len(by_kind["change-network"].layers) == 3


def test_more_gpus_stay_within_the_jobs_limit() -> None:
    job = replace(_job(), constraints=Constraints(max_gpus=2))
    result = estimate_requirements(job, gpus=[gpu("gtx-1080")], known_gpus=KNOWN)
    assert all((m.gpu_count or 1) <= 2 for m in result.mitigations)


def test_requirements_carry_memory_time_machine_and_one_row_per_requested_gpu() -> None:
    job = JobSpec(resnet50(), training(batch_size=64, epochs=2, eval_every_epochs=1),
                  Dataset(samples=10_000, size_bytes=5 * 10**9, preprocess_ms_per_sample=0.5))
    cards = resolve_gpus(["gtx-1080-ti", "v100-16gb", "a100-80gb"], KNOWN)
    result = estimate_requirements(job, gpus=cards, known_gpus=KNOWN)
    assert [row.gpu for row in result.per_gpu] == ["gtx-1080-ti", "v100-16gb", "a100-80gb"]
    assert all(row.fits for row in result.per_gpu)
    assert result.gpu_memory_bytes == result.gpu_memory_breakdown.total_bytes
    assert result.baseline_formula_bytes == job.model.neurons * 64 * 8 + job.model.parameters * 8
    assert result.iterations_per_epoch == math.ceil(10_000 / 64) and result.iterations_total == 2 * 157
    assert (result.storage_min_bytes, result.storage_max_bytes) == (15 * 10**9, 20 * 10**9)
    assert result.host_memory_bytes > 5 * 10**9
    assert result.flops_per_iteration == job.model.multiply_adds * 2 * 3 * 64
    hours = [row.training_hours for row in result.per_gpu]
    assert hours == sorted(hours, reverse=True) and hours[-1] > 0
    assert result.cpu_single_thread_score == max(row.cpu_single_thread_score for row in result.per_gpu)
    assert result.mitigations == ()


def test_estimate_on_gpu_matches_the_requirements_row() -> None:
    job = JobSpec(resnet50(), training(), Dataset(samples=10_000))
    row = estimate_on_gpu(job, gpu("t4"), gpu_count=2, known_gpus=KNOWN)
    (same,) = estimate_requirements(job, gpus=[gpu("t4")], gpu_count=2, known_gpus=KNOWN).per_gpu
    assert row == same and row.gpu_count == 2 and 1.0 < row.speedup_vs_one_gpu <= 2.0
    assert row.throughput_samples_per_s == pytest.approx(64 * 2 * 1000 / row.iteration_ms)


def test_without_requested_gpus_the_plan_targets_the_reference_card() -> None:
    result = estimate_requirements(_job(), known_gpus=KNOWN)
    assert result.per_gpu == ()
    assert {m.gpu for m in result.mitigations} == {"t4"}


def test_a_profile_calibrates_every_row() -> None:
    job = replace(_job(resnet50()), training=training(profile=Profile(gpu="gtx-1080", iteration_ms=250.0)))
    result = estimate_requirements(job, gpus=[gpu("gtx-1080"), gpu("a100-40gb")], known_gpus=KNOWN)
    assert all(row.calibrated for row in result.per_gpu)
    assert result.per_gpu[0].iteration_ms == pytest.approx(250.0)
    assert result.per_gpu[1].iteration_ms < 250.0


def test_a_profile_on_an_unknown_gpu_names_the_field_and_the_valid_slugs() -> None:
    job = replace(_job(), training=training(profile=Profile(gpu="gtx-1080-tii", iteration_ms=10.0)))
    with pytest.raises(UnknownNameError) as caught:
        estimate_requirements(job, known_gpus=KNOWN)
    assert caught.value.field == "training.profile.gpu"
    assert "gtx-1080-ti" in caught.value.suggestions and "a100-80gb" in caught.value.reason


def test_an_unknown_requested_gpu_names_its_position() -> None:
    with pytest.raises(UnknownNameError) as caught:
        resolve_gpus(["t4", "v1000-16gb"], KNOWN)
    assert caught.value.field == "gpus[1]" and "v100-16gb" in caught.value.suggestions


@pytest.mark.parametrize(("change", "field"), [
    ({"training": training(batch_size=0)}, "training.batch_size"),
    ({"training": training(epochs=0.5)}, "training.epochs"),
    ({"training": training(epochs=1e308)}, "training.epochs"),
    ({"training": training(epochs=math.nan)}, "training.epochs"),
    ({"training": training(learning_rate=math.inf)}, "training.learning_rate"),
    ({"training": training(update_interval=0)}, "training.update_interval"),
    ({"training": training(profile=Profile(gpu="t4", iteration_ms=-1.0))}, "training.profile.iteration_ms"),
    ({"dataset": Dataset(size_bytes=-1)}, "dataset.bytes"),
    ({"dataset": Dataset(preprocess_ms_per_sample=math.nan)}, "dataset.preprocess_ms_per_sample"),
    ({"model": stats_only(neurons=-1, parameters=10, multiply_adds=10)}, "model.stats.neurons"),
    ({"model": stats_only(neurons=0, parameters=0, multiply_adds=0)}, "model.stats"),
])
def test_out_of_range_input_raises_spec_error_naming_the_field(change: dict[str, object], field: str) -> None:
    job = replace(_job(), **change)  # type: ignore[arg-type]
    with pytest.raises(SpecError) as caught:
        estimate_requirements(job, known_gpus=KNOWN)
    assert caught.value.field == field
    with pytest.raises(SpecError):
        estimate_on_gpu(job, gpu("t4"), gpu_count=1, known_gpus=KNOWN)


def test_gpu_count_and_network_speed_are_checked() -> None:
    with pytest.raises(SpecError) as caught:
        estimate_requirements(_job(), gpu_count=0, known_gpus=KNOWN)
    assert caught.value.field == "gpu_count"
    with pytest.raises(SpecError) as caught:
        estimate_on_gpu(_job(), gpu("t4"), gpu_count=2, known_gpus=KNOWN, inter_node_gbit_per_s=math.inf)
    assert caught.value.field == "inter_node_gbit_per_s"


def test_every_figure_is_finite_for_every_gpu_and_count() -> None:
    job = JobSpec(resnet50(), training(), Dataset(samples=1000, preprocess_ms_per_sample=1.0))
    for card in KNOWN.values():
        for count in (1, 2, 4, 8, 16):
            row = estimate_on_gpu(job, card, gpu_count=count, known_gpus=KNOWN)
            for value in (row.iteration_ms, row.throughput_samples_per_s, row.training_hours,
                          row.speedup_vs_one_gpu, row.cpu_single_thread_score):
                assert math.isfinite(value) and value >= 0, (card.slug, count)
