"""Celery tasks: load the payload with the schema, make one core call, dump, record on the job.

They live in service/ rather than workers/ because they pass the service's schemas, and the
architecture test allows no arrow from workers/ up to service/.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from flask import current_app
from marshmallow import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from service.jobs import finish, mark_running
from service.problems import problem, problem_for
from service.runtime import runtime
from service.schemas import RecommendationSchema
from service.specs import load_job
from workers.recommend import recommend
from workers.sizing.errors import SizingError

RECOMMEND_TASK = "gpugauge.recommend"


@shared_task(name=RECOMMEND_TASK, acks_late=True, reject_on_worker_lost=True,  # type: ignore[untyped-decorator]
             # Only a lost Redis connection can heal by itself; bad specs and bugs fail at once.
             autoretry_for=(RedisConnectionError, RedisTimeoutError), retry_backoff=True, max_retries=3)
def recommend_job(job_id: str, spec: dict[str, Any]) -> dict[str, str]:
    """Rank the catalog's offers for a spec and record the result, or why it failed, on the job."""
    rt = runtime()
    ttl_s = int(current_app.config["RESULT_TTL_S"])
    mark_running(rt.jobs, job_id)
    try:
        _, job = load_job(spec)
        result = RecommendationSchema().dump(recommend(job, rt.catalog.get()))
    except (ValidationError, SizingError) as error:
        finish(rt.jobs, job_id, problem=problem_for(error), ttl_s=ttl_s)
        return {"id": job_id, "status": "failed"}
    except SoftTimeLimitExceeded:
        finish(rt.jobs, job_id, problem=problem(500, detail="the job ran past its time limit"), ttl_s=ttl_s)
        return {"id": job_id, "status": "failed"}
    except Exception as error:
        finish(rt.jobs, job_id, problem=problem_for(error), ttl_s=ttl_s)
        raise
    finish(rt.jobs, job_id, result=result, ttl_s=ttl_s)
    return {"id": job_id, "status": "done"}
