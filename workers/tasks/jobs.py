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
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

from redis import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

KEY_PREFIX = "gpugauge:job:"
QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"

Record = dict[str, Any]
Stored = tuple[str, str]  # (status, the record's JSON)

_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'job', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""
# Mark a claimed job as handed to the queue, unless it expired meanwhile (never re-create a key), and
# keep the task's name and arguments, for workers/tasks/reconcile.py to enqueue again if the message is lost.
_CONFIRM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'enqueued', '1')
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'replay', ARGV[1]) end
return 1
"""
# A claim still unconfirmed this long after it was made lost its enqueue (Redis died between the two,
# and the claim could not be released either): the next request for the job claims and enqueues it again.
# Far above the milliseconds between a claim and its confirmation.
CLAIM_GRACE_S = 5.0
# Compare-and-set on the status, so a late or duplicate delivery cannot move a job backwards.
_ADVANCE = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'job', ARGV[3])
return 1
"""


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

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
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


def new_record(job_id: str, *, ttl_s: int) -> Record:
    """Return the record of a job just queued; it says how long it is kept, so any worker honours it."""
    now = _now_iso()
    return {"id": job_id, "status": QUEUED, "created_at": now, "updated_at": now, "expires_after_s": ttl_s}


def mark_running(store: JobStore, job_id: str) -> None:
    """Move a queued job to running (no-op if it moved on or expired)."""
    record = store.get(job_id)
    if record is not None and record["status"] == QUEUED:
        store.advance(job_id, expected_status=QUEUED,
                      record={**record, "status": RUNNING, "updated_at": _now_iso()})


def finish(store: JobStore, job_id: str, *, result: Mapping[str, Any] | None = None,
           problem: Mapping[str, Any] | None = None, ttl_s: int) -> None:
    """Record a job's result (done) or its problem (failed), kept for the job's own expiry time."""
    record = store.get(job_id) or new_record(job_id, ttl_s=ttl_s)
    outcome = ({"status": DONE, "result": result} if problem is None
               else {"status": FAILED, "problem": problem})
    store.put({**record, **outcome, "updated_at": _now_iso()}, ttl_s=int(record["expires_after_s"]))


def submit(store: JobStore, enqueue: Callable[[], None], *, job_id: str, ttl_s: int,
           replay: str | None = None) -> Record:
    """Return the job named `job_id`, claiming it and calling `enqueue` only if nobody holds it.

    `replay` is the enqueued task as JSON (workers.tasks.reconcile.replay_of), kept to enqueue it again if
    its message is lost.
    """
    record: Record = json.loads(submit_stored(store, enqueue, job_id=job_id, ttl_s=ttl_s, replay=replay)[1])
    return record


def submit_stored(store: JobStore, enqueue: Callable[[], None], *, job_id: str, ttl_s: int,
                  replay: str | None = None) -> Stored:
    """Do what `submit` does, returning the job as stored: (status, JSON) to answer with as it is."""
    for _ in range(3):
        record = new_record(job_id, ttl_s=ttl_s)
        if store.claim(record, ttl_s=ttl_s):
            try:
                enqueue()
            except BaseException:
                _release(store, job_id)
                raise
            store.confirm(job_id, replay=replay)
            return QUEUED, dumps(record)
        stored = store.get_stored(job_id)
        if stored is None:
            continue  # expired between the claim and the read
        if stored[0] == FAILED and json.loads(stored[1])["problem"].get("status", 500) >= 500:
            store.forget(job_id)  # a server-side failure may not recur: let this request run it again
            continue
        if stored[0] == QUEUED and _lost_its_enqueue(store, job_id, stored):
            log.warning("job %s: its claim was never enqueued (Redis went down between the two); "
                        "enqueueing it now", job_id)
            store.forget(job_id)
            continue
        return stored
    raise RuntimeError(f"job {job_id} could not be claimed")


def dumps(record: Record) -> str:
    """Serialise a record; strict like the API, so a NaN in a result fails here, not in a client."""
    return json.dumps(record, separators=(",", ":"), allow_nan=False)


def _lost_its_enqueue(store: JobStore, job_id: str, stored: Stored) -> bool:
    created = datetime.fromisoformat(json.loads(stored[1])["created_at"])
    old = (datetime.now(UTC) - created).total_seconds() > CLAIM_GRACE_S
    return old and not store.enqueued(job_id)


