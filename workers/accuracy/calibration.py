"""The procedure that fitted efficiency.py's time factors: coordinate descent on the "fit" split.

A development tool, run by `gpugauge validate --fit`; the sizing core never calls it. It predicts the
throughput of every "fit" record of workers/accuracy/data/measurements.json, and minimises the summed
|log(predicted / measured)| (an L1 loss: a median fit, robust to the few records the model cannot
describe) over the parameters of FITTED, one at a time by golden-section search on a log scale within
each parameter's bounds, starting from PRIORS (the values before calibration), for ROUNDS rounds in
FITTED's order. The "holdout" records take no part. The search writes into the core's tables while it
runs and always restores them; `applied` does the same for a set of values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from catalog.types import GpuSpec
from workers.accuracy.accuracy import measured_samples_per_s
from workers.accuracy.jobs import MeasuredJob, record_job
from workers.sizing import efficiency, timing
from workers.sizing.efficiency import MathUnit
from workers.sizing.stats import LayerKind

ROUNDS = 15
GOLDEN_STEPS = 14  # golden-section steps per parameter and round: the bracket shrinks 0.618^14, to 0.1%


@dataclass(frozen=True)
class Parameter:
    """One fitted number, written to one or more entries of the core's tables."""

    name: str
    entries: tuple[tuple[str, object], ...]  # (table, key); table "BANDWIDTH_EFFICIENCY" has no key
    low: float
    high: float
    prior: float


def _efficiency(kind: LayerKind, unit: MathUnit, prior: float) -> Parameter:
    """Describe one COMPUTE_EFFICIENCY entry, bounded to 0.05-0.90 of the unit's peak."""
    return Parameter(f"{kind.value}.{unit.value}", (("COMPUTE_EFFICIENCY", (kind, unit)),), 0.05, 0.90, prior)


FITTED: tuple[Parameter, ...] = (
    _efficiency(LayerKind.CONV, MathUnit.SIMT, 0.65),
    _efficiency(LayerKind.CONV, MathUnit.TENSOR, 0.40),
    _efficiency(LayerKind.CONV, MathUnit.TF32, 0.35),
    _efficiency(LayerKind.DENSE, MathUnit.SIMT, 0.75),
    _efficiency(LayerKind.DENSE, MathUnit.TENSOR, 0.60),
    _efficiency(LayerKind.DENSE, MathUnit.TF32, 0.55),
    Parameter("bandwidth", (("BANDWIDTH_EFFICIENCY", None),), 0.30, 0.95, 0.75),
    Parameter("maxwell-pascal.simt", (("ARCHITECTURE_FACTOR", ("maxwell", MathUnit.SIMT)),
                                      ("ARCHITECTURE_FACTOR", ("pascal", MathUnit.SIMT))), 0.30, 1.0, 1.0),
    Parameter("hopper-blackwell.tensor", tuple(("ARCHITECTURE_FACTOR", (arch, MathUnit.TENSOR))
                                               for arch in ("hopper", "blackwell")), 0.30, 1.0, 0.6),
    Parameter("hopper-blackwell.tf32", tuple(("ARCHITECTURE_FACTOR", (arch, MathUnit.TF32))
                                             for arch in ("hopper", "blackwell")), 0.30, 1.0, 0.6),
)
PRIORS: dict[str, float] = {p.name: p.prior for p in FITTED}


@dataclass(frozen=True)
class FitResult:
    """The fitted values and the loss before (at PRIORS) and after."""

    values: dict[str, float]
    loss_before: float
    loss_after: float


def _read(parameter: Parameter) -> float:
    """Return a parameter's value in the core's tables (its first entry)."""
    table, key = parameter.entries[0]
    if table == "BANDWIDTH_EFFICIENCY":
        return efficiency.BANDWIDTH_EFFICIENCY
    values: dict[Any, float] = getattr(efficiency, table)
    return values.get(key, 1.0)


def _write(parameter: Parameter, value: float) -> None:
    """Write a value into every entry of a parameter."""
    for table, key in parameter.entries:
        if table == "BANDWIDTH_EFFICIENCY":
            efficiency.BANDWIDTH_EFFICIENCY = value
        else:
            getattr(efficiency, table)[key] = value
    timing.forget_cached_times()


