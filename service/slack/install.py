"""Builds the Slack settings from the app's config when the blueprint registers (keys: workers/slack/settings.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask import Flask
from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from slack_sdk.signature import Clock

from service.slack.verify import RequestVerifier
from workers.slack.delivery import webhook_client
from workers.slack.settings import EXTENSION, SlackSettings
from workers.slack.store import JOB_TTL_S, KEY_PREFIX, KeyValue, MemoryKeyValue, SlackJobs

SECRET_ENV = "GPUGAUGE_SLACK_SIGNING_SECRET"
DEFAULT_RESPONSE_URL_PREFIXES = ("https://hooks.slack.com/",)


def install(app: Flask) -> None:
    """Build the Slack settings from `app.config` and keep them in `app.extensions`."""
    config = app.config
    jobs = SlackJobs(_key_value(config.get("REDIS_URL")), ttl_s=int(config.get("SLACK_JOB_TTL_S", JOB_TTL_S)),
                     prefix=str(config.get("SLACK_KEY_PREFIX", KEY_PREFIX)))
    clock = config.get("SLACK_CLOCK") or Clock()
    remember = jobs.remember if config.get("SLACK_REPLAY_CHECK", True) else None
    app.extensions[EXTENSION] = SlackSettings(
        verifier=RequestVerifier(_signing_secret(config), clock=clock, remember=remember),
        jobs=jobs,
        webhook_factory=config.get("SLACK_WEBHOOK_FACTORY") or webhook_client,
        answerer=config.get("SLACK_ANSWERER"),
        response_url_prefixes=_prefixes(config.get("SLACK_RESPONSE_URL_PREFIXES")),
    )


def _signing_secret(config: Mapping[str, Any]) -> str | None:
    secret = config.get("SLACK_SIGNING_SECRET")
    if secret is None or isinstance(secret, str):
        return secret
    # Flask's from_prefixed_env parses values as JSON, so an all-digit secret arrives as a number;
    # the environment still holds the exact characters.
    return os.environ.get(SECRET_ENV)


def _prefixes(value: object) -> tuple[str, ...]:
    if not value:
        return DEFAULT_RESPONSE_URL_PREFIXES
    items = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    return tuple(str(p).strip() for p in items if str(p).strip())


def _key_value(redis_url: str | None) -> KeyValue:
    if not redis_url:
        return MemoryKeyValue()
    # One quick retry: a command must be answered within Slack's 3 s even when Redis is down.
    return Redis.from_url(redis_url, socket_connect_timeout=0.5, socket_timeout=1.0,
                          retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1), health_check_interval=25)
