"""No secret in logs, answers or job results: the main flows run with known fake secrets, logs captured at DEBUG.

Secrets: an API key (and a wrong one a client tried), the Slack signing secret, a Slack response_url
(its path is a credential), and AWS keys in the environment, used for real by a catalog refresh whose
AWS endpoint is a loopback server refusing them.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from flask import Flask
from slack_sdk.signature import SignatureVerifier

from tests.service_helpers import example_spec, wait_for_job
from workers.tasks import refresh as refresh_tasks

API_KEY = "gpk-live-7hQ2vN9xR4mK8pL1sT6wZ3yB"
WRONG_KEY = "gpk-guess-Jd82kS0qLm4nV7cX1zP9"
SIGNING_SECRET = "slacksecret9f8e7d6c5b4a39281706f5e4"
AWS_ACCESS_KEY_ID = "AKIAFAKE7Q2VN9XR4MK8"
AWS_SECRET_ACCESS_KEY = "fAkEsEcReT/7hQ2vN9xR4mK8pL1sT6wZ3yBqW0eRtY"
AWS_SESSION_TOKEN = "FwoGZXIvYXdzEFAKE0session0token0Jd82kS0qLm4nV7cX1zP9"
HOOK_PATH = "/services/T0FAKE01/B0FAKE02/rV7cX1zP9Jd82kS0qLm4nW"


class Loopback(BaseHTTPRequestHandler):
    """Slack's response_url (POSTs under /services/ are kept, answered "ok") and an AWS refusing the keys."""

    posts: list[str] = []  # noqa: RUF012  (shared by the handler instances of one server)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        if self.path.startswith("/services/"):
            Loopback.posts.append(body)
            self._answer(200, "text/plain", "ok")
        elif "X-Amz-Target" in self.headers:  # the AWS JSON protocol (pricing)
            self._answer(400, "application/x-amz-json-1.1", json.dumps(
                {"__type": "UnrecognizedClientException", "message": "The security token included in the "
                 "request is invalid."}))
        else:  # the EC2 query protocol
            self._answer(401, "text/xml", "<Response><Errors><Error><Code>AuthFailure</Code><Message>AWS was "
                         "not able to validate the provided access credentials</Message></Error></Errors>"
                         "<RequestID>1</RequestID></Response>")

    def _answer(self, status: int, content_type: str, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the server quiet."""


@pytest.fixture()
def loopback() -> Iterator[str]:
    """A loopback HTTP server; yields its base URL."""
    Loopback.posts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Loopback)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


pytestmark = pytest.mark.usefixtures("keep_celery_default")


def signed(body: str, secret: str = SIGNING_SECRET) -> dict[str, str]:
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature or ""}


def test_no_secret_reaches_the_logs_the_answers_or_the_job_results(
        make_app: Callable[..., Flask], loopback: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    response_url = loopback + HOOK_PATH
    secrets = [API_KEY, WRONG_KEY, SIGNING_SECRET, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
               response_url, HOOK_PATH, HOOK_PATH.rsplit("/", 1)[1]]
    for name, value in (("AWS_ACCESS_KEY_ID", AWS_ACCESS_KEY_ID), ("AWS_SECRET_ACCESS_KEY", AWS_SECRET_ACCESS_KEY),
                        ("AWS_SESSION_TOKEN", AWS_SESSION_TOKEN), ("AWS_ENDPOINT_URL", loopback),
                        ("AWS_MAX_ATTEMPTS", "1"), ("AWS_RETRY_MODE", "standard")):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    app = make_app(API_KEYS=API_KEY, SLACK_SIGNING_SECRET=SIGNING_SECRET, SLACK_RESPONSE_URL_PREFIXES=loopback + "/",
                   RATE_LIMIT_ENABLED=True, RATE_LIMIT="30/minute", CATALOG_DIR=str(tmp_path))
    client = app.test_client()
    key = {"Authorization": f"Bearer {API_KEY}"}
    seen: list[str] = []  # every answer and job result the flows produced

    with caplog.at_level(logging.DEBUG):
        # The JSON API: sizing, a recommendation job to its end, a failing job, a review, bad and missing keys.
        seen.append(client.post("/v1/estimate", json=example_spec(), headers=key).get_data(as_text=True))
        location = client.post("/v1/recommendations", json=example_spec("vae-mnist"), headers=key).headers["Location"]
        client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {API_KEY}"
        seen.append(json.dumps(wait_for_job(client, location)))
        del client.environ_base["HTTP_AUTHORIZATION"]
        failing = {**example_spec(), "training": {"batch_size": 10**6}, "model": {"layers": [{"type": "dense"}]}}
        seen.append(client.post("/v1/recommendations", json=failing, headers=key).get_data(as_text=True))
        review = {"jobs": [{"name": "a", "team": "t", "spec": example_spec("vae-mnist")}], "format": "markdown"}
        seen.append(client.post("/v1/reports", json=review, headers=key).get_data(as_text=True))
        seen.append(client.post("/v1/estimate", json=example_spec(),
                                headers={"Authorization": f"Bearer {WRONG_KEY}"}).get_data(as_text=True))
        seen.append(client.get("/v1/catalog").get_data(as_text=True))
        seen.append(client.post("/v1/estimate", data="{not json", content_type="application/json",
                                headers=key).get_data(as_text=True))

        # Slack: a signed command answered at its response_url, and a forged one.
        form = urlencode({"command": "/gpugauge", "text": "resnet50 batch=64 samples=50k", "team_id": "T0FAKE01",
                          "user_id": "U1", "channel_id": "C1", "response_url": response_url, "trigger_id": "t1"})
        ack = client.post("/slack/commands", data=form, headers=signed(form),
                          content_type="application/x-www-form-urlencoded")
        assert ack.status_code == 200
        seen.append(ack.get_data(as_text=True))
        deadline = time.monotonic() + 20
        while not Loopback.posts and time.monotonic() < deadline:
            time.sleep(0.05)
        assert Loopback.posts, "the Slack answer was not posted"
        forged = client.post("/slack/commands", data=form, headers=signed(form, secret="not-the-secret"),
                             content_type="application/x-www-form-urlencoded")
        assert forged.status_code == 401
        seen.append(forged.get_data(as_text=True))

        # The catalog refresh with the AWS keys: signed requests to an AWS that refuses them.
        with app.app_context():
            outcomes = refresh_tasks.refresh_catalogs.run(["aws"])
        seen.append(json.dumps(outcomes))

    assert outcomes["aws"]["status"] == "failed"
    # The flows did run and log: the SDK, the forged command, the failed refresh, the API's own DEBUG.
    assert any(r.name.startswith("botocore") for r in caplog.records)
    assert "slack command refused" in caplog.text and "catalog refresh of aws failed" in caplog.text
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
    logged = caplog.text + "\n".join(str(r.__dict__) for r in caplog.records)
    answered = "\n".join([*seen, *Loopback.posts])
    for secret in secrets:
        assert secret not in logged, f"{secret!r} is in the logs"
        assert secret not in answered, f"{secret!r} is in an answer or a job result"
