"""Fault drills on a real deployment on loopback: a worker SIGKILLed mid-jobs, Redis stopped under load, and
Redis down when the API and the worker start.

Run by hand (redis-server on the PATH):

    PYTHONPATH=. .venv/bin/python bench/faults.py [worker-kill|review-kill|redis-outage|redis-down-at-start|all]

worker-kill: 100 distinct recommendation jobs go to `gpugauge worker` (prefork, 2 processes). While
they run, one pool process is SIGKILLed, then the other, then the whole worker (main process and pool,
as a crashed container); the worker is started again. Passes when all 100 end `done`, none is lost,
and each job's result, read through the API every time it is seen, is the same as the result computed
in-process for its spec (a job re-run after a kill must answer what it would have answered).

review-kill (bench/faults_review.py): a budget review fanned out in chunks while its pool processes, then
its whole worker, are SIGKILLed; passes when the review is whole, in order, counted once and equal to the
same review done in one pass.

redis-outage: four clients submit distinct jobs at a steady pace (a refused one is sent again, as a
client honouring Retry-After would); Redis (AOF on, its own port) is stopped (SIGTERM) for 5 s and
started again on the same files; the API, the worker and beat are not restarted. Passes when every
submission during the outage is a 503 problem+json with Retry-After, answered within 1 s,
submissions are accepted again after Redis returns, and every job that got a 202 finishes.

redis-down-at-start: the API runs once against Redis and reads a catalog version written there (so its
local copy holds it), then stops; Redis is stopped; the API (2 gunicorn processes) and the worker start
with REDIS_URL set and Redis down. Passes when the API boots, serves the copied version, answers
/readyz 503, an estimate 200 and a recommendation 503 problem+json within 1 s; and when, once Redis is
started again with a newer version, every API process switches to it, /readyz turns 200 and a
recommendation submitted then is done (the worker that started without Redis runs it).

A job whose pool process dies is requeued by the worker at once (task_reject_on_worker_lost). A job
whose whole worker dies stays un-acknowledged in Redis until the broker's visibility timeout passes
(here 20 s, swept every 5 s; production: 3600 s, swept every ~100 s, workers/tasks/celery_app.py), or until
beat's lost-job sweep enqueues it again (workers/tasks/reconcile.py; here after 15 s, checked every 2 s;
production: 900 s, every 60 s). The sweep also recovers a message the worker had popped from the
queue but not yet recorded as un-acked when it was killed, which nothing else brings back.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.stack import Stack, children, job_statuses, request

VISIBILITY_TIMEOUT_S = 20
# kombu scans for expired un-acknowledged messages every interval x throttle seconds (10 x 10 by default).
BROKER_OPTIONS = json.dumps({"visibility_timeout": VISIBILITY_TIMEOUT_S, "max_retries": 1, "socket_connect_timeout": 1,
                             "unacked_restore_interval": 5, "unacked_restore_throttle": 1})
SPEC = json.loads((Path(__file__).resolve().parent.parent / "examples" / "vae-mnist.json").read_text())


def spec_number(i: int) -> dict[str, Any]:
    """Return the i-th of a family of distinct specs (distinct jobs)."""
    return {**SPEC, "training": {**SPEC["training"], "batch_size": 16 + i}}


def reference_results(specs: list[dict[str, Any]]) -> list[str]:
    """Compute each spec's recommendation in-process, as canonical JSON, as the job's task does.

    The task keeps the per-GPU rows its options use unless the spec asks for all (`per_gpu`), and dates
    the stale-prices warning (workers/tasks/recommend.py); with no reported runs its calibration is none.
    """
    from datetime import date

    from service.app import create_app
    from workers.ranking.recommend import PER_GPU_OPTIONS, recommend
    from workers.schemas import dump_recommendation
    from workers.schemas.specs import load_job
    from workers.tasks.runtime import runtime

    app = create_app({"TESTING": True})
    catalog, stale_days = runtime(app).catalog.get(), int(app.config["STALE_PRICES_DAYS"])
    results = []
    for spec in specs:
        data, job = load_job(spec)
        rec = recommend(job, catalog, per_gpu_rows=data.get("per_gpu", PER_GPU_OPTIONS), today=date.today(),
                        stale_after_days=stale_days)
        results.append(canonical(dump_recommendation(rec)))
    return results


def canonical(value: Any) -> str:
    """Return JSON with sorted keys, to compare results."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# beat's lost-job sweep (workers/tasks/reconcile.py) every 2 s for jobs untouched 15 s (production: 60 s, 900 s).
SWEEP = {"GPUGAUGE_JOB_REQUEUE_AFTER_S": "15", "GPUGAUGE_JOB_REQUEUE_EVERY_S": "2"}


