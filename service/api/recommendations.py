"""POST /v1/recommendations queues a ranking job; GET /v1/recommendations/{id} reports on it."""

from __future__ import annotations

from typing import Any

from flask import current_app, url_for
from werkzeug.exceptions import NotFound

from service.api import ApiBlueprint
from service.api.schemas import JobSchema
from service.jobs import DONE, FAILED, Record, public_view, submit
from service.runtime import runtime
from service.schemas import JobSpecSchema
from service.specs import spec_digest
from service.tasks import RECOMMEND_TASK

blp = ApiBlueprint("recommendations", __name__, url_prefix="/v1",
                   description="Rank machines for a training job, through the job queue.")
POLL_AFTER_S = "1"


@blp.route("/recommendations", methods=["POST"])
@blp.arguments(JobSpecSchema)
@blp.alt_response(202, schema=JobSchema, success=True,
                  headers={"Location": {"description": "the job's URL", "schema": {"type": "string"}}})
@blp.problems(400, 401, 413, 415, 422, 503)
def submit_recommendation(data: dict[str, Any]) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Queue a ranking job; an identical spec on the same catalog gets the same job and result."""
    record = _submit(data)
    return _job_answer(record, 202)


@blp.route("/recommendations/<string:job_id>", methods=["GET"])
@blp.alt_response(200, schema=JobSchema, success=True)
@blp.problems(401, 404, 503)
def get_recommendation(job_id: str) -> tuple[dict[str, Any], int, dict[str, str]]:
    """Report a job's state, with its result when done or its problem when failed."""
    record = runtime().jobs.get(job_id)
    if record is None:
        raise NotFound(f"no job {job_id!r}: the id is unknown or its result has expired")
    return _job_answer(record, 200)


def _submit(data: dict[str, Any]) -> Record:
    rt = runtime()
    job_id = spec_digest(data, catalog_version=rt.catalog.get().version)
    return submit(rt.jobs, lambda: rt.queue.enqueue(RECOMMEND_TASK, job_id, data), job_id=job_id,
                  ttl_s=int(current_app.config["RESULT_TTL_S"]))


def _job_answer(record: Record, status: int) -> tuple[dict[str, Any], int, dict[str, str]]:
    headers = {"Location": url_for("recommendations.get_recommendation", job_id=record["id"])}
    if record["status"] not in (DONE, FAILED):
        headers["Retry-After"] = POLL_AFTER_S
    return public_view(record), status, headers
