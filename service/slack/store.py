"""Slack jobs kept server-side for as long as a response_url lives, so a task carries only a job id.

Keys (under `gpugauge:slack:` in Redis, or in memory in the embedded mode), each expiring:
    job:{id}    the command: kind, validated spec, GPUs, title        30 min
    url:{id}    the response_url, a bearer capability kept apart       30 min
    sent:{id}   set once (SET NX) by whoever posts the answer           30 min
    seen:{hash} a signed request already served (replay refusal)      5 min
The response_url never travels in a Celery message, a job record or a log line (ecosystem-notes §2.2).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from service.jobs import JobStore, Record
from service.slack.verify import MAX_AGE_S

KEY_PREFIX = "gpugauge:slack:"
# Slack takes posts to a response_url for 30 minutes (api.slack.com/interactivity/handling).
JOB_TTL_S = 30 * 60


class SlackJobs:
    """The Slack commands waiting for an answer, over any JobStore (Redis or memory)."""

    def __init__(self, store: JobStore, *, ttl_s: int = JOB_TTL_S) -> None:
        self._store = store
        self._ttl_s = ttl_s

    def open(self, *, kind: str, spec: Mapping[str, Any], gpus: Sequence[str], gpu_count: int,
             title: str, response_url: str) -> str:
        """Store a command and its response_url under a new job id and return the id."""
        job_id = uuid.uuid4().hex
        self._store.claim({"id": f"url:{job_id}", "response_url": response_url}, ttl_s=self._ttl_s)
        self._store.claim({"id": f"job:{job_id}", "kind": kind, "spec": dict(spec), "gpus": list(gpus),
                           "gpu_count": gpu_count, "title": title}, ttl_s=self._ttl_s)
        return job_id

    def command(self, job_id: str) -> Record | None:
        """Return the stored command, or None once it expired."""
        return self._store.get(f"job:{job_id}")

    def response_url(self, job_id: str) -> str | None:
        """Return the job's response_url, or None once it expired."""
        record = self._store.get(f"url:{job_id}")
        return None if record is None else str(record["response_url"])

    def claim_delivery(self, job_id: str) -> bool:
        """Claim the one post of this job's answer; False when someone already claimed it."""
        return self._store.claim({"id": f"sent:{job_id}"}, ttl_s=self._ttl_s)

    def delivered(self, job_id: str) -> bool:
        """Return whether the answer was already claimed for posting."""
        return self._store.get(f"sent:{job_id}") is not None

    def release_delivery(self, job_id: str) -> None:
        """Give the claim back after a post that failed, so that a retry may post."""
        self._store.forget(f"sent:{job_id}")

    def remember(self, key: str) -> bool:
        """Remember a signed request for five minutes; False when it was already remembered."""
        return self._store.claim({"id": key}, ttl_s=MAX_AGE_S)
