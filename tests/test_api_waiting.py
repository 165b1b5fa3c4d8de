"""Waiting for a job in one request (Prefer: wait=N, ?wait=N): woken by the job's end, never by polling."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
from celery.signals import task_prerun
from flask import Flask
from flask.testing import FlaskClient

from service.api.waiting import prefer_wait
from tests.service_helpers import SERVICE_REDIS_URL, example_spec
from workers.tasks.jobs import DONE, MemoryJobStore, RedisJobStore, finish, new_record
from workers.tasks.recommend import RECOMMEND_TASK
from workers.tasks.runtime import runtime


@pytest.mark.parametrize(("values", "seconds"), [
    (["wait=5"], 5), (["respond-async, wait=7"], 7), (["WAIT = 3"], 3), (['wait="4"'], 4),
    (["wait=2, wait=9"], 2), (["handling=lenient", "wait=6;x=1"], 6),
    (["wait=soon"], None), (["wait=-1"], None), ([], None), (["return=minimal"], None),
])
def test_the_prefer_header_is_read_as_rfc_7240_has_it(values: list[str], seconds: int | None) -> None:
    assert prefer_wait(values) == seconds


@pytest.fixture()
def slow_jobs() -> Iterator[float]:
    """Recommendation tasks start 1.5 s late, during the test."""
    delay_s = 1.5

    def pause(sender: Any = None, **_: Any) -> None:
        if getattr(sender, "name", None) == RECOMMEND_TASK:
            time.sleep(delay_s)

    task_prerun.connect(pause, weak=False)
    yield delay_s
    task_prerun.disconnect(pause)


def test_a_submit_that_prefers_to_wait_gets_the_result_in_one_request(queue_client: FlaskClient) -> None:
    answer = queue_client.post("/v1/recommendations", json=example_spec(), headers={"Prefer": "wait=10"})
    assert answer.status_code == 200, answer.get_json()
    job = answer.get_json()
    assert job["status"] == DONE and job["result"]["options"]
    assert answer.headers["Preference-Applied"] == "wait=10"
    assert "Retry-After" not in answer.headers and "Prefer" in answer.headers["Vary"]


def test_a_wait_shorter_than_the_job_answers_202_then_a_waiting_get_is_woken_by_the_end(
        queue_client: FlaskClient, slow_jobs: float) -> None:
    started = time.perf_counter()
    answer = queue_client.post("/v1/recommendations", json=example_spec("dqn-atari"), headers={"Prefer": "wait=1"})
    assert answer.status_code == 202 and answer.get_json()["status"] in ("queued", "running")
    assert answer.headers["Preference-Applied"] == "wait=1"
    assert 1.0 <= time.perf_counter() - started < slow_jobs
    polled = queue_client.get(answer.headers["Location"] + "?wait=10")
    answered = datetime.now(UTC)
    assert polled.status_code == 200 and polled.get_json()["status"] == DONE
    assert polled.headers["Preference-Applied"] == "wait=10"
    # Woken by the job's end: within a few ms of the worker writing its result, not at a poll interval.
    written = datetime.fromisoformat(polled.get_json()["updated_at"])
    assert (answered - written).total_seconds() < 0.25


def test_a_wait_is_capped_by_the_server_and_a_bad_wait_parameter_is_a_422(queue_client: FlaskClient) -> None:
    job = queue_client.post("/v1/recommendations", json=example_spec("vae-mnist"), headers={"Prefer": "wait=10"})
    location = job.headers["Location"]
    capped = queue_client.get(location, headers={"Prefer": "wait=99999"})
    assert capped.status_code == 200 and capped.headers["Preference-Applied"] == "wait=20"
    refused = queue_client.get(location + "?wait=forever")
    assert refused.status_code == 422 and "wait" in refused.get_json()["errors"]


def test_a_submit_claims_publishes_and_confirms_in_one_redis_round_trip(queue_client: FlaskClient,
                                                                       queue_app: Flask) -> None:
    store = runtime(queue_app).jobs
    assert isinstance(store, RedisJobStore)
    commands: list[str] = []
    client = store._client
    original = client.execute_command

    def counted(*args: Any, **options: Any) -> Any:
        if threading.current_thread() is threading.main_thread():  # not the worker's thread
            commands.append(str(args[0]))
        return original(*args, **options)

    spec = example_spec()
    spec["training"]["epochs"] = 7  # a job no other test made
    client.execute_command = counted  # type: ignore[method-assign]
    try:
        answer = queue_client.post("/v1/recommendations", json=spec)
    finally:
        client.execute_command = original  # type: ignore[method-assign]
    assert answer.status_code == 202
    assert commands == ["EVALSHA"]  # claim, LPUSH of the task message, confirmation: one script
    job_id = answer.get_json()["id"]
    assert store.enqueued(job_id)
    waited = queue_client.get(answer.headers["Location"] + "?wait=10").get_json()
    assert waited["status"] == DONE  # the message the script pushed is one the worker runs


def test_a_prepared_message_carries_every_argument_and_logs_only_the_job_id(queue_app: Flask) -> None:
    spec = {**example_spec(), "name": "x" * 5000}  # Celery's saferepr would have walked all of it
    prepared = runtime(queue_app).queue.prepare(RECOMMEND_TASK, "job-1", spec, True, "rev")
    assert prepared is not None
    message = json.loads(prepared.message)
    assert message["headers"]["argsrepr"] == "('job-1', ...)" and message["headers"]["kwargsrepr"] == "{}"
    assert "argsrepr" not in message["properties"]
    args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
    assert args == ["job-1", spec, True, "rev"] and kwargs == {}


def test_every_waiter_of_a_job_is_woken_when_it_ends_redis() -> None:
    client = redis.Redis.from_url(SERVICE_REDIS_URL)
    store = RedisJobStore(client, prefix=f"gpugauge:test-wait-{time.time_ns()}:")
    _every_waiter_is_woken(store)
    client.close()


def test_every_waiter_of_a_job_is_woken_when_it_ends_embedded() -> None:
    _every_waiter_is_woken(MemoryJobStore())


def _every_waiter_is_woken(store: Any) -> None:
    store.claim(new_record("j", ttl_s=60), ttl_s=60)
    seen: list[tuple[str, float]] = []

    def wait() -> None:
        stored = store.wait_stored("j", timeout_s=5)
        seen.append((stored[0], time.perf_counter()))

    waiters = [threading.Thread(target=wait) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    time.sleep(0.3)
    assert seen == []  # nobody returns before the job ends
    ended = time.perf_counter()
    finish(store, "j", result={"options": []}, ttl_s=60)
    for waiter in waiters:
        waiter.join(timeout=5)
    assert [status for status, _ in seen] == [DONE] * 3
    assert max(at for _, at in seen) - ended < 0.25
    late = store.wait_stored("j", timeout_s=5)  # a later waiter: the job is done, no wait at all
    assert late is not None and late[0] == DONE


def test_the_embedded_mode_waits_on_the_job_too(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    started = time.perf_counter()
    answer = client.post("/v1/recommendations", json=example_spec("gpt2-pretrain"), headers={"Prefer": "wait=10"})
    assert answer.status_code == 200 and answer.get_json()["status"] == DONE
    assert time.perf_counter() - started < 5
    again = client.get(answer.headers["Location"], headers={"Prefer": "wait=5"})
    assert again.status_code == 200 and again.headers["Preference-Applied"] == "wait=5"


def test_a_failed_job_ends_the_wait_with_its_problem(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    rt = runtime(app)
    rt.jobs.claim(new_record("refused", ttl_s=60), ttl_s=60)
    rt.queue.enqueue(RECOMMEND_TASK, "refused", {"model": {"preset": "resnet50"}, "training": {"batch_size": -1}})
    with app.test_request_context():
        stored = rt.jobs.wait_stored("refused", timeout_s=5)
    assert stored is not None and stored[0] == "failed"


def test_the_openapi_document_states_the_wait_preference_and_parameter(embedded_client: FlaskClient) -> None:
    paths = embedded_client.get("/openapi.json").get_json()["paths"]
    for path, method, query in (("/v1/recommendations", "post", False), ("/v1/recommendations/{job_id}", "get", True),
                                ("/v1/reports", "post", False), ("/v1/reports/{job_id}", "get", True)):
        parameters = {(p["in"], p["name"]) for p in paths[path][method].get("parameters", [])}
        assert ("header", "Prefer") in parameters, (path, method)
        assert (("query", "wait") in parameters) == query, (path, method)
    answers = paths["/v1/recommendations"]["post"]["responses"]
    assert "Preference-Applied" in answers["200"]["headers"] and "Retry-After" in answers["202"]["headers"]
