"""`gpugauge presets [--json]`: the named architectures a spec (or a one-liner) can name as its model."""

from __future__ import annotations

import argparse
from typing import Any

from rich import box
from rich.table import Table

from service.commands.common import console as make_console
from service.commands.common import print_json
from workers.sizing.presets.registry import PRESETS


def register(subparsers: Any) -> None:
    """Add the `presets` subcommand."""
    p = subparsers.add_parser("presets", help="list the model presets (names for model.preset or a one-liner)")
    p.add_argument("--json", action="store_true", help="print the presets as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print every preset with its input, aliases and description."""
    rows: list[dict[str, Any]] = [{"name": p.name, "aliases": list(p.aliases), "description": p.description,
             "input": "x".join(map(str, p.input_shape)) if p.input_shape else
             f"tokens (sequence {p.sequence_length or 'from training.sequence_length'})"}
            for p in PRESETS.values()]
    if args.json:
        print_json(rows)
        return 0
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, title="Model presets (gpugauge model NAME shows the layers)")
    table.add_column("name", no_wrap=True)
    table.add_column("input", no_wrap=True)
    table.add_column("aliases")
    table.add_column("description", ratio=1)
    for r in rows:
        table.add_row(r["name"], r["input"], ", ".join(r["aliases"]), r["description"])
    make_console().print(table)
    return 0
