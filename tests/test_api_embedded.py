"""The embedded mode (no REDIS_URL): one process serves the API and runs the jobs on its threads."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask
from flask.testing import FlaskClient

from tests.service_helpers import contract_check, example_spec, wait_for_job
from workers.tasks.runtime import runtime


def test_the_embedded_app_needs_no_redis_and_says_it_is_ready(embedded_client: FlaskClient) -> None:
    assert runtime(embedded_client.application).embedded
    assert embedded_client.get("/readyz").get_json() == {"status": "ready"}


def test_a_job_runs_in_process_to_done(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/recommendations", json=example_spec("gpt2-pretrain"))
    assert answer.status_code == 202
    job = wait_for_job(embedded_client, answer.headers["Location"])
    assert job["status"] == "done", job
    assert contract_check().contract_result(job["result"]) == []


def test_identical_specs_share_the_job(embedded_client: FlaskClient) -> None:
    first = embedded_client.post("/v1/recommendations", json=example_spec()).get_json()["id"]
    wait_for_job(embedded_client, f"/v1/recommendations/{first}")
    again = embedded_client.post("/v1/recommendations", json=example_spec())
    assert again.get_json()["id"] == first and again.get_json()["status"] == "done"


def test_a_failed_embedded_job_reports_why(embedded_client: FlaskClient) -> None:
    # The API refuses such a spec at submit (422); queue one directly, as the view would, so the
    # embedded task's failure path runs.
    from workers.schemas.specs import validate_spec
    from workers.tasks.jobs import submit_stored
    from workers.tasks.recommend import RECOMMEND_TASK

    spec = example_spec()
    spec["model"] = {"preset": "resnet5O"}
    assert embedded_client.post("/v1/recommendations", json=spec).status_code == 422
    data = validate_spec(spec)
    with embedded_client.application.app_context():
        rt = runtime()
        submit_stored(rt.jobs, lambda: rt.queue.enqueue(RECOMMEND_TASK, "failing-job", data),
                      job_id="failing-job", ttl_s=60)
    job = wait_for_job(embedded_client, "/v1/recommendations/failing-job")
    assert job["status"] == "failed" and "model.preset" in job["problem"]["errors"]


def test_embedded_results_expire(make_app: Callable[..., Flask]) -> None:
    import time

    client = make_app(RESULT_TTL_S=1).test_client()
    location = client.post("/v1/recommendations", json=example_spec("vae-mnist")).headers["Location"]
    assert wait_for_job(client, location)["status"] == "done"
    time.sleep(1.1)
    assert client.get(location).status_code == 404


def test_a_stopped_embedded_worker_is_not_ready(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    runtime(app).queue.close()
    answer = app.test_client().get("/readyz")
    assert answer.status_code == 503 and answer.mimetype == "application/problem+json"
