"""Readiness against a Redis of the test's own: no worker, Redis stopped, and back; never a hang."""

from __future__ import annotations

import time
from collections.abc import Callable

from flask import Flask

from tests.service_helpers import PrivateRedis, example_spec, start_pinned_worker


def _app(make_app: Callable[..., Flask], server: PrivateRedis) -> Flask:
    return make_app(REDIS_URL=server.url)


def test_ready_when_redis_and_a_worker_answer(make_app: Callable[..., Flask],
                                              private_redis: PrivateRedis) -> None:
    app = _app(make_app, private_redis)
    with start_pinned_worker(app.extensions["celery"]):
        answer = app.test_client().get("/readyz")
    assert answer.status_code == 200, answer.get_json()


def test_not_ready_without_a_worker(make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    answer = _app(make_app, private_redis).test_client().get("/readyz")
    assert answer.status_code == 503
    assert "worker" in answer.get_json()["detail"] and answer.headers["Retry-After"]


def test_redis_down_answers_503_within_a_second_and_healthz_stays_200(
        make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    client = _app(make_app, private_redis).test_client()
    private_redis.stop()
    started = time.monotonic()
    answer = client.get("/readyz")
    assert time.monotonic() - started < 1.0
    assert answer.status_code == 503 and answer.mimetype == "application/problem+json"
    assert "Redis" in answer.get_json()["detail"] and answer.headers["Retry-After"]
    assert client.get("/healthz").status_code == 200


def test_submitting_with_redis_down_is_503_with_retry_after_not_a_hang(
        make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    client = _app(make_app, private_redis).test_client()
    client.get("/v1/catalog")  # the catalog is loaded while Redis is up
    private_redis.stop()
    started = time.monotonic()
    answer = client.post("/v1/recommendations", json=example_spec())
    assert time.monotonic() - started < 1.0
    assert answer.status_code == 503 and answer.mimetype == "application/problem+json"
    assert answer.headers["Retry-After"]


def test_the_same_app_recovers_when_redis_returns(make_app: Callable[..., Flask],
                                                  private_redis: PrivateRedis) -> None:
    app = _app(make_app, private_redis)
    client = app.test_client()
    client.get("/v1/catalog")
    private_redis.stop()
    assert client.post("/v1/recommendations", json=example_spec()).status_code == 503
    private_redis.start()
    with start_pinned_worker(app.extensions["celery"]):
        answer = client.post("/v1/recommendations", json=example_spec())
        assert answer.status_code == 202
        deadline = time.monotonic() + 10
        while client.get(answer.headers["Location"]).get_json()["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.01)
