"""What the Slack command needs at run time, built from the app's config when its blueprint registers.

Config keys (the environment sets them with the GPUGAUGE_ prefix, e.g. GPUGAUGE_SLACK_SIGNING_SECRET):
    SLACK_SIGNING_SECRET          the app's signing secret; absent: every command is refused (401)
    SLACK_RESPONSE_URL_PREFIXES   where answers may be posted (default https://hooks.slack.com/),
                                  a list or a comma-separated string
    SLACK_REPLAY_CHECK            refuse a signed request seen in the last 5 minutes (default true)
    SLACK_JOB_TTL_S               how long a command waits for its answer (default 1800, Slack's limit)
    SLACK_KEY_PREFIX              where its keys live in Redis (default gpugauge:slack:)
Tests also pass objects: SLACK_CLOCK (a slack_sdk Clock), SLACK_WEBHOOK_FACTORY (url -> sender),
SLACK_ANSWERER (command record -> message). Jobs live in Redis at REDIS_URL, else in memory.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app
from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry
from slack_sdk.signature import Clock

from service.slack.blocks import Message
from service.slack.delivery import WebhookFactory, webhook_client
from service.slack.store import JOB_TTL_S, KEY_PREFIX, KeyValue, MemoryKeyValue, SlackJobs
from service.slack.verify import RequestVerifier

EXTENSION = "gpugauge.slack"
SECRET_ENV = "GPUGAUGE_SLACK_SIGNING_SECRET"
DEFAULT_RESPONSE_URL_PREFIXES = ("https://hooks.slack.com/",)

Answerer = Callable[[Mapping[str, Any]], Message]


@dataclass(frozen=True)
class SlackSettings:
    """The signature check, the job store, how answers are made and where they may be posted."""

    verifier: RequestVerifier
    jobs: SlackJobs
    webhook_factory: WebhookFactory
    answerer: Answerer | None  # None: the real sizing and ranking (service.slack.tasks.answer_command)
    response_url_prefixes: tuple[str, ...]


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


def slack_settings() -> SlackSettings:
    """Return the current app's Slack settings."""
    settings: SlackSettings = current_app.extensions[EXTENSION]
    return settings


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
