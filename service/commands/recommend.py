"""`gpugauge recommend SPEC [flags] [--wide] [--json]`: the ranked machines for a job, computed in-process.

SPEC is a spec file or a preset name; flags for the common fields are merged over it (job_flags.py).
The table fits 80 columns: identifiers (instance types, regions, GPU slugs) are never cut, so at
narrow widths each option takes two lines, and the long `why` goes to a detail view under the table
for the first option; `--wide` shows every column, the `why` of each option among them.
"""

from __future__ import annotations

import argparse
import re
from datetime import date
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from catalog.freshness import prices_dated_words
from catalog.loader import load_catalog
from service.commands.common import CliError, fail, job_title, print_json, working
from service.commands.common import console as make_console
from service.commands.estimate import print_requirements
from service.commands.job_flags import add_job_flags, load_job_from_args
from service.commands.runs import open_runs_store
from service.commands.stores import open_store
from service.commands.tables import Column, fitted_table, left_out_note, natural_width
from service.config import DEFAULTS
from workers.ranking.purchase import PurchaseOption
from workers.ranking.recommend import PER_GPU_OPTIONS, recommend
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.strategy_words import strategy_text
from workers.render import fmt_bytes, fmt_hours, fmt_usd
from workers.schemas import dump_recommendation
from workers.sizing.errors import SizingError
from workers.tasks.runs import calibration_for

WIDE_COLUMNS = 120  # at this width or more, one line per option with every column


