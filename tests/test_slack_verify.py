"""Slack's signature check: real signatures, stale and replayed requests, and hostile headers."""

from __future__ import annotations

import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from slack_sdk.signature import Clock, SignatureVerifier

from service.slack.verify import MAX_AGE_S, RequestVerifier

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # Slack's documented example secret shape, not a real one
NOW = 1_700_000_000
BODY = b"command=%2Fgpugauge&text=resnet50+batch%3D64&response_url=https%3A%2F%2Fhooks.slack.com%2Fx"


class FixedClock(Clock):
    def __init__(self, now: float = NOW) -> None:
        self.at = now

    def now(self) -> float:
        return self.at


def signed(body: bytes = BODY, *, timestamp: int = NOW, secret: str = SECRET) -> dict[str, str]:
    signature = SignatureVerifier(secret, clock=FixedClock()).generate_signature(
        timestamp=str(timestamp), body=body)
    assert signature is not None
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature}


class Memory:
    """A SET NX stand-in: remembers keys, answers True the first time only."""

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def __call__(self, key: str) -> bool:
        if key in self.keys:
            return False
        self.keys.add(key)
        return True


def verifier(**kwargs: object) -> RequestVerifier:
    return RequestVerifier(SECRET, clock=FixedClock(), **kwargs)  # type: ignore[arg-type]


def test_a_request_signed_with_the_secret_is_valid() -> None:
    assert verifier().check(BODY, signed()).valid


def test_header_names_are_matched_whatever_their_case() -> None:
    headers = {k.lower(): v for k, v in signed().items()}
    assert verifier().check(BODY, headers).valid


def test_a_request_signed_with_another_secret_is_refused() -> None:
    verdict = verifier().check(BODY, signed(secret="another-secret"))
    assert not verdict.valid and verdict.reason == "signature does not match"


def test_a_changed_body_is_refused() -> None:
    assert not verifier().check(BODY.replace(b"64", b"65"), signed()).valid


@pytest.mark.parametrize("age_s", [MAX_AGE_S + 1, -(MAX_AGE_S + 1), 10**6])
def test_a_timestamp_more_than_five_minutes_away_is_refused(age_s: int) -> None:
    headers = signed(timestamp=NOW - age_s)
    verdict = verifier().check(BODY, headers)
    assert not verdict.valid and "5 minutes" in verdict.reason


def test_a_timestamp_exactly_five_minutes_old_is_still_accepted() -> None:
    assert verifier().check(BODY, signed(timestamp=NOW - MAX_AGE_S)).valid


@pytest.mark.parametrize("timestamp", ["abc", "", " 1700000000", "1.7e9", "-5", "9" * 50, "١٧٠٠٠٠٠٠٠٠"])
def test_a_non_numeric_timestamp_is_refused_without_raising(timestamp: str) -> None:
    headers = {**signed(), "X-Slack-Request-Timestamp": timestamp}
    assert not verifier().check(BODY, headers).valid


@pytest.mark.parametrize("signature", ["", "v0=", "v1=" + "0" * 64, "v0=" + "z" * 64, "garbage"])
def test_a_malformed_signature_is_refused(signature: str) -> None:
    headers = {**signed(), "X-Slack-Signature": signature}
    assert not verifier().check(BODY, headers).valid


@pytest.mark.parametrize("missing", ["X-Slack-Request-Timestamp", "X-Slack-Signature"])
def test_a_missing_header_is_refused(missing: str) -> None:
    headers = {k: v for k, v in signed().items() if k != missing}
    verdict = verifier().check(BODY, headers)
    assert not verdict.valid and verdict.reason == "signature headers missing"


def test_a_body_that_is_not_utf8_is_refused() -> None:
    body = b"text=\xff\xfe"
    headers = {"X-Slack-Request-Timestamp": str(NOW), "X-Slack-Signature": "v0=" + "0" * 64}
    assert not verifier().check(body, headers).valid


@pytest.mark.parametrize("secret", [None, "", "   "])
def test_without_a_signing_secret_every_request_is_refused(secret: str | None) -> None:
    verdict = RequestVerifier(secret, clock=FixedClock()).check(BODY, signed())
    assert not verdict.valid and "GPUGAUGE_SLACK_SIGNING_SECRET" in verdict.reason


def test_the_same_signed_request_twice_is_refused_the_second_time() -> None:
    check = verifier(remember=Memory()).check
    assert check(BODY, signed()).valid
    second = check(BODY, signed())
    assert not second.valid and second.reason == "request replayed"


def test_a_new_request_after_another_is_not_taken_for_a_replay() -> None:
    check = verifier(remember=Memory()).check
    assert check(BODY, signed()).valid
    other = BODY + b"&trigger_id=2"
    assert check(other, signed(other)).valid


def test_a_stale_replay_is_refused_as_stale_before_the_store_is_asked() -> None:
    memory = Memory()
    clock = FixedClock()
    check = RequestVerifier(SECRET, clock=clock, remember=memory).check
    assert check(BODY, signed()).valid
    clock.at = NOW + MAX_AGE_S + 1
    assert check(BODY, signed()).reason.startswith("timestamp older")
    assert len(memory.keys) == 1


def test_when_the_replay_store_is_down_a_valid_request_still_passes_and_the_log_holds_no_secret(
        caplog: pytest.LogCaptureFixture) -> None:
    def down(key: str) -> bool:
        raise RedisConnectionError("Connection refused")

    headers = signed()
    with caplog.at_level(logging.DEBUG):
        assert verifier(remember=down).check(BODY, headers).valid
    assert "replay check skipped" in caplog.text
    assert SECRET not in caplog.text and headers["X-Slack-Signature"] not in caplog.text
