"""`gpugauge estimate SPEC [flags] [--gpu SLUG|all]... [--gpu-count N] [--json]`: what the job needs, per GPU.

SPEC is a spec file or a preset name, with the common fields as flags (job_flags.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.markup import escape
from rich.table import Table

from catalog.loader import load_catalog_summary
from service.commands.common import CliError, fail, job_title, print_json, working
from service.commands.common import console as make_console
from service.commands.job_flags import add_job_flags, load_job_from_args
from service.commands.runs import open_runs_store
from service.commands.stores import open_store
from service.commands.tables import Column, fitted_table, left_out_note
from workers.render import bar, fmt_bytes, fmt_hours, fmt_quantity, fmt_rate
from workers.schemas import EstimateAnswer, EstimateAnswerSchema, EstimateRequestSchema
from workers.sizing.errors import SizingError
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE
from workers.sizing.requirements import PerGpu, Requirements
from workers.tasks.runs import calibration_for


def register(subparsers: Any) -> None:
    """Add the `estimate` subcommand."""
    p = subparsers.add_parser("estimate", help="GPU memory, time, host memory, CPU and storage a job needs")
    add_job_flags(p)
    p.add_argument("--gpu", action="append", default=[], metavar="SLUG",
                   help="also fit and time the job on this GPU (repeatable, or several separated by commas), or "
                        "`all` for every GPU of the catalog; see `gpugauge catalog gpus`")
    p.add_argument("--gpu-count", type=int, default=None, metavar="N",
                   help="GPUs per machine (default: the fewest the spec's named split runs on, 1 without one)")
    p.add_argument("--json", action="store_true", help="print exactly what POST /v1/estimate returns")
    p.add_argument("--wide", action="store_true", help="every column, whatever the terminal's width")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Size the spec and print the requirements (or their JSON)."""
    try:
        catalog = load_catalog_summary(store=open_store())  # version, price date, GPUs: no offer is used
        asked = [slug.strip() for given in args.gpu for slug in given.split(",") if slug.strip()]  # a,b or repeated
        slugs = sorted(g.slug for g in catalog.gpus) if "all" in asked else asked
        data, job = load_job_from_args(args, schema=EstimateRequestSchema(),
                                       extra={"gpus": slugs, **({} if args.gpu_count is None
                                                                else {"gpu_count": args.gpu_count})})
        with working("estimating"):
            requirements = estimate_on_gpus(job, catalog.gpus, slugs=data["gpus"], gpu_count=data["gpu_count"],
                                            field="--gpu", calibration=calibration_for(open_runs_store(), catalog))
    except CliError as exc:
        return fail(str(exc))
    except SizingError as exc:
        return fail(f"{exc.field}: {exc.reason}")
    if args.json:
        print_json(EstimateAnswerSchema().dump(EstimateAnswer(requirements, catalog.version, catalog.prices_as_of)))
    else:
        print_requirements(requirements, title=job_title(job), wide=args.wide)
    return 0


def _cpu_need(req: Requirements) -> str:
    """Return the loader requirement as workers x single-thread score, e.g. "4 loader workers x 1,930".

    A need far below one reference core (light pre-processing spread over a big machine's workers)
    is said as such rather than as "score 0"; below one core, that one worker does it (not "25 loader
    workers x score 15").
    """
    if req.loader_workers <= 0 or req.cpu_single_thread_score <= 0:
        if any(w.code == "image-preprocess-not-given" for w in req.warnings):
            return ("no pre-processing given, so none counted; decoding or augmenting the images would need "
                    "more (image-preprocess-not-given)")
        return "no pre-processing given: any CPU keeps the GPUs fed"
    workers = f"{req.loader_workers} loader worker{'s' if req.loader_workers != 1 else ''}"
    share = req.loader_workers * req.cpu_single_thread_score / REFERENCE_CPU_SINGLE_THREAD_SCORE
    if share < LIGHT_LOADER_SHARE:
        amount = "under 1%" if share < 0.01 else f"{share:.0%}"
        return (f"light pre-processing: {amount} of one reference core (single-thread score "
                f"{REFERENCE_CPU_SINGLE_THREAD_SCORE:,.0f}) per GPU in all; any CPU keeps the GPUs fed")
    if share < 1.0:  # a machine's many workers each need little: one worker of the reference core does it
        return (f"pre-processing takes {share:.0%} of one reference core (single-thread score "
                f"{REFERENCE_CPU_SINGLE_THREAD_SCORE:,.0f}) per GPU: one loader worker keeps each GPU fed"
                + (f" (over {workers}, score {req.cpu_single_thread_score:,.0f} each)" if req.loader_workers > 1
                   else ""))
    return f"{workers} x single-thread score {req.cpu_single_thread_score:,.0f} per GPU"


# A per-GPU row whose memory differs from the headline by more than this share is explained under the table.
MEMORY_NOTE_SHARE = 0.05


def _memory_text(row: PerGpu) -> str:
    count = f"{row.gpu_count} x " if row.gpu_count > 1 else ""
    return f"{count}{row.gpu} {fmt_bytes(row.gpu_memory_bytes)}"


