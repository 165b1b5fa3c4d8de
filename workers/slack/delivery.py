"""Posting an answer to a command's response_url: once per job, retried when Slack may take it later.

The response_url is a bearer capability (anyone holding it can post in the user's channel for 30
minutes), so it is never logged: slack_sdk's WebhookClient logs its URL at DEBUG and on retries,
so it gets a logger of its own that is quiet below WARNING and redacts the URL from what remains.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from slack_sdk.errors import SlackRequestError
from slack_sdk.webhook import WebhookClient

from workers.slack.blocks import Message
from workers.slack.store import SlackJobs

log = logging.getLogger(__name__)

POST_TIMEOUT_S = 10
_SLACK_HOOK = re.compile(r"https?://hooks\.slack\.com/\S*")


class WebhookReply(Protocol):
    """What a post answers (slack_sdk's WebhookResponse)."""

    status_code: int
    body: str


class WebhookSender(Protocol):
    """Posts a message to one URL (slack_sdk's WebhookClient)."""

    def send(self, *, text: str, blocks: Any, response_type: str, replace_original: bool) -> WebhookReply:
        """Post the message."""
        ...


WebhookFactory = Callable[[str], WebhookSender]


class DeliveryError(Exception):
    """A post failed in a way a later retry may fix (no connection, Slack busy or rate-limiting)."""


class _Redact(logging.Filter):
    """Replace one URL, and anything shaped like a Slack hook, by a placeholder."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage().replace(self._url, "<response_url>")
        record.msg, record.args = _SLACK_HOOK.sub("<response_url>", text), ()
        return True


class _Forward(logging.Handler):
    """Hand records on to this module's logger, so they reach the app's handlers."""

    def emit(self, record: logging.LogRecord) -> None:
        log.handle(record)


def webhook_client(url: str) -> WebhookSender:
    """Return a WebhookClient for `url` whose own logging can never show the URL."""
    # A standalone Logger (not in logging's tree) at WARNING: WebhookClient's DEBUG branches are skipped.
    quiet = logging.Logger("gpugauge.slack.webhook", level=logging.WARNING)
    quiet.addFilter(_Redact(url))
    quiet.addHandler(_Forward())
    return WebhookClient(url, timeout=POST_TIMEOUT_S, logger=quiet)


def deliver(job_id: str, message: Message, *, jobs: SlackJobs, webhook_factory: WebhookFactory) -> bool:
    """Post `message` to the job's response_url once; return False when there is nothing to post to.

    Raise DeliveryError (releasing the claim) when a retry may succeed.
    """
    url = jobs.response_url(job_id)
    if url is None:
        log.warning("slack job %s: the response_url expired before the answer was ready", job_id)
        return False
    if not jobs.claim_delivery(job_id):
        log.info("slack job %s: answer already posted", job_id)
        return False
    try:
        reply = webhook_factory(url).send(text=message["text"], blocks=message["blocks"],
                                          response_type="ephemeral", replace_original=False)
    except (SlackRequestError, OSError) as error:
        jobs.release_delivery(job_id)
        raise DeliveryError(f"slack job {job_id}: post failed ({type(error).__name__})") from None
    if reply.status_code == 200:
        log.info("slack job %s: answer posted", job_id)
        return True
    if reply.status_code == 429 or reply.status_code >= 500:
        jobs.release_delivery(job_id)
        raise DeliveryError(f"slack job {job_id}: Slack answered {reply.status_code}; will retry")
    # Any other 4xx (expired_url, invalid_blocks, ...) will not change on a retry; plain text may pass.
    log.error("slack job %s: Slack refused the answer (%s %s); posting the text alone",
              job_id, reply.status_code, reply.body[:200])
    try:
        reply = webhook_factory(url).send(text=message["text"], blocks=None, response_type="ephemeral",
                                          replace_original=False)
    except (SlackRequestError, OSError) as error:
        log.error("slack job %s: the plain-text post failed too (%s)", job_id, type(error).__name__)
        return False
    return reply.status_code == 200
