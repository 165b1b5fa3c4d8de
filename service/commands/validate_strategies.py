"""`gpugauge validate`'s section on jobs bigger than one GPU: error per strategy, beside DeepSpeed and accelerate."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from rich.table import Table

from service.commands.common import console as make_console
from workers.accuracy.strategies import StrategyRow, StrategySummary
from workers.render import fmt_bytes

METRIC_UNITS = {"memory": "bytes", "throughput": "samples/s", "fits": "fits"}


def _value(value: float, metric: str) -> str:
    """Format a figure of a strategy row."""
    if metric == "memory":
        return str(fmt_bytes(value))
    if metric == "fits":
        return "fits" if value else "OOM"
    return f"{value:,.2f}/s"


def _pct(value: float | None) -> str:
    """Format a relative error, or a dash where there is none."""
    return "-" if value is None or not math.isfinite(value) else f"{value:+.0%}"


def print_strategy_rows(rows: list[StrategyRow]) -> None:
    """Print each strategy record's figure, ours, and for memory the two estimators' model-state figures."""
    table = Table(title=f"Jobs bigger than one GPU: predicted against measured ({len(rows)} figures)")
    for column in ("record", "strategy", "metric", "measured", "predicted", "error", "DeepSpeed", "accelerate"):
        table.add_column(column, justify="left" if column in ("record", "strategy", "metric") else "right")
    for r in rows:
        error = ("agrees" if r.agrees else "disagrees") if r.metric == "fits" else f"{r.error:+.0%}"
        ds = str(fmt_bytes(r.deepspeed_bytes)) if r.metric == "memory" else ""
        acc = str(fmt_bytes(r.accelerate_bytes)) if r.metric == "memory" else ""
        table.add_row(r.id, r.strategy, r.metric, _value(r.measured, r.metric), _value(r.predicted, r.metric),
                      error, ds, acc)
    make_console().print(table)


def print_strategy_summaries(summaries: list[StrategySummary]) -> None:
    """Print the median errors per strategy family; memory rows also give the estimators' errors."""
    table = Table(title="Error per strategy (DeepSpeed and accelerate count model states only)")
    for column in ("strategy", "metric", "n", "median |error|", "bias", "DeepSpeed |error|",
                   "accelerate |error|", "agreement"):
        table.add_column(column, justify="left" if column in ("strategy", "metric") else "right")
    for s in summaries:
        agreement = "-" if s.agreement is None else f"{s.agreement:.0%}"
        table.add_row(s.strategy, s.metric, str(s.count), _pct(s.median_abs_error).lstrip("+"), _pct(s.median_error),
                      _pct(s.deepspeed_median_abs_error).lstrip("+"), _pct(s.accelerate_median_abs_error).lstrip("+"),
                      agreement)
    make_console().print(table)


def strategy_payload(rows: list[StrategyRow], summaries: list[StrategySummary]) -> dict[str, Any]:
    """Return the strategy section as JSON-able data (NaN as None)."""
    def finite(values: dict[str, Any]) -> dict[str, Any]:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in values.items()}

    return {"rows": [finite(asdict(r)) for r in rows], "summary": [finite(asdict(s)) for s in summaries]}
