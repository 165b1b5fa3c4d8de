"""`gpugauge worker`: a Celery worker (prefork, so time limits hold) for the app's Celery."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from flask import Flask

from service.app import create_app
from workers.tasks.runtime import settle


def register(subparsers: Any) -> None:
    """Add the `worker` subcommand."""
    p = subparsers.add_parser("worker", help="run a Celery worker for queued jobs (needs REDIS_URL)")
    p.add_argument("--concurrency", type=int, default=None, help="worker processes (default: cores)")
    p.add_argument("--loglevel", default="INFO", help="Celery log level (default INFO)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the worker until interrupted; exit 2 without REDIS_URL."""
    app = create_app()
    if not app.config["REDIS_URL"]:
        print("gpugauge: REDIS_URL is not set; without it `gpugauge serve` runs jobs in-process "
              "and no worker is needed", file=sys.stderr)
        return 2
    run_worker(app, concurrency=args.concurrency, loglevel=args.loglevel)
    return 0


def run_worker(app: Flask, *, concurrency: int | None = None, loglevel: str = "INFO") -> None:
    """Load the catalog once and freeze the heap, then run the app's Celery worker (its processes inherit both)."""
    settle(app)  # before the fork: no child pays for loading it on its first job, nor scans it in each full GC
    argv = ["worker", "--pool=prefork", f"--loglevel={loglevel}"]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    # The Celery object itself, not a module that also holds a Flask app (ecosystem-notes §0).
    app.extensions["celery"].worker_main(argv)
