"""Slash commands that are signed but odd: too many form fields, user text with Slack's control
sequences, a response_url off the allowed hosts. Each gets a 200 with words, never a 500 or a live
mention. The app runs embedded (nothing here is queued)."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask
from flask.testing import FlaskClient
from slack_sdk.signature import Clock, SignatureVerifier

from workers.slack.blocks import escape_text

SECRET = "edge-signing-" + secrets.token_hex(8)
NOW = int(time.time())
ALLOWED = "https://hooks.slack.com/"


class FixedClock(Clock):
    def now(self) -> float:
        return float(NOW)


def signed(client: FlaskClient, body: str) -> Any:
    signature = SignatureVerifier(SECRET, clock=FixedClock()).generate_signature(timestamp=str(NOW), body=body)
    return client.post("/slack/commands", data=body, content_type="application/x-www-form-urlencoded",
                       headers={"X-Slack-Request-Timestamp": str(NOW), "X-Slack-Signature": signature or ""})


def form(text: str, *, response_url: str = ALLOWED + "commands/T01/1/abc") -> str:
    return urlencode({"command": "/gpugauge", "text": text, "response_url": response_url,
                      "team_id": "T01", "user_id": "U01", "trigger_id": secrets.token_hex(8)})


@pytest.fixture()
def client(make_app: Callable[..., Flask], keep_celery_default: None) -> FlaskClient:
    return make_app(SLACK_SIGNING_SECRET=SECRET, SLACK_CLOCK=FixedClock(),
                    SLACK_RESPONSE_URL_PREFIXES=[ALLOWED]).test_client()


def every_text(message: Mapping[str, Any]) -> str:
    """Every string of a message: its fallback text and every block's text, as Slack would render them."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(message)
    return "\n".join(found)


def test_a_signed_body_with_more_than_64_fields_gets_a_200_saying_so(client: FlaskClient) -> None:
    body = form("resnet50") + "".join(f"&extra{i}=x" for i in range(70))
    response = signed(client, body)
    assert response.status_code == 200
    assert response.json["response_type"] == "ephemeral"
    assert "more than 64 fields" in response.json["text"]


@pytest.mark.parametrize("text", ["resnet50 <!channel>", "fit <!here> v100-16gb", "resnet50 batch=<@U123>",
                                  "<https://evil.example|click me>", "resnet50 &lt;!everyone&gt;"])
def test_user_text_comes_back_escaped_so_no_mention_or_link_is_live(client: FlaskClient, text: str) -> None:
    # Slack sends &, < and > escaped in `text`; whatever the sender typed must stay escaped in the reply.
    slack_text = escape_text(text)
    response = signed(client, form(slack_text))
    assert response.status_code == 200
    rendered = every_text(response.json)
    assert "<!" not in rendered and "<@" not in rendered and "<http" not in rendered, rendered
    assert "&lt;" in rendered


def test_a_refused_response_url_is_named_as_off_the_allowed_hosts(client: FlaskClient) -> None:
    response = signed(client, form("resnet50 batch=64", response_url="https://attacker.example/hook"))
    assert response.status_code == 200
    assert "not on the allowed hosts" in response.json["text"]
    assert ALLOWED in response.json["text"]
    missing = signed(client, form("resnet50 batch=64", response_url=""))
    assert "came without a Slack response_url" in missing.json["text"]


def test_escape_text_keeps_what_slack_already_escaped() -> None:
    assert escape_text("a <b> & c") == "a &lt;b&gt; &amp; c"
    assert escape_text("a &lt;b&gt;") == "a &lt;b&gt;"
    assert json.dumps(escape_text("plain words")) == '"plain words"'


def test_a_machine_said_by_name_is_understood_by_the_intake(client: FlaskClient) -> None:
    # "on a p3.8xlarge" was "gpugauge did not understand that: unknown word 'p3.8xlarge'"; read as 4 x v100-16gb on aws,
    # it reaches the response_url check (refused here, so nothing is queued)
    response = signed(client, form("resnet50 imagenet on a p3.8xlarge", response_url="https://attacker.example/hook"))
    assert response.status_code == 200
    assert "not on the allowed hosts" in response.json["text"] and "did not understand" not in every_text(response.json)


def test_a_dqn_on_atari_is_understood_by_the_intake(client: FlaskClient) -> None:
    # "train a dqn on atari for 10m frames" was "unknown preset 'atari'", "unknown word '10m'", "unknown word 'frames'"
    response = signed(client, form("train a dqn on atari for 10m frames", response_url="https://attacker.example/x"))
    assert response.status_code == 200
    assert "not on the allowed hosts" in response.json["text"] and "did not understand" not in every_text(response.json)
