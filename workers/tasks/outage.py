"""Riding out a Redis outage inside a task: wait for Redis to answer rather than fail the job.

A task that raises on a lost Redis loses its job, whatever Celery is told: an autoretry must publish
the retry to the dead broker, fails, and rejects the message without requeueing it; a plain failure is
acknowledged once the worker reconnects (task_acks_on_failure_or_timeout). Waiting instead keeps the
message un-acknowledged: either Redis comes back and the task finishes normally, or the worker, which
cancels its running late-ack tasks when it loses the broker, stops this one and the message comes back
after the visibility timeout (bench/faults.py redis-outage measures both).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

T = TypeVar("T")
UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
# Longer than a Redis restart or failover; shorter than a job's soft time limit (100 s).
WAIT_S = 60.0
PAUSE_S = 0.5


def when_redis_answers(call: Callable[[], T], *, what: str, wait_s: float = WAIT_S, pause_s: float = PAUSE_S,
                       clock: Callable[[], float] = time.monotonic,
                       sleep: Callable[[float], None] = time.sleep) -> T:
    """Return call(); while Redis is unreachable, call again every `pause_s`; after `wait_s`, raise."""
    deadline = clock() + wait_s
    warned = False
    while True:
        try:
            return call()
        except UNREACHABLE as error:
            if clock() + pause_s > deadline:
                raise
            if not warned:
                log.warning("%s: Redis is unreachable (%s); waiting up to %.0f s", what, type(error).__name__,
                            wait_s)
                warned = True
            sleep(pause_s)


def patch_kombu_restore_unacked() -> None:
    """Make kombu's Redis QoS leave un-acknowledged messages in Redis when its connection is already gone.

    On a broker outage the worker closes its connection twice (collect, then close); the second close
    asks the channel to restore its un-acked deliveries through a transport whose client is already
    None, and kombu 5.7 raises AttributeError there: the consumer stops for good and the worker, still
    alive, never consumes again (bench/faults.py redis-outage; the family of celery/celery#8384,
    celery/kombu#2007). With the transport gone, doing nothing is right: the messages are still in
    Redis's unacked set and come back after the visibility timeout.
    """
    from kombu.transport import redis as kombu_redis

    original = kombu_redis.QoS.restore_unacked
    if getattr(original, "gpugauge_patched", False):
        return

    def restore_unacked(self: Any, client: Any = None) -> Any:
        transport = getattr(self.channel, "connection", None)
        if client is None and getattr(transport, "client", None) is None:
            log.warning("broker connection already closed: %d un-acknowledged message(s) stay in Redis and "
                        "return after the visibility timeout", len(self._delivered))
            self._delivered.clear()
            return None
        return original(self, client)  # type: ignore[no-untyped-call]

    restore_unacked.gpugauge_patched = True  # type: ignore[attr-defined]
    kombu_redis.QoS.restore_unacked = restore_unacked  # type: ignore[method-assign]
