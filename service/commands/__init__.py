"""CLI subcommands; each module has `register(subparsers)` that adds its parser with `func=run`."""
