"""Shared pytest fixtures."""

from __future__ import annotations

# ------------------------------------------------------------------------------------------------
# HTTP service and job queue (service/app.py, workers/tasks/jobs.py, workers/tasks/queues.py)
#
# Integration tests run the app from the factory against the real Redis on 127.0.0.1:6379, db 9
# (under a job key prefix and a task queue of the session's own; job keys dropped before each test),
# and a real Celery worker thread (celery.contrib.testing.worker.start_worker, solo pool), never
# eager mode. `private_redis` starts a redis-server of its own on a free port for tests that stop it.
# ------------------------------------------------------------------------------------------------
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import settings

from catalog.loader import load_catalog
from catalog.types import Catalog
from tests.service_helpers import (
    SERVICE_JOB_PREFIX,
    SERVICE_QUEUE,
    SERVICE_REDIS_URL,
    PrivateRedis,
    queue_config,
    start_pinned_worker,
)

# Every property test draws the same examples on every run (derandomize: a seed fixed from the test's
# name), so that CI never fails by chance; HYPOTHESIS_PROFILE=explore draws new ones, to look for bugs.
settings.register_profile("derandomized", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


@pytest.fixture()
def keep_celery_default() -> Iterator[None]:
    """Give Celery's default app back after the test builds its own (the session worker runs from it)."""
    from celery import _state as celery_state

    saved = celery_state.default_app
    yield
    if saved is not None:
        saved.set_default()


@pytest.fixture(scope="session")
def service_redis() -> Iterator[redis.Redis]:
    """The machine's Redis, db 9; this session's keys are removed at its end."""
    client = redis.Redis.from_url(SERVICE_REDIS_URL)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        pytest.fail("the service tests need Redis on 127.0.0.1:6379 (.ci/run starts it)")
    yield client
    for pattern in (SERVICE_JOB_PREFIX + "*", SERVICE_QUEUE, f"_kombu.binding*.{SERVICE_QUEUE}"):
        for key in client.scan_iter(pattern):
            client.delete(key)


@pytest.fixture(scope="session")
def queue_app(service_redis: redis.Redis) -> Iterator[Flask]:
    """The app in queue mode on db 9 and this session's task queue, served by a real worker."""
    from service.app import create_app

    app = create_app(queue_config())
    with start_pinned_worker(app.extensions["celery"]):
        yield app


@pytest.fixture()
def queue_client(queue_app: Flask, service_redis: redis.Redis) -> FlaskClient:
    """A client of the queue-mode app, with no job left from an earlier test."""
    for key in service_redis.scan_iter(SERVICE_JOB_PREFIX + "*"):
        service_redis.delete(key)
    return queue_app.test_client()


@pytest.fixture()
def make_app(tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    """Build apps from the factory (embedded unless REDIS_URL is given); close their queues after.

    Reported runs go to a file of the test's own (never the user's data directory).
    """
    from service.app import create_app
    from workers.tasks.runtime import runtime

    apps: list[Flask] = []

    def build(**config: Any) -> Flask:
        app = create_app({"TESTING": True, "REDIS_URL": None, "API_KEYS": "",
                          "RUNS_FILE": str(tmp_path / "runs.json"), **config})
        apps.append(app)
        return app

    yield build
    for app in apps:
        runtime(app).queue.close()


@pytest.fixture()
def embedded_client(make_app: Callable[..., Flask]) -> FlaskClient:
    """A client of an app in the embedded mode (no Redis; jobs on in-process threads)."""
    return make_app().test_client()


@pytest.fixture()
def private_redis() -> Iterator[PrivateRedis]:
    """A started redis-server of this test's own; stopped at teardown if the test did not."""
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shipped() -> Catalog:
    """The bundled catalog, loaded once: the ranking scenario tests read it and never change it."""
    return load_catalog()
