"""Celery tasks: load the payload with the schema, make one core call, dump, record on the job.

They live in service/ rather than workers/ because they pass the service's schemas, and the
architecture test allows no arrow from workers/ up to service/.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from flask import current_app
from marshmallow import ValidationError

from workers.ranking.recommend import PER_GPU_OPTIONS, recommend
from workers.schemas import dump_recommendation
from workers.schemas.specs import build_job, load_job, spec_digest
from workers.sizing.errors import SizingError
from workers.sizing.spec import JobSpec
from workers.tasks.jobs import DONE, RUNNING, finish, new_record, now_iso
from workers.tasks.outage import when_redis_answers
from workers.tasks.problems import problem, problem_for
from workers.tasks.reconcile import replay_of
from workers.tasks.runs import calibration_for, runs_revision
from workers.tasks.runtime import runtime

RECOMMEND_TASK = "gpugauge.recommend"


# A lost Redis is waited out (workers/tasks/outage.py), not retried: a retry cannot be published to a dead
# broker, and Celery then drops the message. Bad specs and bugs fail at once.
@shared_task(name=RECOMMEND_TASK, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
def recommend_job(job_id: str, spec: dict[str, Any], validated: bool = False,
                  runs_revision: str | None = None) -> dict[str, str]:
    """Rank the catalog's offers for a spec and record the result, or why it failed, on the job.

    `validated`: the spec is the API's loaded spec (service/api/recommendations.py), so it is built
    without passing the schema a second time; anything else is loaded as a raw spec. `runs_revision`:
    the reported runs' revision the job id was made from (None: read it here).
    """

    def work() -> dict[str, Any]:
        data, job = (spec, built_job(spec)) if validated else load_job(spec)
        rt = runtime()
        catalog = rt.catalog.get()
        rec = recommend(job, catalog, calibration=calibration_for(rt.runs, catalog, revision=runs_revision),
                        per_gpu_rows=data.get("per_gpu", PER_GPU_OPTIONS), today=date.today(),
                        stale_after_days=int(current_app.config["STALE_PRICES_DAYS"]))
        return dump_recommendation(rec)

    return run_recorded(job_id, work, what=f"recommend job {job_id}", late_detail="the job ran past its time limit")


def built_job(data: dict[str, Any]) -> JobSpec:
    """Build a loaded spec's job; a refusal comes out as the ValidationError load_job would raise."""
    try:
        return build_job(data)
    except SizingError as exc:
        raise ValidationError({exc.field: [exc.reason]}) from None


def run_recorded(job_id: str, work: Callable[[], dict[str, Any]], *, what: str,
                 late_detail: str) -> dict[str, str]:
    """Mark the job running, run `work`, and record its result or the problem that stopped it.

    A spec the core refuses and a soft time limit end the job as failed with a problem; any other
    error is recorded and re-raised (Celery logs it). Every write waits out a lost Redis. The start is
    sent without waiting for its answer (the store's `start_soon`), read once the work is done: the
    worker's writes cost one round trip, the outcome's.
    """
    rt = runtime()
    ttl_s = int(current_app.config["RESULT_TTL_S"])
    started = when_redis_answers(lambda: rt.jobs.start_soon(job_id, at=now_iso()), what=what)
    try:
        try:
            result = work()
        finally:
            started()  # before any outcome is written, so that Redis has the start first
    except (ValidationError, SizingError) as error:
        refused = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=refused, ttl_s=ttl_s), what=what)
        return {"id": job_id, "status": "failed"}
    except SoftTimeLimitExceeded:
        late = problem(500, detail=late_detail)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=late, ttl_s=ttl_s), what=what)
        return {"id": job_id, "status": "failed"}
    except Exception as error:
        broken = problem_for(error)
        when_redis_answers(lambda: finish(rt.jobs, job_id, problem=broken, ttl_s=ttl_s), what=what)
        raise
    when_redis_answers(lambda: finish(rt.jobs, job_id, result=result, ttl_s=ttl_s), what=what)
    return {"id": job_id, "status": "done"}


def recommendation_job_id(data: dict[str, Any], *, catalog_version: str, revision: str) -> str:
    """Return the id of the recommendation job for a loaded spec: one job per spec, catalog and runs.

    The API (POST /v1/recommendations) and the Slack answer name the job alike, so that they share it.
    """
    return spec_digest(data, catalog_version=f"{catalog_version}|runs={revision}" if revision else catalog_version)


def shared_recommendation(data: dict[str, Any], *, wait_s: float) -> dict[str, Any]:
    """Return the result of the spec's recommendation job, as the API's job holds it, for an in-worker caller.

    A job done is read; one running in another worker is waited for on its completion signal (the
    registry's wait, never a poll), for at most `wait_s`; otherwise (no job, one still queued, or one
    that ran past the wait) this worker runs the job's task itself, recording on the shared job, so
    that API clients waiting on the same job are woken too. Raises RuntimeError when the job failed.
    """
    rt = runtime()
    catalog = rt.catalog.get()
    revision = runs_revision(rt.runs)
    job_id = recommendation_job_id(data, catalog_version=catalog.version, revision=revision)
    stored = rt.jobs.get_stored(job_id)
    if stored is not None and stored[0] == RUNNING:
        stored = rt.jobs.wait_stored(job_id, timeout_s=wait_s, known=stored) or stored
    if stored is None or stored[0] != DONE:
        ttl_s = int(current_app.config["RESULT_TTL_S"])
        if stored is None and rt.jobs.claim(new_record(job_id, ttl_s=ttl_s), ttl_s=ttl_s):
            # replayable like the API's: the lost-job sweep re-runs it if this worker dies mid-way
            rt.jobs.confirm(job_id, replay=replay_of(RECOMMEND_TASK, job_id, data, True, revision))
        recommend_job.run(job_id, data, True, revision)  # the body, in this app: not through a Celery app
        stored = rt.jobs.get_stored(job_id)
    record = json.loads(stored[1]) if stored is not None else {}
    if record.get("status") != DONE:
        problem_detail = (record.get("problem") or {}).get("detail", "the job expired")
        raise RuntimeError(f"recommendation job {job_id} did not finish: {problem_detail}")
    result: dict[str, Any] = record["result"]
    return result
