"""POST /v1/recommendations queues a ranking job; GET /v1/recommendations/{id} reports on it."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, url_for
from werkzeug.exceptions import NotFound

from service.api import ApiBlueprint
from service.schemas.envelopes import JobSchema
from workers.ranking.recommend import check_recommendable
from workers.schemas import JobSpecSchema
from workers.schemas.specs import build_job, spec_digest
from workers.tasks.jobs import DONE, FAILED, Stored, submit_stored
from workers.tasks.recommend import RECOMMEND_TASK
from workers.tasks.reconcile import replay_of
from workers.tasks.runtime import runtime

blp = ApiBlueprint("recommendations", __name__, url_prefix="/v1",
                   description="Rank machines for a training job, through the job queue.")
POLL_AFTER_S = "1"


@blp.route("/recommendations", methods=["POST"])
@blp.arguments(JobSpecSchema)
@blp.alt_response(202, schema=JobSchema, success=True,
                  headers={"Location": {"description": "the job's URL", "schema": {"type": "string"}}})
@blp.problems(400, 401, 413, 415, 422, 503)
def submit_recommendation(data: dict[str, Any]) -> Response:
    """Queue a ranking job; an identical spec on the same catalog gets the same job and result."""
    rt = runtime()
    catalog = rt.catalog.get()
    check_recommendable(build_job(data), catalog)  # a spec the job would refuse is a 422 now, not later
    job_id = spec_digest(data, catalog_version=catalog.version)
    stored = submit_stored(rt.jobs, lambda: rt.queue.enqueue(RECOMMEND_TASK, job_id, data), job_id=job_id,
                           ttl_s=int(current_app.config["RESULT_TTL_S"]),
                           replay=replay_of(RECOMMEND_TASK, job_id, data))
    return _job_response(job_id, stored, 202)


@blp.route("/recommendations/<string:job_id>", methods=["GET"])
@blp.alt_response(200, schema=JobSchema, success=True)
@blp.problems(401, 404, 503)
def get_recommendation(job_id: str) -> Response:
    """Report a job's state, with its result when done or its problem when failed."""
    stored = runtime().jobs.get_stored(job_id)
    if stored is None:
        raise NotFound(f"no job {job_id!r}: the id is unknown or its result has expired")
    return _job_response(job_id, stored, 200)


def _job_response(job_id: str, stored: Stored, status: int) -> Response:
    # The stored JSON is the answer's body as it is: no decoding and encoding of a large result.
    job_status, body = stored
    response = Response(body, status=status, mimetype="application/json")
    response.headers["Location"] = url_for("recommendations.get_recommendation", job_id=job_id)
    if job_status not in (DONE, FAILED):
        response.headers["Retry-After"] = POLL_AFTER_S
    return response