def new_stack(name: str, extra_env: dict[str, str] | None = None) -> Stack:
    """Return a stack in a fresh directory with the drill's broker options and sweep."""
    work = Path(tempfile.mkdtemp(prefix=f"gpugauge-{name}-"))
    return Stack(work=work, env_overrides={"GPUGAUGE_CELERY__broker_transport_options": BROKER_OPTIONS, **SWEEP,
                                           **(extra_env or {})})


def worker_kill() -> bool:
    """Run the worker-kill drill; print its figures; return whether it passed."""
    specs = [spec_number(i) for i in range(100)]
    expected = reference_results(specs)
    stack = new_stack("worker-kill")
    observed: dict[str, set[str]] = {}
    try:
        stack.start_redis()
        stack.start_worker(concurrency=2)
        stack.start_beat()
        stack.start_api(workers=2)
        stack.wait_ready()
        conn, store = stack.connection(), redis.Redis(port=stack.redis_port)
        ids = []
        for spec in specs:
            status, body = request(conn, "POST", "/v1/recommendations", spec)
            assert status == 202, (status, body)
            ids.append(body["id"])
        kills: list[str] = []
        killed: set[int] = set()
        running_at_kill = 0
        started = time.monotonic()
        while len(kills) < 3 and time.monotonic() - started < 60:
            statuses = job_statuses(store, ids)
            done = sum(s == "done" for s in statuses.values())
            running = any(s == "running" for s in statuses.values())
            assert stack.worker_proc is not None
            pool = [pid for pid in children(stack.worker_proc.pid) if pid not in killed]
            if len(kills) < 2 and done >= (10, 30)[len(kills)] and pool and running:
                for pid in pool:  # every pool process: the one running the job dies mid-job
                    os.kill(pid, signal.SIGKILL)
                killed.update(pool)
                kills.append(f"pool processes {pool} at {done} done")
            elif len(kills) == 2 and done >= 50 and running:
                running_at_kill = sum(s == "running" for s in statuses.values())
                stack.kill_worker()
                kills.append(f"whole worker at {done} done, {running_at_kill} running")
            time.sleep(0.002)
        time.sleep(1)
        stack.start_worker(concurrency=2)
        deadline = time.monotonic() + VISIBILITY_TIMEOUT_S + 60
        while time.monotonic() < deadline:
            statuses = job_statuses(store, ids)
            for job_id in [j for j, s in statuses.items() if s == "done" and j not in observed]:
                observed[job_id] = {canonical(request(conn, "GET", f"/v1/recommendations/{job_id}")[1]["result"])}
            if len(observed) == len(ids):
                break
            time.sleep(0.2)
        for job_id in observed:  # read every job once more: a late duplicate run must not change it
            observed[job_id].add(canonical(request(conn, "GET", f"/v1/recommendations/{job_id}")[1]["result"]))
        elapsed_s = time.monotonic() - started
    finally:
        stack.stop()
    log = (stack.work / "worker.log").read_text(errors="replace")
    swept = len(re.findall(r"untouched for .* enqueued again", log))
    lost_mid_task = len(re.findall(r"WorkerLostError", log))
    runs = len(re.findall(r"Task gpugauge\.recommend\[[^\]]+\] succeeded", log))
    deliveries = len(re.findall(r"Task gpugauge\.recommend\[[^\]]+\] received", log))
    by_id = dict(zip(ids, expected, strict=True))
    differing = [j for j, seen in observed.items() if seen != {by_id[j]}]
    print("worker-kill: " + "; ".join(kills))
    print(f"  jobs submitted 100, done {len(observed)}, lost {len(ids) - len(observed)}, answered differently "
          f"{len(differing)}; deliveries {deliveries} (again after a kill: {deliveries - len(ids)}), completed runs "
          f"{runs}; WorkerLostError lines (a pool kill hit a running job): {lost_mid_task}; jobs running at the "
          f"whole-worker kill: {running_at_kill}; enqueued again by the lost-job sweep: {swept}; all done "
          f"{elapsed_s:.1f} s after the first kill")
    passed = len(observed) == len(ids) and not differing and len(kills) == 3
    print("  PASS" if passed else f"  FAIL (logs in {stack.work})")
    return passed


class Load(threading.Thread):
    """A client submitting distinct recommendation jobs at a steady pace, recording every answer.

    After a refusal it sends the same spec again, as a client honouring Retry-After would (sooner here).
    """

    def __init__(self, stack: Stack, index: int, *, pause_s: float) -> None:
        super().__init__(daemon=True)
        self.stack, self.index, self.pause_s = stack, index, pause_s
        self.stop = threading.Event()
        self.answers: list[tuple[float, float, int, Any]] = []  # (sent at, seconds, status, body)

    def run(self) -> None:
        conn, n = self.stack.connection(timeout_s=5), 0
        while not self.stop.is_set():
            spec = {**spec_number(1000 * self.index + n), "limit": 5}
            sent = time.monotonic()
            status, body = request(conn, "POST", "/v1/recommendations", spec)
            self.answers.append((sent, time.monotonic() - sent, status, body))
            if status == 202:
                n += 1
            time.sleep(self.pause_s)


