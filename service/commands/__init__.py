"""CLI subcommands; each module has `register(subparsers)` that adds its parser with `func=run`.

COMMANDS names each subcommand's module and its one-line help, so that `gpugauge --help` lists them all
without importing any, and `gpugauge NAME` imports only NAME's module (service/cli.py). A subcommand's
module imports what it uses; importing all of them (Flask, Celery, matplotlib, onnx) took 1.5 s.
A test keeps each help line here equal to the one its module registers.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "model": ("service.commands.model", "per-layer statistics of a model (a spec file or a preset name)"),
    "presets": ("service.commands.presets", "list the model presets (names for model.preset or a one-liner)"),
    "estimate": ("service.commands.estimate", "GPU memory, time, host memory, CPU and storage a job needs"),
    "recommend": ("service.commands.recommend", "rank cloud machines for a job (and, asked, cards to buy)"),
    "report": ("service.commands.report", "review a team's planned jobs against a budget"),
    "catalog": ("service.commands.catalog", "browse GPUs, instances and prices; refresh them from AWS/GCP"),
    "validate": ("service.commands.validate", "compare the sizing core with public training measurements"),
    "runs": ("service.commands.runs", "record, list and remove measured runs that calibrate estimates"),
    "probe": ("service.commands.probe", "measure a few training steps of your PyTorch model (needs torch)"),
    "serve": ("service.commands.serve", "serve the HTTP API (embedded jobs unless REDIS_URL is set)"),
    "worker": ("service.commands.worker", "run a Celery worker for queued jobs (needs REDIS_URL)"),
    "beat": ("service.commands.beat", "run Celery beat: queue the daily catalog refresh (needs REDIS_URL)"),
}
