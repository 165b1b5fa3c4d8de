"""Helpers of the HTTP service and job queue tests: example specs, polling, the contract checker."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

SERVICE_REDIS_URL = "redis://127.0.0.1:6379/9"
JOB_KEYS = "gpugauge:job:*"
# This session's own task queue, so that no other worker on db 9 takes our tasks.
SERVICE_QUEUE = f"gpugauge-test-{os.getpid()}"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def queue_config(**overrides: Any) -> dict[str, Any]:
    """Return the settings of an app in queue mode on db 9 and this session's task queue."""
    return {"TESTING": True, "REDIS_URL": SERVICE_REDIS_URL, "API_KEYS": "",
            "CELERY": {"task_default_queue": SERVICE_QUEUE}, **overrides}


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
