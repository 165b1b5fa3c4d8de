"""Estimates that learn from reported runs: check a measured run, fit efficiency corrections, apply them.

A team reports what a job really did: the spec, the GPU and count, the measured iteration time and,
when known, the peak memory. Each run is checked against the plain model first (check_run):
- memory above the card is refused: the run cannot have happened as described;
- an iteration more than ABSURD_RATIO times off the prediction either way is refused: the spec
  does not describe the run (wrong batch, a profiler's phase instead of the step, ms for s), and
  fitting it would teach the model the typo.
The runs that pass are grouped by GPU generation (architecture) and the layer kind that carries
most of the model's multiply-adds: a run on a V100 of a convolutional network says how far the
model's conv efficiency on Volta is off, and says little about a transformer on Hopper. Per group
the correction is fitted with the loss `gpugauge validate --fit` uses (workers/accuracy/calibration.py):
the summed |log(measured / (predicted x factor))|, an L1 fit on a log scale, whose minimiser is the
median of the log ratios (no search is needed for one parameter), kept within FACTOR_BOUNDS. Each
run's ratio is first clipped to those bounds, so one bad run can move a factor at most to a bound,
and with three or more runs a single outlier does not move the median at all.

A later estimate on a GPU of that generation, for a model of that kind, has its iteration time,
throughput and training hours scaled by the factor, and says which runs it used (`calibrated_by`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from workers.sizing.checks import check_job
from workers.sizing.errors import SizingError
from workers.sizing.memo import IdentityMemo
from workers.sizing.requirements import CodedWarning, PerGpu, Requirements
from workers.sizing.schedule import MS_PER_HOUR, startup_ms
from workers.sizing.spec import JobSpec
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.timing import estimate_iteration_ms

# A run more than 10x off the plain model is refused, not fitted: the model's holdout errors are
# 10-25% (docs/sizing.md "Calibration"); a 10x gap means the spec does not describe the run.
ABSURD_RATIO = 10.0
# No correction moves a prediction by more than 2x either way: beyond that the model, not its
# factors, is wrong for that job, and a person should look (the bound `validate --fit` keeps its
# efficiencies inside is 0.05-0.90 of peak; 2x around the shipped values stays within it for most).
FACTOR_BOUNDS = (0.5, 2.0)


class RunRefused(SizingError):
    """A reported run that cannot be fitted: it names the field and why."""


@dataclass(frozen=True)
class ReportedRun:
    """One measured run, as stored."""

    run_id: str
    job: JobSpec
    gpu: str
    gpu_count: int
    iteration_ms: float
    peak_memory_bytes: int | None = None
    source: str = ""


@dataclass(frozen=True)
class Correction:
    """The fitted time factor of one (GPU generation, layer kind), and the runs behind it."""

    architecture: str
    kind: LayerKind
    factor: float  # measured / predicted iteration time, as fitted and bounded
    runs: tuple[str, ...]  # run ids
    gpus: tuple[str, ...]  # GPU slugs the runs were on
    measured: float = 0.0  # the runs' own median ratio, before the bounds (0.0: not recorded)


@dataclass(frozen=True)
class Calibration:
    """Every correction fitted from the stored runs; empty when there are none."""

    corrections: Mapping[tuple[str, LayerKind], Correction]

    def for_job(self, gpu: GpuSpec, model: ModelStats) -> Correction | None:
        """Return the correction for this GPU's generation and the model's dominant layer kind."""
        if not self.corrections:  # no runs: nothing to look up (the ranking asks ~110 times a job)
            return None
        return self.corrections.get((gpu.architecture, dominant_kind(model)))


NO_CALIBRATION = Calibration({})


_DOMINANT: IdentityMemo[LayerKind] = IdentityMemo()


def dominant_kind(model: ModelStats) -> LayerKind:
    """Return the layer kind with the most multiply-adds (GENERIC for a model given as totals)."""
    return _DOMINANT.get(model, None, lambda: _dominant_kind(model))


def _dominant_kind(model: ModelStats) -> LayerKind:
    by_kind: dict[LayerKind, int] = {}
    for layer in model.layers:
        by_kind[layer.kind] = by_kind.get(layer.kind, 0) + layer.multiply_adds * layer.passes
    if not by_kind:
        return LayerKind.GENERIC
    return max(sorted(by_kind, key=lambda k: k.value), key=lambda k: by_kind[k])


def predicted_iteration_ms(run: ReportedRun, gpu: GpuSpec) -> float:
    """Return the plain model's iteration time for the run (no correction applied)."""
    return estimate_iteration_ms(run.job.time_model, run.job.training, gpu, gpu_count=run.gpu_count).total_ms


def check_run(run: ReportedRun, known_gpus: Mapping[str, GpuSpec]) -> float:
    """Return measured / predicted iteration time, or raise RunRefused naming the field and why."""
    gpu = known_gpus.get(run.gpu)
    if gpu is None:
        raise RunRefused("gpu", f"unknown GPU {run.gpu!r}")
    if run.peak_memory_bytes is not None and run.peak_memory_bytes > gpu.memory_bytes:
        raise RunRefused("peak_memory_bytes", f"peak memory {run.peak_memory_bytes / 2**30:.1f} GiB is above "
                                              f"the {gpu.memory_bytes / 2**30:.1f} GiB of one {gpu.name}")
    check_job(run.job, gpu_count=run.gpu_count)  # what the estimate itself would refuse (SpecError)
    predicted = predicted_iteration_ms(run, gpu)
    ratio = run.iteration_ms / predicted
    if not 1 / ABSURD_RATIO <= ratio <= ABSURD_RATIO:
        raise RunRefused("iteration_ms", f"{run.iteration_ms:g} ms is {max(ratio, 1 / ratio):.0f}x "
                                         f"{'above' if ratio > 1 else 'below'} the {predicted:.1f} ms the model "
                                         f"predicts for this spec on {run.gpu_count}x {gpu.name}; more than "
                                         f"{ABSURD_RATIO:g}x off means the spec does not describe the run")
    return ratio


