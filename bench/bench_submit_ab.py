"""Compare recommendation submit-to-done between two checkouts, alternated in one run on one Redis.

Run by hand (Redis on 127.0.0.1:6379; the bench uses dbs 11 and 12 and empties them):

    git archive <before-commit> | tar -x -C /tmp/before
    PYTHONPATH=. .venv/bin/python bench/bench_submit_ab.py --before /tmp/before [--jobs 200]

Each checkout runs its own stack as bench/bench_api.py starts it (gunicorn with `gpugauge serve`'s
settings, 2 processes, and one prefork Celery worker, concurrency 1). Round after round, in a random
order, each stack gets the same new spec (POST /v1/recommendations with `Prefer: wait=10`); then each
gets no-op Celery round trips the same way. On a shared machine wall times move with the load, so
besides the client's wall-time percentiles the bench reports the CPU its server processes (gunicorn
and the worker, read from /proc) spent per run, and the after/before ratios of both.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DBS = {"before": 11, "after": 12}  # dbs no test or other bench uses: emptied
TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def _bench_api(root: str) -> Any:
    sys.path.insert(0, root)
    from bench import bench_api

    return bench_api


def _tree_cpu_s(root_pid: int) -> float:
    """Return the CPU seconds (user + system) of a process and its live descendants."""
    stats: dict[int, tuple[int, int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2:].split()
            stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
            todo.extend(child for child, (parent, _) in stats.items() if parent == pid)
    return total / TICKS_PER_S


def _serve_or_work(mode: str, root: str, db: str, port: str | None) -> None:
    bench = _bench_api(root)
    bench.REDIS_URL = f"redis://127.0.0.1:6379/{db}"
    if mode == "--serve":
        bench.run_bench_server(int(port or 0), 2)
    else:
        bench.run_bench_worker()


def main() -> int:
    """Start both stacks, alternate the runs, print percentiles, CPU per run and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a checkout of the code to compare with")
    parser.add_argument("--jobs", type=int, default=200, help="recommendation jobs and no-op tasks per stack")
    parser.add_argument("--poll-ms", type=float, default=5.0, help="how often a job not done in the wait is polled")
    args = parser.parse_args()
    roots = {"before": str(Path(args.before).resolve()), "after": str(ROOT)}
    bench = _bench_api(roots["after"])
    import redis

    processes: dict[str, list[subprocess.Popen[bytes]]] = {}
    ports: dict[str, int] = {}
    me = str(Path(__file__).resolve())
    for name, root in roots.items():
        url = f"redis://127.0.0.1:6379/{DBS[name]}"
        redis.Redis.from_url(url).flushdb()
        ports[name] = bench._free_port()
        env = {**os.environ, "REDIS_URL": url, "PYTHONPATH": root}
        env.pop("GPUGAUGE_API_KEYS", None)
        serve = [sys.executable, me, "--serve", root, str(DBS[name]), str(ports[name])]
        processes[name] = [
            subprocess.Popen(serve, env=env, cwd=root),
            subprocess.Popen([sys.executable, me, "--worker", root, str(DBS[name])], env=env, cwd=root,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for name in roots:
            bench._wait_http(ports[name], "/readyz", timeout_s=120)  # two stacks start at once
        report(bench, ports, processes, args)
    finally:
        for group in processes.values():
            for process in group:
                process.terminate()
        for group in processes.values():
            for process in group:
                process.wait(timeout=30)
    return 0


def report(bench: Any, ports: dict[str, int], processes: dict[str, list[subprocess.Popen[bytes]]],
           args: argparse.Namespace) -> None:
    """Run the jobs, then the no-ops, alternated between the stacks; print what was measured."""
    noops = {}
    for name, db in DBS.items():
        bench.REDIS_URL = f"redis://127.0.0.1:6379/{db}"
        noops[name] = bench.bench_app().extensions["celery"].tasks[bench.NOOP_TASK]
    wall: dict[tuple[str, str], list[float]] = {(n, k): [] for k in ("job", "no-op") for n in DBS}
    cpu: dict[tuple[str, str], float] = dict.fromkeys(wall, 0.0)
    for kind in ("job", "no-op"):
        for i in range(-10, args.jobs):  # ten warm-up rounds
            spec = json.loads(json.dumps(bench.SPEC))
            spec["training"]["epochs"] += (i + 11) / 997  # a new spec each round, the same for both stacks
            for name in random.sample(list(DBS), len(DBS)):
                cpu_before = sum(_tree_cpu_s(p.pid) for p in processes[name])
                started = time.perf_counter()
                if kind == "job":
                    bench.submit_to_done_ms(ports[name], spec, poll_s=args.poll_ms / 1000)
                else:
                    noops[name].apply_async().get(timeout=30)
                elapsed_ms = (time.perf_counter() - started) * 1000
                time.sleep(0.005)  # the worker's acknowledgement lands in this run's CPU
                if i >= 0:
                    wall[(name, kind)].append(elapsed_ms)
                    cpu[(name, kind)] += sum(_tree_cpu_s(p.pid) for p in processes[name]) - cpu_before
    pct = bench._percentile
    for (name, kind), times in wall.items():
        print(f"{name:6s} {kind:5s} p50 {statistics.median(times):6.1f} ms  p90 {pct(times, 0.9):6.1f}  "
              f"p99 {pct(times, 0.99):6.1f}  server CPU {cpu[(name, kind)] / len(times) * 1000:5.1f} ms a run")
    for name in DBS:
        job, noop = statistics.median(wall[(name, "job")]), statistics.median(wall[(name, "no-op")])
        print(f"{name:6s} job p50 = {job / noop:.1f}x its no-op p50 (target <= 2x); "
              f"p99 {pct(wall[(name, 'job')], 0.99):.1f} ms (target <= 50 ms)")
    ratio = {kind: statistics.median(wall[("after", kind)]) / statistics.median(wall[("before", kind)])
             for kind in ("job", "no-op")}
    cpu_ratio = cpu[("after", "job")] / cpu[("before", "job")]
    print(f"after/before: job p50 {ratio['job']:.3f}, no-op p50 {ratio['no-op']:.3f}, job server CPU {cpu_ratio:.3f} "
          f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    if sys.argv[1:2] in (["--serve"], ["--worker"]):
        _serve_or_work(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
    else:
        sys.exit(main())
