"""Slack's request signature (v0, HMAC-SHA256 over the raw body), checked without ever raising.

slack_sdk's SignatureVerifier does the HMAC and the 5-minute window; this wrapper adds what it
lacks (ecosystem-notes §0.9 and §3): a missing, non-numeric or absurd timestamp and a missing or
malformed signature are refusals rather than a ValueError (a 500 for whoever sends them), and a
request seen before is refused when given a `remember` (a SET NX for the 5 minutes a signature lives).
The caller must hash the raw body before touching `request.form`, which empties it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from redis.exceptions import RedisError
from slack_sdk.signature import Clock, SignatureVerifier

from workers.slack.store import MAX_AGE_S

log = logging.getLogger(__name__)

# Slack refuses requests older than five minutes and asks apps to do the same
# (docs.slack.dev/authentication/verifying-requests-from-slack, "Validating a request").
_TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
_SIGNATURE = re.compile(r"^v0=[0-9a-f]{64}$")


# Remember a key for MAX_AGE_S seconds; return True when it was not already remembered (a SET NX).
Remember = Callable[[str], bool]


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: valid or not, and a reason safe to log (never the secret or a signature)."""

    valid: bool
    reason: str


class RequestVerifier:
    """Check Slack's signature headers against the raw body, refusing stale and replayed requests."""

    def __init__(self, signing_secret: str | None, *, clock: Clock | None = None,
                 remember: Remember | None = None) -> None:
        self._verifier = (SignatureVerifier(signing_secret, clock=clock or Clock())
                          if signing_secret and signing_secret.strip() else None)
        self._clock = clock or Clock()
        self._remember = remember

    def check(self, body: bytes, headers: Mapping[str, str]) -> Verdict:
        """Return whether the request is Slack's, fresh and new; never raise for what a sender controls."""
        if self._verifier is None:
            return Verdict(False, "no signing secret is configured (GPUGAUGE_SLACK_SIGNING_SECRET)")
        lowered = {name.lower(): value for name, value in headers.items()}
        timestamp = lowered.get("x-slack-request-timestamp")
        signature = lowered.get("x-slack-signature")
        if not timestamp or not signature:
            return Verdict(False, "signature headers missing")
        if not _TIMESTAMP.match(timestamp):
            return Verdict(False, "timestamp is not a number")
        if not _SIGNATURE.match(signature):
            return Verdict(False, "signature is malformed")
        if abs(self._clock.now() - int(timestamp)) > MAX_AGE_S:
            return Verdict(False, "timestamp older than 5 minutes (or in the future)")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return Verdict(False, "body is not UTF-8")
        if not self._verifier.is_valid(body=text, timestamp=timestamp, signature=signature):
            return Verdict(False, "signature does not match")
        remember = self._remember
        if remember is not None and not first_sighting(remember, timestamp=timestamp, signature=signature):
            return Verdict(False, "request replayed")
        return Verdict(True, "ok")


def first_sighting(remember: Remember, *, timestamp: str, signature: str) -> bool:
    """Remember a request for as long as its timestamp is accepted; return False when seen before."""
    key = "seen:" + hashlib.sha256(f"{timestamp}:{signature}".encode()).hexdigest()
    try:
        return remember(key)
    except (RedisError, OSError) as exc:  # store down: origin and freshness still hold, so let it in
        log.warning("slack replay check skipped, store unavailable: %s", type(exc).__name__)
        return True