def robust_log_fit(ratios: Sequence[float], *, bounds: tuple[float, float] = FACTOR_BOUNDS) -> float:
    """Return the factor minimising sum |log r - log f| over f within bounds, each r clipped to them first."""
    low, high = bounds
    logs = [math.log(min(max(r, low), high)) for r in ratios]
    return math.exp(statistics.median(logs))


def fit_calibration(runs: Iterable[ReportedRun], known_gpus: Mapping[str, GpuSpec]) -> Calibration:
    """Fit one correction per (GPU generation, dominant layer kind) from the runs that pass check_run.

    A stored run that no longer passes (the catalog dropped its GPU) is left out, not fatal.
    """
    groups: dict[tuple[str, LayerKind], list[tuple[ReportedRun, float]]] = {}
    for run in runs:
        try:
            ratio = check_run(run, known_gpus)
        except SizingError:
            continue
        key = (known_gpus[run.gpu].architecture, dominant_kind(run.job.model))
        groups.setdefault(key, []).append((run, ratio))
    corrections = {
        key: Correction(architecture=key[0], kind=key[1], factor=robust_log_fit([r for _, r in members]),
                        runs=tuple(sorted(run.run_id for run, _ in members)),
                        gpus=tuple(sorted({run.gpu for run, _ in members})),
                        measured=robust_log_fit([r for _, r in members], bounds=(0.0, math.inf)))
        for key, members in groups.items()}
    return Calibration(corrections)


def calibrate_row(row: PerGpu, job: JobSpec, gpu: GpuSpec, calibration: Calibration) -> PerGpu:
    """Return the row with its time scaled by the correction for this GPU and model, if there is one."""
    found = calibration.for_job(gpu, job.model)
    if found is None:
        return row
    f = found.factor
    start_h = startup_ms(gpu_count=row.gpu_count) / MS_PER_HOUR
    hours = row.training_hours
    scaled_hours = start_h + (hours - start_h) * f if hours > start_h else hours
    return replace(row, iteration_ms=row.iteration_ms * f, throughput_samples_per_s=row.throughput_samples_per_s / f,
                   training_hours=scaled_hours, compute_ms=row.compute_ms * f, memory_ms=row.memory_ms * f,
                   calibrated_by_runs=found.runs, calibrated_by_gpus=found.gpus)


def calibrate_requirements(req: Requirements, job: JobSpec, known_gpus: Mapping[str, GpuSpec],
                           calibration: Calibration) -> Requirements:
    """Return the requirements with every per-GPU row calibrated, and what was used in all."""
    rows = tuple(calibrate_row(r, job, known_gpus[r.gpu], calibration) if r.gpu in known_gpus else r
                 for r in req.per_gpu)
    runs, gpus = used_by(rows)
    return replace(req, per_gpu=rows, calibrated_by_runs=runs, calibrated_by_gpus=gpus,
                   warnings=(*req.warnings, *bounded_warnings(rows, job, known_gpus, calibration)))


def bounded_warnings(rows: Iterable[PerGpu], job: JobSpec, known_gpus: Mapping[str, GpuSpec],
                     calibration: Calibration) -> tuple[CodedWarning, ...]:
    """Return a warning for each correction applied to these rows that its bounds held short of what its runs
    measured: "300 ms measured, 72 predicted (4.2x)" scaled the V100 rows 2x, and said nothing."""
    found: dict[tuple[str, LayerKind], Correction] = {}
    for row in rows:
        gpu = known_gpus.get(row.gpu)
        c = calibration.for_job(gpu, job.model) if gpu is not None and row.calibrated_by_runs else None
        if c is not None and c.measured and not FACTOR_BOUNDS[0] <= c.measured <= FACTOR_BOUNDS[1]:
            found[(c.architecture, c.kind)] = c
    return tuple(CodedWarning("calibration-bounded", (
        f"Reported runs {', '.join(c.runs)} on {', '.join(c.gpus)} measured {c.measured:.2f}x the time the model "
        f"predicts ({c.architecture}, {c.kind.value} models); a correction stops at {FACTOR_BOUNDS[0]:g}-"
        f"{FACTOR_BOUNDS[1]:g}x, so those rows are scaled {c.factor:.2f}x. A gap that large means the spec leaves "
        "out what bound the run (data loading: dataset.preprocess_ms_per_sample; another batch size or precision; "
        "other work on the GPU): check the spec against the run, or size this job at its measured time with "
        "training.profile (gpu, iteration_ms).")) for c in found.values())


def used_by(rows: Iterable[PerGpu]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (run ids, GPU slugs) of the corrections applied to these rows."""
    run_ids: set[str] = set()
    gpus: set[str] = set()
    for r in rows:
        run_ids.update(r.calibrated_by_runs)
        gpus.update(r.calibrated_by_gpus)
    return tuple(sorted(run_ids)), tuple(sorted(gpus))
