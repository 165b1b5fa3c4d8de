"""The Slack blueprint: `POST /slack/commands`, verified before anything else, answered within 3 s."""

from __future__ import annotations

import logging
from typing import Any, cast

import flask
import flask_smorest
from flask import Flask, Response, jsonify, request
from flask.blueprints import BlueprintSetupState

from service.problems import problem_response
from service.slack.install import install
from service.slack.intake import FormError, acknowledge, read_form, unreadable
from workers.slack.settings import slack_settings
from workers.tasks.problems import problem

log = logging.getLogger(__name__)

# Slack's form bodies are a few hundred bytes; refuse anything far larger before reading it.
MAX_BODY_BYTES = 32 * 1024
PATH = "/slack/commands"

# For the OpenAPI document (the blueprint is plain Flask): api.spec.path(path="/slack/commands",
# operations=OPENAPI_OPERATIONS). Answers are Slack messages, not the JSON API's shapes.
_PROBLEM = {"content": {"application/problem+json": {"schema": {"type": "object"}}}}
OPENAPI_OPERATIONS: dict[str, Any] = {"post": {
    "summary": "A Slack slash command (`/gpugauge ...`), signature-checked; answered within 3 s",
    "tags": ["slack"],
    "security": [],  # Slack signs the request (the two headers) instead of sending an API key
    "parameters": [{"name": name, "in": "header", "required": True, "schema": {"type": "string"}}
                   for name in ("X-Slack-Request-Timestamp", "X-Slack-Signature")],
    "requestBody": {"required": True, "content": {"application/x-www-form-urlencoded": {"schema": {
        "type": "object", "properties": {name: {"type": "string"} for name in (
            "command", "text", "response_url", "user_id", "team_id", "channel_id", "trigger_id")}}}}},
    "responses": {
        "200": {"description": "An ephemeral Slack message: the ack, the help, or what to change",
                "content": {"application/json": {"schema": {"type": "object", "properties": {
                    "response_type": {"type": "string"}, "text": {"type": "string"},
                    "blocks": {"type": "array", "items": {"type": "object"}}}}}}},
        "401": {"description": "Signature missing, wrong, stale or replayed", **_PROBLEM},
        "413": {"description": "Body over 32 KiB", **_PROBLEM},
        "429": {"description": "Too many commands from this address (SLACK_RATE_LIMIT)", **_PROBLEM},
    },
}}

blp = flask_smorest.Blueprint("slack", __name__, description="The Slack slash command")


def _install(state: BlueprintSetupState) -> None:
    install(cast(Flask, state.app))


flask.Blueprint.record_once(blp, _install)


def slash_command() -> Response:
    """Verify Slack's signature on the raw body, then reply at once; the answer follows at response_url."""
    if (request.content_length or 0) > MAX_BODY_BYTES:
        too_big = problem(413, detail=f"a slash command body is under {MAX_BODY_BYTES} bytes")
        return problem_response({**too_big, "instance": request.path})
    settings = slack_settings()
    body = request.get_data(cache=True)  # hashed before anything parses, and so empties, the form
    verdict = settings.verifier.check(body, dict(request.headers))
    if not verdict.valid:
        log.warning("slack command refused: %s", verdict.reason)
        return problem_response({**problem(401, detail="the Slack signature is missing, wrong or stale"),
                                 "instance": request.path})
    try:
        form = read_form(body)
    except FormError as error:
        log.warning("slack command refused: %s", error)
        return jsonify(unreadable(error))
    return jsonify(acknowledge(form, settings))


# Slack's form body, not the JSON API: Flask's own add_url_rule keeps flask-smorest from parsing or
# documenting it; the document describes it from OPENAPI_OPERATIONS instead.
flask.Blueprint.add_url_rule(blp, PATH, view_func=slash_command, methods=["POST"])