def redis_outage() -> bool:
    """Run the Redis-outage drill; print its figures; return whether it passed."""
    stack = new_stack("redis-outage")
    try:
        stack.start_redis()
        stack.start_worker(concurrency=2)
        stack.start_beat()
        stack.start_api(workers=2)
        stack.wait_ready()
        # ~40 submissions a second: under what 2 pool processes finish on a 2-core machine, so the
        # backlog drains and "every accepted job finishes" measures loss, not capacity.
        clients = [Load(stack, i, pause_s=0.1) for i in range(4)]
        for client in clients:
            client.start()
        time.sleep(5)
        stopping_at = time.monotonic()
        stack.stop_redis()
        down_at = time.monotonic()  # the Redis process has exited
        time.sleep(5)
        readyz_down, healthz_down = stack.get("/readyz")[0], stack.get("/healthz")[0]
        up_at = time.monotonic()
        stack.start_redis()
        time.sleep(10)
        for client in clients:
            client.stop.set()
        for client in clients:
            client.join(timeout=10)
        answers = sorted(a for client in clients for a in client.answers)
        accepted = [a[3]["id"] for a in answers if a[2] == 202]
        store = redis.Redis(port=stack.redis_port)
        deadline = time.monotonic() + VISIBILITY_TIMEOUT_S + 60
        while time.monotonic() < deadline:
            unfinished = [j for j, s in job_statuses(store, accepted).items() if s not in ("done", "failed")]
            if not unfinished:
                break
            time.sleep(0.5)
        failed = [j for j, s in job_statuses(store, accepted).items() if s == "failed"]
        stale = [k for k in store.scan_iter("gpugauge:job:*", _type="HASH")  # not the jobs' wake-up lists
                 if store.hget(k, "status") in (b"queued", b"running")]
    finally:
        stack.stop()
    before = [a for a in answers if a[0] < stopping_at]
    during = [a for a in answers if down_at <= a[0] and a[0] + a[1] < up_at]  # sent and answered while down
    after = [a for a in answers if a[0] >= up_at]  # sent once Redis was being started again
    during_ok = [a for a in during if a[2] == 503 and a[3] is not None and "Retry-After" in a[3]["_headers"]
                 and a[3]["_headers"].get("Content-Type", "").startswith("application/problem+json")]
    odd = [(round(a[0] - down_at, 3), a[2], (a[3] or {}).get("_headers")) for a in during if a not in during_ok]
    first_accept = next((a[0] - up_at for a in after if a[2] == 202), None)
    accepted_before = sum(a[2] == 202 for a in before)
    print(f"redis-outage: {len(answers)} submissions; before the outage {len(before)} "
          f"({accepted_before} accepted), during {len(during)}, after {len(after)}")
    print(f"  during: {len(during_ok)}/{len(during)} were 503 problem+json with Retry-After; slowest answer "
          f"{max((a[1] for a in during), default=0):.3f} s; /readyz {readyz_down}, /healthz {healthz_down}"
          + (f"; the others (s after Redis exited, status, headers): {odd}" if odd else ""))
    print(f"  after Redis returned: first 202 after {first_accept if first_accept is None else round(first_accept, 2)}"
          f" s, {sum(a[2] == 202 for a in after)} accepted; statuses "
          f"{sorted({a[2] for a in after})}")
    swept = len(re.findall(r"untouched for .* enqueued again", (stack.work / "worker.log").read_text(errors="replace")))
    print(f"  jobs accepted (202) in all: {len(accepted)}; unfinished {len(unfinished)}; failed {len(failed)}; "
          f"job records left queued or running: {len(stale)}; enqueued again by the lost-job sweep: {swept}")
    passed = (bool(during) and len(during_ok) == len(during) and max(a[1] for a in during) < 1.0
              and first_accept is not None and not unfinished and not failed and not stale and accepted_before > 0)
    print("  PASS" if passed else f"  FAIL (logs in {stack.work})")
    return passed


def write_catalog_version(port: int, version: str) -> None:
    """Make the bundled snapshot's rows, under a new version name, current in the stack's Redis."""
    import dataclasses

    from catalog.gpus import load_gpus
    from catalog.loader import load_snapshot_rows
    from catalog.store import RedisCatalogStore

    rows = dataclasses.replace(load_snapshot_rows(), version=version)
    RedisCatalogStore(redis.Redis(port=port)).write_version(rows, gpus=load_gpus())


