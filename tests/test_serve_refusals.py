"""What gunicorn itself refuses, before the app runs, is answered as problem+json too (a real `gpugauge serve`)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    port = free_port()
    log = (tmp_path_factory.mktemp("serve") / "serve.log").open("w")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "GPUGAUGE_API_KEYS")}
    process = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)], cwd=ROOT,
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                if get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"gpugauge serve did not start (exit {process.poll()})")
                time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def get(port: int, path: str) -> tuple[int, str, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type") or "", response.read()
    finally:
        connection.close()


def test_a_request_line_over_8190_bytes_gets_a_414_problem(server: int) -> None:
    status, media_type, body = get(server, "/v1/catalog/instances?region=" + "a" * 9000)
    assert status == 414
    assert media_type == "application/problem+json"
    doc = json.loads(body)
    assert doc["status"] == 414 and "8,190 bytes" in doc["detail"]


def test_a_long_request_line_under_the_limit_reaches_the_app(server: int) -> None:
    status, media_type, body = get(server, "/v1/catalog/instances?region=" + "a" * 7000)
    assert status == 422 and media_type == "application/problem+json"
    assert "region" in json.loads(body)["errors"]
