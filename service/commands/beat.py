"""`gpugauge beat [--check]`: Celery beat, queueing the daily catalog refresh; --check is its health probe."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from celery.beat import PersistentScheduler

# Beat wakes at least this often (Celery's default is 300 s), and touches its heartbeat file each time.
MAX_LOOP_INTERVAL_S = 60
# --check fails when the heartbeat is older than this: three missed wake-ups.
HEARTBEAT_MAX_AGE_S = 3 * MAX_LOOP_INTERVAL_S
SCHEDULE_FILE_ENV = "GPUGAUGE_BEAT_SCHEDULE_FILE"


def register(subparsers: Any) -> None:
    """Add the `beat` subcommand."""
    p = subparsers.add_parser("beat", help="run Celery beat: queue the daily catalog refresh (needs REDIS_URL)")
    p.add_argument("--check", action="store_true",
                   help="exit 0 if a running beat woke up in the last 3 minutes, else 1 (a health probe)")
    p.add_argument("--loglevel", default="INFO", help="Celery log level (default INFO)")
    p.set_defaults(func=run)


def schedule_file() -> Path:
    """Return where beat keeps its state: $GPUGAUGE_BEAT_SCHEDULE_FILE, else a file in the temp dir."""
    return Path(os.environ.get(SCHEDULE_FILE_ENV) or Path(tempfile.gettempdir()) / "gpugauge-beat-schedule")


def heartbeat_file(schedule: Path) -> Path:
    """Return the file beat touches each time it wakes."""
    return schedule.with_name(schedule.name + ".heartbeat")


class HeartbeatScheduler(PersistentScheduler):  # type: ignore[misc]
    """Celery's file-backed scheduler that also touches a heartbeat file on every tick."""

    def tick(self, *args: Any, **kwargs: Any) -> float:
        """Touch the heartbeat, then run Celery's tick."""
        heartbeat_file(Path(self.schedule_filename)).touch()
        interval: float = super().tick(*args, **kwargs)
        return interval


def check(*, now: float | None = None) -> int:
    """Return 0 when the heartbeat is fresh, else 1 with a line on stderr."""
    beat = heartbeat_file(schedule_file())
    try:
        age_s = (time.time() if now is None else now) - beat.stat().st_mtime
    except FileNotFoundError:
        print(f"gpugauge: beat has not started ({beat} is missing)", file=sys.stderr)
        return 1
    if age_s > HEARTBEAT_MAX_AGE_S:
        print(f"gpugauge: beat last woke {age_s:.0f} s ago (limit {HEARTBEAT_MAX_AGE_S} s)", file=sys.stderr)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    """Run beat until interrupted (exit 2 without REDIS_URL), or probe a running one with --check."""
    if args.check:
        return check()
    from service.app import create_app
    from workers.tasks.refresh import beat_schedule

    app = create_app()
    if not app.config["REDIS_URL"]:
        print("gpugauge: REDIS_URL is not set; beat queues the catalog refresh for `gpugauge worker` "
              "through Redis (without it, run `gpugauge catalog refresh` by hand or from cron)", file=sys.stderr)
        return 2
    celery = app.extensions["celery"]
    celery.conf.beat_schedule = beat_schedule(app.config)
    celery.conf.beat_max_loop_interval = MAX_LOOP_INTERVAL_S
    celery.conf.timezone = "UTC"
    schedule = schedule_file()
    schedule.parent.mkdir(parents=True, exist_ok=True)
    celery.Beat(loglevel=args.loglevel, schedule=str(schedule), scheduler=HeartbeatScheduler).run()
    return 0
