"""The `gpugauge` command line: argparse front over the same schemas and core as the HTTP API."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from service.commands import COMMANDS

# Kept for callers written against the eager registry: every subcommand's module, in order.
COMMAND_MODULES = tuple(module for module, _ in COMMANDS.values())


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"gpugauge: {message}\n")


def build_parser(argv: Sequence[str] | None = None, *, lazy: bool = False) -> argparse.ArgumentParser:
    """Build the parser; `lazy` imports only the module of the subcommand `argv` names.

    The other subcommands get a placeholder parser holding their help line, so `--help` lists them
    all; `gpugauge --help` then imports no subcommand at all.
    """
    parser = _Parser(prog="gpugauge", description="Size a training job and find where to run it.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    chosen = _command_named(argv) if lazy else None
    for name, (module_name, help_line) in COMMANDS.items():
        if lazy and name != chosen:
            sub.add_parser(name, help=help_line)
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(sub)
    return parser


def _command_named(argv: Sequence[str] | None) -> str | None:
    """Return the subcommand argv names: its first word not an option (the top level has only -h)."""
    words = sys.argv[1:] if argv is None else argv
    return next((word for word in words if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one gpugauge command and return its exit code."""
    args = build_parser(argv, lazy=True).parse_args(argv)
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
