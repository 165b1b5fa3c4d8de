"""POST /v1/reports: a budget review, inline when small, else queued; GET /v1/reports/{id} polls it."""

from __future__ import annotations

import json
from typing import Any

from flask import Response, current_app, request, url_for
from marshmallow import ValidationError
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
from service.reports import MEDIA_TYPES, render_review
from service.schemas.envelopes import ReviewJobStatusSchema
from workers.review.review import run_review
from workers.schemas.review import FORMATS, ReviewRequestSchema
from workers.schemas.review_result import ReviewResultSchema
from workers.schemas.reviews import build_review, review_digest
from workers.tasks.jobs import DONE, TERMINAL, Stored, submit_stored
from workers.tasks.reconcile import replay_of
from workers.tasks.records import stored_outcome
from workers.tasks.review import REVIEW_TASK
from workers.tasks.runtime import runtime

blp = ApiBlueprint("reports", __name__, url_prefix="/v1",
                   description="Review a team's planned jobs against a budget.")
reports_bp = blp
# Reviews of up to this many jobs are answered in the request; larger ones run as a job (202 + poll).
INLINE_MAX_JOBS = 5
# A report page runs nothing and fetches nothing: its CSS and SVG charts are inline.
HTML_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'"

# The OpenAPI description of the answers (one status, several media types: beyond alt_response).
_JOB = ReviewJobStatusSchema
# The documents other than JSON; chosen by the request's `format`, or by Accept when it names one of them.
_DOCUMENTS = {MEDIA_TYPES[fmt].split(";")[0]: {"schema": {"type": "string", "description": f"the review as {fmt}"}}
              for fmt in FORMATS if fmt != "json"}
_ACCEPT = {"in": "header", "name": "Accept", "required": False, "schema": {"type": "string"},
           "description": "text/csv, text/markdown or text/html choose that document (as `format` does); "
                          "anything else, JSON"}
_LOCATION = {"Location": {"description": "the review job's URL", "schema": {"type": "string"}}}
_CREATE_DOC = {"responses": {
    "200": {"description": "The review, in the requested format", "content": {
        "application/json": {"schema": ReviewResultSchema}, **_DOCUMENTS}},
    "202": {"description": "A large review, queued as a job (with `Prefer: wait=N`: not done within N s)",
            "headers": {**_LOCATION, **WAIT_HEADERS}, "content": {"application/json": {"schema": _JOB}},
            "links": {"GetReport": {"operationRef": "#/paths/~1v1~1reports~1{job_id}/get",
                                    "parameters": {"job_id": "$response.body#/id"},
                                    "description": "The review job: its progress, and the review once done"}}},
}, "parameters": [PREFER_PARAMETER, _ACCEPT]}
_GET_DOC = {
    "parameters": [{"in": "query", "name": "format", "required": False,
                    "schema": {"type": "string", "enum": list(FORMATS), "default": "json"}},
                   PREFER_PARAMETER, WAIT_QUERY_PARAMETER, _ACCEPT],
    "responses": {"200": {"description": "The job (JSON), or once done the review in the requested format",
                          "headers": WAIT_HEADERS,
                          "content": {"application/json": {"schema": _JOB}, **_DOCUMENTS}}},
}


