"""The Slack blueprint: `POST /slack/commands`, verified before anything else, answered within 3 s."""

from __future__ import annotations

import logging
from typing import cast

from flask import Blueprint, Flask, Response, jsonify, request
from flask.blueprints import BlueprintSetupState

from service.problems import problem, problem_response
from service.slack import tasks as _tasks  # noqa: F401  (registers the @shared_task with Celery)
from service.slack.intake import acknowledge, read_form
from service.slack.settings import install, slack_settings

log = logging.getLogger(__name__)

# Slack's form bodies are a few hundred bytes; refuse anything far larger before reading it.
MAX_BODY_BYTES = 32 * 1024

slack_bp = Blueprint("slack", __name__)
blp = slack_bp  # the name service.app registers optional blueprints by


@slack_bp.record_once
def _install(state: BlueprintSetupState) -> None:
    install(cast(Flask, state.app))


@slack_bp.post("/slack/commands")
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
    return jsonify(acknowledge(read_form(body), settings))
