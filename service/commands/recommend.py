"""`gpugauge recommend SPEC [--json]`: the ranked machines for a job, computed in-process."""

from __future__ import annotations

import argparse
from datetime import date
from typing import Any

from rich.markup import escape
from rich.table import Table

from catalog.loader import load_catalog
from service.commands.catalog import open_store
from service.commands.common import CliError, fail, load_spec, print_json
from service.commands.common import console as make_console
from service.commands.estimate import print_requirements
from service.commands.runs import open_runs_store
from service.config import DEFAULTS
from workers.ranking.recommend import PER_GPU_OPTIONS, recommend
from workers.ranking.recommendation import Recommendation
from workers.render import fmt_bytes, fmt_hours, fmt_usd
from workers.schemas import RecommendationSchema
from workers.sizing.errors import SizingError
from workers.tasks.runs import calibration_for


def register(subparsers: Any) -> None:
    """Add the `recommend` subcommand."""
    p = subparsers.add_parser("recommend", help="rank cloud instances and on-prem cards for a job")
    p.add_argument("spec", help="a job spec file (JSON or YAML)")
    p.add_argument("--json", action="store_true", help="print the result a done recommendation job holds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rank the catalog for the spec and print the options."""
    try:
        data, job = load_spec(args.spec)
        catalog = load_catalog(store=open_store())
        # The rows a done job holds (the API's default: the options' GPUs), so --json prints the same.
        result = recommend(job, catalog, calibration=calibration_for(open_runs_store(), catalog),
                           per_gpu_rows=data.get("per_gpu", PER_GPU_OPTIONS), today=date.today(),
                           stale_after_days=int(DEFAULTS["STALE_PRICES_DAYS"]))
    except CliError as exc:
        return fail(str(exc))
    except SizingError as exc:
        return fail(f"{exc.field}: {exc.reason}")
    if args.json:
        print_json(RecommendationSchema().dump(result))
    else:
        print_recommendation(result, title=f"{job.model.name}, batch {job.training.batch_size} per GPU")
    return 0


def print_recommendation(rec: Recommendation, *, title: str) -> None:
    """Print the requirements, then the ranked options and the rejected families."""
    print_requirements(rec.requirements, title=title)
    console = make_console()
    table = Table(title=f"Options (catalog {rec.catalog_version}, prices as of {rec.prices_as_of}; "
                        "* = on the cost/time Pareto front)")
    numeric = ("#", "$/h", "time", "cost", "kWh", "kg CO2e")
    for col in ("#", "provider", "instance", "region", "pricing", "GPUs", "$/h", "time", "cost", "kWh", "kg CO2e",
                "why"):
        table.add_column(col, justify="right" if col in numeric else "left")
    for o in rec.options:
        kwh, co2 = (f"{o.energy.energy_kwh:,.1f}", f"{o.energy.co2e_kg:,.1f}") if o.energy else ("-", "-")
        table.add_row(f"{o.rank}{'*' if o.pareto else ''}", o.provider, o.instance_type, o.region, o.pricing,
                      f"{o.gpu_count}x {o.gpu} ({fmt_bytes(o.gpu_memory_bytes)})", f"{o.price_per_hour_usd:.2f}",
                      fmt_hours(o.training_hours), fmt_usd(o.training_cost_usd), kwh, co2, o.why)
    console.print(table)
    if not rec.options:
        console.print("[red]No option fits within the constraints.[/]")
    for m in rec.plan:
        console.print(escape(f"plan: [{m.kind}] {m.description}"))
        for line in m.opens:
            console.print(escape(f"    opens: {line}"))
    if rec.rejected:
        console.print(f"[dim]{len(rec.rejected)} offer families rejected, e.g.:[/]")
        for r in rec.rejected[:8]:
            console.print(f"[dim]  {r.provider} {r.instance_type}: {r.reason}[/]")
