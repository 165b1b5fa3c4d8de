"""The `gpugauge` command line: argparse front over the same schemas and core as the HTTP API."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

# Each module registers one subcommand; a module that is not there yet is skipped.
COMMAND_MODULES = (
    "service.commands.model",
    "service.commands.estimate",
    "service.commands.recommend",
    "service.commands.report",
    "service.commands.catalog",
    "service.commands.validate",
    "service.commands.serve",
    "service.commands.worker",
    "service.commands.beat",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"gpugauge: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with every subcommand registered."""
    parser = _Parser(prog="gpugauge", description="Size a training job and find where to run it.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one gpugauge command and return its exit code."""
    args = build_parser().parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print("gpugauge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, or a failure no command foresaw: one line, never a traceback
        if os.environ.get("GPUGAUGE_DEBUG"):
            traceback.print_exc()
        detail = " ".join(str(exc).split())[:300] or "no detail"
        print(f"gpugauge: {args.command} failed ({type(exc).__name__}: {detail}); "
              "set GPUGAUGE_DEBUG=1 for the traceback", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
