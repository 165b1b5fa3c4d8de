"""Load on loopback: POST /v1/estimate and POST /v1/recommendations for a minute against gunicorn + a worker.

Run by hand (redis-server on the PATH):

    PYTHONPATH=. .venv/bin/python bench/load.py [--seconds 60] [--clients 8] [--api-workers 2] [--concurrency 2]

It starts Redis (AOF on), `gpugauge worker` (prefork) and `gpugauge serve` (gunicorn, --api-workers
processes) with an API key and no rate limit, then runs closed-loop clients (each sends its next
request when the last is answered) for --seconds after a 5 s warm-up. Each client alternates a sizing
(POST /v1/estimate, one of the example specs) and a ranking job (POST /v1/recommendations: half repeat
one of 20 popular specs, half are new), and polls its last job (GET) until it is done. It prints per
route: requests per second, p50/p99 latency and errors (any answer but 200/202, or no answer), how
long jobs took from submit to done, and the largest resident memory of every API and worker process
(sampled each second). Targets: 0 errors, RSS <= 150 MB per process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import ROOT, Stack, children, request, rss_bytes

EXAMPLES = [json.loads((ROOT / "examples" / f"{name}.json").read_text()) for name in
            ("resnet50-imagenet", "gpt2-pretrain", "vae-mnist", "bert-finetune", "dcgan-faces", "dqn-atari")]
MIB = 1024 * 1024
WARMUP_S = 5.0
OK = {"estimate": 200, "recommend": 202, "poll": 200}


def ranking_spec(client: int, n: int) -> dict[str, Any]:
    """Half the time one of 20 popular specs (shared jobs), else a new one."""
    base = EXAMPLES[n % len(EXAMPLES)]
    batch = 8 + (n % 20) if n % 2 == 0 else 1000 + 1000 * client + n
    return {**base, "training": {**base["training"], "batch_size": batch}, "limit": 5}


class Client(threading.Thread):
    """A closed-loop client: estimate, submit, poll the job until done; records (route, start, seconds, ok)."""

    def __init__(self, stack: Stack, index: int, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.stack, self.index, self.stop = stack, index, stop
        self.samples: list[tuple[str, float, float, bool]] = []
        self.jobs: list[tuple[str, float, float | None]] = []  # (id, submitted at, done at)

    def timed(self, conn: Any, route: str, method: str, path: str, body: Any = None) -> Any:
        started = time.monotonic()
        status, answer = request(conn, method, path, body)
        self.samples.append((route, started, time.monotonic() - started, status == OK[route]))
        return answer if status == OK[route] else None

    def run(self) -> None:
        conn, n = self.stack.connection(timeout_s=30), 0
        while not self.stop.is_set():
            self.timed(conn, "estimate", "POST", "/v1/estimate", EXAMPLES[(self.index + n) % len(EXAMPLES)])
            job = self.timed(conn, "recommend", "POST", "/v1/recommendations", ranking_spec(self.index, n))
            if job is not None:
                submitted = time.monotonic()
                done_at = submitted if job["status"] == "done" else None
                while done_at is None and not self.stop.is_set():
                    time.sleep(0.05)
                    polled = self.timed(conn, "poll", "GET", f"/v1/recommendations/{job['id']}")
                    if polled is not None and polled["status"] in ("done", "failed"):
                        done_at = time.monotonic()
                self.jobs.append((job["id"], submitted, done_at))
            n += 1


def percentile(values: list[float], q: float) -> float:
    """Return the q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] if ordered else float("nan")


def sample_rss(stack: Stack, stop: threading.Event, peaks: dict[str, int]) -> None:
    """Record the largest RSS of each API and worker process, every second."""
    while not stop.is_set():
        for role, proc in (("api", stack.api_proc), ("worker", stack.worker_proc)):
            if proc is None:
                continue
            for depth, pid in [(0, proc.pid), *[(1, c) for c in children(proc.pid)]]:
                key = f"{role} {'master' if depth == 0 else 'child'} {pid}"
                peaks[key] = max(peaks.get(key, 0), rss_bytes(pid))
        stop.wait(1.0)


def main() -> int:
    """Start the stack, run the clients, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--api-workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=2, help="worker pool processes")
    args = parser.parse_args()

    stack = Stack(work=Path(tempfile.mkdtemp(prefix="gpugauge-load-")))
    stop, rss_stop = threading.Event(), threading.Event()
    peaks: dict[str, int] = {}
    try:
        stack.start_redis()
        stack.start_worker(concurrency=args.concurrency)
        stack.start_api(workers=args.api_workers)
        stack.wait_ready()
        sampler = threading.Thread(target=sample_rss, args=(stack, rss_stop, peaks), daemon=True)
        sampler.start()
        clients = [Client(stack, i, stop) for i in range(args.clients)]
        started = time.monotonic()
        for client in clients:
            client.start()
        time.sleep(WARMUP_S + args.seconds)
        stop.set()
        for client in clients:
            client.join(timeout=60)
        rss_stop.set()
        sampler.join(timeout=5)
    finally:
        stack.stop()

    window = (started + WARMUP_S, started + WARMUP_S + args.seconds)
    by_route: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    for client in clients:
        for route, at, seconds, ok in client.samples:
            if window[0] <= at < window[1]:
                by_route[route].append((seconds, ok))
    print(f"load: {args.clients} closed-loop clients, {args.seconds:.0f} s after a {WARMUP_S:.0f} s warm-up; "
          f"gunicorn {args.api_workers} processes, worker prefork {args.concurrency}; Redis with AOF")
    print(f"{'route':<34}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}")
    errors = 0
    for route, label in (("estimate", "POST /v1/estimate"), ("recommend", "POST /v1/recommendations"),
                         ("poll", "GET /v1/recommendations/{id}")):
        samples = by_route[route]
        latencies = [s * 1000 for s, _ in samples]
        bad = sum(not ok for _, ok in samples)
        errors += bad
        print(f"{label:<34}{len(samples) / args.seconds:>8.1f}{percentile(latencies, 0.5):>9.1f}"
              f"{percentile(latencies, 0.99):>9.1f}{bad:>8}")
    jobs = [(s, d) for client in clients for _, s, d in client.jobs if window[0] <= s < window[1]]
    done = [(d - s) * 1000 for s, d in jobs if d is not None]
    print(f"jobs submitted in the window {len(jobs)}, seen done {len(done)}; submit-to-done p50 "
          f"{statistics.median(done) if done else float('nan'):.0f} ms, p99 {percentile(done, 0.99):.0f} ms")
    for role in ("api", "worker"):
        mine = {k: v for k, v in peaks.items() if k.startswith(role)}
        print(f"{role} RSS peak per process (MB): " + ", ".join(
            f"{k.split(' ', 1)[1].split()[0]} {v / MIB:.0f}" for k, v in sorted(mine.items())))
    worst = max(peaks.values(), default=0) / MIB
    ok = errors == 0 and worst <= 150
    verdict = "PASS" if ok else "FAIL (target 0 errors, <= 150 MB)"
    print(f"errors {errors}; largest process {worst:.0f} MB: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
