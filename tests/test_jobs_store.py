"""The job registry in Redis and in memory: claim once, move forward only, expire, release on failure."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
import redis

from tests.service_helpers import SERVICE_REDIS_URL
from workers.tasks import redis_jobs
from workers.tasks.jobs import (
    DONE,
    FAILED,
    QUEUED,
    RUNNING,
    JobStore,
    MemoryJobStore,
    RedisJobStore,
    finish,
    mark_running,
    new_record,
    submit,
)
from workers.tasks.records import dumps, now_iso, stored_outcome


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def __call__(self) -> float:
        return self.now_s


@pytest.fixture(params=["redis", "memory"])
def store(request: pytest.FixtureRequest, service_redis: redis.Redis) -> Iterator[JobStore]:
    """Each store, the Redis one under a key prefix of this test's own."""
    if request.param == "memory":
        yield MemoryJobStore()
        return
    prefix = f"gpugauge:test-jobs:{uuid.uuid4().hex}:"
    yield RedisJobStore(redis.Redis.from_url(SERVICE_REDIS_URL), prefix=prefix)
    for key in service_redis.scan_iter(prefix + "*"):
        service_redis.delete(key)


def test_a_job_id_is_claimed_once(store: JobStore) -> None:
    assert store.claim(new_record("a", ttl_s=60), ttl_s=60)
    assert not store.claim(new_record("a", ttl_s=60), ttl_s=60)
    assert store.get("a")["status"] == QUEUED  # type: ignore[index]


def test_an_unknown_id_reads_as_none(store: JobStore) -> None:
    assert store.get_stored("never-submitted") is None


def test_a_job_moves_forward_but_never_back(store: JobStore) -> None:
    store.claim(new_record("b", ttl_s=60), ttl_s=60)
    mark_running(store, "b")
    assert store.get("b")["status"] == RUNNING  # type: ignore[index]
    finish(store, "b", result={"options": []}, ttl_s=60)
    mark_running(store, "b")  # a late duplicate delivery
    record = store.get("b")
    assert record is not None and record["status"] == DONE and record["result"] == {"options": []}


def test_a_start_sent_without_waiting_shows_before_its_answer_is_read(store: JobStore) -> None:
    store.claim(new_record("s", ttl_s=60), ttl_s=60)
    answer = store.start_soon("s", at=now_iso())
    seen = store.get("s")  # another client's view, while the worker has not read its answer
    assert seen is not None and seen["status"] == RUNNING and seen["started_at"] == seen["updated_at"]
    assert answer() is True
    late = store.start_soon("s", at=now_iso())  # a duplicate delivery: nothing moves
    assert late() is False
    finish(store, "s", result={"options": []}, ttl_s=60)
    assert store.start_soon("s", at=now_iso())() is False
    assert store.get("s")["status"] == DONE  # type: ignore[index]


