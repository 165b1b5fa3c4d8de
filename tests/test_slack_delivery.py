"""Posting answers to response_url: once per job, retried when Slack may take it later, never logged."""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from workers.slack.blocks import render_error
from workers.slack.delivery import DeliveryError, deliver, webhook_client
from workers.slack.store import MemoryKeyValue, SlackJobs

MESSAGE = render_error("gpugauge test message", detail="hello")


@dataclass
class Reply:
    status_code: int
    body: str = "ok"


@dataclass
class FakeSender:
    """Records each post; answers with the queued statuses, then 200."""

    statuses: list[int] = field(default_factory=list)
    posts: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, url: str) -> FakeSender:
        return self

    def send(self, **kwargs: Any) -> Reply:
        self.posts.append(kwargs)
        return Reply(self.statuses.pop(0) if self.statuses else 200)


def open_job(jobs: SlackJobs, url: str = "https://hooks.slack.com/commands/T1/1/abc") -> str:
    return jobs.open(kind="recommend", spec={"model": {"preset": "resnet50"}}, gpus=(), gpu_count=1,
                     title="resnet50", response_url=url)


@pytest.fixture
def jobs() -> SlackJobs:
    return SlackJobs(MemoryKeyValue())


@pytest.fixture
def loopback() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    posts: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/commands/T1/2/s3cr3t-token", posts
    server.shutdown()
    server.server_close()


def test_an_answer_is_posted_once_however_often_delivery_runs(jobs: SlackJobs) -> None:
    sender, job_id = FakeSender(), open_job(jobs)
    assert deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=sender)
    assert not deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=sender)
    assert len(sender.posts) == 1
    assert sender.posts[0]["blocks"] == MESSAGE["blocks"] and sender.posts[0]["response_type"] == "ephemeral"


def test_nothing_is_posted_once_the_response_url_expired(jobs: SlackJobs) -> None:
    sender = FakeSender()
    assert not deliver("no-such-job", MESSAGE, jobs=jobs, webhook_factory=sender)
    assert sender.posts == []


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_busy_slack_raises_for_a_retry_and_the_retry_may_post(jobs: SlackJobs, status: int) -> None:
    sender, job_id = FakeSender(statuses=[status]), open_job(jobs)
    with pytest.raises(DeliveryError):
        deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=sender)
    assert deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=sender)
    assert len(sender.posts) == 2


def test_blocks_slack_refuses_are_followed_by_the_text_alone(jobs: SlackJobs) -> None:
    sender, job_id = FakeSender(statuses=[400]), open_job(jobs)
    assert deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=sender)
    assert sender.posts[1]["blocks"] is None and sender.posts[1]["text"] == MESSAGE["text"]


Loopback = tuple[str, list[dict[str, Any]]]


def test_the_real_client_posts_the_message_and_logs_no_url(
        jobs: SlackJobs, loopback: Loopback, caplog: pytest.LogCaptureFixture) -> None:
    url, posts = loopback
    job_id = open_job(jobs, url)
    with caplog.at_level(logging.DEBUG):
        assert deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=webhook_client)
    assert posts == [{**MESSAGE, "response_type": "ephemeral", "replace_original": False}]
    assert "s3cr3t-token" not in caplog.text and url not in caplog.text


def test_an_unreachable_response_url_raises_for_a_retry_and_logs_no_url(
        jobs: SlackJobs, caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/commands/T1/3/another-s3cr3t"
    job_id = open_job(jobs, url)
    with caplog.at_level(logging.DEBUG), pytest.raises(DeliveryError) as caught:
        deliver(job_id, MESSAGE, jobs=jobs, webhook_factory=webhook_client)
    assert "another-s3cr3t" not in caplog.text and "another-s3cr3t" not in str(caught.value)
    assert not jobs.delivered(job_id)  # the claim was given back for the retry
