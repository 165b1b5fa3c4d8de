"""Celery settings for gpugauge: JSON only, late acks, fail-fast Redis retries, time limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# A connection failure must fail a request in well under a second, not hang it: Celery's defaults
# retry a dead result backend 20 times (~19 s) and a publish 3 times (ecosystem-notes §0.1,
# celery docs/userguide/calling.rst "Message Sending Retry").
FAIL_FAST_RETRY_POLICY: dict[str, float] = {
    "max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2,
}

# Unacked tasks come back after this; it must exceed the longest task (celery redis.rst "Caveats").
VISIBILITY_TIMEOUT_S = 3600


def celery_settings(redis_url: str, *, time_limit_s: float = 120.0,
                    soft_time_limit_s: float = 100.0,
                    overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the Celery configuration for a broker at `redis_url` (results live in our job registry)."""
    settings: dict[str, Any] = {
        "broker_url": redis_url,
        # No result backend: our job registry (workers/tasks/jobs.py) holds states and results. With one on
        # the same Redis, a Redis outage lost the jobs running at that moment: the worker cancels them
        # on the connection loss, its cancel fails writing a RETRY state to the unreachable backend,
        # and on reconnecting Celery takes them for revoked and acknowledges their messages (seen in
        # bench/faults.py redis-outage). Without a backend the cancel completes, the messages stay
        # un-acknowledged and come back after the visibility timeout. A caller that needs Celery
        # results (bench/bench_api.py's no-op round trip) sets CELERY={"result_backend": url}.
        "result_backend": None,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_ignore_result": True,
        "result_expires": 3600,
        # A job survives a worker crash: ack after the run, requeue when the child dies
        # (ecosystem-notes §0.5; tasks must be idempotent, ours are).
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        # Enforced by the prefork pool only (ecosystem-notes §0.4).
        "task_time_limit": time_limit_s,
        "task_soft_time_limit": soft_time_limit_s,
        "broker_transport_options": {
            "visibility_timeout": VISIBILITY_TIMEOUT_S, "max_retries": 1, "socket_connect_timeout": 1,
        },
        "result_backend_transport_options": {
            "visibility_timeout": VISIBILITY_TIMEOUT_S, "retry_policy": dict(FAIL_FAST_RETRY_POLICY),
        },
        "task_publish_retry_policy": dict(FAIL_FAST_RETRY_POLICY),
        "redis_socket_connect_timeout": 1,
        "redis_socket_timeout": 5,
        "redis_backend_health_check_interval": 25,
        "broker_connection_retry_on_startup": True,
        # Recycling a child costs a fork and a cold start (a slow job); our caches are bounded, so
        # recycle rarely, as gunicorn does (max_requests 1000), only against leaks in libraries.
        "worker_max_tasks_per_child": 1000,
        "worker_cancel_long_running_tasks_on_connection_loss": True,
        "worker_hijack_root_logger": False,
    }
    settings.update(overrides or {})
    return settings


def embedded_settings(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return the Celery configuration of the embedded mode, where no broker is ever used."""
    # Tasks run on the in-process thread pool of workers/tasks/queues.py; the Celery app only keeps
    # the task registry, so nothing here may reach for a network.
    settings: dict[str, Any] = {
        "broker_url": "memory://",
        "result_backend": None,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "task_ignore_result": True,
        "worker_hijack_root_logger": False,
    }
    settings.update(overrides or {})
    return settings
