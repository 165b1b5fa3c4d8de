"""The job registry of the embedded mode: records in this process's memory, waits on a Condition."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable

from workers.tasks.records import QUEUED, RUNNING, TERMINAL, Record, Stored, decoded, dumps, with_outcome


class MemoryJobStore:
    """Job records in this process's memory, for the embedded mode (one process serves everything).

    A finished job notifies the Condition every waiting request sleeps on, so a wait ends when the
    job does, not at the next poll.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._records: dict[str, tuple[float, str, str]] = {}  # id -> (expires at, status, JSON)
        self._enqueued: set[str] = set()
        self._chunks: dict[str, dict[int, tuple[str, int]]] = {}  # job -> index -> (result, its jobs)

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
        return decoded(self.get_stored(job_id))

    def get_stored(self, job_id: str) -> Stored | None:
        """Return (status, record JSON), or None for an unknown or expired id."""
        with self._lock:
            entry = self._live(job_id)
            return None if entry is None else (entry[1], entry[2])

    def wait_stored(self, job_id: str, *, timeout_s: float, known: Stored | None = None) -> Stored | None:
        """Return the job once done or failed, or as it is after `timeout_s`; None when unknown."""
        deadline = time.monotonic() + max(timeout_s, 0.0)
        with self._changed:
            while True:
                entry = self._live(job_id)
                remaining = deadline - time.monotonic()
                if entry is None or entry[1] in TERMINAL or remaining <= 0:
                    return None if entry is None else (entry[1], entry[2])
                self._changed.wait(remaining)

    def start(self, job_id: str, *, at: str) -> bool:
        """Move a queued job to running (no-op if it moved on or expired)."""
        with self._lock:
            entry = self._live(job_id)
            if entry is None or entry[1] != QUEUED:
                return False
            record = {**json.loads(entry[2]), "status": RUNNING, "updated_at": at, "started_at": at}
            self._records[job_id] = (entry[0], RUNNING, dumps(record))
            return True

    def start_soon(self, job_id: str, *, at: str) -> Callable[[], bool]:
        """Start the job now (no round trip to save in memory); return a call giving the answer."""
        started = self.start(job_id, at=at)
        return lambda: started

    def finish(self, job_id: str, *, status: str, outcome_json: str, at: str, fallback: Record) -> None:
        """Record the outcome on the job (on `fallback` if it expired) and wake whoever waits for it."""
        with self._changed:
            entry = self._live(job_id)
            record = json.loads(entry[2]) if entry is not None else fallback
            expires_at = self._clock() + int(record["expires_after_s"])
            self._records[job_id] = (expires_at, status, with_outcome(record, status=status,
                                                                      outcome_json=outcome_json, at=at))
            self._changed.notify_all()

    def add_chunk(self, job_id: str, *, index: int, payload: str, jobs: int, chunks: int, total_jobs: int,
                  at: str) -> tuple[bool, bool]:
        """Keep one chunk's result unless kept already; return (kept now, every chunk is in)."""
        with self._changed:
            kept = self._chunks.setdefault(job_id, {})
            added = index not in kept
            if added:
                kept[index] = (payload, jobs)
                done = sum(count for _, count in kept.values())
                entry = self._live(job_id)
                if entry is not None and entry[1] in (QUEUED, RUNNING):
                    record = {**json.loads(entry[2]), "progress": {"done": done, "total": total_jobs},
                              "updated_at": at}
                    self._records[job_id] = (entry[0], entry[1], dumps(record))
                    self._changed.notify_all()
            return added, len(kept) >= chunks

    def has_chunk(self, job_id: str, *, index: int) -> bool:
        """Say whether the chunk's result is kept."""
        with self._lock:
            return index in self._chunks.get(job_id, {})

    def chunk_payloads(self, job_id: str) -> dict[int, str]:
        """Return every kept chunk's result by its index."""
        with self._lock:
            return {index: payload for index, (payload, _) in self._chunks.get(job_id, {}).items()}

    def drop_chunks(self, job_id: str) -> None:
        """Forget the chunk results (the whole is recorded)."""
        with self._lock:
            self._chunks.pop(job_id, None)

    def advance(self, job_id: str, *, expected_status: str, record: Record) -> bool:
        """Replace the record if its status is still `expected_status`, keeping its expiry."""
        with self._changed:
            entry = self._live(job_id)
            if entry is None or entry[1] != expected_status:
                return False
            self._records[job_id] = (entry[0], record["status"], dumps(record))
            self._changed.notify_all()
            return True

    def put(self, record: Record, *, ttl_s: int) -> None:
        """Store the record unconditionally, expiring in `ttl_s`."""
        with self._changed:
            self._records[record["id"]] = (self._clock() + ttl_s, record["status"], dumps(record))
            self._changed.notify_all()

    def forget(self, job_id: str) -> None:
        """Remove the record."""
        with self._lock:
            self._records.pop(job_id, None)
            self._enqueued.discard(job_id)
            self._chunks.pop(job_id, None)

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