def register(subparsers: Any) -> None:
    """Add the `recommend` subcommand."""
    p = subparsers.add_parser("recommend", help="rank cloud machines for a job (and, asked, cards to buy)")
    add_job_flags(p)
    p.add_argument("--gpu", action="append", dest="only_gpus", metavar="NAME",
                   help="only machines with this GPU: a slug or a name (\"a100\" is each A100); repeatable or "
                        "comma-separated (constraints.gpus)")
    p.add_argument("--wide", action="store_true", help="every column, each option's reasons among them")
    p.add_argument("--json", action="store_true", help="print the result a done recommendation job holds")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Rank the catalog for the spec and print the options."""
    try:
        data, job = load_job_from_args(args)
        with working("ranking the catalog"):
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
        print_json(dump_recommendation(result))
    else:
        print_recommendation(result, title=job_title(job), wide=args.wide)
    return 0


def _time(o: RankedOption) -> str:
    if o.percentile_hours > 0 and o.percentile_hours > o.training_hours * 1.0005:
        return f"{fmt_hours(o.training_hours)} (p{o.percentile * 100:.0f} {fmt_hours(o.percentile_hours)})"
    return fmt_hours(o.training_hours)


def _cost(o: RankedOption) -> str:
    if o.percentile_cost_usd > 0 and o.percentile_cost_usd > o.training_cost_usd * 1.0005:
        return f"{fmt_usd(o.training_cost_usd)} (p{o.percentile * 100:.0f} {fmt_usd(o.percentile_cost_usd)})"
    return fmt_usd(o.training_cost_usd)


def options_table(rec: Recommendation, *, width: int, wide: bool) -> Table:
    """Return the options as a table that fits `width` columns without cutting an identifier.

    One line an option (every column) when asked for with `wide`, or when that fits the width;
    otherwise two lines an option, the identifiers of each on their own line. Every column but the
    `why` is as wide as its longest line, so rich never shortens one.
    """
    if wide:
        return _table(rec, one_line=True, wide=True)
    if width >= WIDE_COLUMNS:
        headers, rows = _cells(rec, one_line=True)
        if _natural_width(headers, rows) <= width:
            return _build(rec, headers, rows, wide=False)
    headers, rows = _cells(rec, one_line=False)
    return _build(rec, headers, rows, wide=False)


def _table(rec: Recommendation, *, one_line: bool, wide: bool) -> Table:
    headers, rows = _cells(rec, one_line=one_line)
    if wide:
        headers = [*headers, "why"]
        rows = [[*row, o.why] for row, o in zip(rows, rec.options, strict=True)]
    return _build(rec, headers, rows, wide=wide)


_NUMERIC = frozenset({"#", "$/h", "$/h all", "time", "cost", "kg CO2e"})


def _cells(rec: Recommendation, *, one_line: bool) -> tuple[list[str], list[list[str]]]:
    """Return the column headers and each option's cells as text.

    An option on several machines shows as "n x instance", its GPUs as all n machines' and its
    hourly price as all n machines' (the header says so when any option spans machines).
    """
    several = any(o.nodes > 1 for o in rec.options)
    if one_line:
        headers = ["#", "provider", "n x instance" if several else "instance", "region", "pricing", "GPUs",
                   "$/h all" if several else "$/h", "time", "cost", "kg CO2e"]
    else:
        headers = ["#", "n x machine" if several else "machine", "time", "cost"]
    rows = []
    for o in rec.options:
        rank = f"{o.rank}{'*' if o.pareto else ''}"
        machines = f"{o.nodes} x {o.instance_type}" if o.nodes > 1 else o.instance_type
        gpus = f"{o.gpu_count * o.nodes}x {o.gpu}"
        time, cost = _time(o).replace(" (", "\n("), _cost(o).replace(" (", "\n(")
        if one_line:
            rows.append([rank, o.provider, machines, o.region, o.pricing, gpus,
                         f"{o.price_per_hour_usd * o.nodes:.2f}", time, cost,
                         f"{o.energy.co2e_kg:,.1f}" if o.energy else "-"])
        else:
            hourly = f", ${o.price_per_hour_usd * o.nodes:,.2f}/h" if o.nodes > 1 else ""
            rows.append([rank, f"{o.provider} {machines}\n{o.region}, {o.pricing}, {gpus}{hourly}", time, cost])
    return headers, rows


def _column_widths(headers: list[str], rows: list[list[str]]) -> list[int]:
    return [max(len(line) for text in [h, *(r[i] for r in rows)] for line in text.split("\n"))
            for i, h in enumerate(headers)]


def _natural_width(headers: list[str], rows: list[list[str]]) -> int:
    """Return the columns the table takes with no cell shortened (tables.natural_width of its widths)."""
    return natural_width(_column_widths(headers, rows))


def _build(rec: Recommendation, headers: list[str], rows: list[list[str]], *, wide: bool) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False,
                  title=f"Options (catalog {rec.catalog_version}, {prices_dated_words(rec.prices_as_of)}; "
                        "* = on the cost/time Pareto front)")
    widths = _column_widths(headers, rows)
    for header, col_width in zip(headers, widths, strict=True):
        if header == "why":
            table.add_column(header, ratio=1)
        else:
            table.add_column(header, justify="right" if header in _NUMERIC else "left", no_wrap=True,
                             min_width=col_width)
    for row in rows:
        table.add_row(*row)
    return table


def _age(as_of: str) -> str:
    """Return " (N days ago)" for an ISO day before today, "" for a month or a day not yet past."""
    try:
        days = (date.today() - date.fromisoformat(as_of[:10])).days
    except ValueError:
        return ""
    return f" ({days:,} days ago)" if days > 0 and len(as_of) >= 10 else ""


def print_recommendation(rec: Recommendation, *, title: str, wide: bool = False) -> None:
    """Print the requirements, the ranked options, the first one's reasons, buying, and the rejected."""
    note = " (the ranked options below fit as they are)" if rec.options else ""
    top = rec.options[0] if rec.options else None
    named = top is not None and top.parallelism is not None \
        and rec.requirements.gpu_memory_bytes == top.parallelism.gpu_memory_per_gpu_bytes
    headline = (f"the top option's step ({strategy_text(top.parallelism, nodes=top.nodes)}); the rows are the "
                "batch as given" if named and top is not None and top.parallelism is not None else "")
    # Where nothing holds the job as given, the recommendation's plan (below the options) is worked out on
    # the card closest to fitting, each step with the options it opens: the reference card's table would
    # say the same about a card nobody would pick for the job.
    other = (f"the top option's step ({strategy_text(top.parallelism, nodes=top.nodes)}): "
             f"{fmt_bytes(top.parallelism.gpu_memory_per_gpu_bytes)}"
             if not named and top is not None and top.parallelism is not None else "")
    # Where options fit, the reference card's table answers a question the user did not ask (a T4 under an
    # 8 x B200 answer): one line says where it is.
    print_requirements(rec.requirements, title=title, wide=wide, plan_note=note, headline_from=headline,
                       show_plan=not rec.plan and not rec.options, headline_note=other)
    console = make_console()
    cards = ", ".join(dict.fromkeys(m.gpu for m in rec.requirements.mitigations if m.gpu))
    if rec.options and not rec.plan and cards:
        console.print(f"(on {cards}, the reference card, the job as given runs out of memory; "
                      f"`gpugauge estimate SPEC --gpu {cards.split(', ')[0]}` shows what to change there)")
    if rec.options:
        console.print(options_table(rec, width=console.width, wide=wide))
        top = rec.options[0]
        if not wide:
            console.print(escape(f"#1 {top.provider} {top.instance_type} ({top.region}, {top.pricing}): {top.why}"))
        for w in top.warnings:
            console.print(f"[yellow]#1 warning[/] {escape(f'[{w.code}]')} {escape(w.message)}")
        if top.price_source:
            when = (f"as of {top.price_as_of}{_age(top.price_as_of)}" if top.price_as_of
                    else "at your electricity rate (no market date)" if top.pricing == "owned"
                    else "undated (its source names no day)")
            console.print(f"[dim]price: ${top.price_per_hour_usd:,.4g}/h {when}; {escape(top.price_source)}[/]")
        if top.interruption_source:
            console.print(f"[dim]spot figures: {escape(top.interruption_source)}[/]")
        if top.data_transfer:
            moved = f"{top.data_transfer_cost_usd:,.2f} USD; " if top.data_transfer_cost_usd > 0 else ""
            console.print(f"[dim]data: {moved}{escape(top.data_transfer)}[/]")
    elif rec.purchase:  # the purchase question alone (`--provider onprem`, no owned cards): nothing to rent
        console.print("No rented or owned option within the constraints; the cards to buy follow.")
    else:
        console.print("[red]No option fits within the constraints.[/]")
    if rec.purchase:
        print_purchase(rec.purchase, console=console, wide=wide)
    if len(rec.scaling) > 1:
        top = rec.options[0]
        strategies = {p.strategy for p in rec.scaling}
        same = len(strategies) == 1
        which = "the top option's strategy on each" if same else "the fastest strategy that fits each"
        scaling = Table(title=f"Adding machines: {top.instance_type}, {which}")
        for col in ("machines", "GPUs", "time", "cost", "speed-up", "efficiency"):
            scaling.add_column(col, justify="right")
        if not same:
            scaling.add_column("strategy", justify="left")
        for p in rec.scaling:
            row = [str(p.nodes), str(p.total_gpus), fmt_hours(p.training_hours), fmt_usd(p.training_cost_usd),
                   f"{p.speedup:.2f}x", f"{p.efficiency:.0%}"]
            scaling.add_row(*row, *(() if same else (escape(p.strategy),)))
        console.print(scaling)
        if any(p.efficiency > 1.005 for p in rec.scaling):
            console.print(f"({superlinear_note([p.strategy for p in rec.scaling])})")
    for m in rec.plan:
        console.print(escape(f"plan: [{m.kind}] {m.description}"))
        for line in m.opens:
            console.print(escape(f"    opens: {line}"))
    if rec.rejected:
        console.print(f"[dim]{len(rec.rejected)} offer families rejected, e.g.:[/]")
        for r in rec.rejected[:8]:
            console.print(f"[dim]  {escape(r.provider)} {escape(r.instance_type)}: {escape(r.reason)}[/]")


