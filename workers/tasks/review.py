"""The Celery task of a large budget review: load the request, run the review, record progress on the job.

It lives in service/ rather than workers/ for the reason workers/tasks/recommend.py gives: it passes the
service's schemas and job registry, and no arrow may point from workers/ up to service/.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from workers.ranking.recommend import recommend
from workers.review.review import run_review
from workers.schemas.review_result import ReviewResultSchema
from workers.schemas.reviews import load_review
from workers.tasks.jobs import RUNNING, JobStore
from workers.tasks.outage import when_redis_answers
from workers.tasks.recommend import run_recorded
from workers.tasks.runs import calibration_for
from workers.tasks.runtime import runtime

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
    what = f"review job {job_id}"

    def work() -> dict[str, Any]:
        rt = runtime()
        _, review = load_review(request)
        catalog = rt.catalog.get()
        calibration = calibration_for(rt.runs, catalog)
        result = run_review(review, catalog,
                            recommend_fn=lambda job, cat: recommend(job, cat, calibration=calibration),
                            on_progress=lambda done, total: when_redis_answers(
                                lambda: record_progress(rt.jobs, job_id, done=done, total=total), what=what))
        payload: dict[str, Any] = ReviewResultSchema().dump(result)
        return payload

    return run_recorded(job_id, work, what=what, late_detail="the review ran past its time limit")
