"""Reported runs in Redis: one hash (id -> JSON) beside the job queue, and a revision counter.

The revision is read on every estimate and submit (it keys calibration and job ids), so a store may
keep what it read for `revision_check_s`: a run written through this store is seen at once, one
written through another process within that many seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from redis import Redis
from redis.exceptions import RedisError

from workers.tasks.runs import RunStoreUnavailable


class RedisRunStore:
    """Runs in one Redis hash (id -> JSON), with a revision counter beside it."""

    def __init__(self, client: Redis, *, key: str = "gpugauge:runs", revision_check_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._redis = client
        self._key = key
        self._rev = key + ":revision"
        self._check_s = revision_check_s
        self._clock = clock
        self._seen: tuple[float, str] | None = None  # (when read, the revision read)

    def add(self, record: Mapping[str, Any]) -> None:
        """Store one run and bump the revision, in one transaction (Redis errors pass: a write must not be lost)."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.hset(self._key, str(record["id"]), json.dumps(record, sort_keys=True))
        pipe.incr(self._rev)
        self._seen = None
        pipe.execute()

    def list(self) -> list[dict[str, Any]]:
        """Return every run, oldest first."""
        try:
            raw: dict[bytes, bytes] = self._redis.hgetall(self._key)  # type: ignore[assignment]
        except RedisError as error:
            raise RunStoreUnavailable(f"Redis: {error}") from error
        return sorted((json.loads(v) for v in raw.values()), key=lambda r: (r["recorded_at"], r["id"]))

    def remove(self, run_id: str) -> bool:
        """Delete one run and bump the revision."""
        pipe = self._redis.pipeline(transaction=True)
        pipe.hdel(self._key, run_id)
        pipe.incr(self._rev)
        self._seen = None
        removed, _ = pipe.execute()
        return bool(removed)

    def revision(self) -> str:
        """Return the revision counter, as read at most `revision_check_s` ago."""
        seen, now = self._seen, self._clock()
        if seen is not None and now - seen[0] < self._check_s:
            return seen[1]
        try:
            value = self._redis.get(self._rev)
        except RedisError as error:
            raise RunStoreUnavailable(f"Redis: {error}") from error
        revision = value.decode() if isinstance(value, bytes) else str(value or "")
        self._seen = (now, revision)
        return revision
