"""gunicorn's own refusals (a request line over 8,190 bytes, too many headers, a malformed request) as problem+json.

gunicorn answers what it refuses before the app sees it, with an HTML page (gunicorn.util.write_error);
a client of the JSON API then gets a body it cannot parse. `install` (a post_worker_init hook, so it
runs in each worker process, never at import) swaps that writer for one that writes RFC 9457 problem+json
with the same status and reason.
"""

from __future__ import annotations

import json
from typing import Any

from gunicorn import util

from workers.tasks.problems import problem

PROBLEM_MEDIA_TYPE = "application/problem+json"


def write_problem(sock: Any, status_int: int, reason: str, mesg: str) -> None:
    """Write gunicorn's refusal as a problem+json response and close (gunicorn closes the socket after)."""
    doc = problem(int(status_int), title=reason, detail=_detail(int(status_int), mesg))
    body = json.dumps(doc).encode()
    head = (f"HTTP/1.1 {int(status_int)} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_MEDIA_TYPE}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode("latin-1")
    util.write_nonblock(sock, head + body)


def _detail(status: int, mesg: str) -> str:
    if status == 414:
        return "the request line (method, path and query) is over 8,190 bytes; send the filters in fewer bytes"
    if status == 431:
        return "too many request headers, or one too large"
    return " ".join(str(mesg).split())[:200] or "the request could not be read"


def install(worker: Any = None) -> None:
    """Make this gunicorn process write its refusals as problem+json (gunicorn's post_worker_init hook)."""
    util.write_error = write_problem
