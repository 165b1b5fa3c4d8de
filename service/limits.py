"""Rate limits with flask-limiter: per API key (else per client address), 429 problem+json with Retry-After.

Settings (environment: the GPUGAUGE_ prefix):
    RATE_LIMIT              limits per key on the /v1 API, flask-limiter syntax ("600/minute;20000/day");
                            empty: no limit
    SLACK_RATE_LIMIT        limits per client address on /slack/ (signature checks cost a hash each)
    RATE_LIMIT_ENABLED      false turns every limit off; absent: on, except in apps built with TESTING
    RATE_LIMIT_STORAGE_URI  where counters live; absent: REDIS_URL (shared by every gunicorn process and
                            pod), or memory:// in the embedded mode (one process)
    PROXY_HOPS              trusted reverse proxies in front of the app (X-Forwarded-For hops that
                            name the client); 0: the peer address is the client

/healthz, /readyz, /openapi.json and /docs are never limited. Counters are one window shared by all
routes of a key. When the counters' Redis is unreachable the limits fall back to each process's
memory (flask-limiter's in-memory fallback; Redis is tried again after 1, 2, 4 ... 32 s), so a Redis
outage never turns into 429s or 500s by itself: the routes that need Redis answer 503 on their own.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

from flask import Flask, Response, current_app, request
from flask_limiter import Limiter, RequestLimit
from redis.backoff import NoBackoff
from redis.retry import Retry
from werkzeug.middleware.proxy_fix import ProxyFix

from service.auth import EXTENSION as API_KEYS_EXTENSION
from service.problems import problem_response
from workers.tasks.problems import problem

EXTENSION = "gpugauge.limiter"
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/openapi.json"})
OPEN_PREFIXES = ("/docs",)
SLACK_PREFIX = "/slack/"
# A rate-limit check must not outwait the API's own fail-fast on a dead Redis (about half a second).
_STORAGE_TIMEOUT_S = 0.3


def init_limits(app: Flask) -> Limiter | None:
    """Install the limiter on `app` from its settings; return it, or None when limits are off."""
    hops = int(app.config["PROXY_HOPS"])
    if hops > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops)  # type: ignore[method-assign]
    enabled = app.config["RATE_LIMIT_ENABLED"]
    if enabled is None:
        enabled = not app.testing
    if not enabled:
        return None
    storage_uri = app.config["RATE_LIMIT_STORAGE_URI"] or app.config.get("REDIS_URL") or "memory://"
    options: dict[str, Any] = {}
    if not storage_uri.startswith("memory://"):
        options = {"socket_connect_timeout": _STORAGE_TIMEOUT_S, "socket_timeout": _STORAGE_TIMEOUT_S,
                   "retry": Retry(NoBackoff(), 0), "key_prefix": "gpugauge:limits"}
    limiter = Limiter(
        key_func=client_key,
        application_limits=[_limits_for_request],
        storage_uri=storage_uri,
        storage_options=options,
        strategy="fixed-window",
        # flask-limiter's own headers would go on every answer and rewrite a job's poll hint
        # (Retry-After: 1) to the window's end; only a 429 says when to come back (_breach_answer).
        headers_enabled=False,
        on_breach=_breach_answer,
        in_memory_fallback_enabled=True,
        swallow_errors=True,  # any other storage fault: let the request through, never a 500
        key_prefix="gpugauge",
    )
    limiter.request_filter(_exempt)
    limiter.init_app(app)
    app.extensions[EXTENSION] = limiter
    return limiter


def is_open_path() -> bool:
    """Say whether the request goes to a probe or the API's documents, which are never limited."""
    path = request.path
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES)


def client_key() -> str:
    """Name the caller: its API key's digest when it sent an allowed key, else its address.

    A rejected key counts against the address, so cycling made-up keys buys no fresh allowance.
    """
    address = request.remote_addr or "unknown"
    if request.path.startswith(SLACK_PREFIX):
        return "slack:" + address
    allowed: frozenset[str] = current_app.extensions.get(API_KEYS_EXTENSION, frozenset())
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if allowed and scheme.lower() == "bearer" and token.strip():
        digest = hashlib.sha256(token.strip().encode()).hexdigest()
        if any([hmac.compare_digest(digest, known) for known in allowed]):
            return "key:" + digest[:16]  # a prefix of the hash: counters never hold the key itself
    return "addr:" + address


def _breach_answer(limit: RequestLimit) -> Response:
    """Answer a request over its limit: 429 problem+json saying when the window reopens."""
    try:
        reset_at = int(limit.reset_at)
    except Exception:  # the counters' Redis went away between the check and now
        reset_at = int(time.time()) + int(limit.limit.get_expiry())
    retry_after_s = max(reset_at - int(time.time()), 1)
    doc = problem(429, detail=f"over the limit of {limit.limit}; retry in {retry_after_s} s",
                  instance=request.path)
    return problem_response(doc, headers={
        "Retry-After": str(retry_after_s), "X-RateLimit-Limit": str(limit.limit.amount),
        "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset_at)})


def _limits_for_request() -> str:
    config = current_app.config
    return str(config["SLACK_RATE_LIMIT"] if request.path.startswith(SLACK_PREFIX) else config["RATE_LIMIT"])


def _exempt() -> bool:
    return is_open_path() or not _limits_for_request().strip()
