"""Lost-job sweep: enqueue again the jobs that stayed queued or running far longer than any job runs.

A job's message can be lost where neither late acks nor the visibility timeout reach it: a worker killed
between popping the message from the Redis list and writing it to the unacked set (kombu's BRPOP, then
HSET), or a whole worker killed mid-job, whose message otherwise waits out the broker's visibility
timeout (an hour). The job registry knows every accepted job; each keeps its task as JSON (`replay`,
written when it was enqueued). `gpugauge beat` runs this sweep every JOB_REQUEUE_EVERY_S; a queued or
running job not updated for JOB_REQUEUE_AFTER_S is enqueued again. Tasks are idempotent: a job that was
only slow is answered twice, identically.

Settings (environment: the GPUGAUGE_ prefix):
    JOB_REQUEUE_AFTER_S   a queued or running job untouched this long is enqueued again (default 900;
                          must exceed the longest job time limit, a review's 600 s)
    JOB_REQUEUE_EVERY_S   how often beat runs the sweep (default 60)
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from celery import shared_task
from flask import current_app
from redis import Redis

from workers.tasks.jobs import QUEUED, RUNNING
from workers.tasks.runtime import runtime

log = logging.getLogger(__name__)

REQUEUE_TASK = "gpugauge.requeue_stalled"
# A spec with an inline ONNX graph can be megabytes; such a job is not kept for replay.
MAX_REPLAY_CHARS = 256 * 1024


def replay_of(task_name: str, *args: Any) -> str | None:
    """Return a task and its arguments as JSON, for the job registry; None when too large to keep."""
    text = json.dumps([task_name, list(args)], separators=(",", ":"), allow_nan=False)
    return text if len(text) <= MAX_REPLAY_CHARS else None


@shared_task(name=REQUEUE_TASK, acks_late=False)  # type: ignore[untyped-decorator]
def requeue_stalled() -> dict[str, int]:
    """Enqueue again every queued or running job not updated for JOB_REQUEUE_AFTER_S; return counts."""
    config = current_app.config
    if not config.get("REDIS_URL"):
        return {"requeued": 0, "checked": 0}
    after_s = float(config["JOB_REQUEUE_AFTER_S"])
    client = Redis.from_url(config["REDIS_URL"], socket_timeout=5, socket_connect_timeout=2, decode_responses=True)
    rt, now = runtime(), datetime.now(UTC)
    checked = requeued = 0
    try:
        # Hashes only: a job's wake-up list (`{id}:done`, workers/tasks/redis_jobs.py) shares the prefix.
        for key in client.scan_iter(f"{config['JOB_KEY_PREFIX']}*", count=500, _type="HASH"):
            status, job, replay = client.hmget(key, ["status", "job", "replay"])
            checked += 1
            if status not in (QUEUED, RUNNING) or job is None or replay is None:
                continue
            record = json.loads(job)
            if (now - datetime.fromisoformat(record["updated_at"])).total_seconds() < after_s:
                continue
            # Touch the record first (compare-and-set on its status), so one sweep enqueues it once.
            touched = {**record, "updated_at": now.isoformat(timespec="milliseconds")}
            if not rt.jobs.advance(record["id"], expected_status=status, record=touched):
                continue
            task_name, args = json.loads(replay)
            rt.queue.enqueue(task_name, *args)
            requeued += 1
            log.warning("job %s was %s and untouched for %.0f s: enqueued again", record["id"], status,
                        (now - datetime.fromisoformat(record["updated_at"])).total_seconds())
    finally:
        client.close()
    return {"requeued": requeued, "checked": checked}
