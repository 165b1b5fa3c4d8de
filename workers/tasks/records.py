"""A job's record as the registry keeps it: its states, its JSON, and the message a queue carries for it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

KEY_PREFIX = "gpugauge:job:"
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
TERMINAL = frozenset({DONE, FAILED})

Record = dict[str, Any]
Stored = tuple[str, str]  # (status, the record's JSON)


@dataclass(frozen=True)
class PreparedTask:
    """A task message built ahead of its publication: the Redis list it goes to and its bytes.

    The registry pushes it in the same round trip as the job's claim (workers/tasks/redis_jobs.py).
    """

    queue_key: str
    message: str


def new_record(job_id: str, *, ttl_s: int, extra: Record | None = None) -> Record:
    """Return the record of a job just queued; it says how long it is kept, so any worker honours it."""
    now = now_iso()
    record: Record = {"id": job_id, "status": QUEUED, "created_at": now, "updated_at": now,
                      "expires_after_s": ttl_s}
    return {**record, **(extra or {})}


def dumps(record: Any) -> str:
    """Serialise a record; strict like the API, so a NaN in a result fails here, not in a client."""
    return json.dumps(record, separators=(",", ":"), allow_nan=False)


def decoded(stored: Stored | None) -> Record | None:
    """Return the record of a stored job, or None."""
    return None if stored is None else json.loads(stored[1])


def now_iso() -> str:
    """Return the time now as the records write it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def with_outcome(record: Record, *, status: str, outcome_json: str, at: str) -> str:
    """Return the record's JSON with its final status and its result or problem (already JSON).

    The outcome is spliced in as the JSON it is, so a large result is encoded once, by the worker.
    """
    key = "result" if status == DONE else "problem"
    head = {k: v for k, v in record.items() if k not in ("result", "problem")}
    head.update(status=status, updated_at=at)
    return dumps(head)[:-1] + f',"{key}":{outcome_json}}}'


def stored_outcome(stored: Stored) -> str:
    """Return a finished job's result (or problem) as the JSON it was stored as, without decoding the record.

    Every finished record is written by `with_outcome` (or the Redis store's script doing the same): its
    own small fields, then the outcome spliced in last. The first `,"result":` of the JSON is that key,
    as a string value's quotes are escaped.
    """
    status, body = stored
    marker = ',"result":' if status == DONE else ',"problem":'
    at = body.find(marker)
    if at < 0 or not body.endswith("}"):
        return dumps(json.loads(body).get("result" if status == DONE else "problem"))
    return body[at + len(marker):-1]
