"""The job registry: each recommendation job's state and result under a key that expires.

A job's id is the digest of its normalised spec and the catalog version (workers.schemas.specs.spec_digest),
so identical requests name the same job; `submit` claims that id once and only the claimant enqueues
the task. A job is kept as its status plus the JSON the API shows, written once per state change, so
polling and repeated specs are answered with the stored bytes, never decoded and encoded again.
Keys are hashes `gpugauge:job:{id}` in Redis, or entries of a dict in the embedded mode. Unknown and
expired ids read as None (the API answers 404), never as Celery's eternal PENDING.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from redis.exceptions import RedisError

from workers.tasks.memory_jobs import MemoryJobStore
from workers.tasks.records import (
    DONE,
    FAILED,
    KEY_PREFIX,
    QUEUED,
    RUNNING,
    TERMINAL,
    PreparedTask,
    Record,
    Stored,
    dumps,
    new_record,
    now_iso,
)
from workers.tasks.redis_jobs import RedisJobStore

log = logging.getLogger(__name__)

# A claim still unconfirmed this long after it was made lost its enqueue (Redis died between the two,
# and the claim could not be released either): the next request for the job claims and enqueues it again.
# Far above the milliseconds between a claim and its confirmation.
CLAIM_GRACE_S = 5.0


class JobStore(Protocol):
    """Where job records live; every method is safe to call from many threads and processes."""

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        ...

    def get(self, job_id: str) -> Record | None:
        """Return the decoded record, or None for an unknown or expired id."""
        ...

    def get_stored(self, job_id: str) -> Stored | None:
        """Return (status, record JSON), or None for an unknown or expired id."""
        ...

    def wait_stored(self, job_id: str, *, timeout_s: float, known: Stored | None = None) -> Stored | None:
        """Return the job once done or failed, or as it is after `timeout_s`; None when unknown.

        Woken by the job's end (a Redis list the worker pushes to, or a Condition), never by polling.
        """
        ...

    def start(self, job_id: str, *, at: str) -> bool:
        """Move a queued job to running in one step (no-op if it moved on or expired)."""
        ...

    def start_soon(self, job_id: str, *, at: str) -> Callable[[], bool]:
        """Do what `start` does without waiting for it; the call returned gives its answer (call it once)."""
        ...

    def finish(self, job_id: str, *, status: str, outcome_json: str, at: str, fallback: Record) -> None:
        """Record a job's outcome (JSON) in one step, on `fallback` if it expired; wake its waiters."""
        ...

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        ...

    def add_chunk(self, job_id: str, *, index: int, payload: str, jobs: int, chunks: int, total_jobs: int,
                  at: str) -> tuple[bool, bool]:
        """Keep a review chunk's result once, moving the job's progress; return (kept now, all chunks in)."""
        ...

    def has_chunk(self, job_id: str, *, index: int) -> bool:
        """Say whether a review chunk's result is kept."""
        ...

    def chunk_payloads(self, job_id: str) -> dict[int, str]:
        """Return every kept chunk result of a review, by chunk index."""
        ...

    def drop_chunks(self, job_id: str) -> None:
        """Forget a review's chunk results."""
        ...

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        ...

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        ...

    def confirm(self, job_id: str, *, replay: str | None = None) -> None:
        """Note that the job's task was enqueued, keeping `replay` (its task as JSON) when given."""
        ...

    def enqueued(self, job_id: str) -> bool:
        """Say whether the job's task was confirmed enqueued."""
        ...


def public_view(record: Record) -> Record:
    """Return what the API shows of a record: all of it (kept for callers written against v1)."""
    return dict(record)


def mark_running(store: JobStore, job_id: str) -> None:
    """Move a queued job to running (no-op if it moved on or expired)."""
    store.start(job_id, at=now_iso())


