"""The review-kill drill of bench/faults.py: a budget review fanned out in chunks while its workers are SIGKILLed.

A review of 48 distinct jobs goes to the API in chunks of 4 (12 chunk tasks) on `gpugauge worker`
(prefork, 2 processes). Once some chunks are kept, both pool processes are SIGKILLed mid-chunk; later
the whole worker is (main process and pool, as a crashed container); the worker is started again.
Passes when the review ends done with all 48 jobs in the request's order, its progress says 48 of
48 (no chunk counted twice), and every job's review and the totals are those of the same review
worked out in one pass in-process (no chunk lost, none joined twice).
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from bench.stack import Stack, children, request

JOBS = 48
CHUNK_JOBS = 4


def review_request() -> dict[str, Any]:
    """Return a review of JOBS distinct jobs (batch sizes differ), two teams, runs 1 to 3."""
    from bench.faults import SPEC

    return {"name": "review-kill", "budget_usd": 5_000, "providers": ["aws", "gcp"],
            "jobs": [{"name": f"job {i}", "team": ("a", "b")[i % 2], "runs": 1 + i % 3,
                      "spec": {**SPEC, "training": {**SPEC["training"], "batch_size": 16 + i}}}
                     for i in range(JOBS)]}


def reference(body: dict[str, Any]) -> dict[str, Any]:
    """Return the review worked out in one pass in-process (the inline route, no chunks)."""
    from service.app import create_app

    client = create_app({"TESTING": True, "REPORT_INLINE_MAX_JOBS": 10_000}).test_client()
    answer = client.post("/v1/reports", json=body)
    assert answer.status_code == 200, answer.get_data()[:300]
    document: dict[str, Any] = answer.get_json()
    return document


def review_kill(new_stack: Any, *, deadline_s: float) -> bool:
    """Run the drill on a fresh stack from `new_stack(name, extra_env)`; print its figures; return whether it passed."""
    body = review_request()
    expected = reference(body)
    stack: Stack = new_stack("review-kill", {"GPUGAUGE_REVIEW_CHUNK_JOBS": str(CHUNK_JOBS),
                                             "GPUGAUGE_REPORT_INLINE_MAX_JOBS": "2"})
    kills: list[str] = []
    job: dict[str, Any] = {}
    try:
        stack.start_redis()
        stack.start_worker(concurrency=2)
        stack.start_beat()
        stack.start_api(workers=2)
        stack.wait_ready()
        conn = stack.connection(timeout_s=60)
        status, job = request(conn, "POST", "/v1/reports", body)
        assert status == 202, (status, job)
        location = f"/v1/reports/{job['id']}"
        killed: set[int] = set()
        started = time.monotonic()
        while len(kills) < 2 and time.monotonic() - started < 120:
            _, job = request(conn, "GET", location)
            done = (job.get("progress") or {}).get("done", 0)
            assert stack.worker_proc is not None
            pool = [pid for pid in children(stack.worker_proc.pid) if pid not in killed]
            if not kills and done >= 2 * CHUNK_JOBS and pool and job["status"] == "running":
                for pid in pool:  # both pool processes, each mid-chunk
                    os.kill(pid, signal.SIGKILL)
                killed.update(pool)
                kills.append(f"pool processes {pool} at {done} of {JOBS} jobs done")
            elif len(kills) == 1 and done >= JOBS // 2 and job["status"] == "running":
                stack.kill_worker()
                kills.append(f"whole worker at {done} of {JOBS} done")
            time.sleep(0.05)
        time.sleep(1)
        stack.start_worker(concurrency=2)
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline and job.get("status") not in ("done", "failed"):
            _, job = request(conn, "GET", location + "?wait=20")
        elapsed_s = time.monotonic() - started
    finally:
        stack.stop()
    result = job.get("result") or {}
    names_in_order = [j["name"] for j in result.get("jobs", [])] == [f"job {i}" for i in range(JOBS)]
    same = result.get("jobs") == expected["jobs"] and result.get("total") == expected["total"]
    progress = job.get("progress")
    print("review-kill: " + "; ".join(kills))
    print(f"  review {job.get('status')}, jobs {len(result.get('jobs', []))} of {JOBS}, in order {names_in_order}, "
          f"progress {progress}, equal to the one-pass review {same}; done {elapsed_s:.1f} s after submitting")
    passed = (len(kills) == 2 and job.get("status") == "done" and names_in_order and same
              and progress == {"done": JOBS, "total": JOBS})
    print("  PASS" if passed else f"  FAIL (logs in {stack.work})")
    return passed
