"""Where tasks run: Celery workers over Redis, or the embedded mode's in-process thread pool.

Both take a task name and JSON arguments and run the same `@shared_task` of workers/tasks/recommend.py. The
embedded mode (no REDIS_URL) round-trips the arguments through kombu's JSON serializer, exactly as a
broker message would, then calls the task on a thread of this process inside the Flask app context.
It keeps one process's state, so the embedded service runs as one gunicorn process with threads.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from celery import Celery
from kombu.serialization import dumps as kombu_dumps
from kombu.serialization import loads as kombu_loads
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)


class TaskQueue(Protocol):
    """Runs named tasks somewhere, and says whether anything is there to run them."""

    def enqueue(self, task_name: str, *args: Any) -> None:
        """Queue one run of the task with JSON-able arguments."""
        ...

    def unready_reason(self, *, timeout_s: float) -> str | None:
        """Return why tasks cannot run now, or None when they can; answer within `timeout_s`."""
        ...

    def close(self) -> None:
        """Stop taking tasks."""
        ...


class CeleryQueue:
    """Tasks go to Redis and run on `gpugauge worker` processes."""

    def __init__(self, celery: Celery, *, redis_probe: Redis) -> None:
        self._celery = celery
        self._redis_probe = redis_probe  # a client with short timeouts, for readiness only

    def enqueue(self, task_name: str, *args: Any) -> None:
        """Publish one task message; raise kombu's OperationalError when Redis is down."""
        self._celery.tasks[task_name].apply_async(args=args)

    def unready_reason(self, *, timeout_s: float) -> str | None:
        """Ask Redis for a PING, then the workers for a ping; report the first that fails."""
        try:
            self._redis_probe.ping()
        except (RedisConnectionError, RedisTimeoutError) as error:
            return f"Redis does not answer: {error}"
        # Redis answered, so the broadcast cannot hang on a reconnect; limit=1 returns on the first pong.
        if not self._celery.control.ping(timeout=timeout_s, limit=1):
            return f"no worker answered a ping within {timeout_s:g} s"
        return None

    def close(self) -> None:
        """Release the broker connections."""
        self._celery.close()


class ThreadQueue:
    """The embedded mode: tasks run on a thread pool of this process."""

    def __init__(self, celery: Celery, *, threads: int) -> None:
        self._celery = celery
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpugauge-task")
        self._closed = threading.Event()

    def enqueue(self, task_name: str, *args: Any) -> None:
        """Serialise the arguments as a Celery message would and run the task on a pool thread."""
        task = self._celery.tasks[task_name]
        content_type, encoding, body = kombu_dumps(list(args), serializer="json")  # type: ignore[no-untyped-call]
        self._pool.submit(self._run, task, body, content_type, encoding)

    def unready_reason(self, *, timeout_s: float) -> str | None:
        """Return None while the pool takes tasks."""
        return "the in-process worker has stopped" if self._closed.is_set() else None

    def close(self) -> None:
        """Finish the running tasks and stop."""
        self._closed.set()
        self._pool.shutdown(wait=True, cancel_futures=True)

    @staticmethod
    def _run(task: Any, body: bytes | str, content_type: str, encoding: str) -> None:
        try:
            task(*kombu_loads(body, content_type, encoding, accept=[content_type]))  # type: ignore[no-untyped-call]
        except Exception:  # the task has recorded the failure on its job; keep the thread alive
            log.exception("task %s failed", task.name)
