"""`gpugauge validate [--split fit|holdout|all] [--json]`: the sizing core against public measurements."""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from catalog.gpus import gpus_by_slug
from service.commands.common import console as make_console
from service.commands.common import fail, print_json, working
from service.commands.validate_scaling import print_scaling, scaling_payload
from service.commands.validate_strategies import print_strategy_rows, print_strategy_summaries, strategy_payload
from workers.accuracy.accuracy import MEASUREMENTS_PATH, SPLITS, Row, Summary, compare_all, load_measurements, summarise
from workers.accuracy.calibration import PRIORS, FitResult, fit_efficiency, shipped_values
from workers.accuracy.scaling import compare_scaling, load_scaling, summarise_scaling
from workers.accuracy.strategies import (
    STRATEGIES_PATH,
    compare_strategies,
    load_strategy_records,
    sharded_memory_records,
    summarise_strategies,
)
from workers.render import fmt_bytes
from workers.sizing.errors import SizingError

METRIC_TITLES = {
    "memory": "peak GPU memory (relative error)",
    "throughput": "throughput, samples/s (relative error)",
    "max_batch": "largest batch that fit (fit/no-fit agreement)",
    "runs": "the run's batch fits the card (agreement)",
}


def register(subparsers: Any) -> None:
    """Add the `validate` subcommand."""
    p = subparsers.add_parser("validate", help="compare the sizing core with public training measurements")
    p.add_argument("--split", choices=SPLITS, default="all",
                   help="the records to show: those the factors were fitted on, the held-out ones, or all")
    p.add_argument("--json", action="store_true", help="print every row and the summaries as JSON")
    p.add_argument("--notes", action="store_true", help="add each row's note (what bounds the time, the model built)")
    p.add_argument("--fit", action="store_true",
                   help="re-run the calibration of the time factors on the fit split (about a minute) and "
                        "print the fitted values beside the shipped ones")
    p.add_argument("--measurements", default=str(MEASUREMENTS_PATH), metavar="PATH",
                   help="the measurement records (default: workers/accuracy/data/measurements.json)")
    p.add_argument("--strategies", default=str(STRATEGIES_PATH), metavar="PATH",
                   help="the records of jobs bigger than one GPU (default: workers/accuracy/data/strategies.json)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Predict every record, print each comparison and the error summaries; accuracy never fails the run."""
    try:
        records = load_measurements(Path(args.measurements))
        with working("predicting the measured records"):
            rows = compare_all(records, gpus_by_slug())
    except (OSError, json.JSONDecodeError) as exc:
        return fail(f"--measurements: cannot read {args.measurements}: {exc}")
    except (KeyError, TypeError, ValueError, SizingError) as exc:
        return fail(f"--measurements: a record could not be predicted: {exc}")
    if args.fit:
        with working("fitting the time factors") as advance:
            fitted = fit_efficiency(records, gpus_by_slug(), on_progress=advance)
        return print_fit(fitted, as_json=args.json)
    try:
        strategy_records = load_strategy_records(Path(args.strategies)) + sharded_memory_records(records)
        strategy_rows = [r for r in compare_strategies(strategy_records, gpus_by_slug())
                         if args.split == "all" or r.split == args.split]
    except (OSError, json.JSONDecodeError) as exc:
        return fail(f"--strategies: cannot read {args.strategies}: {exc}")
    except (KeyError, TypeError, ValueError, SizingError) as exc:
        return fail(f"--strategies: a record could not be predicted: {exc}")
    strategy_summaries = summarise_strategies(strategy_rows)
    scaling_rows = [compare_scaling(r, gpus_by_slug()) for r in load_scaling()]
    scaling_summary = summarise_scaling(scaling_rows)
    chosen = [row for row in rows if args.split == "all" or row.split == args.split]
    splits = SPLITS if args.split == "all" else (args.split,)
    summaries = summarise(rows, splits=splits)
    if args.json:
        print_json({"rows": [_finite(asdict(row)) for row in chosen],
                    "summary": [_finite(asdict(summary)) for summary in summaries],
                    "strategies": strategy_payload(strategy_rows, strategy_summaries),
                    "scaling": scaling_payload(scaling_rows, scaling_summary)})
    else:
        print_rows(chosen, title=f"Predicted against measured ({args.split}: {len(chosen)} figures)",
                   notes=args.notes)
        print_summaries(summaries)
        print_strategy_rows(strategy_rows)
        print_strategy_summaries(strategy_summaries)
        print_scaling(scaling_rows, scaling_summary)
    return 0


def _finite(values: dict[str, Any]) -> dict[str, Any]:
    """Replace NaN and infinities by None so that the JSON stays strict."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in values.items()}


def format_value(value: float, unit: str) -> str:
    """Format a predicted or measured figure in its unit."""
    if unit == "bytes":
        return fmt_bytes(value)
    if unit == "samples/s":
        return f"{value:,.1f}/s"
    if unit == "fits":
        return "fits" if value else "does not fit"
    return f"{value:,.0f}"


def format_error(row: Row) -> str:
    """Format a row's error: signed percent, or the fit/no-fit verdict."""
    if row.metric == "runs":
        return "agrees" if row.agrees else "[red]disagrees[/]"
    text = f"{row.error:+.1%}"
    if row.agrees is not None:
        text += " agrees" if row.agrees else " [red]disagrees[/]"
    return text


def print_rows(rows: list[Row], *, title: str, notes: bool = False) -> None:
    """Print every comparison, one row per measured figure."""
    table = Table(title=title)
    columns = ["id", "model", "GPU", "batch", "precision", "metric", "predicted", "measured", "error"]
    for col in [*columns, *(["note"] if notes else [])]:
        table.add_column(col, justify="right" if col in ("batch", "predicted", "measured", "error") else "left",
                         no_wrap=col in ("id", "GPU"))
    for row in rows:
        gpu = row.gpu if row.gpu_count == 1 else f"{row.gpu_count} x {row.gpu}"
        metric = f"memory ({row.note.split(';')[0]})" if row.metric == "memory" else row.metric
        cells = [escape(row.id), escape(row.model), gpu, str(row.batch_size), row.precision, metric,
                 format_value(row.predicted, row.unit), format_value(row.measured, row.unit), format_error(row)]
        table.add_row(*cells, *([escape(row.note)] if notes else []))
    make_console().print(table)


def print_summaries(summaries: list[Summary]) -> None:
    """Print the median and 90th percentile of the errors per metric and split."""
    table = Table(title="Errors per metric and split (absolute relative error)")
    for col in ("metric", "split", "count", "median", "p90", "median signed", "agreement"):
        table.add_column(col, justify="left" if col in ("metric", "split") else "right")
    for s in summaries:
        agreement = "" if s.agreement is None else f"{s.agreement:.0%}"
        errors = (["-", "-", "-"] if s.metric == "runs"  # a verdict only: no size to the error
                  else [f"{s.median_abs_error:.1%}", f"{s.p90_abs_error:.1%}", f"{s.median_error:+.1%}"])
        table.add_row(METRIC_TITLES.get(s.metric, s.metric), s.split, str(s.count), *errors, agreement)
    make_console().print(table)


def print_fit(result: FitResult, *, as_json: bool) -> int:
    """Print the calibration's fitted values beside the priors and the shipped ones."""
    shipped = shipped_values()
    if as_json:
        print_json({"priors": PRIORS, "shipped": shipped, "fitted": result.values,
                    "loss_before": result.loss_before, "loss_after": result.loss_after})
        return 0
    table = Table(title="Time factors fitted on the fit split (sum of |log(predicted / measured)| "
                        f"{result.loss_before:.2f} at the priors -> {result.loss_after:.2f})")
    for col in ("parameter", "prior", "shipped", "fitted"):
        table.add_column(col, justify="left" if col == "parameter" else "right")
    for name, value in result.values.items():
        table.add_row(name, f"{PRIORS[name]:.3f}", f"{shipped[name]:.3f}", f"{value:.3f}")
    make_console().print(table)
    return 0
