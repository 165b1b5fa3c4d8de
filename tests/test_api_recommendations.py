"""Recommendation jobs through the real Redis and a real Celery worker: submit, poll, share, expire."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from celery.signals import task_prerun
from flask import Flask
from flask.testing import FlaskClient

from tests.service_helpers import contract_check, example_spec, queue_config, wait_for_job
from workers.tasks.recommend import RECOMMEND_TASK


@pytest.fixture()
def task_runs() -> Iterator[list[str]]:
    """The job ids the worker started a recommendation task for, during the test."""
    runs: list[str] = []

    def record(sender: Any = None, args: Any = (), **_: Any) -> None:
        if getattr(sender, "name", None) == RECOMMEND_TASK:
            runs.append(args[0])

    task_prerun.connect(record, weak=False)
    yield runs
    task_prerun.disconnect(record)


def test_submit_answers_202_with_location_and_the_job_completes(queue_client: FlaskClient) -> None:
    answer = queue_client.post("/v1/recommendations", json=example_spec())
    assert answer.status_code == 202
    location = answer.headers["Location"]
    assert location == f"/v1/recommendations/{answer.get_json()['id']}"
    job = wait_for_job(queue_client, location)
    assert job["status"] == "done", job
    assert contract_check().contract_result(job["result"]) == []
    assert job["result"]["options"], "the example fits somewhere in the bundled catalog"


def test_a_queued_job_asks_the_client_to_poll_after_the_time_it_is_expected_to_take(
        queue_client: FlaskClient) -> None:
    answer = queue_client.post("/v1/recommendations", json=example_spec("vae-mnist"))
    if answer.get_json()["status"] in ("queued", "running"):
        assert answer.headers["Retry-After"] == "0"  # a job of ~50 ms: ask again at once, not in a second
    assert wait_for_job(queue_client, answer.headers["Location"])["status"] == "done"


def test_identical_specs_share_one_job_and_one_task(queue_client: FlaskClient, task_runs: list[str]) -> None:
    spec = example_spec("dcgan-faces")
    ids: list[str] = []

    def submit() -> None:
        ids.append(queue_client.post("/v1/recommendations", json=spec).get_json()["id"])

    threads = [threading.Thread(target=submit) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 1 and len(ids) == 20
    assert wait_for_job(queue_client, f"/v1/recommendations/{ids[0]}")["status"] == "done"
    again = queue_client.post("/v1/recommendations", json=spec)
    assert again.get_json()["id"] == ids[0] and again.get_json()["status"] == "done"
    assert task_runs.count(ids[0]) == 1


def test_an_equal_spec_written_differently_shares_the_job(queue_client: FlaskClient) -> None:
    spec = example_spec("bert-finetune")
    first = queue_client.post("/v1/recommendations", json=spec).get_json()["id"]
    spec["training"]["epochs"] = float(spec["training"].get("epochs", 1))  # 3 -> 3.0
    spec["objective"] = spec.get("objective", "balanced")  # the default, spelled out
    assert queue_client.post("/v1/recommendations", json=spec).get_json()["id"] == first


def test_different_specs_get_different_jobs(queue_client: FlaskClient) -> None:
    spec = example_spec()
    first = queue_client.post("/v1/recommendations", json=spec).get_json()["id"]
    spec["training"]["batch_size"] += 1
    assert queue_client.post("/v1/recommendations", json=spec).get_json()["id"] != first


def test_a_failed_job_reports_why(queue_app: Flask, queue_client: FlaskClient) -> None:
    # The API refuses such a spec at submit (422); a job can still fail in the worker (a catalog
    # refreshed in between, say), so queue one directly, as the view would, and watch it fail.
    from workers.schemas.specs import validate_spec
    from workers.tasks.jobs import submit_stored
    from workers.tasks.runtime import runtime

    spec = example_spec()
    spec["model"] = {"preset": "resnet5O"}  # passes the schema; the core knows no such preset
    data = validate_spec(spec)
    with queue_app.app_context():
        rt = runtime()
        submit_stored(rt.jobs, lambda: rt.queue.enqueue(RECOMMEND_TASK, "failing-job", data),
                      job_id="failing-job", ttl_s=60)
    job = wait_for_job(queue_client, "/v1/recommendations/failing-job")
    assert job["status"] == "failed"
    assert job["problem"]["status"] == 422 and "model.preset" in job["problem"]["errors"]
    assert "result" not in job


def test_results_expire_after_the_configured_time(queue_client: FlaskClient,
                                                   make_app: Callable[..., Flask]) -> None:
    # A second app on the same Redis and queue keeps results one second; the session's worker
    # honours the TTL that the job was submitted with.
    client = make_app(**queue_config(RESULT_TTL_S=1)).test_client()
    spec = example_spec("dqn-atari")
    location = client.post("/v1/recommendations", json=spec).headers["Location"]
    assert wait_for_job(client, location)["status"] == "done"
    time.sleep(1.2)
    assert client.get(location).status_code == 404
    assert client.post("/v1/recommendations", json=spec).status_code == 202  # the id is free again
    assert wait_for_job(client, location)["status"] == "done"


def test_the_queue_worker_runs_in_its_own_app_after_another_app_ran_the_task(
        queue_client: FlaskClient, make_app: Callable[..., Flask]) -> None:
    embedded = make_app().test_client()  # now Celery's default app, and it runs the task in-process
    assert wait_for_job(embedded, embedded.post("/v1/recommendations", json=example_spec("vae-mnist"))
                        .headers["Location"])["status"] == "done"
    location = queue_client.post("/v1/recommendations", json=example_spec("vae-mnist")).headers["Location"]
    assert wait_for_job(queue_client, location)["status"] == "done"