def _release(store: JobStore, job_id: str) -> None:
    try:
        store.forget(job_id)
    except RedisError:
        log.warning("job %s: could not release the claim after a failed enqueue", job_id)


class RedisJobStore:
    """Job records as hashes {status, job} under `gpugauge:job:{id}`, with EXPIRE."""

    def __init__(self, client: Redis, *, prefix: str = KEY_PREFIX) -> None:
        self._client = client
        self._prefix = prefix
        self._claim = client.register_script(_CLAIM)
        self._advance = client.register_script(_ADVANCE)
        self._confirm = client.register_script(_CONFIRM)

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        key = self._key(record["id"])
        return bool(self._claim(keys=[key], args=[record["status"], dumps(record), ttl_s]))

    def get(self, job_id: str) -> Record | None:
        """Return the decoded record, or None for an unknown or expired id."""
        return _decoded(self.get_stored(job_id))

    def get_stored(self, job_id: str) -> Stored | None:
        """Return (status, record JSON), or None for an unknown or expired id."""
        status, job = self._client.hmget(self._key(job_id), ["status", "job"])
        return None if status is None or job is None else (_text(status), _text(job))

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        return bool(self._advance(keys=[self._key(job_id)], args=[expected_status, record["status"], dumps(record)]))

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        key = self._key(record["id"])
        pipe = self._client.pipeline(transaction=True)
        pipe.hset(key, mapping={"status": record["status"], "job": dumps(record)})
        pipe.expire(key, ttl_s)
        pipe.execute()

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        self._client.delete(self._key(job_id))

    def confirm(self, job_id: str, *, replay: str | None = None) -> None:
        """Note that the job's task was enqueued, keeping `replay` (its task as JSON) when given."""
        self._confirm(keys=[self._key(job_id)], args=[replay or ""])

    def enqueued(self, job_id: str) -> bool:
        """Say whether the job's task was confirmed enqueued."""
        return self._client.hget(self._key(job_id), "enqueued") is not None

    def _key(self, job_id: str) -> str:
        return self._prefix + job_id


class MemoryJobStore:
    """Job records in this process's memory, for the embedded mode (one process serves everything)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._records: dict[str, tuple[float, str, str]] = {}  # id -> (expires at, status, JSON)
        self._enqueued: set[str] = set()

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        with self._lock:
            self._drop_expired()
            if record["id"] in self._records:
                return False
            self._records[record["id"]] = (self._clock() + ttl_s, record["status"], dumps(record))
            return True

    def get(self, job_id: str) -> Record | None:
        """Return the decoded record, or None for an unknown or expired id."""
        return _decoded(self.get_stored(job_id))

    def get_stored(self, job_id: str) -> Stored | None:
        """Return (status, record JSON), or None for an unknown or expired id."""
        with self._lock:
            entry = self._live(job_id)
            return None if entry is None else (entry[1], entry[2])

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        with self._lock:
            entry = self._live(job_id)
            if entry is None or entry[1] != expected_status:
                return False
            self._records[job_id] = (entry[0], record["status"], dumps(record))
            return True

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        with self._lock:
            self._records[record["id"]] = (self._clock() + ttl_s, record["status"], dumps(record))

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        with self._lock:
            self._records.pop(job_id, None)
            self._enqueued.discard(job_id)

    def confirm(self, job_id: str, *, replay: str | None = None) -> None:
        """Note that the job's task was enqueued (one process: nothing to replay, so `replay` is unused)."""
        with self._lock:
            if self._live(job_id) is not None:
                self._enqueued.add(job_id)

    def enqueued(self, job_id: str) -> bool:
        """Say whether the job's task was confirmed enqueued."""
        with self._lock:
            return job_id in self._enqueued and self._live(job_id) is not None

    def _live(self, job_id: str) -> tuple[float, str, str] | None:
        entry = self._records.get(job_id)
        if entry is not None and entry[0] <= self._clock():
            del self._records[job_id]
            self._enqueued.discard(job_id)
            return None
        return entry

    def _drop_expired(self) -> None:
        now = self._clock()
        for job_id in [k for k, (expires_at, _, _) in self._records.items() if expires_at <= now]:
            del self._records[job_id]
            self._enqueued.discard(job_id)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _decoded(stored: Stored | None) -> Record | None:
    return None if stored is None else json.loads(stored[1])


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
