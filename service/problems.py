"""Every error answered as an RFC 9457 problem+json response; the documents come from workers/tasks/problems.py.

The map:

    HTTPException (400, 401, 404, 405, 413, 415, ...)   its status, its headers (Allow, ...) kept
    webargs/marshmallow validation (422)                 `errors: {"training.batch_size": [...]}`
    marshmallow ValidationError raised in a view (422)   the same
    workers.sizing.errors.SizingError (422)              `errors: {field: [reason]}`
    Redis, kombu and catalog-store connection errors     503 with Retry-After
    anything else                                        500, logged with a request id, no internals

`problem_for` gives the same documents as plain dicts, for failed jobs to store.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, current_app, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from workers.sizing.errors import SizingError
from workers.tasks.problems import UNREACHABLE, Unavailable, http_problem, problem_for

log = logging.getLogger(__name__)

PROBLEM_MEDIA_TYPE = "application/problem+json"
RETRY_AFTER_S = 5


def problem_response(doc: Mapping[str, Any], *, headers: Mapping[str, str] | None = None) -> Response:
    """Serialise a problem document as an application/problem+json response."""
    body = current_app.json.dumps(doc)
    response = Response(body, status=int(doc["status"]), mimetype=PROBLEM_MEDIA_TYPE)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def handle_http_exception(error: HTTPException) -> Response:
    """Answer an HTTPException as problem+json, keeping its headers (Allow, Retry-After, ...)."""
    doc = http_problem(error)
    headers = {k: v for k, v in error.get_response().headers.items()
               if k.lower() not in ("content-type", "content-length")}
    data = getattr(error, "data", None) or {}
    headers.update(data.get("headers") or {})
    if doc["status"] >= 500:
        log.error("HTTP %s on %s %s", doc["status"], request.method, request.path)
    return problem_response({**doc, "instance": request.path}, headers=headers)


def register_error_handlers(app: Flask) -> None:
    """Install the handlers that turn every non-HTTP error into problem+json."""
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(SizingError, _handle_known)
    app.register_error_handler(ValidationError, _handle_known)
    app.register_error_handler(Unavailable, _handle_unavailable)
    for error_class in UNREACHABLE:
        app.register_error_handler(error_class, _handle_unavailable)
    app.register_error_handler(Exception, _handle_unexpected)


def _handle_known(error: Exception) -> Response:
    return problem_response({**problem_for(error), "instance": request.path})


def _handle_unavailable(error: Exception) -> Response:
    log.warning("unavailable on %s %s: %s", request.method, request.path, error)
    return problem_response({**problem_for(error), "instance": request.path},
                            headers={"Retry-After": str(RETRY_AFTER_S)})


def _handle_unexpected(error: Exception) -> Response:
    request_id = uuid.uuid4().hex  # ours, not a client's header: it goes into the logs
    log.exception("unhandled error on %s %s (request_id=%s)", request.method, request.path, request_id)
    return problem_response({**problem_for(error), "instance": request.path, "request_id": request_id})


