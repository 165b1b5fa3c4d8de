"""A task waits out a Redis outage (workers/tasks/outage.py) instead of failing, and so losing, its job."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from flask import Flask
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from workers.tasks.outage import when_redis_answers


class FakeTime:
    """A clock that only moves when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def flaky(failures: list[Exception], value: str = "written") -> Callable[[], str]:
    def call() -> str:
        if failures:
            raise failures.pop(0)
        return value
    return call


def test_a_call_is_repeated_until_redis_answers() -> None:
    fake = FakeTime()
    call = flaky([RedisConnectionError("refused"), RedisTimeoutError("timeout"), RedisConnectionError("refused")])
    assert when_redis_answers(call, what="job j", pause_s=0.5, clock=fake.clock, sleep=fake.sleep) == "written"
    assert fake.sleeps == [0.5, 0.5, 0.5]


def test_after_the_wait_the_outage_error_is_raised() -> None:
    fake = FakeTime()
    call = flaky([RedisConnectionError("refused")] * 100)
    with pytest.raises(RedisConnectionError):
        when_redis_answers(call, what="job j", wait_s=3.0, pause_s=0.5, clock=fake.clock, sleep=fake.sleep)
    assert sum(fake.sleeps) <= 3.0 and len(fake.sleeps) == 6


def test_other_errors_are_not_waited_on() -> None:
    fake = FakeTime()
    with pytest.raises(KeyError):
        when_redis_answers(flaky([KeyError("job")]), what="job j", clock=fake.clock, sleep=fake.sleep)
    assert fake.sleeps == []



@pytest.mark.usefixtures("keep_celery_default")
def test_the_job_tasks_wait_for_redis_instead_of_autoretrying(make_app: Callable[..., Flask]) -> None:
    from workers.tasks.recommend import RECOMMEND_TASK
    from workers.tasks.review import REVIEW_TASK

    app = make_app()
    for name in (RECOMMEND_TASK, REVIEW_TASK):
        task = app.extensions["celery"].tasks[name]
        assert not getattr(task, "autoretry_for", ()), name  # a retry to a dead broker drops the message
        assert task.acks_late and task.reject_on_worker_lost, name


def test_kombu_leaves_unacked_messages_in_redis_when_its_connection_is_already_gone() -> None:
    from types import SimpleNamespace

    from kombu.transport import redis as kombu_redis

    from workers.tasks.outage import patch_kombu_restore_unacked

    patch_kombu_restore_unacked()  # the app factory does this; twice is harmless
    patch_kombu_restore_unacked()

    qos = SimpleNamespace(channel=SimpleNamespace(connection=SimpleNamespace(client=None)),
                          _delivered={"tag-1": object(), "tag-2": object()})
    # kombu 5.7 raised AttributeError here, and the worker's consumer stopped for good.
    assert kombu_redis.QoS.restore_unacked(qos) is None  # type: ignore[arg-type]
    assert qos._delivered == {}
