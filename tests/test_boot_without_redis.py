"""REDIS_URL set and Redis down when a process starts: the API and `gpugauge worker` start anyway.

The API serves the last catalog it read from Redis (its local copy), else the bundled snapshot; /readyz
says 503, queued work is a 503 problem+json, estimates are answered; once Redis answers, its version
replaces the fallback. A worker started against a dead Redis waits for it and then runs jobs. Each test
runs a redis-server of its own (`private_redis`), which it stops and starts.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from flask import Flask

from catalog.gpus import load_gpus
from catalog.loader import load_snapshot_rows
from catalog.store import RedisCatalogStore
from tests.service_helpers import PrivateRedis, example_spec, wait_for_job
from workers.tasks.runtime import runtime

SPEC = {"model": {"preset": "resnet50"}, "training": {"batch_size": 32}}
ROOT = Path(__file__).resolve().parent.parent


def store_version(url: str, version: str) -> None:
    """Make `version` (the snapshot's rows under a new name) current in the Redis at `url`."""
    client = redis.Redis.from_url(url)
    try:
        rows = dataclasses.replace(load_snapshot_rows(), version=version)
        RedisCatalogStore(client).write_version(rows, gpus=load_gpus())
    finally:
        client.close()


@pytest.fixture()
def boot(make_app: Callable[..., Flask], keep_celery_default: None, tmp_path: Path,
         private_redis: PrivateRedis) -> Callable[..., Flask]:
    """Build a queue-mode app on the private Redis, with its catalog copy under tmp_path."""
    def build(**config: object) -> Flask:
        settings = {"REDIS_URL": private_redis.url, "CATALOG_COPY_PATH": str(tmp_path / "catalog.json"),
                    "CATALOG_RETRY_S": 0.2, "RATE_LIMIT_ENABLED": False, **config}
        return make_app(**settings)
    return build


def test_an_api_started_while_redis_is_down_serves_the_last_catalog_it_read(
        boot: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    store_version(private_redis.url, "2026-12-01.7")
    first = boot()
    assert runtime(first).catalog.get().version == "2026-12-01.7"  # read from Redis, and copied
    private_redis.stop()

    restarted = boot()
    cache = runtime(restarted).catalog
    assert cache.get().version == "2026-12-01.7" and cache.degraded
    client = restarted.test_client()
    assert client.get("/readyz").status_code == 503
    queued = client.post("/v1/recommendations", json=SPEC)
    assert queued.status_code == 503 and queued.content_type == "application/problem+json"
    assert client.post("/v1/estimate", json=SPEC).status_code == 200
    assert client.get("/v1/catalog").get_json()["version"] == "2026-12-01.7"


def test_without_a_copy_it_serves_the_bundled_snapshot_and_switches_when_redis_returns(
        boot: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    private_redis.stop()
    app = boot(CATALOG_COPY_PATH="")
    cache = runtime(app).catalog
    assert cache.get().version == load_snapshot_rows().version and cache.degraded
    private_redis.start()  # an empty Redis: no refresh has run there yet
    store_version(private_redis.url, "2026-12-01.8")
    deadline = time.monotonic() + 5
    while cache.get().version != "2026-12-01.8" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cache.get().version == "2026-12-01.8" and not cache.degraded
    assert app.test_client().get("/v1/catalog").get_json()["version"] == "2026-12-01.8"


def test_a_corrupt_copy_falls_back_to_the_snapshot(boot: Callable[..., Flask], private_redis: PrivateRedis,
                                                   tmp_path: Path) -> None:
    (tmp_path / "catalog.json").write_text('{"format": 1, "version": "half-writ')
    private_redis.stop()
    assert runtime(boot()).catalog.get().version == load_snapshot_rows().version


@pytest.mark.slow
def test_a_worker_started_while_redis_is_down_waits_for_it_and_then_runs_jobs(
        boot: Callable[..., Flask], private_redis: PrivateRedis, tmp_path: Path) -> None:
    private_redis.stop()
    env = {**os.environ, "REDIS_URL": private_redis.url, "GPUGAUGE_CATALOG_COPY_PATH": "",
           "GPUGAUGE_RATE_LIMIT_ENABLED": "false"}
    log = (tmp_path / "worker.log").open("w")
    worker = subprocess.Popen([sys.executable, "-m", "service.cli", "worker", "--concurrency", "1",
                               "--loglevel", "WARNING"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(3)
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()  # still running, not crashed
        private_redis.start()
        client = boot().test_client()
        answer = client.post("/v1/recommendations", json=example_spec())
        assert answer.status_code == 202, answer.get_json()
        # Celery retries its broker connection after 2, 4, 6... s; the job runs once it is back.
        job = wait_for_job(client, answer.headers["Location"], timeout_s=40)
        assert job["status"] == "done", job
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
        log.close()
