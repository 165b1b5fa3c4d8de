"""What the Slack command needs at run time, kept in the app's extensions (built by service/slack/install.py).

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from flask import current_app

from workers.slack.blocks import Message
from workers.slack.delivery import WebhookFactory
from workers.slack.store import SlackJobs

EXTENSION = "gpugauge.slack"

Answerer = Callable[[Mapping[str, Any]], Message]


class Verifier(Protocol):
    """What checks a request's signature (service.slack.verify.RequestVerifier)."""

    def check(self, body: bytes, headers: Mapping[str, str]) -> Any: ...


@dataclass(frozen=True)
class SlackSettings:
    """The signature check, the job store, how answers are made and where they may be posted."""

    verifier: Verifier  # service.slack.verify.RequestVerifier
    jobs: SlackJobs
    webhook_factory: WebhookFactory
    answerer: Answerer | None  # None: the real sizing and ranking (workers.tasks.slack.answer_command)
    response_url_prefixes: tuple[str, ...]


def slack_settings() -> SlackSettings:
    """Return the current app's Slack settings."""
    settings: SlackSettings = current_app.extensions[EXTENSION]
    return settings
