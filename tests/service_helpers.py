"""Helpers of the HTTP service and job queue tests: example specs, polling, the contract checker."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery
from celery.contrib.testing.worker import start_worker, test_worker_started
from flask.testing import FlaskClient

SERVICE_REDIS_URL = "redis://127.0.0.1:6379/9"
# Several test sessions may share db 9 (developers working side by side): each has its own task
# queue, so no other worker takes its tasks, and its own job keys, so no other session drops them.
SERVICE_QUEUE = f"gpugauge-test-{os.getpid()}"
SERVICE_JOB_PREFIX = f"gpugauge:test-{os.getpid()}:job:"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def queue_config(**overrides: Any) -> dict[str, Any]:
    """Return the settings of an app in queue mode on db 9 and this session's task queue."""
    return {"TESTING": True, "REDIS_URL": SERVICE_REDIS_URL, "API_KEYS": "", "JOB_KEY_PREFIX": SERVICE_JOB_PREFIX,
            "RUNS_KEY": SERVICE_JOB_PREFIX + "runs", "CELERY": {"task_default_queue": SERVICE_QUEUE}, **overrides}


@contextmanager
def start_pinned_worker(celery: Celery, **options: Any) -> Iterator[Any]:
    """Run celery's test worker (solo pool, in a thread) for `celery` alone.

    The worker looks tasks up in Celery's *current* app; every create_app() makes its own app the
    process default, so a worker thread would run its tasks in whichever app the last test built.
    Pinning the app as the worker thread's current app keeps tasks in the worker's own app.
    """
    def pin(sender: Celery, **_: Any) -> None:
        if sender is celery:
            sender.set_current()  # runs in the worker thread: its thread-local current app

    test_worker_started.connect(pin, weak=False)
    try:
        # No ping task: results are off (the job registry holds them), so start_worker's ping check
        # could not read its pong; start_worker still waits until the worker consumes.
        with start_worker(celery, pool="solo", perform_ping_check=False, shutdown_timeout=10, **options) as worker:
            yield worker
    finally:
        test_worker_started.disconnect(pin)


def example_spec(name: str = "resnet50-imagenet") -> dict[str, Any]:
    """Return one of examples/*.json as a dict."""
    spec: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8"))
    return spec


def contract_check() -> Any:
    """Import /work/shared/tools/contract_check.py (beside the repository) by path."""
    path = Path(__file__).resolve().parents[2] / "shared" / "tools" / "contract_check.py"
    if not path.exists():
        pytest.skip(f"{path} is not here")
    spec = importlib.util.spec_from_file_location("contract_check", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wait_for_job(client: FlaskClient, location: str, *, timeout_s: float = 10.0) -> dict[str, Any]:
    """Poll a job's URL until it is done or failed; return its last answer."""
    deadline = time.monotonic() + timeout_s
    while True:
        answer = client.get(location)
        assert answer.status_code == 200, answer.get_json()
        body: dict[str, Any] = answer.get_json()
        if body["status"] in ("done", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.01)


class PrivateRedis:
    """A redis-server of the test's own, on a free port, that the test may stop."""

    def __init__(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until it answers."""
        server = shutil.which("redis-server")
        if server is None:
            pytest.fail("redis-server is not installed")
        self._process = subprocess.Popen(
            [server, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 5
        while True:
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)
            finally:
                client.close()

    def stop(self) -> None:
        """Stop the server and wait for it to exit."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=5)
            self._process = None
