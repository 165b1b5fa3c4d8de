"""The Celery task of a large budget review: load the request, run the review, record progress on the job.

It lives in service/ rather than workers/ for the reason service/tasks.py gives: it passes the
service's schemas and job registry, and no arrow may point from workers/ up to service/.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from flask import current_app
from marshmallow import ValidationError

from service.jobs import RUNNING, JobStore, finish, mark_running
from service.outage import when_redis_answers
from service.problems import problem, problem_for
from service.reviews import load_review
from service.runtime import runtime
from service.schemas.review_result import ReviewResultSchema
from workers.review import run_review
from workers.sizing.errors import SizingError

REVIEW_TASK = "gpugauge.review"
# A review of 200 jobs ranks 200 times; give it longer than one ranking's default limit.
REVIEW_TIME_LIMIT_S = 600
REVIEW_SOFT_TIME_LIMIT_S = 570


def record_progress(store: JobStore, job_id: str, *, done: int, total: int) -> None:
    """Write how many of the review's jobs are done onto the running job's record."""
    record = store.get(job_id)
    if record is not None and record["status"] == RUNNING:
        store.advance(job_id, expected_status=RUNNING,
                      record={**record, "progress": {"done": done, "total": total}})


@shared_task(name=REVIEW_TASK, acks_late=True, reject_on_worker_lost=True,  # type: ignore[untyped-decorator]
             time_limit=REVIEW_TIME_LIMIT_S, soft_time_limit=REVIEW_SOFT_TIME_LIMIT_S)
def review_job(job_id: str, request: dict[str, Any]) -> dict[str, str]:
    """Run a budget review, recording progress per job and then the dumped review, or why it failed."""
    rt = runtime()
    ttl_s = int(current_app.config["RESULT_TTL_S"])
    what = f"review job {job_id}"
    when_redis_answers(lambda: mark_running(rt.jobs, job_id), what=what)
    try:
        _, review = load_review(request)
        result = run_review(review, rt.catalog.get(),
                            on_progress=lambda done, total: when_redis_answers(
                                lambda: record_progress(rt.jobs, job_id, done=done, total=total), what=what))
        payload = ReviewResultSchema().dump(result)
    except (ValidationError, SizingError) as error:
        refused = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=refused, ttl_s=ttl_s), what=what)
        return {"id": job_id, "status": "failed"}
    except SoftTimeLimitExceeded:
        late = problem(500, detail="the review ran past its time limit")
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=late, ttl_s=ttl_s), what=what)
        return {"id": job_id, "status": "failed"}
    except Exception as error:
        broken = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=broken, ttl_s=ttl_s), what=what)
        raise
    when_redis_answers(lambda: finish(rt.jobs, job_id, result=payload, ttl_s=ttl_s), what=what)
    return {"id": job_id, "status": "done"}
