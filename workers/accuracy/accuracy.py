"""The sizing core against public measurements: one row per measured figure, and error summaries.

Each record of workers/accuracy/data/measurements.json becomes a JobSpec (accuracy_jobs.py), is predicted with
the sizing core, and yields one row per figure it measured:

- `memory`: an explicit peak, scored as the relative error (predicted - measured) / measured. The
  prediction is matched to what the tool saw:
  - `nvidia-smi` and `unknown`: the whole process on the device, so the full prediction (tensors,
    CUDA context, library workspace, allocator slack);
  - `max_memory_reserved`: the caching allocator's pool, so the prediction minus the CUDA context
    (workspaces and slack live in the pool);
  - `max_memory_allocated`: live tensors only, so the prediction minus the whole framework reserve.
  FSDP runs (FULLY_SHARDED_PREFIXES) are predicted as the product sizes a ZeRO-3 / FSDP layout,
  with the checkpointing the run used (sharded.py); their throughput too.
- `max_batch`: "the largest batch that fit", scored as fit/no-fit agreement on the physical card:
  the prediction must fit at the measured batch and not at the next one (batch 1 must not fit when
  the record says 0). The row also carries the largest batch the prediction fits, and its error.
- `throughput`: samples per second of the whole job (a step time is turned into samples/s with the
  batch and GPU count), scored as the relative error of the predicted samples/s.
- `runs`: every throughput record also shows the job ran at that batch on that card; the row agrees
  when the predicted peak (compared as nvidia-smi) fits the physical card.

`summarise` gives, per metric and split, the count, the median and 90th percentile of the absolute
relative error, the median signed error (bias), and the agreement share for the fit/no-fit metrics.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from catalog.types import GpuSpec
from workers.accuracy.jobs import MeasuredJob, record_job
from workers.accuracy.sharded import sharded_memory_breakdown, sharded_run, sharded_samples_per_s
from workers.sizing.largest_batch import largest_passing
from workers.sizing.memory import estimate_memory
from workers.sizing.overheads import CUDA_CONTEXT_BYTES
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.timing import estimate_iteration_ms

# Package data, so that `gpugauge validate` works from the installed wheel and the Docker image.
MEASUREMENTS_PATH = Path(__file__).resolve().parent / "data" / "measurements.json"
SPLITS = ("fit", "holdout", "all")
METRICS = ("memory", "throughput", "max_batch", "runs")
# Largest batch searched for when a prediction fits the measured one (the search doubles, then bisects).
MAX_BATCH_SEARCH = 1 << 20


@dataclass(frozen=True)
class Row:
    """One measured figure beside its prediction."""

    id: str
    model: str
    gpu: str
    gpu_count: int
    batch_size: int
    precision: str
    split: str
    metric: str  # one of METRICS
    unit: str  # "bytes", "samples/s", "batch", "fits"
    predicted: float
    measured: float
    error: float  # (predicted - measured) / measured (a measured 0: 0 when predicted 0, else 1)
    agrees: bool | None = None  # fit/no-fit metrics only
    note: str = ""


@dataclass(frozen=True)
class Summary:
    """Errors of one metric over one split."""

    metric: str
    split: str
    count: int
    median_abs_error: float
    p90_abs_error: float
    median_error: float  # signed: above 0 the core over-predicts
    agreement: float | None = None  # share of fit/no-fit rows that agree


def load_measurements(path: Path = MEASUREMENTS_PATH) -> list[dict[str, Any]]:
    """Read the measurement records."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def percentile(values: Sequence[float], q: float) -> float:
    """Return the q-th percentile (0-100) by linear interpolation between the sorted values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def relative_error(predicted: float, measured: float) -> float:
    """Return (predicted - measured) / measured."""
    return (predicted - measured) / measured


def predicted_memory(case: MeasuredJob, gpu: GpuSpec, *, batch_size: int | None = None) -> MemoryBreakdown:
    """Return the per-GPU memory the core predicts for the run (FSDP runs split the model state)."""
    job = case.job
    training = job.training if batch_size is None else replace(job.training, batch_size=batch_size)
    run = sharded_run(case)
    if run is None:
        return estimate_memory(job.model, training, gpu=gpu, gpu_count=case.gpu_count)
    return sharded_memory_breakdown(run, gpu, batch_size=training.batch_size)


def compared_memory_bytes(memory: MemoryBreakdown, *, kind: str, gpu: GpuSpec) -> int:
    """Return the part of a predicted peak that a tool of this `memory_kind` reports."""
    if kind == "max_memory_reserved":
        return memory.total_bytes - CUDA_CONTEXT_BYTES[gpu.architecture]
    if kind == "max_memory_allocated":
        return memory.total_bytes - memory.framework_reserve_bytes
    return memory.total_bytes  # nvidia-smi, unknown: the whole process on the device


def fits_card(case: MeasuredJob, gpu: GpuSpec, batch_size: int) -> bool:
    """Return whether the predicted peak at this batch fits the card's physical memory."""
    return predicted_memory(case, gpu, batch_size=batch_size).total_bytes <= gpu.memory_bytes