@contextmanager
def applied(values: Mapping[str, float]) -> Iterator[None]:
    """Run a block with these parameter values in the core's tables, then restore the shipped ones."""
    by_name = {p.name: p for p in FITTED}
    saved: dict[str, dict[tuple[str, object], float | None]] = {
        p.name: {(table, key): _entry(table, key) for table, key in p.entries} for p in FITTED}
    try:
        for name, wanted in values.items():
            _write(by_name[name], wanted)
        yield
    finally:
        for entries in saved.values():
            for (table, key), value in entries.items():
                _restore(table, key, value)
        timing.forget_cached_times()


def _entry(table: str, key: object) -> float | None:
    """Return one table entry (None: absent)."""
    if table == "BANDWIDTH_EFFICIENCY":
        return efficiency.BANDWIDTH_EFFICIENCY
    values: dict[Any, float] = getattr(efficiency, table)
    return values.get(key)


def _restore(table: str, key: object, value: float | None) -> None:
    """Put one table entry back as it was (removing it when it was absent)."""
    if table == "BANDWIDTH_EFFICIENCY":
        if value is not None:
            efficiency.BANDWIDTH_EFFICIENCY = value
        return
    values: dict[Any, float] = getattr(efficiency, table)
    if value is None:
        values.pop(key, None)
    else:
        values[key] = value


def throughput_loss(cases: Sequence[tuple[MeasuredJob, float]], gpus: Mapping[str, GpuSpec]) -> float:
    """Return the summed |log(predicted / measured)| samples/s over the cases."""
    total = 0.0
    for case, measured in cases:
        training = case.job.training
        time = timing.estimate_iteration_ms(case.job.model, training, gpus[case.gpu], gpu_count=case.gpu_count)
        predicted = training.batch_size * case.gpu_count * 1000.0 / time.total_ms
        total += abs(math.log(predicted / measured))
    return total


def _golden(parameter: Parameter, loss: Callable[[], float]) -> tuple[float, float]:
    """Return the value in the parameter's bounds that minimises the loss (log-scale golden section)."""
    ratio = (math.sqrt(5) - 1) / 2
    low, high = math.log(parameter.low), math.log(parameter.high)

    def at(x: float) -> float:
        _write(parameter, math.exp(x))
        return loss()

    c, d = high - ratio * (high - low), low + ratio * (high - low)
    fc, fd = at(c), at(d)
    for _ in range(GOLDEN_STEPS):
        if fc <= fd:
            high, d, fd = d, c, fc
            c = high - ratio * (high - low)
            fc = at(c)
        else:
            low, c, fc = c, d, fd
            d = low + ratio * (high - low)
            fd = at(d)
    return (math.exp(c), fc) if fc <= fd else (math.exp(d), fd)


def fit_efficiency(records: Sequence[Mapping[str, Any]], gpus: Mapping[str, GpuSpec], *,
                   rounds: int = ROUNDS, on_progress: Callable[[int, int], None] | None = None) -> FitResult:
    """Fit FITTED on the "fit" records' throughput, from PRIORS; the core's tables are left as shipped.

    `on_progress(done, total)` is called after each parameter's search (rounds x parameters in all).
    """
    cases = [(record_job(r), value) for r in records
             if r.get("split") == "fit" and (value := measured_samples_per_s(r)) is not None]
    with applied(PRIORS):
        current = dict(PRIORS)
        before = best = throughput_loss(cases, gpus)
        total, done = rounds * len(FITTED), 0
        for _ in range(rounds):
            for parameter in FITTED:
                value, loss = _golden(parameter, lambda: throughput_loss(cases, gpus))
                if loss < best - 1e-12:
                    best, current[parameter.name] = loss, value
                _write(parameter, current[parameter.name])
                done += 1
                if on_progress is not None:
                    on_progress(done, total)
    return FitResult(values=current, loss_before=before, loss_after=best)


def shipped_values() -> dict[str, float]:
    """Return the values the core ships with, by parameter name."""
    return {p.name: _read(p) for p in FITTED}