def catalog_versions(stack: Stack, *, asks: int = 8) -> set[str]:
    """Ask GET /v1/catalog a few times on fresh connections (each may reach another gunicorn process)."""
    return {str(body.get("version")) for status, body in (stack.get("/v1/catalog") for _ in range(asks))
            if status == 200 and body}


def redis_down_at_start() -> bool:
    """Run the Redis-down-at-start drill; print its figures; return whether it passed."""
    stack = new_stack("redis-down-at-start")
    copy = stack.work / "catalog-copy.json"
    stack.env_overrides = {**stack.env_overrides, "GPUGAUGE_CATALOG_COPY_PATH": str(copy),
                           "GPUGAUGE_CATALOG_RETRY_S": "1"}
    spec = {**spec_number(7), "limit": 5}
    try:
        stack.start_redis()
        write_catalog_version(stack.redis_port, "2026-12-01.41")
        stack.start_api(workers=2)
        first_versions = catalog_versions(stack)
        stack.stop()  # the API, then Redis
        started = time.monotonic()
        stack.start_worker(concurrency=2)
        stack.start_api(workers=2)
        boot_s = time.monotonic() - started
        worker_alive = stack.worker_proc is not None and stack.worker_proc.poll() is None
        down_versions = catalog_versions(stack)
        readyz_down = stack.get("/readyz")[0]
        conn = stack.connection()
        sent = time.monotonic()
        estimate_status, _ = request(conn, "POST", "/v1/estimate", spec)
        estimate_s = time.monotonic() - sent
        sent = time.monotonic()
        queued_status, queued = request(conn, "POST", "/v1/recommendations", spec)
        queued_s = time.monotonic() - sent
        queued_type = (queued or {}).get("_headers", {}).get("Content-Type", "")
        stack.start_redis()  # its AOF still holds 2026-12-01.41; a refresh ran meanwhile: .42
        write_catalog_version(stack.redis_port, "2026-12-01.42")
        back_at = time.monotonic()
        switched_s = ready_s = None
        while time.monotonic() - back_at < 60 and (switched_s is None or ready_s is None):
            if switched_s is None and catalog_versions(stack) == {"2026-12-01.42"}:
                switched_s = time.monotonic() - back_at
            if ready_s is None and stack.get("/readyz")[0] == 200:
                ready_s = time.monotonic() - back_at
            time.sleep(0.2)
        status, job = request(stack.connection(), "POST", "/v1/recommendations", spec)
        done_s, final = None, None
        while status == 202 and time.monotonic() - back_at < 120:
            _, final = stack.get(job["_headers"]["Location"])
            if final and final.get("status") in ("done", "failed"):
                done_s = time.monotonic() - back_at
                break
            time.sleep(0.2)
    finally:
        stack.stop()
    print(f"redis-down-at-start: with Redis up, the API served {sorted(first_versions)} (copied to {copy.name})")
    print(f"  Redis down: API up in {boot_s:.1f} s, worker running: {worker_alive}; catalog served "
          f"{sorted(down_versions)}; /readyz {readyz_down}; estimate {estimate_status} in {estimate_s:.3f} s; "
          f"recommendation {queued_status} {queued_type} in {queued_s:.3f} s")
    def seconds(value: float | None) -> str:
        return "never" if value is None else f"{value:.1f} s"

    print(f"  Redis back: every API process on 2026-12-01.42 after {seconds(switched_s)}; /readyz 200 after "
          f"{seconds(ready_s)}; a new job {(final or {}).get('status')} {seconds(done_s)} after Redis returned")
    passed = (first_versions == {"2026-12-01.41"} and worker_alive and down_versions == {"2026-12-01.41"}
              and readyz_down == 503 and estimate_status == 200 and queued_status == 503
              and queued_type.startswith("application/problem+json") and queued_s < 1.0
              and switched_s is not None and ready_s is not None and (final or {}).get("status") == "done")
    print("  PASS" if passed else f"  FAIL (logs in {stack.work})")
    return passed


def main() -> int:
    """Run the chosen drills."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drill", nargs="?", default="all",
                        choices=("worker-kill", "review-kill", "redis-outage", "redis-down-at-start", "all"))
    drill = parser.parse_args().drill
    results = []
    if drill in ("worker-kill", "all"):
        results.append(worker_kill())
    if drill in ("review-kill", "all"):
        from bench.faults_review import review_kill

        results.append(review_kill(new_stack, deadline_s=VISIBILITY_TIMEOUT_S + 120))
    if drill in ("redis-outage", "all"):
        results.append(redis_outage())
    if drill in ("redis-down-at-start", "all"):
        results.append(redis_down_at_start())
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
