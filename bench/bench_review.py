"""Benchmark a large budget review fanned out over Celery worker processes: 1,000 jobs on 1 and on 2.

Run by hand (Redis on 127.0.0.1:6379; the bench uses db 13 and empties it):

    PYTHONPATH=. .venv/bin/python bench/bench_review.py [--jobs 1000] [--processes 1 2]

For each process count it starts `gpugauge worker --concurrency N` (prefork) on the app from the factory,
submits one review of `--jobs` jobs through the API (in-process client, the same routes), waits for
it with `GET /v1/reports/{id}?wait=20`, and prints the time from submit to done (and the server's own
created-to-updated time), jobs per second, and the speed-up from 1 to 2 processes. Target (issue 17):
1,000 jobs in at most 5 s with two worker processes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = "redis://127.0.0.1:6379/13"  # a db no test uses: the bench empties it
CONFIG = {"REDIS_URL": REDIS_URL, "API_KEYS": "", "RATE_LIMIT_ENABLED": False}
SPEC = {"model": {"stats": {"neurons": 2_000_000, "parameters": 5_000_000, "multiply_adds": 2 * 10**9}},
        "training": {"batch_size": 64, "epochs": 3}, "dataset": {"samples": 100_000, "bytes": 10**9},
        "constraints": {"providers": ["aws", "gcp"], "max_gpus": 4}}


def review(jobs: int, *, name: str) -> dict[str, Any]:
    """Return a review of `jobs` jobs, each its own spec (batch sizes and epochs vary)."""
    return {"name": name, "budget_usd": 50_000, "providers": ["aws", "gcp"],
            "jobs": [{"name": f"job {i}", "team": f"team {i % 7}", "runs": 1 + i % 3,
                      "spec": {**SPEC, "training": {"batch_size": 16 * (1 + i % 8), "epochs": 1 + i % 5}}}
                     for i in range(jobs)]}


def run_once(jobs: int, processes: int) -> dict[str, float]:
    """Start a worker of `processes`, run one review, stop the worker; return its figures."""
    from service.app import create_app

    redis.Redis.from_url(REDIS_URL).flushdb()
    cpu_before = _children_cpu_s()
    env = {**os.environ, "REDIS_URL": REDIS_URL,
           "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    worker = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(processes)],
                              env=env, cwd=ROOT)
    try:
        client = create_app(CONFIG).test_client()
        deadline = time.monotonic() + 60
        while client.get("/readyz").status_code != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("the worker did not come up")
            time.sleep(0.2)
        time.sleep(1.0)  # every pool process forked and consuming
        started = time.perf_counter()
        answer = client.post("/v1/reports", json=review(jobs, name=f"bench {processes}"))
        if answer.status_code != 202:
            raise RuntimeError(f"submit answered {answer.status_code}: {answer.get_data()[:300]!r}")
        location = answer.headers["Location"]
        body = answer.get_json()
        while body["status"] not in ("done", "failed"):
            body = client.get(location + "?wait=20").get_json()
        elapsed = time.perf_counter() - started
        if body["status"] != "done" or len(body["result"]["jobs"]) != jobs:
            raise RuntimeError(f"review ended {body['status']}: {json.dumps(body)[:300]}")
        server = (datetime.fromisoformat(body["updated_at"]) - datetime.fromisoformat(body["created_at"]))
        figures = {"elapsed_s": elapsed, "server_s": server.total_seconds(), "jobs_per_s": jobs / elapsed}
    finally:
        worker.terminate()
        worker.wait(timeout=60)
    # the worker's processes, reaped: their CPU seconds, start-up (imports, catalog) included
    figures["worker_cpu_s"] = _children_cpu_s() - cpu_before
    return figures


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_worker(processes: int) -> None:
    """Run the bench's worker as `gpugauge worker --concurrency N` does."""
    from service.app import create_app
    from service.commands.worker import run_worker as start

    start(create_app(CONFIG), concurrency=processes, loglevel="WARNING")


def main() -> int:
    """Run the review on each process count and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    results = {n: run_once(args.jobs, n) for n in args.processes}
    for n, figures in results.items():
        print(f"review of {args.jobs} jobs on {n} worker process(es): {figures['elapsed_s']:.2f} s submit to done "
              f"(server {figures['server_s']:.2f} s), {figures['jobs_per_s']:.0f} jobs/s; worker CPU "
              f"{figures['worker_cpu_s']:.1f} s (start-up included); load average {os.getloadavg()[0]:.1f}")
    if 1 in results and 2 in results:
        two = results[2]["elapsed_s"]
        print(f"speed-up 1 -> 2 processes: {results[1]['elapsed_s'] / two:.2f}x; target 1,000 jobs <= 5 s on two: "
              f"{'met' if two <= 5 and args.jobs >= 1000 else 'MISSED'}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        run_worker(int(sys.argv[2]))
    else:
        sys.exit(main())
