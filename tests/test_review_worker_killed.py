"""A worker killed mid-review: its chunk comes back, every other chunk is kept once, the review is whole.

The queue is recorded instead of run, so the test plays the broker: it delivers each chunk task, kills
one mid-way (a BaseException out of the chunk's work, as SIGKILL leaves nothing recorded), delivers a
chunk twice (late acks after a lost worker), and re-runs the review's own task as beat's lost-job sweep
does. bench/faults.py review-kill drills the same with real processes and SIGKILL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

import workers.tasks.review as review_tasks
from tests.test_api_reports import SPEC
from workers.tasks.review import REVIEW_CHUNK_TASK, REVIEW_TASK, review_chunk, review_job
from workers.tasks.runtime import runtime


class WorkerKilled(BaseException):
    """What a SIGKILL does to a task: nothing after it runs, nothing is recorded."""


def _request(jobs: int) -> dict[str, Any]:
    # four specs, at most two jobs each: alike jobs share a chunk (workers/tasks/review.py chunk_bounds),
    # so chunks of two hold two jobs each
    return {"name": "killed", "budget_usd": 500, "providers": ["aws", "gcp"],
            "jobs": [{"name": f"job {i}", "team": ("a", "b")[i % 2], "runs": 1 + i % 3,
                      "spec": {**SPEC, "training": {**SPEC["training"],
                                                    "batch_size": SPEC["training"]["batch_size"] * (1 + i % 4)}}}
                     for i in range(jobs)]}


def test_a_worker_killed_mid_review_loses_no_chunk_and_counts_none_twice(
        make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    request = _request(7)
    inline = make_app(REPORT_INLINE_MAX_JOBS=100).test_client().post("/v1/reports", json=request).get_json()
    app = make_app(REPORT_INLINE_MAX_JOBS=2, REVIEW_CHUNK_JOBS=2)
    rt = runtime(app)
    queued: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(rt.queue, "enqueue", lambda name, *args: queued.append((name, args)))
    monkeypatch.setattr(rt.queue, "prepare", lambda name, *args: None)
    client = app.test_client()
    answer = client.post("/v1/reports", json=request)
    assert answer.status_code == 202 and [name for name, _ in queued] == [REVIEW_TASK]
    location = answer.headers["Location"]
    with app.app_context():
        review_args = queued.pop()[1]  # what the broker holds, and what the lost-job sweep replays
        review_job.run(*review_args)  # the review's task fans out four chunks of two jobs
        chunks = {args[1]: args for name, args in queued if name == REVIEW_CHUNK_TASK}
        assert sorted(chunks) == [0, 1, 2, 3] and sum(len(a[4]["jobs"]) for a in chunks.values()) == 7
        queued.clear()
        review_chunk.run(*chunks[0])
        real_review_jobs = review_tasks.review_jobs

        def killed(*args: Any, **kwargs: Any) -> Any:
            raise WorkerKilled

        monkeypatch.setattr(review_tasks, "review_jobs", killed)
        with pytest.raises(WorkerKilled):  # chunk 1's worker dies mid-way
            review_chunk.run(*chunks[1])
        monkeypatch.setattr(review_tasks, "review_jobs", real_review_jobs)
        review_chunk.run(*chunks[0])  # chunk 0 delivered again (its ack was lost with the worker)
        progress = client.get(location).get_json()["progress"]
        assert progress == {"done": len(chunks[0][4]["jobs"]), "total": 7}  # counted once
        review_job.run(*review_args)  # the lost-job sweep re-runs the review's task
        assert sorted(args[1] for name, args in queued if name == REVIEW_CHUNK_TASK) == [1, 2, 3]  # only the missing
        for index in (1, 2, 3, 3):  # chunk 3 twice: the second delivery finds it kept
            review_chunk.run(*chunks[index])
    job = client.get(location).get_json()
    assert job["status"] == "done" and job["progress"] == {"done": 7, "total": 7}
    result = job["result"]
    assert [j["name"] for j in result["jobs"]] == [f"job {i}" for i in range(7)]
    assert result["jobs"] == inline["jobs"] and result["total"] == inline["total"]