UNTIMED = " (-: no dataset.samples, so no time; ordered by what a sample costs over the cards' life)"


def print_purchase(rows: tuple[PurchaseOption, ...], *, console: Console, wide: bool = False) -> None:
    """Print the "what would we buy" section: purchase, power, job time, break-even against the best rental.

    Machine names are never cut: at a narrow width the power, then the job's time, are left out (named
    under the table), the purchase price, break-even and verdict stay.
    """
    first = rows[0]
    columns: list[Column] = [("machine", "left", 0), ("purchase", "right", 0), ("job", "right", 2),
                             ("power", "right", 3), ("break-even h", "right", 0), ("pays off", "right", 1)]
    rented = first.rental_cost_usd is not None  # none in scope: nothing to break even against, not "never"
    timed = first.job_hours > 0  # no data set size: no run's time or power (the order is a sample's cost)
    cells = [[p.instance_type, fmt_usd(p.purchase_usd), fmt_hours(p.job_hours) if timed else "-",
              fmt_usd(p.power_cost_usd) if timed else "-",
              "-" if not rented else "never" if p.break_even_hours is None else f"{p.break_even_hours:,.0f}",
              "-" if not rented else "yes" if p.pays_off else "no"] for p in rows]
    if any(p.strategy for p in rows):  # the strategy search's purchase: how the job runs on each
        columns.append(("how it runs", "left", 4))
        for row, p in zip(cells, rows, strict=True):
            row.append(p.strategy or "as given")
    table, left_out = fitted_table("What would we buy (capital spending; never ranked against rentals)", columns,
                                   cells, width=console.width, wide=wide)
    console.print(table)
    if left_out:
        console.print(left_out_note(left_out))
    rental = (f"the best rental for this job, {first.rental} at {fmt_usd(first.rental_cost_usd)} a run"
              if first.rental_cost_usd is not None
              else "a rental, but no rental in scope meets the constraints, so none is given (-)")
    console.print(escape(
        f"Purchase: cards at their listed price plus a {fmt_usd(first.host_usd)} host; job: its time on the "
        f"cards{'' if timed else UNTIMED}; "
        f"power: per job at ${first.electricity_usd_per_kwh:g}/kWh; break-even: hours of use at which "
        f"owning costs what renting would, against {rental}. Pays off: the break-even falls within "
        f"{first.hours_of_use:,.0f} h of use ({first.lifetime_years:g} years at {first.utilisation:.0%} use)."))
    if first.strategy and "how it runs" in left_out:
        console.print(escape(f"How it runs: each machine with the fastest strategy that fits it; "
                             f"{first.instance_type}: {first.strategy} (--wide names each)."))


_SPAN = re.compile(r" over \d+ GPUs( on \d+ machines)?")


def superlinear_note(strategies: list[str]) -> str:
    """Say why adding machines gained more than their share, from the strategy of each machine count."""
    causes = []
    if any(word in text for text in strategies for word in ("ZeRO", "FSDP", "shard")):
        causes.append("a sharded strategy updates 1/N of the weights on each of N GPUs, so the optimizer step "
                      "shrinks as GPUs are added")
    if len({_SPAN.sub("", text) for text in strategies}) > 1:
        causes.append("with fewer machines the job fits only with a slower strategy, named per row; the extra "
                      "machines buy back that strategy's cost as well as their share")
    return "efficiency above 100%: " + "; and ".join(causes or ["the fewest machines' time is the base"])
