"""The processes of a deployment on loopback, for bench/faults.py and bench/load.py: Redis, gunicorn, a worker.

Each runs as in production (`redis-server` with AOF, `gpugauge serve`, `gpugauge worker`), started
from this checkout with the current Python, logging to a work directory.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
API_KEY = "bench-key"
AUTH = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}


def free_port() -> int:
    """Return a TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_bytes(pid: int) -> int:
    """Return a process's resident set size, from /proc (0 once it has gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def children(pid: int) -> list[int]:
    """Return the direct children of a process."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


@dataclass
class Stack:
    """Redis (AOF on, own port and directory), `gpugauge worker` and `gpugauge serve` on loopback."""

    work: Path
    env_overrides: Mapping[str, str] = field(default_factory=dict)
    redis_port: int = field(default_factory=free_port)
    api_port: int = field(default_factory=free_port)
    redis_proc: subprocess.Popen[bytes] | None = None
    worker_proc: subprocess.Popen[bytes] | None = None
    api_proc: subprocess.Popen[bytes] | None = None
    beat_proc: subprocess.Popen[bytes] | None = None

    @property
    def redis_url(self) -> str:
        """The URL of this stack's Redis."""
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def env(self) -> dict[str, str]:
        """Return the environment of the gpugauge processes."""
        return {**os.environ, "PYTHONPATH": str(ROOT), "REDIS_URL": self.redis_url, "GPUGAUGE_API_KEYS": API_KEY,
                "GPUGAUGE_RATE_LIMIT_ENABLED": "false", **self.env_overrides}

    def start_redis(self) -> None:
        """Start redis-server with AOF (fsync every second) in the work directory; wait for a PONG."""
        data = self.work / "redis"
        data.mkdir(parents=True, exist_ok=True)
        self.redis_proc = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--dir", str(data),
             "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--maxmemory-policy", "noeviction"],
            stdout=(self.work / "redis.log").open("ab"), stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.redis_port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop_redis(self) -> None:
        """Stop Redis as an operator would (SIGTERM: it writes its AOF and exits)."""
        if self.redis_proc is not None:
            self.redis_proc.terminate()
            self.redis_proc.wait(timeout=20)
            self.redis_proc = None

    def start_worker(self, *, concurrency: int = 2) -> None:
        """Start `gpugauge worker` (prefork) in its own process group."""
        log = (self.work / "worker.log").open("ab")
        self.worker_proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker", "--concurrency", str(concurrency), "--loglevel", "INFO"],
            cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill_worker(self) -> None:
        """SIGKILL the worker and its pool processes at once (a crashed host or container)."""
        if self.worker_proc is not None:
            os.killpg(self.worker_proc.pid, signal.SIGKILL)
            self.worker_proc.wait(timeout=10)
            self.worker_proc = None

    def start_beat(self) -> None:
        """Start `gpugauge beat` (the catalog refresh and the lost-job sweep), its files in the work dir."""
        log = (self.work / "beat.log").open("ab")
        env = {**self.env(), "GPUGAUGE_BEAT_SCHEDULE_FILE": str(self.work / "beat-schedule")}
        self.beat_proc = subprocess.Popen([sys.executable, "-m", "service.cli", "beat"], cwd=ROOT, env=env,
                                          stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def start_api(self, *, workers: int = 2) -> None:
        """Start `gpugauge serve` (gunicorn, queue mode) and wait until /healthz answers."""
        log = (self.work / "api.log").open("ab")
        self.api_proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", "serve", "--port", str(self.api_port), "--workers", str(workers)],
            cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60
        while self.get("/healthz")[0] != 200:
            if time.monotonic() > deadline:
                raise TimeoutError("the API did not start")
            time.sleep(0.2)

    def wait_ready(self, *, timeout_s: float = 60) -> None:
        """Wait until /readyz answers 200 (Redis and a worker reachable)."""
        deadline = time.monotonic() + timeout_s
        while self.get("/readyz")[0] != 200:
            if time.monotonic() > deadline:
                raise TimeoutError("the API did not become ready")
            time.sleep(0.2)

    def stop(self) -> None:
        """Stop every process of the stack."""
        for proc in (self.api_proc, self.worker_proc, self.beat_proc):
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in (self.api_proc, self.worker_proc, self.beat_proc):
            if proc is not None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        self.api_proc = self.worker_proc = self.beat_proc = None
        if self.redis_proc is not None and self.redis_proc.poll() is None:
            self.stop_redis()

    def connection(self, *, timeout_s: float = 10) -> http.client.HTTPConnection:
        """Return a keep-alive connection to the API."""
        return http.client.HTTPConnection("127.0.0.1", self.api_port, timeout=timeout_s)

    def get(self, path: str) -> tuple[int, Any]:
        """GET a path with the API key; return (status, decoded JSON or None); (0, None) when nobody answers."""
        return request(self.connection(timeout_s=5), "GET", path)


def request(conn: http.client.HTTPConnection, method: str, path: str, body: Any = None,
            headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
    """Send one request on `conn`; return (status, decoded JSON body or None); (0, None) on a connection error."""
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=dict(headers or AUTH))
        answer = conn.getresponse()
        data = answer.read()
    except (OSError, http.client.HTTPException):
        conn.close()
        return 0, None
    try:
        return answer.status, {"_headers": dict(answer.getheaders()), **json.loads(data)}
    except (ValueError, TypeError):
        return answer.status, None


def job_statuses(client: redis.Redis, job_ids: list[str], *, prefix: str = "gpugauge:job:") -> dict[str, str | None]:
    """Read each job's status straight from Redis (None: no record)."""
    pipe = client.pipeline(transaction=False)
    for job_id in job_ids:
        pipe.hget(prefix + job_id, "status")
    return {job_id: (s.decode() if s else None) for job_id, s in zip(job_ids, pipe.execute(), strict=True)}