# Below this share of one reference core per GPU the loader need is "light" (a tenth of a core).
LIGHT_LOADER_SHARE = 0.1


# The per-GPU table's columns; priority 0 always shows (tables.py), the rest go first at narrow widths.
PER_GPU_COLUMNS: tuple[Column, ...] = (
    ("GPU", "left", 0), ("count", "right", 0), ("fits", "left", 0), ("memory", "right", 0),
    ("iteration", "right", 2), ("samples/s", "right", 1), ("training", "right", 0), ("bound by", "left", 3),
)


def per_gpu_rows(req: Requirements) -> list[list[str]]:
    """Return the per-GPU rows as text, one per (GPU, count)."""
    return [[row.gpu, str(row.gpu_count), "yes" if row.fits else "no", fmt_bytes(row.gpu_memory_bytes),
             f"{row.iteration_ms:,.1f} ms", fmt_rate(row.throughput_samples_per_s),
             fmt_hours(row.training_hours) if row.training_hours > 0 else "-",
             row.bottleneck + (" (calibrated)" if row.calibrated else "")] for row in req.per_gpu]


def print_requirements(req: Requirements, *, title: str, wide: bool = False, plan_note: str = "",
                       headline_from: str = "", show_plan: bool = True, headline_note: str = "") -> None:
    """Print requirements, memory breakdown, per-GPU fit and time, warnings and the out-of-memory plan.

    `plan_note` follows the plan's title (a recommendation whose options fit says so there);
    `headline_from` says what step the headline memory is when it is not the job as given on a current
    card (a recommendation of a named strategy gives the top option's). `show_plan` False leaves the
    reference card's out-of-memory table out (a recommendation prints its own plan, with options).
    `headline_note` follows the headline memory, which it marks as the job as given (a recommendation
    whose top option runs another strategy says that option's step there).
    """
    console = make_console()
    console.rule(f"[bold]{title}")
    b = req.gpu_memory_breakdown
    terms = {name.replace("_", " "): size for name, size in b.by_term().items()}
    measured = ", scaled to the measured step" if req.memory_calibrated else ""
    as_given = " as given" if headline_note else ""
    mem = Table(title=f"GPU memory per GPU: {fmt_bytes(req.gpu_memory_bytes)}{as_given}, peak in "
                      f"{req.peak_phase.replace('_', ' ')}{measured} (baseline formula of the domain notes: "
                      f"{fmt_bytes(req.baseline_formula_bytes)}){f'; {headline_note}' if headline_note else ''}")
    mem.add_column("term")
    mem.add_column("bytes", justify="right")
    mem.add_column("share")
    for name, value in terms.items():
        share = value / req.gpu_memory_bytes if req.gpu_memory_bytes else 0.0
        mem.add_row(name, fmt_bytes(value), f"{bar(share)} {share:.0%}")
    console.print(mem)
    storage = (f"storage {fmt_bytes(req.storage_min_bytes)}-{fmt_bytes(req.storage_max_bytes)}"
               if req.storage_max_bytes > 0 else "storage: no data set size given (dataset.bytes)")
    iterations = (f"{req.iterations_per_epoch:,} iterations per epoch, {req.iterations_total:,} in all"
                  if req.iterations_per_epoch > 0 else "no samples given (dataset.samples), so no run length")
    console.print(f"host memory {fmt_bytes(req.host_memory_bytes)}; {storage}; "
                  f"{fmt_quantity(req.flops_per_iteration, 'FLOP')} per iteration; {iterations}")
    console.print(f"CPU: {_cpu_need(req)}")
    if req.per_gpu:
        gpus, left_out = fitted_table("Per GPU", PER_GPU_COLUMNS, per_gpu_rows(req), width=console.width, wide=wide)
        console.print(gpus)
        if left_out:
            console.print(left_out_note(left_out))
        differs = [row for row in req.per_gpu
                   if abs(row.gpu_memory_bytes - req.gpu_memory_bytes) > MEMORY_NOTE_SHARE * req.gpu_memory_bytes]
        if differs:
            console.print(f"(memory: each row is that GPU's own step, with its attention kernel (fused from Maxwell "
                          f"on), its precision support and its reserve; the {fmt_bytes(req.gpu_memory_bytes)} above "
                          f"is {headline_from or 'the step on a current card'}: "
                          f"{', '.join(_memory_text(r) for r in differs[:3])})")
        if any(row.training_hours <= 0 for row in req.per_gpu):
            console.print("(training -: the spec gives no data set size, so no training time; "
                          "give dataset.samples or --samples)")
    for w in req.warnings:
        console.print(f"[yellow]warning[/] {escape(f'[{w.code}]')} {escape(w.message)}")
    if req.mitigations and show_plan:
        cards = ", ".join(dict.fromkeys(m.gpu for m in req.mitigations if m.gpu))
        plan = Table(title=f"Out of memory{f' on {cards}' if cards else ''}: what to change"
                           f"{plan_note}")
        for col in ("change", "memory", "time x", "details"):
            plan.add_column(col)
        for m in req.mitigations:
            plan.add_row(m.kind, fmt_bytes(m.gpu_memory_bytes), f"{m.time_factor:.2f}", m.description)
        console.print(plan)
