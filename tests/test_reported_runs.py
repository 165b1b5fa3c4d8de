"""Estimates that learn from reported runs: checks, the robust fit and its bounds, and what it changes."""

from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.reported import (
    ABSURD_RATIO,
    FACTOR_BOUNDS,
    NO_CALIBRATION,
    ReportedRun,
    RunRefused,
    check_run,
    dominant_kind,
    fit_calibration,
    predicted_iteration_ms,
    robust_log_fit,
)
from workers.sizing.stats import LayerKind

GPUS = {g.slug: g for g in load_catalog().gpus}
RESNET = load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 64}})[1]
BERT = load_job({"model": {"preset": "bert-base"}, "training": {"batch_size": 32, "sequence_length": 128}})[1]


def _run(run_id: str, ratio: float, *, gpu: str = "v100-16gb", job: object = RESNET) -> ReportedRun:
    base = ReportedRun(run_id=run_id, job=job, gpu=gpu, gpu_count=1, iteration_ms=1.0)  # type: ignore[arg-type]
    predicted = predicted_iteration_ms(base, GPUS[gpu])
    return ReportedRun(run_id=run_id, job=job, gpu=gpu, gpu_count=1, iteration_ms=predicted * ratio)  # type: ignore[arg-type]


def test_a_model_is_grouped_by_the_kind_that_carries_its_multiply_adds() -> None:
    assert dominant_kind(RESNET.model) is LayerKind.CONV
    assert dominant_kind(BERT.model) is LayerKind.DENSE


def test_an_iteration_1000x_off_is_refused_naming_the_field() -> None:
    with pytest.raises(RunRefused) as refused:
        check_run(_run("x", 1000.0), GPUS)
    assert refused.value.field == "iteration_ms" and "1000x above" in refused.value.reason
    with pytest.raises(RunRefused, match="below"):
        check_run(_run("y", 1 / (ABSURD_RATIO * 1.5)), GPUS)


def test_memory_above_the_card_and_an_unknown_gpu_are_refused() -> None:
    run = _run("m", 1.0)
    too_big = ReportedRun(run_id="m", job=run.job, gpu=run.gpu, gpu_count=1, iteration_ms=run.iteration_ms,
                          peak_memory_bytes=GPUS["v100-16gb"].memory_bytes + 1)
    with pytest.raises(RunRefused) as refused:
        check_run(too_big, GPUS)
    assert refused.value.field == "peak_memory_bytes"
    with pytest.raises(RunRefused, match="unknown GPU"):
        check_run(ReportedRun(run_id="g", job=run.job, gpu="gtx-9999", gpu_count=1, iteration_ms=1.0), GPUS)


def test_the_fit_is_the_median_of_the_log_ratios_within_the_bounds() -> None:
    assert robust_log_fit([1.2, 1.3, 1.4]) == pytest.approx(1.3)
    assert robust_log_fit([1.0, 4.0]) == pytest.approx(2.0 ** 0.5)  # 4.0 clipped to 2.0, then the median
    assert robust_log_fit([9.0]) == FACTOR_BOUNDS[1] and robust_log_fit([0.11]) == FACTOR_BOUNDS[0]


def test_one_bad_run_alone_moves_a_factor_no_further_than_its_bound() -> None:
    planted = fit_calibration([_run("bad", 8.0)], GPUS)
    (correction,) = planted.corrections.values()
    assert correction.factor == FACTOR_BOUNDS[1]
    plain = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"]).per_gpu[0].iteration_ms
    moved = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"], calibration=planted).per_gpu[0]
    assert moved.iteration_ms == pytest.approx(plain * FACTOR_BOUNDS[1])


def test_a_correction_its_bounds_held_short_is_said_where_it_applies() -> None:
    """A run 4.2x the model ("300 ms measured, 72.2 ms predicted") scaled the V100 rows 2x and said nothing."""
    bounded = fit_calibration([_run("far", 4.0)], GPUS)
    req = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb", "a100-80gb"], calibration=bounded)
    [warning] = [w for w in req.warnings if w.code == "calibration-bounded"]
    assert "far on v100-16gb measured 4.00x" in warning.message and "scaled 2.00x" in warning.message
    assert "training.profile" in warning.message
    within = fit_calibration([_run("near", 1.6)], GPUS)  # inside the bounds: the rows say which runs, no warning
    req = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"], calibration=within)
    assert req.calibrated_by_runs == ("near",) and not any(w.code == "calibration-bounded" for w in req.warnings)
    bert = estimate_on_gpus(BERT, GPUS.values(), slugs=["v100-16gb"], calibration=bounded)  # another kind: unused
    assert not any(w.code == "calibration-bounded" for w in bert.warnings)


def test_a_planted_wrong_report_does_not_drag_the_predictions() -> None:
    honest = [_run(f"ok{i}", r) for i, r in enumerate((1.28, 1.30, 1.31, 1.33))]
    with_planted = [*honest, _run("planted", 7.5)]  # within the refusal limit, so it is fitted, not refused
    clean = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"],
                             calibration=fit_calibration(honest, GPUS)).per_gpu[0]
    dragged = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"],
                               calibration=fit_calibration(with_planted, GPUS)).per_gpu[0]
    plain = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb"]).per_gpu[0]
    assert clean.iteration_ms == pytest.approx(plain.iteration_ms * (1.30 * 1.31) ** 0.5)
    assert abs(dragged.iteration_ms / clean.iteration_ms - 1) < 0.01  # the outlier moved it under 1%
    assert dragged.calibrated_by_runs == ("ok0", "ok1", "ok2", "ok3", "planted")


def test_a_correction_applies_to_the_same_generation_and_kind_only() -> None:
    calibration = fit_calibration([_run("v", 1.5)], GPUS)
    req = estimate_on_gpus(RESNET, GPUS.values(), slugs=["v100-16gb", "a100-80gb"], calibration=calibration)
    volta, ampere = req.per_gpu
    assert volta.calibrated_by_runs == ("v",) and volta.calibrated_by_gpus == ("v100-16gb",)
    assert ampere.calibrated_by_runs == ()
    assert req.calibrated_by_runs == ("v",)
    bert = estimate_on_gpus(BERT, GPUS.values(), slugs=["v100-16gb"], calibration=calibration)
    assert bert.per_gpu[0].calibrated_by_runs == () and bert.calibrated_by_runs == ()
    plain = estimate_on_gpus(BERT, GPUS.values(), slugs=["v100-16gb"], calibration=NO_CALIBRATION)
    assert bert.per_gpu[0].iteration_ms == plain.per_gpu[0].iteration_ms


def test_hours_scale_with_the_iteration_but_not_the_start_up() -> None:
    job = load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 64, "epochs": 2},
                    "dataset": {"samples": 128_000}})[1]
    calibration = fit_calibration([_run("h", 1.5, job=job)], GPUS)
    plain = estimate_on_gpus(job, GPUS.values(), slugs=["v100-16gb"]).per_gpu[0]
    scaled = estimate_on_gpus(job, GPUS.values(), slugs=["v100-16gb"], calibration=calibration).per_gpu[0]
    assert plain.training_hours * 1.4 < scaled.training_hours < plain.training_hours * 1.5
    assert scaled.throughput_samples_per_s == pytest.approx(plain.throughput_samples_per_s / 1.5)
