"""POST/GET/DELETE /v1/runs: stored (a file embedded, Redis with the queue), refused when absurd, scoped, used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from tests.service_helpers import wait_for_job

SPEC: dict[str, Any] = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}


def _predicted_ms(client: FlaskClient, headers: dict[str, str] | None = None) -> float:
    answer = client.post("/v1/estimate", json={**SPEC, "gpus": ["v100-16gb"]}, headers=headers)
    assert answer.status_code == 200, answer.json
    return float(answer.json["per_gpu"][0]["iteration_ms"])


def test_a_reported_run_is_stored_listed_used_and_removed(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    plain = _predicted_ms(client)
    added = client.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain * 1.4,
                                          "peak_memory_bytes": 9 * 2**30, "source": "nsys, run 7"})
    assert added.status_code == 201, added.json
    run = added.json
    assert added.headers["Location"] == f"/v1/runs/{run['id']}"
    assert abs(run["ratio"] - 1.4) < 1e-9 and run["source"] == "nsys, run 7"
    listed = client.get("/v1/runs").json
    assert [r["id"] for r in listed["runs"]] == [run["id"]]
    (correction,) = listed["corrections"]
    assert (correction["architecture"], correction["kind"], correction["runs"]) == ("volta", "conv", 1)
    assert abs(correction["measured"] - 1.4) < 1e-6 and abs(correction["factor"] - 1.4) < 1e-6  # within the bounds
    estimate = client.post("/v1/estimate", json={**SPEC, "gpus": ["v100-16gb", "a100-80gb"]}).json
    assert estimate["calibrated_by"] == {"runs": 1, "gpus": ["v100-16gb"]}
    v100, a100 = estimate["per_gpu"]
    assert abs(v100["iteration_ms"] / plain - 1.4) < 1e-6 and a100["calibrated_by"]["runs"] == 0
    assert client.delete(f"/v1/runs/{run['id']}").status_code == 204
    assert client.delete(f"/v1/runs/{run['id']}").status_code == 404
    assert client.post("/v1/estimate", json={**SPEC, "gpus": ["v100-16gb"]}).json["calibrated_by"]["runs"] == 0


def test_an_absurd_run_is_refused_with_the_reason_and_not_stored(embedded_client: FlaskClient) -> None:
    plain = _predicted_ms(embedded_client)
    slow = embedded_client.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain * 1000})
    assert slow.status_code == 422 and slow.mimetype == "application/problem+json"
    assert "1000x above" in slow.json["errors"]["iteration_ms"][0]
    huge = embedded_client.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain,
                                                  "peak_memory_bytes": 80 * 2**30})
    assert huge.status_code == 422 and "above the 16.0 GiB" in huge.json["errors"]["peak_memory_bytes"][0]
    bad_spec = embedded_client.post("/v1/runs", json={"spec": {"model": {"preset": "resnet5O"},
                                                               "training": {"batch_size": 64}},
                                                      "gpu": "v100-16gb", "iteration_ms": plain})
    assert bad_spec.status_code == 422 and "spec.model.preset" in bad_spec.json["errors"]
    missing = embedded_client.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb"})
    assert missing.status_code == 422 and "iteration_ms" in missing.json["errors"]
    assert embedded_client.get("/v1/runs").json["runs"] == []


def test_runs_outlive_a_restart_of_the_embedded_server(make_app: Callable[..., Flask]) -> None:
    first = make_app().test_client()
    plain = _predicted_ms(first)
    run_id = first.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain}).json["id"]
    again = make_app().test_client()  # a new app on the same RUNS_FILE, as after a restart
    assert [r["id"] for r in again.get("/v1/runs").json["runs"]] == [run_id]


def test_writing_runs_needs_a_key_with_the_write_scope(make_app: Callable[..., Flask]) -> None:
    client = make_app(API_KEYS="reader-key,writer-key", RUNS_WRITE_KEYS="writer-key").test_client()
    reader, writer = {"Authorization": "Bearer reader-key"}, {"Authorization": "Bearer writer-key"}
    plain = _predicted_ms(client, reader)
    body = {"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain}
    assert client.post("/v1/runs", json=body).status_code == 401
    refused = client.post("/v1/runs", json=body, headers=reader)
    assert refused.status_code == 403 and "runs:write" in refused.json["detail"]
    added = client.post("/v1/runs", json=body, headers=writer)
    assert added.status_code == 201
    assert client.get("/v1/runs", headers=reader).status_code == 200
    assert client.delete(f"/v1/runs/{added.json['id']}", headers=reader).status_code == 403
    assert client.delete(f"/v1/runs/{added.json['id']}", headers=writer).status_code == 204


def test_with_redis_runs_live_beside_the_queue_and_calibrate_the_workers_jobs(queue_client: FlaskClient) -> None:
    plain = _predicted_ms(queue_client)
    spec = {**SPEC, "dataset": {"samples": 64_000}, "constraints": {"providers": ["aws"], "max_gpus": 1},
            "per_gpu": "all"}  # every GPU's row, not only the ranked options'
    before = queue_client.post("/v1/recommendations", json=spec).json["id"]
    run = queue_client.post("/v1/runs", json={"spec": SPEC, "gpu": "v100-16gb", "iteration_ms": plain * 1.5})
    assert run.status_code == 201
    after = queue_client.post("/v1/recommendations", json=spec)
    assert after.json["id"] != before  # new runs, a new job: a cached answer would not say what it used
    job = wait_for_job(queue_client, after.headers["Location"])
    assert job["status"] == "done", job
    requirements = job["result"]["requirements"]
    assert requirements["calibrated_by"] == {"runs": 1, "gpus": ["v100-16gb"]}
    v100 = [r for r in requirements["per_gpu"] if r["gpu"] == "v100-16gb"]
    assert v100 and all(r["calibrated_by"]["runs"] == 1 for r in v100)
    assert queue_client.delete(f"/v1/runs/{run.json['id']}").status_code == 204
