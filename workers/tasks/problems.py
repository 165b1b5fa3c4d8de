"""Problem documents (RFC 9457) as plain dicts: what a failed job stores and what the API answers.

The map:

    HTTPException (400, 401, 404, 405, 413, 415, ...)   its status
    webargs/marshmallow validation (422)                 `errors: {"training.batch_size": [...]}`
    marshmallow ValidationError (422)                    the same
    workers.sizing.errors.SizingError (422)              `errors: {field: [reason]}`
    Redis, kombu and catalog-store connection errors     503
    anything else                                        500, no internals

service/problems.py turns these into responses and installs them as the app's error handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from kombu.exceptions import OperationalError as KombuOperationalError
from marshmallow import ValidationError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from werkzeug.exceptions import HTTPException

from catalog.store import CatalogStoreError
from workers.schemas.specs import flatten_errors
from workers.sizing.errors import SizingError

# webargs nests its messages under the request location; a field path should not show it.
_LOCATIONS = ("json", "query", "querystring", "view_args", "form", "headers", "cookies", "files")
# What a lost connection to Redis looks like through redis-py and through kombu (Celery).
UNREACHABLE = (RedisConnectionError, RedisTimeoutError, KombuOperationalError, CatalogStoreError)
INVALID_INPUT = "urn:gpugauge:problem:invalid-input"
UNAVAILABLE = "urn:gpugauge:problem:unavailable"


class Unavailable(Exception):
    """A dependency (Redis, the workers) cannot serve now; the client should retry later."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def problem(status: int, *, detail: str | None = None, title: str | None = None,
            type_: str = "about:blank", **extensions: Any) -> dict[str, Any]:
    """Build a problem document; `title` defaults to the status phrase."""
    doc: dict[str, Any] = {"type": type_, "title": title or HTTPStatus(status).phrase, "status": status}
    if detail:
        doc["detail"] = detail
    doc.update(extensions)
    return doc


def validation_problem(errors: Mapping[str, list[str]]) -> dict[str, Any]:
    """Return the 422 problem for flat per-field errors."""
    fields = ", ".join(sorted(errors)) or "the body"
    return problem(422, type_=INVALID_INPUT, title="Invalid input",
                   detail=f"invalid value for {fields}", errors=dict(errors))


def problem_for(error: BaseException) -> dict[str, Any]:
    """Return the problem document that describes `error` (no internals for unexpected ones)."""
    if isinstance(error, SizingError):
        return validation_problem({error.field: [error.reason]})
    if isinstance(error, ValidationError):
        return validation_problem(_field_errors(error.messages))
    if isinstance(error, Unavailable):
        return problem(503, type_=UNAVAILABLE, detail=error.detail)
    if isinstance(error, UNREACHABLE):
        return problem(503, type_=UNAVAILABLE, detail="Redis (jobs, catalog) is unreachable; retry shortly")
    if isinstance(error, HTTPException):
        return http_problem(error)
    return problem(500, detail="an internal error occurred; it has been logged")


def http_problem(error: HTTPException) -> dict[str, Any]:
    status = error.code or 500
    data = getattr(error, "data", None) or {}
    messages = data.get("messages") or data.get("errors")
    if status == 422 and messages:
        return validation_problem(_field_errors(messages))
    if status == 400 and messages:
        return problem(400, detail=_json_error_detail(getattr(error, "exc", None)))
    detail = error.description if status < 500 else None
    return problem(status, detail=detail)


def _field_errors(messages: Any) -> dict[str, list[str]]:
    if isinstance(messages, dict) and messages and set(messages) <= set(_LOCATIONS):
        merged: dict[str, list[str]] = {}
        for location_messages in messages.values():
            for path, reasons in flatten_errors(location_messages).items():
                merged.setdefault(path, []).extend(reasons)
        return merged
    return flatten_errors(messages)


def _json_error_detail(exc: object) -> str:
    # The decoder's own message ("Expecting value: line 1 column 2 (char 1)") shows where, not internals.
    return f"the body is not valid JSON: {exc}" if exc else "the body is not valid JSON"