@blp.route("/reports", methods=["POST"])
@blp.arguments(ReviewRequestSchema)
@blp.doc(**_CREATE_DOC)
@blp.problems(400, 401, 413, 415, 422, 503)
def create_report(data: dict[str, Any]) -> Any:
    """Review the jobs against the budget: 200 with the report when small, 202 with a job when large."""
    data = {**data, "format": chosen_format(data["format"])}
    review, catalog = build_review(data), runtime().catalog.get()
    if len(review.items) <= int(current_app.config.get("REPORT_INLINE_MAX_JOBS", INLINE_MAX_JOBS)):
        return document(ReviewResultSchema().dump(run_review(review, catalog)), data["format"])
    rt = runtime()
    job_id = "review-" + review_digest(data, catalog_version=catalog.version)
    args = (job_id, data, True)  # True: loaded here, so the workers build its jobs without the schema
    stored = submit_stored(rt.jobs, lambda: rt.queue.enqueue(REVIEW_TASK, *args), job_id=job_id,
                           ttl_s=int(current_app.config["RESULT_TTL_S"]), replay=replay_of(REVIEW_TASK, *args),
                           prepared=rt.queue.prepare(REVIEW_TASK, *args),
                           extra={"progress": {"done": 0, "total": len(review.items)}})
    wait_s = requested_wait_s()
    if wait_s is not None:
        stored = rt.jobs.wait_stored(job_id, timeout_s=wait_s, known=stored) or stored
        if stored[0] == DONE:
            answer = _waited(finished_document(stored, data["format"]), wait_s)
            answer.headers["Location"] = url_for("reports.get_report", job_id=job_id)
            return answer
    response = job_answer(job_id, stored, 200 if wait_s is not None and stored[0] in TERMINAL else 202)
    if data["format"] != "json":  # where the document will be, once the job is done
        response.headers["Link"] = f'<{response.headers["Location"]}?format={data["format"]}>; rel="alternate"'
    return waited(response, wait_s)


@blp.route("/reports/<string:job_id>", methods=["GET"])
@blp.doc(**_GET_DOC)
@blp.problems(401, 404, 422, 503)
def get_report(job_id: str) -> Any:
    """Report a review job's state and progress; once done, `?format=csv|markdown|html` gives the document."""
    fmt = request.args.get("format", "json")
    if fmt not in FORMATS:
        raise ValidationError({"format": [f"must be one of {', '.join(FORMATS)}"]})
    fmt = chosen_format(fmt)
    wait_s = requested_wait_s(query=True)
    jobs = runtime().jobs
    stored = jobs.get_stored(job_id) if job_id.startswith("review-") else None
    if stored is None:
        raise NotFound(f"no review {job_id!r}: the id is unknown or its report has expired")
    if wait_s is not None:
        stored = jobs.wait_stored(job_id, timeout_s=wait_s, known=stored) or stored
    if stored[0] == DONE and fmt != "json":
        return _waited(finished_document(stored, fmt), wait_s)
    return waited(job_answer(job_id, stored, 200), wait_s)


def chosen_format(requested: str) -> str:
    """Return the format to answer in: the one asked for by name, else the document Accept prefers, else json."""
    if requested != "json":
        return requested
    by_type = {MEDIA_TYPES[fmt].split(";")[0]: fmt for fmt in FORMATS}
    best = request.accept_mimetypes.best_match(list(by_type), default="application/json")
    return by_type.get(best or "", "json")


def document(payload: dict[str, Any], fmt: str) -> Any:
    """Answer a dumped review in the requested format (JSON as the API's JSON)."""
    if fmt == "json":
        return payload, 200
    response = Response(render_review(payload, fmt), status=200, mimetype=MEDIA_TYPES[fmt].split(";")[0])
    if fmt == "html":
        response.headers["Content-Security-Policy"] = HTML_POLICY
    return response


def finished_document(stored: Stored, fmt: str) -> Any:
    """Answer a done review's document in `fmt`; JSON as it is stored (a 1,000-job review is 14 MB)."""
    result = stored_outcome(stored)
    if fmt == "json":
        return Response(result, status=200, mimetype="application/json")
    return document(json.loads(result), fmt)


def job_answer(job_id: str, stored: Stored, status: int) -> Response:
    """Answer a review job as stored, with its URL, and while it runs when to ask again (from its pace).

    A finished job's record (its result inside) is sent as it is, never decoded.
    """
    head = json.loads(stored[1]) if stored[0] not in TERMINAL else None
    response = Response(stored[1], status=status, mimetype="application/json")
    response.headers["Location"] = url_for("reports.get_report", job_id=job_id)
    if head is not None:
        progress = head.get("progress") or {}
        per_job_s = float(current_app.config["REVIEW_EXPECTED_S_PER_JOB"])
        retry_after = retry_after_s(stored, expected_s=per_job_s * int(progress.get("total", 1)))
        if retry_after is not None:
            response.headers["Retry-After"] = str(retry_after)
    return response



def _waited(answer: Any, wait_s: float | None) -> Response:
    """Mark a document answer as honouring the wait."""
    response: Response = current_app.make_response(answer)
    return waited(response, wait_s)
