"""The job registry: each recommendation job's state and result under a key that expires.

A job's id is the digest of its normalised spec and the catalog version (service.specs.spec_digest),
so identical requests name the same job; `submit` claims that id once (SET NX) and only the claimant
enqueues the task. Keys are `gpugauge:job:{id}` in Redis, or entries of a dict in the embedded mode.
Unknown and expired ids read as None (the API answers 404), never as Celery's eternal PENDING.
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

# Compare-and-set on the record's status, so a late or duplicate delivery cannot move a job backwards.
_SET_IF_STATUS = """
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
if cjson.decode(current)['status'] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
return 1
"""


class JobStore(Protocol):
    """Where job records live; every method is safe to call from many threads and processes."""

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        ...

    def get(self, job_id: str) -> Record | None:
        """Return the record, or None for an unknown or expired id."""
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


def new_record(job_id: str, *, ttl_s: int) -> Record:
    """Return the record of a job just queued; it carries its TTL so any worker can honour it."""
    now = _now_iso()
    return {"id": job_id, "status": QUEUED, "created_at": now, "updated_at": now, "ttl_s": ttl_s}


def public_view(record: Record) -> Record:
    """Return what the API shows of a record (its bookkeeping left out)."""
    return {k: v for k, v in record.items() if k != "ttl_s"}


def mark_running(store: JobStore, job_id: str) -> None:
    """Move a queued job to running (no-op if it moved on or expired)."""
    record = store.get(job_id)
    if record is not None and record["status"] == QUEUED:
        store.advance(job_id, expected_status=QUEUED,
                      record={**record, "status": RUNNING, "updated_at": _now_iso()})


def finish(store: JobStore, job_id: str, *, result: Mapping[str, Any] | None = None,
           problem: Mapping[str, Any] | None = None, ttl_s: int) -> None:
    """Record a job's result (done) or its problem (failed), expiring `ttl_s` from now."""
    record = store.get(job_id) or new_record(job_id, ttl_s=ttl_s)
    ttl_s = int(record.get("ttl_s", ttl_s))
    outcome = ({"status": DONE, "result": result} if problem is None
               else {"status": FAILED, "problem": problem})
    store.put({**record, **outcome, "updated_at": _now_iso()}, ttl_s=ttl_s)


def submit(store: JobStore, enqueue: Callable[[], None], *, job_id: str, ttl_s: int) -> Record:
    """Return the job named `job_id`, claiming it and calling `enqueue` only if nobody holds it."""
    for _ in range(3):
        record = new_record(job_id, ttl_s=ttl_s)
        if store.claim(record, ttl_s=ttl_s):
            try:
                enqueue()
            except BaseException:
                _release(store, job_id)
                raise
            return record
        existing = store.get(job_id)
        if existing is None:
            continue  # expired between the claim and the read
        if existing["status"] == FAILED and existing.get("problem", {}).get("status", 500) >= 500:
            store.forget(job_id)  # a server-side failure may not recur: let this request run it again
            continue
        return existing
    raise RuntimeError(f"job {job_id} could not be claimed")


def _release(store: JobStore, job_id: str) -> None:
    try:
        store.forget(job_id)
    except RedisError:
        log.warning("job %s: could not release the claim after a failed enqueue", job_id)


class RedisJobStore:
    """Job records as JSON strings under `gpugauge:job:{id}`, expiring with SET EX."""

    def __init__(self, client: Redis, *, prefix: str = KEY_PREFIX) -> None:
        self._client = client
        self._prefix = prefix
        self._set_if_status = client.register_script(_SET_IF_STATUS)

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        return bool(self._client.set(self._key(record["id"]), _dumps(record), nx=True, ex=ttl_s))

    def get(self, job_id: str) -> Record | None:
        """Return the record, or None for an unknown or expired id."""
        raw = self._client.get(self._key(job_id))
        return None if raw is None else json.loads(raw)

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        return bool(self._set_if_status(keys=[self._key(job_id)], args=[expected_status, _dumps(record)]))

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        self._client.set(self._key(record["id"]), _dumps(record), ex=ttl_s)

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        self._client.delete(self._key(job_id))

    def _key(self, job_id: str) -> str:
        return self._prefix + job_id


class MemoryJobStore:
    """Job records in this process's memory, for the embedded mode (one process serves everything)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._records: dict[str, tuple[float, str]] = {}  # id -> (expires at, JSON)

    def claim(self, record: Record, *, ttl_s: int) -> bool:
        """Store a new record unless one with its id exists; return True when stored."""
        with self._lock:
            self._drop_expired()
            if record["id"] in self._records:
                return False
            self._records[record["id"]] = (self._clock() + ttl_s, _dumps(record))
            return True

    def get(self, job_id: str) -> Record | None:
        """Return the record, or None for an unknown or expired id."""
        with self._lock:
            entry = self._live(job_id)
            return None if entry is None else json.loads(entry[1])

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        with self._lock:
            entry = self._live(job_id)
            if entry is None or json.loads(entry[1])["status"] != expected_status:
                return False
            self._records[job_id] = (entry[0], _dumps(record))
            return True

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        with self._lock:
            self._records[record["id"]] = (self._clock() + ttl_s, _dumps(record))

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        with self._lock:
            self._records.pop(job_id, None)

    def _live(self, job_id: str) -> tuple[float, str] | None:
        entry = self._records.get(job_id)
        if entry is not None and entry[0] <= self._clock():
            del self._records[job_id]
            return None
        return entry

    def _drop_expired(self) -> None:
        now = self._clock()
        for job_id in [k for k, (expires_at, _) in self._records.items() if expires_at <= now]:
            del self._records[job_id]


def _dumps(record: Record) -> str:
    # Stored JSON is strict like the API's: a NaN that slipped into a result fails here, not in a client.
    return json.dumps(record, separators=(",", ":"), allow_nan=False)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
