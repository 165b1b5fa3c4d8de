"""Benchmark the HTTP service and the queue side by side, on one gunicorn and one Redis.

Run by hand (Redis on 127.0.0.1:6379; the bench uses db 14 and empties it):

    PYTHONPATH=. .venv/bin/python bench/bench_api.py [--seconds 5] [--rounds 3] [--jobs 200]

It starts gunicorn with the settings of `gpugauge serve` in queue mode (service/commands/serve.py's
gunicorn_options, --web-workers processes) on the app from the factory plus one bare Flask JSON route,
and one prefork Celery worker (concurrency 1) for the same app, then prints medians and ratios against
issue 17's targets:

- POST /v1/estimate throughput as a fraction of the bare route's (same body, same gunicorn): >= 70%;
- recommendation submit-to-done latency (one POST with `Prefer: wait=10`, answered when the job ends)
  against a no-op Celery task's round trip (apply_async + get through the Redis result backend),
  measured in the same run: p50 <= 2x, p99 <= 50 ms;
- a repeated spec answered from the shared job (POST of a spec whose job is done): <= 5 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import redis
from celery import shared_task
from flask import Flask, request

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = "redis://127.0.0.1:6379/14"  # a db no test uses: the bench empties it
SPEC = json.loads((ROOT / "examples" / "resnet50-imagenet.json").read_text(encoding="utf-8"))
NOOP_TASK = "bench.noop"


@shared_task(name=NOOP_TASK, ignore_result=False)
def noop() -> None:
    """Do nothing: the floor of a Celery round trip."""


def bench_app() -> Flask:
    """Return the service's app plus a bare JSON route that parses the body and answers."""
    from service.app import create_app

    # The no-op floor reads its result back: a result backend for this bench (the service has none).
    app = create_app({"REDIS_URL": REDIS_URL, "API_KEYS": "", "RATE_LIMIT_ENABLED": False,
                      "CELERY": {"result_backend": REDIS_URL}})

    @app.post("/bench/bare")
    def bare() -> dict[str, int]:
        return {"keys": len(request.get_json())}

    return app


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_http(port: int, path: str, *, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            status, _ = _request(port, "GET", path)
            if status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{path} did not answer 200 within {timeout_s} s")


def _request(port: int, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    # A connection per request: gunicorn's sync workers close each one anyway.
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        sent = {**({"Content-Type": "application/json"} if body else {}), **(headers or {})}
        conn.request(method, path, body=body, headers=sent)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def _hammer(args: tuple[int, str, bytes, float, int]) -> int:
    port, path, body, seconds, client = args
    done, deadline = 0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client >= 0:  # a body never sent before: what the estimate route remembers cannot help
            spec = json.loads(body)
            spec["training"]["epochs"] = 1 + (client * 100_000 + done) % 999_999
            body = json.dumps(spec).encode()
        status, _ = _request(port, "POST", path, body)
        if status != 200:
            raise RuntimeError(f"{path} answered {status}")
        done += 1
    return done


def throughput(port: int, path: str, *, seconds: float, clients: int, distinct: bool = False) -> float:
    """Return requests per second of `clients` processes posting the example spec to `path`
    (with `distinct`, a new spec each time: its epochs differ)."""
    body = json.dumps(SPEC).encode()
    with multiprocessing.Pool(clients) as pool:
        counts = pool.map(_hammer, [(port, path, body, seconds, i if distinct else -1) for i in range(clients)])
    return sum(counts) / seconds


def submit_to_done_ms(port: int, spec: dict[str, Any], *, poll_s: float) -> tuple[float, float]:
    """POST a spec asking to wait for it (Prefer: wait=10); return the ms until the client had it done,
    and the ms between the job's creation and its last write on the server (its own clock). A job not
    done within the wait (none should be) is polled every `poll_s`."""
    started = time.perf_counter()
    status, data = _request(port, "POST", "/v1/recommendations", json.dumps(spec).encode(),
                            headers={"Prefer": "wait=10"})
    if status not in (200, 202):
        raise RuntimeError(f"submit answered {status}: {data[:200]!r}")
    job = json.loads(data)
    while job["status"] not in ("done", "failed"):
        time.sleep(poll_s)
        _, data = _request(port, "GET", f"/v1/recommendations/{job['id']}")
        job = json.loads(data)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if job["status"] != "done":
        raise RuntimeError(f"job failed: {job['problem']}")
    server_s = (datetime.fromisoformat(job["updated_at"]) - datetime.fromisoformat(job["created_at"]))
    return elapsed_ms, server_s.total_seconds() * 1000


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def estimate_steps_ms(*, repeat: int = 30) -> dict[str, float]:
    """Return the in-process median of each step of POST /v1/estimate, for the example spec."""
    from catalog.loader import load_catalog
    from workers.schemas import EstimateRequestSchema, RequirementsSchema
    from workers.schemas.specs import build_job
    from workers.sizing.estimate import estimate_requirements

    known = {gpu.slug: gpu for gpu in load_catalog().gpus}
    data = EstimateRequestSchema().load(SPEC)
    del data["gpus"], data["gpu_count"]
    job = build_job(data)
    requirements = estimate_requirements(job, known_gpus=known)
    steps: dict[str, Callable[[], object]] = {
        "schema load": lambda: EstimateRequestSchema().load(SPEC),
        "build_job (model resolution)": lambda: build_job(data),
        "estimate_requirements": lambda: estimate_requirements(job, known_gpus=known),
        "RequirementsSchema dump": lambda: RequirementsSchema().dump(requirements),
    }
    return {name: _median_ms(step, repeat=repeat) for name, step in steps.items()}


def task_body_ms(app: Flask, *, jobs: int) -> list[float]:
    """Time the recommendation task called in this process (load, core, dump, registry writes)."""
    from workers.schemas import JobSpecSchema
    from workers.tasks.jobs import new_record
    from workers.tasks.recommend import RECOMMEND_TASK
    from workers.tasks.runtime import runtime

    task, store = app.extensions["celery"].tasks[RECOMMEND_TASK], runtime(app).jobs
    times = []
    for i in range(jobs):
        # a new spec each time (no shared job), the same work: the epochs differ by a thousandth
        data = JobSpecSchema().load({**SPEC, "training": {**SPEC["training"], "epochs": SPEC["training"]["epochs"]
                                                          + (i + 1) / 1000}})
        store.claim(new_record(f"bench-{i}", ttl_s=600), ttl_s=600)
        started = time.perf_counter()
        task(f"bench-{i}", data, True)  # as the API enqueues it: validated
        times.append((time.perf_counter() - started) * 1000)
    return times


def _median_ms(step: Callable[[], object], *, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        step()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def run_bench_server(port: int, workers: int) -> None:
    """Serve bench_app() with exactly the gunicorn settings `gpugauge serve` uses in queue mode."""
    from gunicorn.app.base import BaseApplication

    from service.commands.serve import gunicorn_options
    from workers.tasks.runtime import settle

    options = {**gunicorn_options(host="127.0.0.1", port=port, embedded=False, workers=workers),
               "accesslog": None, "loglevel": "warning"}

    class Server(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                if key in self.cfg.settings:
                    self.cfg.set(key, value)

        def load(self) -> Flask:
            app = bench_app()
            settle(app)  # as `gpugauge serve` readies each process
            return app

    Server().run()


def run_bench_worker() -> None:
    """Run the bench's Celery worker as `gpugauge worker --concurrency 1` does, until killed."""
    from service.commands.worker import run_worker

    run_worker(bench_app(), concurrency=1, loglevel="WARNING")


def main() -> int:
    """Start gunicorn and a worker, measure, print medians and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one throughput run")
    parser.add_argument("--rounds", type=int, default=3, help="throughput runs per route (median kept)")
    parser.add_argument("--jobs", type=int, default=200, help="recommendation jobs and no-op tasks timed")
    parser.add_argument("--clients", type=int, default=4, help="client processes for throughput")
    parser.add_argument("--web-workers", type=int, default=2, help="gunicorn processes")
    parser.add_argument("--poll-ms", type=float, default=5.0, help="how often the client polls a job")
    args = parser.parse_args()

    redis.Redis.from_url(REDIS_URL).flushdb()
    port = _free_port()
    env = {**os.environ, "REDIS_URL": REDIS_URL,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    env.pop("GPUGAUGE_API_KEYS", None)
    server = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", str(port),
                               str(args.web_workers)], env=env, cwd=ROOT)
    worker = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"], env=env, cwd=ROOT)
    try:
        _wait_http(port, "/readyz")
        report(port, args)
    finally:
        for process in (server, worker):
            process.terminate()
        for process in (server, worker):
            process.wait(timeout=30)
    return 0


def report(port: int, args: argparse.Namespace) -> None:
    """Measure and print every figure."""
    steps = estimate_steps_ms()
    for name, median_ms in steps.items():
        print(f"estimate step in-process: {name:30s} {median_ms:7.2f} ms")
    estimate_core = sum(steps.values())
    _request(port, "POST", "/v1/estimate", json.dumps(SPEC).encode())  # warm the catalog
    bare, estimate, fresh = [], [], []
    for _ in range(args.rounds):  # interleaved: each round runs the three side by side
        bare.append(throughput(port, "/bench/bare", seconds=args.seconds, clients=args.clients))
        estimate.append(throughput(port, "/v1/estimate", seconds=args.seconds, clients=args.clients))
        fresh.append(throughput(port, "/v1/estimate", seconds=args.seconds, clients=args.clients, distinct=True))
    bare_rps, estimate_rps = statistics.median(bare), statistics.median(estimate)
    fresh_rps = statistics.median(fresh)
    load = os.getloadavg()[0]
    print(f"bare JSON route       {bare_rps:8.0f} req/s (median of {args.rounds}; load average {load:.1f})")
    share = estimate_rps / bare_rps
    print(f"POST /v1/estimate     {estimate_rps:8.0f} req/s   = {share:.0%} of bare "
          f"(target >= 70%: {'met' if share >= 0.7 else 'MISSED'}); the view's core steps take "
          f"{estimate_core:.1f} ms in-process")
    print(f"POST /v1/estimate, a new spec each time {fresh_rps:8.0f} req/s = {fresh_rps / bare_rps:.0%} of bare")

    app = bench_app()
    celery = app.extensions["celery"]
    task_p50 = statistics.median(task_body_ms(app, jobs=min(args.jobs, 50)))
    noop_ms = []
    for _ in range(args.jobs):
        started = time.perf_counter()
        celery.tasks[NOOP_TASK].apply_async().get(timeout=30)
        noop_ms.append((time.perf_counter() - started) * 1000)
    job_ms, server_ms = [], []
    for i in range(args.jobs):
        spec = json.loads(json.dumps(SPEC))
        spec["training"]["epochs"] += (i + 1) / 997  # a new spec each time (no shared job), the same work
        seen_ms, written_ms = submit_to_done_ms(port, spec, poll_s=args.poll_ms / 1000)
        job_ms.append(seen_ms)
        server_ms.append(written_ms)
    noop_p50, job_p50 = statistics.median(noop_ms), statistics.median(job_ms)
    job_p99 = _percentile(job_ms, 0.99)
    print(f"no-op Celery task     p50 {noop_p50:6.1f} ms  p99 {_percentile(noop_ms, 0.99):6.1f} ms")
    print(f"recommendation job    p50 {job_p50:6.1f} ms  p99 {job_p99:6.1f} ms   "
          f"p50 = {job_p50 / noop_p50:.1f}x no-op (target <= 2x: {'met' if job_p50 <= 2 * noop_p50 else 'MISSED'}), "
          f"p99 target <= 50 ms: {'met' if job_p99 <= 50 else 'MISSED'}")
    server_p50 = statistics.median(server_ms)
    print(f"  the task's own work (run in-process) p50 {task_p50:.1f} ms; claim to result written p50 "
          f"{server_p50:.1f} ms; HTTP submit and the wake-up {job_p50 - server_p50:.1f} ms")
    print(f"  queue overhead (job p50 - task p50) {job_p50 - task_p50:.1f} ms = "
          f"{(job_p50 - task_p50) / noop_p50:.1f}x the no-op round trip")

    submit_to_done_ms(port, SPEC, poll_s=args.poll_ms / 1000)  # the job that the repeats share
    repeat_ms = []
    for _ in range(args.jobs):
        started = time.perf_counter()
        status, _ = _request(port, "POST", "/v1/recommendations", json.dumps(SPEC).encode())
        repeat_ms.append((time.perf_counter() - started) * 1000)
        if status != 202:
            raise RuntimeError(f"repeat answered {status}")
    print(f"repeated spec (shared job) p50 {statistics.median(repeat_ms):5.1f} ms  "
          f"p99 {_percentile(repeat_ms, 0.99):5.1f} ms (target <= 5 ms)")


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        run_bench_worker()
    elif sys.argv[1:2] == ["--serve"]:
        run_bench_server(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit(main())
