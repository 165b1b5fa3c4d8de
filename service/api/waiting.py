"""Waiting for a job in one request: `Prefer: wait=N` (RFC 7240) or `?wait=N`, and a fitting Retry-After.

A request that asks to wait is answered when its job ends (the job registry wakes it: a Redis list the
worker pushes to, or a Condition in the embedded mode) or after N seconds, whichever comes first,
capped at JOB_WAIT_MAX_S. The answer then carries `Preference-Applied: wait=N` with the seconds
honoured. A job still running is answered with `Retry-After` worked out from what the job has left
(its progress, else the expected time of its kind), in whole seconds as HTTP has it: 0 for jobs
expected within half a second.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from flask import Response, current_app, request
from marshmallow import ValidationError

from workers.tasks.records import TERMINAL, Stored

# Documented once, used by each route that takes the preference.
PREFER_PARAMETER: dict[str, Any] = {
    "in": "header", "name": "Prefer", "required": False, "schema": {"type": "string"},
    "description": "RFC 7240 `wait=N`: answer when the job is done or failed, or after N seconds "
                   "(at most the server's JOB_WAIT_MAX_S, 20 by default), whichever is first; the answer "
                   "says `Preference-Applied: wait=N`. Woken by the job's end, not by polling.",
    "example": "wait=10",
}
WAIT_QUERY_PARAMETER: dict[str, Any] = {
    "in": "query", "name": "wait", "required": False,
    "schema": {"type": "number", "minimum": 0, "maximum": 3600},
    "description": "The same as `Prefer: wait=N`, for clients that cannot set a header; it wins over "
                   "the header when both are given.",
}
WAIT_HEADERS: dict[str, Any] = {
    "Preference-Applied": {"description": "`wait=N` when the request asked to wait: the seconds honoured",
                           "schema": {"type": "string"}},
    "Retry-After": {"description": "While the job runs: seconds until it is expected to end "
                                   "(0: within half a second)", "schema": {"type": "integer"}},
}


def requested_wait_s(*, query: bool = False) -> float | None:
    """Return the seconds this request asks to wait (capped), or None when it does not ask.

    `?wait=N` (when `query`) must be a number in [0, 3600], else 422; a malformed `Prefer` is ignored,
    as RFC 7240 has servers do with preferences they cannot honour.
    """
    cap = float(current_app.config["JOB_WAIT_MAX_S"])
    raw = request.args.get("wait") if query else None
    if raw is not None:
        try:
            asked = float(raw)
        except ValueError:
            asked = math.nan
        if not 0 <= asked <= 3600:
            raise ValidationError({"wait": ["must be a number of seconds from 0 to 3600"]})
        return min(asked, cap)
    asked_prefer = prefer_wait(request.headers.getlist("Prefer"))
    return None if asked_prefer is None else min(float(asked_prefer), cap)


def prefer_wait(values: list[str]) -> int | None:
    """Return the first `wait` preference's delta-seconds in the Prefer header fields, else None."""
    for value in values:
        for preference in value.split(","):
            token, _, rest = preference.split(";")[0].strip().partition("=")
            if token.strip().lower() != "wait":
                continue
            seconds = rest.strip().strip('"')
            return int(seconds) if seconds.isdigit() else None  # the first instance counts (RFC 7240 §2)
    return None


def waited(response: Response, wait_s: float | None) -> Response:
    """Mark an answer as honouring a wait (or as one that depends on the Prefer header)."""
    response.headers.add("Vary", "Prefer")
    if wait_s is not None:
        response.headers["Preference-Applied"] = f"wait={math.floor(wait_s)}"
    return response


def retry_after_s(stored: Stored, *, expected_s: float) -> int | None:
    """Return the whole seconds until a job still in flight should be asked about again, or None if it ended.

    A job with progress ({done, total}) extrapolates its own pace; otherwise it is expected to take
    `expected_s` from its creation.
    """
    status, body = stored
    if status in TERMINAL:
        return None
    record = json.loads(body)
    now = datetime.now(UTC)
    age_s = (now - datetime.fromisoformat(record["created_at"])).total_seconds()
    progress = record.get("progress") or {}
    done, total = int(progress.get("done", 0)), int(progress.get("total", 0))
    if done > 0 and total > done:
        started = datetime.fromisoformat(record.get("started_at") or record["created_at"])
        pace_s = (now - started).total_seconds() / done
        return max(round(pace_s * (total - done)), 0)
    return max(round(expected_s - age_s), 0)
