"""The whole slash-command flow: the app from its factory with a real Celery worker on Redis (the
session's `queue_app` of conftest.py), and a loopback HTTP server standing in for Slack's response_url.

One in-thread worker serves the whole session: two `start_worker` threads in one process share
kombu's event loop and Celery's default app, and run each other's messages against the wrong app.
So this module configures the session's app for Slack and gives its settings back afterwards."""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from slack_sdk.models.blocks import Block
from slack_sdk.signature import Clock, SignatureVerifier

from service.app import create_app
from service.slack.install import install
from service.slack.verify import MAX_AGE_S
from tests.service_helpers import SERVICE_REDIS_URL
from workers.sizing.errors import SpecError
from workers.slack.blocks import MAX_BLOCKS
from workers.slack.settings import EXTENSION
from workers.tasks.runtime import runtime
from workers.tasks.slack import SLACK_TASK, answer_command

KEY_PREFIX = f"gpugauge:slack-test-{secrets.token_hex(4)}:"  # other sessions may share the db
SECRET = "test-signing-" + secrets.token_hex(8)
NOW = int(time.time())
ACK_LIMIT_S = 3.0  # Slack's limit for the HTTP answer to a slash command
WAIT_S = 20.0


class FixedClock(Clock):
    def now(self) -> float:
        return float(NOW)


class ResponseUrl:
    """A loopback HTTP server that records the JSON posted to each URL, answering with queued statuses."""

    def __init__(self) -> None:
        self.posts: dict[str, list[dict[str, Any]]] = {}
        self.statuses: dict[str, list[int]] = {}  # path -> statuses to answer before 200
        self.arrived = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                queued = owner.statuses.get(self.path) or [200]
                status = queued.pop(0)
                if status == 200:
                    with owner.arrived:
                        owner.posts.setdefault(self.path, []).append(json.loads(body))
                        owner.arrived.notify_all()
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the path is a capability; keep it off stderr too

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def new_url(self) -> str:
        return f"{self.base}commands/T01/{secrets.randbelow(10**9)}/{secrets.token_urlsafe(18)}"

    def path(self, url: str) -> str:
        return url.removeprefix(self.base[:-1])

    def posts_to(self, url: str) -> list[dict[str, Any]]:
        with self.arrived:
            return list(self.posts.get(self.path(url), []))

    def answer(self, url: str) -> dict[str, Any]:
        """Wait for the first post to `url` and return it."""
        path = self.path(url)
        with self.arrived:
            assert self.arrived.wait_for(lambda: path in self.posts, timeout=WAIT_S), "no answer posted"
            return self.posts[path][0]


class Switch:
    """The app's answerer: the real sizing, unless a test swaps in a slow or failing one."""

    def __init__(self) -> None:
        self.impl: Callable[[Mapping[str, Any]], Any] | None = None
        self.calls = 0

    def __call__(self, command: Mapping[str, Any]) -> Any:
        self.calls += 1
        return (self.impl or answer_command)(command)


def signed_post(client: FlaskClient, form: Mapping[str, str], *, timestamp: int = NOW,
                secret: str = SECRET, headers: Mapping[str, str] | None = None) -> Any:
    body = urlencode(form)
    signature = SignatureVerifier(secret, clock=FixedClock()).generate_signature(timestamp=str(timestamp), body=body)
    sent = {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature or ""}
    sent.update(headers or {})
    return client.post("/slack/commands", data=body, headers=sent, content_type="application/x-www-form-urlencoded")


def command_form(text: str, response_url: str) -> dict[str, str]:
    return {"token": "legacy-unused", "team_id": "T01", "channel_id": "C01", "user_id": "U01",
            "command": "/gpugauge", "text": text, "response_url": response_url,
            "trigger_id": secrets.token_hex(8)}


