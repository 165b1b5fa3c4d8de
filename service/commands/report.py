"""`gpugauge report JOBS --format json|csv|md|html [--output FILE]`: a budget review of planned jobs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from marshmallow import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from service.commands.common import CliError, fail, first_error, inline_onnx, read_document
from service.reports import render_review
from workers.review.review import run_review
from workers.schemas.review_result import ReviewResultSchema
from workers.schemas.reviews import apply_review_units, load_review

# The CLI says "md"; the API and the review file say "markdown".
CLI_FORMATS = {"json": "json", "csv": "csv", "md": "markdown", "markdown": "markdown", "html": "html"}


def register(subparsers: Any) -> None:
    """Add the `report` subcommand."""
    p = subparsers.add_parser(
        "report", help="review a team's planned jobs against a budget",
        description="Review named jobs (a JSON or YAML file: name, budget_usd, providers, jobs[...]) against "
                    "a budget: per job the cheapest option meeting its deadline and the fastest within "
                    "budget, totals per team, sweeps, and buy-vs-rent for on-prem cards.")
    p.add_argument("jobs", metavar="JOBS",
                   help="the review file (JSON or YAML), e.g. examples/budget-review.json")
    p.add_argument("--format", choices=tuple(CLI_FORMATS), default=None,
                   help="output format (default: the file's `format`, else md)")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report here instead of standard output")
    p.set_defaults(func=run)


def read_review_file(path: str) -> dict[str, Any]:
    """Read a review file; a job's `model.onnx` may be a path to the file, relative to the review."""
    raw = read_document(path, what="budget review")
    jobs = raw.get("jobs")
    if isinstance(jobs, list):
        raw = {**raw, "jobs": [_inline_job_onnx(job, index=i, base=Path(path).parent)
                               for i, job in enumerate(jobs)]}
    return raw


def _inline_job_onnx(job: Any, *, index: int, base: Path) -> Any:
    if not isinstance(job, dict) or not isinstance(job.get("spec"), dict):
        return job
    return {**job, "spec": inline_onnx(job["spec"], base=base, field=f"jobs[{index}].spec.model.onnx")}


@contextmanager
def progress_bar(total: int, *, console: Console) -> Iterator[Callable[[int, int], None]]:
    """Yield an `on_progress(done, total)` that moves a bar on the terminal (silent when not a terminal)."""
    with Progress(TextColumn("reviewing jobs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task("review", total=total)

        def on_progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield on_progress


def run(args: argparse.Namespace) -> int:
    """Review the file's jobs and print or write the report; bad input is one line and exit code 2."""
    try:
        raw = read_review_file(args.jobs)
        if args.format is not None:
            raw = {**raw, "format": CLI_FORMATS[args.format]}
        data, review = load_review(apply_review_units(raw))
    except CliError as exc:
        return fail(str(exc))
    except ValidationError as exc:
        return fail(first_error(exc.messages))
    from catalog.loader import load_catalog  # the catalog is only read once the input is known good

    console = Console(stderr=True)
    with progress_bar(len(review.items), console=console) as on_progress:
        result = run_review(review, load_catalog(), on_progress=on_progress)
    text = render_review(ReviewResultSchema().dump(result), data["format"])
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        failed = sum(1 for j in result.jobs if j.status == "failed")
        note = f"; {failed} job(s) could not be reviewed" if failed else ""
        print(f"gpugauge: wrote {args.output} ({len(result.jobs)} jobs{note})", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