def finish(store: JobStore, job_id: str, *, result: Mapping[str, Any] | None = None,
           problem: Mapping[str, Any] | None = None, ttl_s: int, result_json: str | None = None) -> None:
    """Record a job's result (done) or its problem (failed), kept for the job's own expiry time.

    `result_json`: the result as JSON already (a review's document, spliced from its chunks' parts).
    """
    if result_json is not None and problem is None:
        status, outcome_json = DONE, result_json
    else:
        status, outcome_json = (DONE, dumps(result)) if problem is None else (FAILED, dumps(problem))
    store.finish(job_id, status=status, outcome_json=outcome_json, at=now_iso(),
                 fallback=new_record(job_id, ttl_s=ttl_s))


def submit(store: JobStore, enqueue: Callable[[], None], *, job_id: str, ttl_s: int,
           replay: str | None = None) -> Record:
    """Return the job named `job_id`, claiming it and calling `enqueue` only if nobody holds it.

    `replay` is the enqueued task as JSON (workers.tasks.reconcile.replay_of), kept to enqueue it again if
    its message is lost.
    """
    record: Record = json.loads(submit_stored(store, enqueue, job_id=job_id, ttl_s=ttl_s, replay=replay)[1])
    return record


def submit_stored(store: JobStore, enqueue: Callable[[], None], *, job_id: str, ttl_s: int,
                  replay: str | None = None, prepared: PreparedTask | None = None,
                  extra: Record | None = None) -> Stored:
    """Do what `submit` does, returning the job as stored: (status, JSON) to answer with as it is.

    With `prepared` (the task's message, built by the queue) and a store that can, the claim, the
    publication and its confirmation are one Redis round trip, and so is the answer for a held id.
    `extra` adds fields to the new record (a review's progress).
    """
    one_trip = getattr(store, "claim_and_publish", None) if prepared is not None else None
    stored: Stored | None
    was_enqueued: bool | None
    for _ in range(3):
        record = new_record(job_id, ttl_s=ttl_s, extra=extra)
        if one_trip is not None:
            claimed, stored, was_enqueued = one_trip(record, ttl_s=ttl_s, task=prepared, replay=replay)
            if claimed:
                return QUEUED, dumps(record)
        elif store.claim(record, ttl_s=ttl_s):
            try:
                enqueue()
            except BaseException:
                _release(store, job_id)
                raise
            store.confirm(job_id, replay=replay)
            return QUEUED, dumps(record)
        else:
            stored, was_enqueued = store.get_stored(job_id), None
        if stored is None:
            continue  # expired between the claim and the read
        if stored[0] == FAILED and json.loads(stored[1])["problem"].get("status", 500) >= 500:
            store.forget(job_id)  # a server-side failure may not recur: let this request run it again
            continue
        if stored[0] == QUEUED and _lost_its_enqueue(store, job_id, stored, enqueued=was_enqueued):
            log.warning("job %s: its claim was never enqueued (Redis went down between the two); "
                        "enqueueing it now", job_id)
            store.forget(job_id)
            continue
        return stored
    raise RuntimeError(f"job {job_id} could not be claimed")


def _lost_its_enqueue(store: JobStore, job_id: str, stored: Stored, *, enqueued: bool | None) -> bool:
    created = datetime.fromisoformat(json.loads(stored[1])["created_at"])
    old = (datetime.now(UTC) - created).total_seconds() > CLAIM_GRACE_S
    return old and not (store.enqueued(job_id) if enqueued is None else enqueued)


def _release(store: JobStore, job_id: str) -> None:
    try:
        store.forget(job_id)
    except RedisError:
        log.warning("job %s: could not release the claim after a failed enqueue", job_id)


__all__ = ["CLAIM_GRACE_S", "DONE", "FAILED", "KEY_PREFIX", "QUEUED", "RUNNING", "TERMINAL", "JobStore",
           "MemoryJobStore", "PreparedTask", "Record", "RedisJobStore", "Stored", "dumps", "finish",
           "mark_running", "new_record", "now_iso", "public_view", "submit", "submit_stored"]
