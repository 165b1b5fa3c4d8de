"""`gpugauge runs add|list|remove`: the measured runs that calibrate estimates, in the store the service uses.

With REDIS_URL the runs live in Redis (GPUGAUGE_RUNS_KEY), else in the embedded mode's file
(GPUGAUGE_RUNS_FILE, default ~/.local/share/gpugauge/runs.json): the CLI and a running server see
the same runs. `add` checks the run against the plain model and refuses an absurd one (exit 2).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from marshmallow import ValidationError
from rich.table import Table

from catalog.loader import load_catalog
from catalog.units import parse_bytes
from service.commands.common import CliError, fail, first_error, print_json, read_spec_file
from service.commands.common import console as make_console
from service.commands.stores import open_store
from service.config import DEFAULTS
from workers.schemas.humanize import apply_human_units
from workers.schemas.runs import RunListSchema, RunReportSchema, RunSchema
from workers.sizing.errors import SizingError
from workers.sizing.reported import ABSURD_RATIO, FACTOR_BOUNDS
from workers.tasks.runs import FileRunStore, RunStore, calibration_for, default_runs_file, record_run


def open_runs_store() -> RunStore:
    """Return the runs store this machine is configured for: Redis with REDIS_URL, else the runs file."""
    if os.environ.get("REDIS_URL"):
        from redis import Redis  # only with Redis: `gpugauge estimate` stays light without it

        from workers.tasks.runs_redis import RedisRunStore

        return RedisRunStore(Redis.from_url(os.environ["REDIS_URL"]),
                             key=os.environ.get("GPUGAUGE_RUNS_KEY", DEFAULTS["RUNS_KEY"]))
    return FileRunStore(os.environ.get("GPUGAUGE_RUNS_FILE") or default_runs_file())


def register(subparsers: Any) -> None:
    """Add the `runs` subcommand and its three actions."""
    p = subparsers.add_parser("runs", help="record, list and remove measured runs that calibrate estimates")
    actions = p.add_subparsers(dest="runs_command", required=True)
    add = actions.add_parser("add", help="record a measured run of a job spec")
    add.add_argument("spec", help="the job spec file (JSON or YAML) the run trained")
    add.add_argument("--gpu", required=True, metavar="SLUG", help="the GPU it ran on")
    add.add_argument("--gpu-count", type=int, default=1, metavar="N", help="GPUs it ran on (data parallel)")
    add.add_argument("--iteration-ms", type=float, required=True, metavar="MS", help="measured time per iteration")
    add.add_argument("--peak-memory", metavar="SIZE", help="measured peak memory of one GPU, e.g. 12.5GiB")
    add.add_argument("--source", default="", help="where the figure comes from")
    add.add_argument("--json", action="store_true", help="print the stored run as POST /v1/runs returns it")
    listing = actions.add_parser("list", help="list the runs and the corrections fitted from them")
    listing.add_argument("--json", action="store_true", help="print exactly what GET /v1/runs returns")
    remove = actions.add_parser("remove", help="remove one run by its id")
    remove.add_argument("run_id")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run one `runs` action; bad input is one line on stderr and exit code 2."""
    try:
        store = open_runs_store()
        if args.runs_command == "add":
            return _add(args, store)
        if args.runs_command == "remove":
            if not store.remove(args.run_id):
                return fail(f"run_id: no run {args.run_id!r}")
            print(f"removed run {args.run_id}")
            return 0
        return _list(args, store)
    except CliError as exc:
        return fail(str(exc))
    except SizingError as exc:
        return fail(f"{exc.field}: {exc.reason}")


def _add(args: argparse.Namespace, store: RunStore) -> int:
    raw: dict[str, Any] = {"spec": apply_human_units(read_spec_file(args.spec)), "gpu": args.gpu,
                           "gpu_count": args.gpu_count, "iteration_ms": args.iteration_ms, "source": args.source}
    if args.peak_memory:
        try:
            raw["peak_memory_bytes"] = parse_bytes(args.peak_memory)
        except ValueError as exc:
            raise CliError(f"--peak-memory: {exc}") from None
    try:
        data = RunReportSchema().load(raw)
    except ValidationError as exc:
        raise CliError(first_error(_flat(exc.messages))) from None
    record = record_run(store, data, load_catalog(store=open_store()))
    if args.json:
        print_json(RunSchema().dump(record))
    else:
        print(f"recorded run {record['id']}: {record['iteration_ms']:g} ms measured, "
              f"{record['predicted_iteration_ms']:.1f} ms predicted ({record['ratio']:.2f}x)")
        low, high = FACTOR_BOUNDS
        if not low <= record["ratio"] <= high:  # told now, not only in a later estimate's warnings
            print(f"beyond the {low:g}-{high:g}x a correction moves an estimate: its generation's estimates for "
                  f"models of this kind are scaled at most {high if record['ratio'] > high else low:g}x "
                  "(warning calibration-bounded); check the spec against the run (data loading, batch, precision)")
    return 0


def _flat(messages: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten marshmallow's nested messages to dotted field paths."""
    if not isinstance(messages, dict):
        return {prefix.rstrip("."): messages}
    flat: dict[str, Any] = {}
    for key, value in messages.items():
        flat.update(_flat(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value})
    return flat


def _list(args: argparse.Namespace, store: RunStore) -> int:
    runs = store.list()
    calibration = calibration_for(store, load_catalog(store=open_store()))
    payload = {"runs": runs, "corrections": list(calibration.corrections.values()),
               "factor_bounds": list(FACTOR_BOUNDS), "absurd_ratio": ABSURD_RATIO}
    if args.json:
        print_json(RunListSchema().dump(payload))
        return 0
    console = make_console()
    table = Table(title=f"{len(runs)} reported runs")
    for col in ("id", "model", "GPUs", "measured ms", "predicted ms", "ratio", "source"):
        table.add_column(col, justify="right" if "ms" in col or col == "ratio" else "left")
    for r in runs:
        model = r["spec"]["model"]
        name = model.get("preset") or next(iter(model), "?")
        table.add_row(r["id"], str(name), f"{r['gpu_count']}x {r['gpu']}", f"{r['iteration_ms']:g}",
                      f"{r['predicted_iteration_ms']:.1f}", f"{r['ratio']:.2f}", r.get("source", ""))
    console.print(table)
    fits = Table(title=f"corrections (each within {FACTOR_BOUNDS[0]:g}-{FACTOR_BOUNDS[1]:g}x)")
    for col in ("generation", "layer kind", "time factor", "runs", "GPUs"):
        fits.add_column(col)
    for c in calibration.corrections.values():
        fits.add_row(c.architecture, c.kind.value, f"{c.factor:.3f}", str(len(c.runs)), ", ".join(c.gpus))
    console.print(fits)
    return 0
