"""Slack jobs kept server-side for as long as a response_url lives, so a task carries only a job id.

Keys (under `gpugauge:slack:` in Redis, or in this process's memory in the embedded mode), each expiring:
    job:{id}    the command: kind, validated spec, GPUs, title        30 min
    url:{id}    the response_url, a bearer capability kept apart       30 min
    sent:{id}   set once (SET NX) by whoever posts the answer           30 min
    seen:{hash} a signed request already served (replay refusal)      5 min
The response_url never travels in a Celery message, a job record or a log line (ecosystem-notes §2.2).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

# Slack refuses a request older than five minutes (docs.slack.dev, "Validating a request"); a replay key lives as long.
MAX_AGE_S = 5 * 60

KEY_PREFIX = "gpugauge:slack:"
# Slack takes posts to a response_url for 30 minutes (api.slack.com/interactivity/handling).
JOB_TTL_S = 30 * 60


class KeyValue(Protocol):
    """The three Redis calls the Slack jobs need; redis.Redis and MemoryKeyValue have them."""

    # Any: redis-py's own annotations are wider (bytes, str, awaitables); callers test truthiness only.
    def set(self, name: str, value: str, *, ex: int, nx: bool = False) -> Any:
        """Set a key expiring in `ex` seconds (only if absent with `nx`); truthy when set."""
        ...

    def get(self, name: str) -> Any:
        """Return a key's value (bytes or str), or None."""
        ...

    def delete(self, *names: str) -> Any:
        """Remove keys; return how many existed."""
        ...


class MemoryKeyValue:
    """Expiring keys in this process's memory, for the embedded mode (one process serves everything)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._items: dict[str, tuple[float, str]] = {}  # name -> (expires at, value)

    def set(self, name: str, value: str, *, ex: int, nx: bool = False) -> bool | None:
        """Set a key expiring in `ex` seconds (only if absent with `nx`); True when set."""
        with self._lock:
            if nx and self._live(name) is not None:
                return None
            self._items[name] = (self._clock() + ex, value)
            return True

    def get(self, name: str) -> str | None:
        """Return a key's value, or None once it expired."""
        with self._lock:
            return self._live(name)

    def delete(self, *names: str) -> int:
        """Remove keys; return how many existed."""
        with self._lock:
            return sum(self._items.pop(name, None) is not None for name in names)

    def _live(self, name: str) -> str | None:
        item = self._items.get(name)
        if item is not None and item[0] <= self._clock():
            del self._items[name]
            return None
        return None if item is None else item[1]


class SlackJobs:
    """The Slack commands waiting for an answer, in Redis or in memory."""

    def __init__(self, kv: KeyValue, *, ttl_s: int = JOB_TTL_S, prefix: str = KEY_PREFIX) -> None:
        self._kv = kv
        self._ttl_s = ttl_s
        self._prefix = prefix

    def open(self, *, kind: str, spec: Mapping[str, Any], gpus: Sequence[str], gpu_count: int,
             title: str, response_url: str) -> str:
        """Store a command and its response_url under a new job id and return the id."""
        job_id = uuid.uuid4().hex
        command = {"kind": kind, "spec": dict(spec), "gpus": list(gpus), "gpu_count": gpu_count, "title": title}
        self._kv.set(self._key("url", job_id), response_url, ex=self._ttl_s)
        self._kv.set(self._key("job", job_id), json.dumps(command, allow_nan=False), ex=self._ttl_s)
        return job_id

    def command(self, job_id: str) -> dict[str, Any] | None:
        """Return the stored command, or None once it expired."""
        raw = self._kv.get(self._key("job", job_id))
        return None if raw is None else dict(json.loads(raw))

    def response_url(self, job_id: str) -> str | None:
        """Return the job's response_url, or None once it expired."""
        raw = self._kv.get(self._key("url", job_id))
        return raw.decode() if isinstance(raw, bytes) else raw

    def claim_delivery(self, job_id: str) -> bool:
        """Claim the one post of this job's answer; False when someone already claimed it."""
        return bool(self._kv.set(self._key("sent", job_id), "1", ex=self._ttl_s, nx=True))

    def delivered(self, job_id: str) -> bool:
        """Return whether the answer was already claimed for posting."""
        return self._kv.get(self._key("sent", job_id)) is not None

    def release_delivery(self, job_id: str) -> None:
        """Give the claim back after a post that failed, so that a retry may post."""
        self._kv.delete(self._key("sent", job_id))

    def remember(self, key: str) -> bool:
        """Remember a signed request while its timestamp is accepted; False when it was already remembered."""
        return bool(self._kv.set(self._prefix + key, "1", ex=MAX_AGE_S, nx=True))

    def _key(self, kind: str, job_id: str) -> str:
        return f"{self._prefix}{kind}:{job_id}"