def assert_valid_message(msg: Mapping[str, Any]) -> None:
    assert isinstance(msg.get("text"), str) and msg["text"].strip()
    assert 0 < len(msg["blocks"]) <= MAX_BLOCKS
    for block in msg["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None
        parsed.validate_json()


@pytest.fixture(scope="module")
def store() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(SERVICE_REDIS_URL)
    yield client
    client.close()


@pytest.fixture(scope="module")
def slack() -> ResponseUrl:
    return ResponseUrl()


@pytest.fixture(scope="module")
def switch() -> Switch:
    return Switch()


@pytest.fixture(scope="module")
def app(queue_app: Flask, slack: ResponseUrl, switch: Switch) -> Iterator[Flask]:
    settings = {"SLACK_SIGNING_SECRET": SECRET, "SLACK_CLOCK": FixedClock(), "SLACK_ANSWERER": switch,
                "SLACK_RESPONSE_URL_PREFIXES": [slack.base], "SLACK_KEY_PREFIX": KEY_PREFIX}
    saved = {key: queue_app.config[key] for key in settings if key in queue_app.config}
    saved_extension = queue_app.extensions[EXTENSION]
    queue_app.config.update(settings)
    install(queue_app)
    yield queue_app
    for key in settings:
        queue_app.config.pop(key, None)
    queue_app.config.update(saved)
    queue_app.extensions[EXTENSION] = saved_extension


@pytest.fixture(autouse=True)
def clean(store: redis.Redis, switch: Switch) -> Iterator[None]:
    switch.impl = None
    yield
    switch.impl = None
    for key in store.scan_iter(f"{KEY_PREFIX}*"):
        store.delete(key)


def slack_jobs(store: redis.Redis) -> list[bytes]:
    return list(store.scan_iter(f"{KEY_PREFIX}job:*"))


def test_a_signed_command_is_acked_in_time_and_the_ranked_answer_arrives_at_response_url(
        app: Flask, slack: ResponseUrl) -> None:
    url = slack.new_url()
    started = time.perf_counter()
    response = signed_post(app.test_client(), command_form(
        "resnet50 batch=64 epochs=90 data=150GB samples=1.28M budget=$5000 deadline=7d", url))
    ack_s = time.perf_counter() - started
    assert response.status_code == 200 and ack_s < ACK_LIMIT_S
    assert response.json["response_type"] == "ephemeral"
    assert "Ranking machines for" in response.json["text"]
    answer = slack.answer(url)
    assert_valid_message(answer)
    assert answer["response_type"] == "ephemeral"
    options = [b for b in answer["blocks"] if b["type"] == "section" and b.get("fields")]
    assert options, answer["text"]
    labels = [f["text"].split("\n")[0] for f in options[0]["fields"]]
    assert labels == ["*GPUs*", "*Price per hour*", "*Hours*", "*Total cost*", "*Energy, CO2e*"]
    assert options[0]["text"]["text"].startswith("*1. ")
    assert "best is" in answer["text"]


def test_a_card_said_as_ours_is_ranked_as_owned_at_its_power_cost(app: Flask, slack: ResponseUrl) -> None:
    """"on my 1080 ti": no cloud rents one, so it is the team's own card: ranked first at its power cost."""
    url = slack.new_url()
    response = signed_post(app.test_client(), command_form("bert on my 1080 ti, 100k samples, seq 128", url))
    assert response.status_code == 200
    assert "Your own cards: 1 x gtx-1080-ti, ranked at their power cost" in response.json["text"]
    answer = slack.answer(url)
    assert_valid_message(answer)
    first = next(b for b in answer["blocks"] if b["type"] == "section" and b.get("fields"))
    assert first["text"]["text"].startswith("*1. onprem onprem-1x-gtx-1080-ti")
    assert first["fields"][1]["text"].endswith(", power at your electricity rate")


def test_buying_for_a_monthly_job_says_its_break_even_in_years(app: Flask, slack: ResponseUrl) -> None:
    url = slack.new_url()
    signed_post(app.test_client(), command_form("is it cheaper to buy or rent for resnet50 on imagenet monthly", url))
    assert "years run monthly" in str(slack.answer(url)["blocks"])  # each card's break-even, against renting


def test_fit_posts_whether_the_job_fits_and_the_time_per_iteration(app: Flask, slack: ResponseUrl) -> None:
    url = slack.new_url()
    response = signed_post(app.test_client(), command_form("fit resnet50 v100-16gb batch=64", url))
    assert "Checking the fit of" in response.json["text"]
    answer = slack.answer(url)
    assert_valid_message(answer)
    assert "v100-16gb" in answer["text"] and "ms per iteration" in answer["text"]


@pytest.mark.parametrize("tamper", ["wrong-secret", "stale", "future", "non-numeric", "no-headers",
                                    "malformed"])
def test_a_bad_or_stale_signature_gets_401_and_queues_nothing(
        app: Flask, slack: ResponseUrl, store: redis.Redis, switch: Switch, tamper: str) -> None:
    form = command_form("resnet50 batch=64", slack.new_url())
    client, calls = app.test_client(), switch.calls
    if tamper == "wrong-secret":
        response = signed_post(client, form, secret="not-the-secret")
    elif tamper in ("stale", "future"):
        skew_s = (MAX_AGE_S + 1) * (-1 if tamper == "stale" else 1)
        response = signed_post(client, form, timestamp=NOW + skew_s)
    elif tamper == "non-numeric":
        response = signed_post(client, form, headers={"X-Slack-Request-Timestamp": "abc"})
    elif tamper == "malformed":
        response = signed_post(client, form, headers={"X-Slack-Signature": "v0=not-hex"})
    else:
        response = client.post("/slack/commands", data=form)
    assert response.status_code == 401
    assert response.mimetype == "application/problem+json" and response.json["status"] == 401
    assert slack_jobs(store) == [] and switch.calls == calls


def test_a_replayed_request_is_refused_and_answered_once(
        app: Flask, slack: ResponseUrl, store: redis.Redis) -> None:
    url = slack.new_url()
    client, form = app.test_client(), command_form("resnet50 batch=64", url)
    assert signed_post(client, form).status_code == 200
    assert signed_post(client, form).status_code == 401
    assert len(slack_jobs(store)) == 1
    assert_valid_message(slack.answer(url))


def test_the_ack_does_not_wait_for_a_slow_worker(app: Flask, slack: ResponseUrl, switch: Switch) -> None:
    release = threading.Event()

    def slow(command: Mapping[str, Any]) -> Any:
        release.wait(WAIT_S)
        return answer_command(command)

    switch.impl = slow
    url = slack.new_url()
    started = time.perf_counter()
    response = signed_post(app.test_client(), command_form("resnet50 batch=64", url))
    assert response.status_code == 200 and time.perf_counter() - started < ACK_LIMIT_S
    assert slack.posts_to(url) == []  # the worker is still held: the ack came first
    release.set()
    assert_valid_message(slack.answer(url))


def test_a_failing_job_posts_a_readable_error_without_internals(
        app: Flask, slack: ResponseUrl, switch: Switch) -> None:
    def broken(command: Mapping[str, Any]) -> Any:
        raise RuntimeError("internal detail 0xDEADBEEF")

    switch.impl = broken
    url = slack.new_url()
    signed_post(app.test_client(), command_form("resnet50 batch=64", url))
    answer = slack.answer(url)
    assert_valid_message(answer)
    assert "internal error" in answer["text"] and "0xDEADBEEF" not in json.dumps(answer)


def test_a_job_the_core_refuses_posts_what_to_change_in_the_users_words(app: Flask, slack: ResponseUrl,
                                                                        switch: Switch) -> None:
    def refuse(command: Mapping[str, Any]) -> Any:
        raise SpecError("training.batch_size", "is larger than the dataset")

    switch.impl = refuse
    url = slack.new_url()
    signed_post(app.test_client(), command_form("resnet50 batch=64", url))
    assert "batch= is larger than the dataset" in slack.answer(url)["text"]


def test_a_post_slack_refuses_with_a_500_is_retried_until_it_lands(app: Flask, slack: ResponseUrl) -> None:
    url = slack.new_url()
    slack.statuses[slack.path(url)] = [500]
    signed_post(app.test_client(), command_form("resnet50 batch=64", url))
    assert_valid_message(slack.answer(url))
    assert slack.statuses[slack.path(url)] == [] and len(slack.posts_to(url)) == 1


def test_a_job_delivered_twice_posts_once(app: Flask, slack: ResponseUrl, store: redis.Redis) -> None:
    url, sentinel = slack.new_url(), slack.new_url()
    signed_post(app.test_client(), command_form("resnet50 batch=64", url))
    slack.answer(url)
    [key] = slack_jobs(store)
    job_id = key.decode().rsplit(":", 1)[1]
    with app.app_context():
        runtime().queue.enqueue(SLACK_TASK, job_id)  # a redelivery of the same job
    signed_post(app.test_client(), command_form("resnet18 batch=32", sentinel))
    slack.answer(sentinel)  # the worker runs in order: the duplicate came and went before this
    assert len(slack.posts_to(url)) == 1


def test_help_and_parse_errors_are_answered_at_once_and_queue_nothing(
        app: Flask, slack: ResponseUrl, store: redis.Redis) -> None:
    client = app.test_client()
    help_reply = signed_post(client, command_form("help", slack.new_url())).json
    assert help_reply["response_type"] == "ephemeral" and "resnet50" in json.dumps(help_reply["blocks"])
    assert_valid_message(help_reply)
    typo = signed_post(client, command_form("resnt50 batchsize=64", slack.new_url())).json
    assert "did you mean resnet50" in typo["text"] and "did you mean batch=?" in typo["text"]
    assert slack_jobs(store) == []


def test_when_redis_is_down_the_command_gets_a_200_temporarily_unavailable(
        app: Flask, slack: ResponseUrl) -> None:
    down = create_app({"REDIS_URL": "redis://127.0.0.1:1/0", "SLACK_SIGNING_SECRET": SECRET,
                       "SLACK_CLOCK": FixedClock(), "SLACK_RESPONSE_URL_PREFIXES": [slack.base]})
    # A new app becomes Celery's default, and the in-thread worker runs tasks from the default app's
    # registry (celery.app.trace.trace_task_ret): give the default back to the session worker's app.
    app.extensions["celery"].set_default()
    started = time.perf_counter()
    response = signed_post(down.test_client(), command_form("resnet50 batch=64", slack.new_url()))
    assert response.status_code == 200 and time.perf_counter() - started < ACK_LIMIT_S
    assert response.json["response_type"] == "ephemeral"
    assert "temporarily unavailable" in response.json["text"]


def test_neither_the_signing_secret_nor_a_response_url_reaches_the_logs(
        app: Flask, slack: ResponseUrl, switch: Switch, caplog: pytest.LogCaptureFixture) -> None:
    urls = [slack.new_url() for _ in range(3)]
    with caplog.at_level(logging.DEBUG):
        client = app.test_client()
        signed_post(client, command_form("resnet50 batch=64", urls[0]))
        slack.answer(urls[0])
        signed_post(client, command_form("resnet50 batch=64", urls[1]), secret="wrong")
        switch.impl = lambda command: 1 / 0
        signed_post(client, command_form("resnet50 batch=64", urls[2]))
        slack.answer(urls[2])
    assert "slack job" in caplog.text  # the flow did log
    for secret in (SECRET, *urls, *(u.rsplit("/", 1)[1] for u in urls)):
        assert secret not in caplog.text


def test_the_embedded_mode_answers_without_redis(app: Flask, slack: ResponseUrl) -> None:
    embedded = create_app({"REDIS_URL": None, "SLACK_SIGNING_SECRET": SECRET, "SLACK_CLOCK": FixedClock(),
                           "SLACK_RESPONSE_URL_PREFIXES": [slack.base]})
    app.extensions["celery"].set_default()  # see the Redis-down test
    url = slack.new_url()
    try:
        response = signed_post(embedded.test_client(), command_form("resnet50 batch=64 samples=50k", url))
        assert "Ranking machines for" in response.json["text"]
        answer = slack.answer(url)
    finally:
        runtime(embedded).queue.close()
    assert_valid_message(answer)
    assert "best is" in answer["text"]



def test_the_ranked_answer_is_recorded_on_the_apis_job_for_the_same_spec(app: Flask, slack: ResponseUrl) -> None:
    from catalog.gpus import load_gpus
    from service.slack.intake import preset_words
    from workers.schemas.specs import load_job
    from workers.slack.grammar import parse_command
    from workers.tasks.recommend import recommendation_job_id
    from workers.tasks.runs import runs_revision

    text = f"resnet50 batch=32 epochs=2 samples={secrets.randbelow(10**6) + 10**5}"  # a job nobody ran yet
    command = parse_command(text, presets=preset_words(), gpus=[g.slug for g in load_gpus()])
    url, client = slack.new_url(), app.test_client()
    assert signed_post(client, command_form(text, url)).status_code == 200
    answer = slack.answer(url)
    assert_valid_message(answer)
    with app.app_context():
        rt = runtime(app)
        data, _ = load_job(command.spec)
        job_id = recommendation_job_id(data, catalog_version=rt.catalog.get().version, revision=runs_revision(rt.runs))
    # Nobody asked the API: the job is there, done, because the Slack answer ran it as the API's job.
    job = client.get(f"/v1/recommendations/{job_id}")
    assert job.status_code == 200 and job.get_json()["status"] == "done"
    top = job.get_json()["result"]["options"][0]
    first = next(b for b in answer["blocks"] if b["type"] == "section" and b.get("fields"))
    assert top["instance_type"] in first["text"]["text"]
