"""The lost-job sweep: a queued or running job untouched far too long is enqueued again from its stored task."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import redis
from flask import Flask

from service.config import DEFAULTS
from tests.service_helpers import PrivateRedis
from workers.tasks.jobs import QUEUED, RUNNING, new_record, submit
from workers.tasks.reconcile import MAX_REPLAY_CHARS, replay_of, requeue_stalled
from workers.tasks.refresh import beat_schedule
from workers.tasks.runtime import runtime

PREFIX = "gpugauge:test-reconcile:job:"
QUEUE = "gpugauge-test-reconcile"


pytestmark = pytest.mark.usefixtures("keep_celery_default")


def aged(store_client: redis.Redis, job_id: str, *, status: str, seconds: float) -> None:
    """Rewrite a stored job as `status`, last updated `seconds` ago."""
    key = PREFIX + job_id
    record = json.loads(store_client.hget(key, "job"))
    record.update(status=status, updated_at=(datetime.now(UTC) - timedelta(seconds=seconds)).isoformat())
    store_client.hset(key, mapping={"status": status, "job": json.dumps(record)})


def test_stalled_jobs_are_enqueued_again_once_and_others_are_left_alone(
        make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    app = make_app(REDIS_URL=private_redis.url, JOB_KEY_PREFIX=PREFIX, JOB_REQUEUE_AFTER_S=60,
                   CELERY={"task_default_queue": QUEUE})
    store, client = runtime(app).jobs, redis.Redis(port=private_redis.port)
    for job_id in ("lost-queued", "lost-running", "young", "done", "no-replay"):
        replay = None if job_id == "no-replay" else replay_of("gpugauge.recommend", job_id, {"spec": job_id})
        submit(store, lambda: None, job_id=job_id, ttl_s=600, replay=replay)
    aged(client, "lost-queued", status=QUEUED, seconds=120)
    aged(client, "lost-running", status=RUNNING, seconds=120)
    aged(client, "young", status=QUEUED, seconds=10)
    aged(client, "done", status="done", seconds=120)
    aged(client, "no-replay", status=QUEUED, seconds=120)
    with app.app_context():
        first = requeue_stalled.run()
        second = requeue_stalled.run()  # the requeued jobs were touched: not enqueued twice
    assert first == {"requeued": 2, "checked": 5} and second["requeued"] == 0
    messages = [json.loads(m) for m in client.lrange(QUEUE, 0, -1)]
    # the task's arguments as the worker receives them: the message body (Celery's [args, kwargs, embed])
    assert sorted(json.loads(base64.b64decode(m["body"]))[0] for m in messages) == [
        ["lost-queued", {"spec": "lost-queued"}], ["lost-running", {"spec": "lost-running"}]]
    assert store.get("lost-running")["status"] == RUNNING  # type: ignore[index]


def test_a_task_too_large_to_keep_is_not_kept() -> None:
    assert replay_of("gpugauge.recommend", "j", {"onnx": "x" * MAX_REPLAY_CHARS}) is None
    assert json.loads(replay_of("gpugauge.review", "j", {"a": 1}) or "") == ["gpugauge.review", ["j", {"a": 1}]]


def test_without_redis_there_is_nothing_to_sweep(make_app: Callable[..., Flask]) -> None:
    with make_app().app_context():
        assert requeue_stalled.run() == {"requeued": 0, "checked": 0}


def test_beat_runs_the_sweep_at_its_interval() -> None:
    entry = beat_schedule({**DEFAULTS, "JOB_REQUEUE_EVERY_S": 30})["lost-job-sweep"]
    assert entry == {"task": "gpugauge.requeue_stalled", "schedule": 30.0}


def test_a_claim_keeps_its_task_for_replay(private_redis: PrivateRedis) -> None:
    from workers.tasks.jobs import RedisJobStore

    client = redis.Redis(port=private_redis.port)
    store = RedisJobStore(client, prefix=PREFIX)
    store.claim(new_record("k", ttl_s=60), ttl_s=60)
    store.confirm("k", replay='["gpugauge.recommend", ["k", {}]]')
    assert client.hget(PREFIX + "k", "replay") == b'["gpugauge.recommend", ["k", {}]]'
    store.confirm("gone", replay="[]")  # an expired job is not re-created
    assert not client.exists(PREFIX + "gone")