def largest_fitting_batch(case: MeasuredJob, gpu: GpuSpec) -> int:
    """Return the largest batch whose predicted peak fits the physical card (0: not even batch 1)."""
    return largest_passing(lambda batch: fits_card(case, gpu, batch), most=MAX_BATCH_SEARCH)


def _row(record: Mapping[str, Any], metric: str, unit: str, predicted: float, measured: float, *,
         agrees: bool | None = None, note: str = "") -> Row:
    """Build a row with the record's identifying fields."""
    # A measured largest batch of 0: predicting any batch is a full miss.
    error = relative_error(predicted, measured) if measured else float(predicted != 0)
    return Row(id=str(record["id"]), model=str(record["model"]), gpu=str(record["gpu"]),
               gpu_count=int(record.get("gpu_count") or 1), batch_size=int(record["batch_size"]),
               precision=str(record["precision"]), split=str(record["split"]), metric=metric, unit=unit,
               predicted=predicted, measured=measured, error=error, agrees=agrees, note=note)


def compare_record(record: Mapping[str, Any], gpus: Mapping[str, GpuSpec]) -> list[Row]:
    """Return the rows of one record: one per measured figure (memory, max batch, throughput, runs)."""
    case = record_job(record)
    gpu = gpus[case.gpu]
    measured = record["measured"]
    rows: list[Row] = []
    training = case.job.training
    if "peak_memory_bytes" in measured:
        kind = str(measured.get("memory_kind", "unknown"))
        predicted = compared_memory_bytes(predicted_memory(case, gpu), kind=kind, gpu=gpu)
        rows.append(_row(record, "memory", "bytes", predicted, float(measured["peak_memory_bytes"]),
                         note=f"{kind}; {case.model_note}"))
    if "max_batch_size" in measured:
        wanted = int(measured["max_batch_size"])
        fits_measured = wanted == 0 or fits_card(case, gpu, wanted)
        agrees = fits_measured and not fits_card(case, gpu, wanted + 1)
        best = largest_fitting_batch(case, gpu)
        rows.append(_row(record, "max_batch", "batch", best, wanted, agrees=agrees,
                         note=f"predicted largest batch {best}, measured {wanted}"))
    samples_per_s = measured_samples_per_s(record)
    if samples_per_s is not None:
        run = sharded_run(case)
        if run is None:
            time = estimate_iteration_ms(case.job.model, training, gpu, gpu_count=case.gpu_count)
            predicted_rate = training.batch_size * case.gpu_count * 1000.0 / time.total_ms
            how = f"{time.total_ms:.1f} ms/iteration, bound by {time.bottleneck}"
        else:
            predicted_rate = sharded_samples_per_s(run, gpu)
            how = f"ZeRO-3 over {case.gpu_count} GPUs, checkpointing {case.checkpointing}"
        rows.append(_row(record, "throughput", "samples/s", predicted_rate, samples_per_s,
                         note=f"{how}; {case.model_note}"))
        runs = fits_card(case, gpu, training.batch_size)
        rows.append(_row(record, "runs", "fits", float(runs), 1.0, agrees=runs,
                         note="the run's batch fits the card as predicted" if runs
                         else "predicted not to fit at the batch it ran"))
    return rows


def measured_samples_per_s(record: Mapping[str, Any]) -> float | None:
    """Return the measured samples/s of the whole job, from a throughput or a step time."""
    measured = record["measured"]
    if "throughput_samples_per_s" in measured:
        return float(measured["throughput_samples_per_s"])
    if "iteration_ms" in measured:
        gpu_count = int(record.get("gpu_count") or 1)
        return int(record["batch_size"]) * gpu_count * 1000.0 / float(measured["iteration_ms"])
    return None


def compare_all(records: Iterable[Mapping[str, Any]], gpus: Mapping[str, GpuSpec]) -> list[Row]:
    """Return every record's rows, in record order."""
    return [row for record in records for row in compare_record(record, gpus)]


def in_split(row: Row, split: str) -> bool:
    """Return whether a row belongs to a split ("all" holds every row)."""
    return split == "all" or row.split == split


def summarise(rows: Sequence[Row], *, splits: Sequence[str] = SPLITS) -> list[Summary]:
    """Return the error summary per metric and split (metrics without rows are left out)."""
    summaries: list[Summary] = []
    for metric in METRICS:
        for split in splits:
            chosen = [row for row in rows if row.metric == metric and in_split(row, split)]
            if not chosen:
                continue
            errors = [row.error for row in chosen]
            absolute = [abs(e) for e in errors]
            verdicts = [row.agrees for row in chosen if row.agrees is not None]
            summaries.append(Summary(
                metric=metric, split=split, count=len(chosen), median_abs_error=percentile(absolute, 50),
                p90_abs_error=percentile(absolute, 90), median_error=percentile(errors, 50),
                agreement=sum(verdicts) / len(verdicts) if verdicts else None,
            ))
    return summaries
