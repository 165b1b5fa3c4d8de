"""Where tasks run: Celery workers over Redis, or the embedded mode's in-process thread pool.

Both take a task name and JSON arguments and run the same `@shared_task` of workers/tasks/recommend.py. The
embedded mode (no REDIS_URL) round-trips the arguments through kombu's JSON serializer, exactly as a
broker message would, then calls the task on a thread of this process inside the Flask app context.
It keeps one process's state, so the embedded service runs as one gunicorn process with threads.
"""

from __future__ import annotations

import base64
import logging
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Protocol

from celery import Celery
from kombu.serialization import dumps as kombu_dumps
from kombu.serialization import loads as kombu_loads
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from workers.tasks.records import PreparedTask, dumps

log = logging.getLogger(__name__)


class TaskQueue(Protocol):
    """Runs named tasks somewhere, and says whether anything is there to run them."""

    def enqueue(self, task_name: str, *args: Any) -> None:
        """Queue one run of the task with JSON-able arguments."""
        ...

    def prepare(self, task_name: str, *args: Any) -> PreparedTask | None:
        """Return the task's message for the job registry to push itself, or None to call `enqueue`."""
        ...

    def unready_reason(self, *, timeout_s: float) -> str | None:
        """Return why tasks cannot run now, or None when they can; answer within `timeout_s`."""
        ...

    def close(self) -> None:
        """Stop taking tasks."""
        ...


class CeleryQueue:
    """Tasks go to Redis and run on `gpugauge worker` processes."""

    def __init__(self, celery: Celery, *, redis_probe: Redis, same_redis_as_jobs: bool = False) -> None:
        self._celery = celery
        self._redis_probe = redis_probe  # a client with short timeouts, for readiness only
        self._same_redis = same_redis_as_jobs  # the job registry may push messages only onto its own Redis

    def enqueue(self, task_name: str, *args: Any) -> None:
        """Publish one task message; raise kombu's OperationalError when Redis is down."""
        self._celery.tasks[task_name].apply_async(args=args, **_short_repr(args))

    def prepare(self, task_name: str, *args: Any) -> PreparedTask | None:
        """Build the message `enqueue` would push, as kombu's Redis transport writes it, without sending it.

        Celery builds the task message (headers, time limits, routing) through a producer that keeps
        what it is asked to publish; the envelope is kombu's virtual-transport message (base64 body,
        delivery_info, delivery_tag). The job registry pushes it in the round trip that claims the job.
        A route through a named exchange or with a priority returns None: `enqueue` handles those.
        Celery's before/after_task_publish signals do not fire for a message sent this way.
        """
        if not self._same_redis:
            return None
        capture = _CapturingProducer()
        self._celery.tasks[task_name].apply_async(args=args, producer=capture, **_short_repr(args))
        body, options = capture.published
        if options.get("exchange") or options.get("priority") or options.get("compression"):
            return None
        content_type, content_encoding, payload = kombu_dumps(body, serializer=options["serializer"])  # type: ignore[no-untyped-call]
        properties = {k: v for k, v in options.items() if k not in _PUBLISH_ARGUMENTS and k not in _SHORT_REPR}
        message = {
            "body": base64.b64encode(payload.encode(content_encoding) if isinstance(payload, str)
                                     else payload).decode(),
            "content-encoding": content_encoding,
            "content-type": content_type,
            "headers": options["headers"],
            "properties": {**properties, "delivery_mode": options["delivery_mode"],
                           "delivery_info": {"exchange": "", "routing_key": options["routing_key"]},
                           "priority": 0, "body_encoding": "base64", "delivery_tag": str(uuid.uuid4())},
        }
        return PreparedTask(queue_key=options["routing_key"], message=dumps(message))

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

    def prepare(self, task_name: str, *args: Any) -> PreparedTask | None:
        """Return None: the pool runs tasks through `enqueue`."""
        return None

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


def _short_repr(args: tuple[Any, ...]) -> dict[str, str]:
    """Return the message's argsrepr and kwargsrepr (what worker logs show of its arguments): the first, the job id.

    Celery otherwise writes saferepr of every argument into the headers, a third of a submit's CPU
    (0.6 of 1.9 ms for examples/resnet50-imagenet.json, cProfile), to show a truncated spec in a log line.
    """
    return {"argsrepr": f"({args[0]!r}, ...)" if args else "()", "kwargsrepr": "{}"}


_SHORT_REPR = frozenset({"argsrepr", "kwargsrepr"})  # Celery passes them on to publish(); not message properties
# Producer.publish's own arguments; the rest of what Celery passes are the message's properties.
_PUBLISH_ARGUMENTS = frozenset({"exchange", "routing_key", "serializer", "compression", "retry", "retry_policy",
                                "delivery_mode", "declare", "headers", "timeout", "confirm_timeout",
                                "mandatory", "immediate", "content_type", "content_encoding"})


class _CapturingProducer:
    """Stands in for kombu's Producer in Celery's send_task: keeps the publication instead of sending it."""

    def __init__(self) -> None:
        self.connection = self
        self.published: tuple[Any, dict[str, Any]] = ((), {})

    @contextmanager
    def _reraise_as_library_errors(self) -> Iterator[None]:
        yield

    def publish(self, body: Any, **options: Any) -> None:
        """Keep what Celery asked to publish."""
        self.published = (body, options)
