"""The Redis run store's revision, kept for a moment: its own writes seen at once, another process's soon."""

from __future__ import annotations

import uuid

import redis

from workers.tasks.runs_redis import RedisRunStore


def _store(client: redis.Redis, key: str, now: list[float]) -> RedisRunStore:
    return RedisRunStore(client, key=key, revision_check_s=1.0, clock=lambda: now[0])


def test_a_store_sees_its_own_writes_at_once_and_another_process_writes_within_the_check(
        service_redis: redis.Redis) -> None:
    key = f"test:runs:{uuid.uuid4().hex}"
    now = [100.0]
    here, there = _store(service_redis, key, now), _store(service_redis, key, now)
    try:
        assert here.revision() == ""
        here.add({"id": "a", "recorded_at": "2026-01-01T00:00:00+00:00"})
        assert here.revision() == "1"  # its own write: at once
        assert there.revision() == "1"
        here.add({"id": "b", "recorded_at": "2026-01-01T00:00:01+00:00"})
        assert here.revision() == "2"
        now[0] += 0.5
        assert there.revision() == "1"  # read 0.5 s ago: kept
        now[0] += 0.6
        assert there.revision() == "2"  # past the check: read again
        assert here.revision() == "2"  # read now, before the other's write
        assert there.remove("a") and there.revision() == "3"
        assert here.revision() == "2"
        now[0] += 1.0
        assert here.revision() == "3"
    finally:
        service_redis.delete(key, key + ":revision")


def test_without_a_check_interval_every_call_reads_redis(service_redis: redis.Redis) -> None:
    key = f"test:runs:{uuid.uuid4().hex}"
    here, there = RedisRunStore(service_redis, key=key), RedisRunStore(service_redis, key=key)
    try:
        assert there.revision() == ""
        here.add({"id": "a", "recorded_at": "2026-01-01T00:00:00+00:00"})
        assert there.revision() == "1"
    finally:
        service_redis.delete(key, key + ":revision")
