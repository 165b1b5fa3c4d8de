"""Time the user's own per-sample loading on one core: the figure `dataset.preprocess_ms_per_sample` wants.

`gpugauge probe --sample module:function` calls the function with sample indices 0, 1, 2, ... (what a
map-style Dataset's `__getitem__` is given) one at a time in this process, as one DataLoader worker runs
them, and takes the median milliseconds a sample after a warm-up. The spec's figure is read on the
reference core (workers/sizing/machine.py, single-thread score 2,000), so the time here is scaled by this
host's single-thread score where catalog/cpu_scores.py knows the CPU; otherwise it is taken as measured on
a reference core, and said so. No torch is needed here.
"""

from __future__ import annotations

import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from catalog.cpu_scores import score_for
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE

WARMUP_SAMPLES = 2
DEFAULT_SAMPLES = 32


class LoaderError(Exception):
    """The sample function failed or cannot be timed; one line for the CLI."""


@dataclass(frozen=True)
class LoaderTime:
    """One sample's loading and pre-processing time here, and on the reference core."""

    ms_here: float
    ms_reference: float
    samples: int
    cpu_model: str
    cpu_score: float  # 0: this CPU is not in the score table, taken as a reference core


def host_cpu_model() -> str:
    """Return this host's CPU model as /proc/cpuinfo names it (else what platform knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def on_reference_core(ms_here: float, cpu_model: str) -> tuple[float, float]:
    """Return (milliseconds on the reference core, this CPU's score; 0 when the score table does not know it)."""
    row = score_for(cpu_model)
    if row is None:
        return ms_here, 0.0
    return ms_here * row.single_thread_score / REFERENCE_CPU_SINGLE_THREAD_SCORE, row.single_thread_score


def time_samples(load: Callable[[int], object], *, samples: int = DEFAULT_SAMPLES,
                 cpu_model: str | None = None) -> LoaderTime:
    """Return the median time of `samples` calls load(i), after WARMUP_SAMPLES calls."""
    if samples < 1:
        raise LoaderError("--sample-count must be at least 1")
    times = []
    for i in range(WARMUP_SAMPLES + samples):
        started = time.perf_counter()
        try:
            load(i)
        except Exception as exc:  # the user's code: any failure is reported, not raised
            raise LoaderError(f"the sample function failed on index {i}: {type(exc).__name__}: {exc}") from None
        if i >= WARMUP_SAMPLES:
            times.append((time.perf_counter() - started) * 1000.0)
    model = cpu_model if cpu_model is not None else host_cpu_model()
    ms_here = statistics.median(times)
    reference, score = on_reference_core(ms_here, model)
    return LoaderTime(ms_here=ms_here, ms_reference=reference, samples=samples, cpu_model=model, cpu_score=score)


def describe(result: LoaderTime) -> str:
    """Return the line the probe prints for it."""
    where = (f"{result.cpu_model}, single-thread score {result.cpu_score:,.0f} in catalog/cpu_scores.py"
             if result.cpu_score else f"{result.cpu_model}, not in the score table: taken as a reference core")
    return (f"pre-processing: {result.ms_here:.3f} ms a sample here (median of {result.samples}; {where}) = "
            f"{result.ms_reference:.3f} ms on a reference core (dataset.preprocess_ms_per_sample)")
