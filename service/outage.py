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
from typing import TypeVar

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
