"""POST /v1/recommendations queues a ranking job; GET /v1/recommendations/{id} reports on it.

Both take `Prefer: wait=N` (service/api/waiting.py): the answer comes when the job ends, not at the
next poll; the submit's answer is then 200 with the result, else 202 as without the preference.
"""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, url_for
from werkzeug.exceptions import NotFound

from service.api import ApiBlueprint
from service.api.waiting import (
    PREFER_PARAMETER,
    WAIT_HEADERS,
    WAIT_QUERY_PARAMETER,
    requested_wait_s,
    retry_after_s,
    waited,
)
from service.schemas.envelopes import JobSchema
from workers.ranking.recommend import check_recommendable
from workers.schemas import JobSpecSchema
from workers.schemas.specs import build_job
from workers.tasks.jobs import TERMINAL, Stored, submit_stored
from workers.tasks.recommend import RECOMMEND_TASK, recommendation_job_id
from workers.tasks.reconcile import replay_of
from workers.tasks.runs import runs_revision
from workers.tasks.runtime import runtime

blp = ApiBlueprint("recommendations", __name__, url_prefix="/v1",
                   description="Rank machines for a training job, through the job queue.")
_LOCATION = {"Location": {"description": "the job's URL", "schema": {"type": "string"}}}
# OpenAPI links: the answer's id is the job_id of GET /v1/recommendations/{job_id} (clients and stateful
# fuzzers follow them from the submit to the job).
JOB_LINK = {"GetRecommendation": {"operationRef": "#/paths/~1v1~1recommendations~1{job_id}/get",
                                  "parameters": {"job_id": "$response.body#/id"},
                                  "description": "The job this answer names: its state, and its result once done"}}


@blp.route("/recommendations", methods=["POST"])
@blp.arguments(JobSpecSchema)
@blp.alt_response(202, schema=JobSchema, success=True, headers={**_LOCATION, **WAIT_HEADERS},
                  description="The job, queued or running (or done, for a spec whose job had already run)")
@blp.alt_response(200, schema=JobSchema, headers={**_LOCATION, **WAIT_HEADERS},
                  description="With `Prefer: wait=N`: the job ended within N seconds (done with its result, "
                              "or failed with its problem)")
@blp.doc(parameters=[PREFER_PARAMETER], responses={code: {"links": JOB_LINK} for code in (200, 202)})
@blp.problems(400, 401, 413, 415, 422, 503)
def submit_recommendation(data: dict[str, Any]) -> Response:
    """Queue a ranking job; an identical spec on the same catalog gets the same job and result."""
    rt = runtime()
    catalog = rt.catalog.get()
    check_recommendable(build_job(data), catalog)  # a spec the job would refuse is a 422 now, not later
    # The reported runs calibrate the answer (workers/sizing/reported.py): new runs, a new job.
    revision = runs_revision(rt.runs)
    job_id = recommendation_job_id(data, catalog_version=catalog.version, revision=revision)
    # True: validated here, so the worker builds the job without loading it again; the revision: the runs
    # the id was made from, which the worker then need not read
    args = (job_id, data, True, revision)
    stored = submit_stored(rt.jobs, lambda: rt.queue.enqueue(RECOMMEND_TASK, *args), job_id=job_id,
                           ttl_s=int(current_app.config["RESULT_TTL_S"]),
                           replay=replay_of(RECOMMEND_TASK, *args), prepared=rt.queue.prepare(RECOMMEND_TASK, *args))
    wait_s = requested_wait_s()
    if wait_s is not None:
        stored = rt.jobs.wait_stored(job_id, timeout_s=wait_s, known=stored) or stored
    ended = wait_s is not None and stored[0] in TERMINAL
    return waited(_job_response(job_id, stored, 200 if ended else 202), wait_s)


@blp.route("/recommendations/<string:job_id>", methods=["GET"])
@blp.alt_response(200, schema=JobSchema, success=True, headers={**_LOCATION, **WAIT_HEADERS})
@blp.doc(parameters=[PREFER_PARAMETER, WAIT_QUERY_PARAMETER])
@blp.problems(401, 404, 422, 503)
def get_recommendation(job_id: str) -> Response:
    """Report a job's state, with its result when done or its problem when failed; wait for it on request."""
    wait_s = requested_wait_s(query=True)
    jobs = runtime().jobs
    stored = jobs.get_stored(job_id)
    if stored is None:
        raise NotFound(f"no job {job_id!r}: the id is unknown or its result has expired")
    if wait_s is not None:
        stored = jobs.wait_stored(job_id, timeout_s=wait_s, known=stored) or stored
    return waited(_job_response(job_id, stored, 200), wait_s)


def _job_response(job_id: str, stored: Stored, status: int) -> Response:
    # The stored JSON is the answer's body as it is: no decoding and encoding of a large result.
    response = Response(stored[1], status=status, mimetype="application/json")
    response.headers["Location"] = url_for("recommendations.get_recommendation", job_id=job_id)
    retry_after = retry_after_s(stored, expected_s=float(current_app.config["RECOMMENDATION_EXPECTED_S"]))
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response