def test_a_lost_answer_to_a_start_is_logged_not_raised(service_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    prefix = f"gpugauge:test-jobs:{uuid.uuid4().hex}:"
    store = RedisJobStore(redis.Redis.from_url(SERVICE_REDIS_URL), prefix=prefix)
    store.claim(new_record("x", ttl_s=60), ttl_s=60)
    answer = store.start_soon("x", at=now_iso())

    def lost(*_: object, **__: object) -> object:
        raise redis.exceptions.ConnectionError("Connection closed by server.")

    monkeypatch.setattr(redis.connection.AbstractConnection, "read_response", lost)  # Redis gone mid-job
    with caplog.at_level("WARNING"):
        assert answer() is False
    monkeypatch.undo()
    assert "answer to its start was lost" in caplog.text
    finish(store, "x", result={"options": []}, ttl_s=60)  # Redis back: the outcome is recorded as ever
    assert store.get("x")["status"] == DONE  # type: ignore[index]
    for key in service_redis.scan_iter(prefix + "*"):
        service_redis.delete(key)


def test_a_failure_is_stored_with_its_problem(store: JobStore) -> None:
    store.claim(new_record("c", ttl_s=60), ttl_s=60)
    finish(store, "c", problem={"status": 422, "title": "Invalid input"}, ttl_s=60)
    record = store.get("c")
    assert record is not None and record["status"] == FAILED and record["problem"]["status"] == 422


def test_a_redis_record_expires_with_the_ttl_it_was_submitted_with(service_redis: redis.Redis) -> None:
    prefix = f"gpugauge:test-jobs:{uuid.uuid4().hex}:"
    store = RedisJobStore(redis.Redis.from_url(SERVICE_REDIS_URL), prefix=prefix)
    store.claim(new_record("e", ttl_s=30), ttl_s=30)
    finish(store, "e", result={}, ttl_s=3600)  # the worker's default loses to the job's own TTL
    assert 0 < service_redis.ttl(prefix + "e") <= 30
    assert store.get("e")["expires_after_s"] == 30  # type: ignore[index]
    service_redis.delete(prefix + "e")


def test_a_memory_record_expires() -> None:
    clock = FakeClock()
    store = MemoryJobStore(clock=clock)
    store.claim(new_record("f", ttl_s=10), ttl_s=10)
    clock.now_s += 9.9
    assert store.get_stored("f") is not None
    clock.now_s += 0.2
    assert store.get_stored("f") is None
    assert store.claim(new_record("f", ttl_s=10), ttl_s=10)


def test_submit_enqueues_only_for_the_first_caller(store: JobStore) -> None:
    calls: list[str] = []
    first = submit(store, lambda: calls.append("x"), job_id="g", ttl_s=60)
    second = submit(store, lambda: calls.append("y"), job_id="g", ttl_s=60)
    assert calls == ["x"] and first == second and first["status"] == "queued"


def test_submit_releases_the_claim_when_enqueueing_fails(store: JobStore) -> None:
    def broken() -> None:
        raise ConnectionError("broker down")

    with pytest.raises(ConnectionError):
        submit(store, broken, job_id="h", ttl_s=60)
    assert store.get_stored("h") is None
    calls: list[int] = []
    submit(store, lambda: calls.append(1), job_id="h", ttl_s=60)
    assert calls == [1]


def test_submit_reruns_a_job_that_failed_on_our_side_but_not_one_the_user_broke(store: JobStore) -> None:
    calls: list[str] = []
    for job_id, status in (("i", 500), ("j", 422)):
        store.claim(new_record(job_id, ttl_s=60), ttl_s=60)
        finish(store, job_id, problem={"status": status}, ttl_s=60)
        submit(store, lambda job_id=job_id: calls.append(job_id), job_id=job_id, ttl_s=60)
    assert calls == ["i"]
    assert store.get("j")["status"] == FAILED  # type: ignore[index]


def test_a_claim_whose_enqueue_was_lost_is_enqueued_by_the_next_request(store: JobStore) -> None:
    # Redis died between the claim and the enqueue, and the claim could not be released: a "queued"
    # record with no task behind it. Within the grace period it is taken as an enqueue in progress.
    from datetime import UTC, datetime, timedelta

    from workers.tasks.jobs import CLAIM_GRACE_S

    record = new_record("k", ttl_s=60)
    store.claim(record, ttl_s=60)
    calls: list[str] = []
    assert submit(store, lambda: calls.append("young"), job_id="k", ttl_s=60)["status"] == "queued"
    assert calls == []
    old = datetime.now(UTC) - timedelta(seconds=CLAIM_GRACE_S + 1)
    store.forget("k")
    store.claim({**record, "created_at": old.isoformat()}, ttl_s=60)
    assert submit(store, lambda: calls.append("stale"), job_id="k", ttl_s=60)["status"] == "queued"
    assert calls == ["stale"] and store.enqueued("k")
    assert submit(store, lambda: calls.append("again"), job_id="k", ttl_s=60)["status"] == "queued"
    assert calls == ["stale"]  # confirmed now: later requests share it


def test_a_finished_outcome_is_read_as_stored_without_decoding_the_record(store: JobStore) -> None:
    tricky = {"name": 'a ,"result": inside', "rows": [{"result": 1}], "text": "line\nbreak"}
    for job_id, outcome in (("done-job", {"result": tricky}), ("failed-job", {"problem": {"status": 422}})):
        store.claim(new_record(job_id, ttl_s=60), ttl_s=60)
        mark_running(store, job_id)
        finish(store, job_id, ttl_s=60, **outcome)  # type: ignore[arg-type]
    done, failed = store.get_stored("done-job"), store.get_stored("failed-job")
    assert done is not None and failed is not None
    assert stored_outcome(done) == dumps(tricky) and json.loads(done[1])["result"] == tricky
    assert json.loads(stored_outcome(failed)) == {"status": 422}
    spliced = '{"id":"x","status":"done"}'
    finish(store, "done-job", result_json=spliced, ttl_s=60)  # a document spliced already
    assert stored_outcome(store.get_stored("done-job")) == spliced  # type: ignore[arg-type]


def test_a_large_outcome_is_written_in_one_transaction_and_wakes_its_waiters(
        store: JobStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_jobs, "LARGE_OUTCOME_CHARS", 100)  # this result is "large"
    result = {"jobs": [{"name": f"job {i}", "rows": list(range(20))} for i in range(20)]}
    store.claim(new_record("large", ttl_s=60), ttl_s=60)
    mark_running(store, "large")
    finish(store, "large", result=result, ttl_s=60)
    stored = store.get_stored("large")
    assert stored is not None and stored[0] == DONE and stored_outcome(stored) == dumps(result)
    record = json.loads(stored[1])
    assert record["result"] == result and record["status"] == DONE and "started_at" in record
    assert store.wait_stored("large", timeout_s=5) == stored  # the done token is there: no wait
