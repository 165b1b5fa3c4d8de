"""API keys: `Authorization: Bearer <key>` checked against GPUGAUGE_API_KEYS (keys or their sha256)."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Iterable

from flask import current_app, request
from werkzeug.datastructures import WWWAuthenticate
from werkzeug.exceptions import Unauthorized

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
EXTENSION = "gpugauge.api_key_hashes"


def api_key_hashes(setting: str | Iterable[str] | None) -> frozenset[str]:
    """Return the sha256 hex digests the setting allows (a comma-separated string or a list)."""
    entries = setting.split(",") if isinstance(setting, str) else list(setting or ())
    keys = [str(e).strip() for e in entries if str(e).strip()]
    return frozenset(k.lower() if _SHA256_HEX.fullmatch(k.lower()) else _sha256(k) for k in keys)


def require_api_key() -> None:
    """Refuse the request with 401 unless the API is open or it carries an allowed key."""
    allowed: frozenset[str] = current_app.extensions[EXTENSION]
    if not allowed:
        return
    presented = presented_key_hash()
    # Compare against every allowed digest so the time taken does not tell which one matched.
    matched = [hmac.compare_digest(presented, digest) for digest in allowed]
    if not any(matched):
        raise Unauthorized("send a valid API key as `Authorization: Bearer <key>`",
                           www_authenticate=WWWAuthenticate("bearer", {"realm": "gpugauge"}))


def presented_key_hash() -> str:
    """Return the sha256 of the request's bearer key, or "" when it carries none."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return _sha256(token.strip()) if scheme.lower() == "bearer" and token.strip() else ""


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
