"""POST /v1/reports from the app factory: small reviews inline, large ones as a job with progress, bad input 422."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from service.api.reports import INLINE_MAX_JOBS
from tests.service_helpers import wait_for_job
from workers.tasks.jobs import RUNNING, MemoryJobStore, new_record
from workers.tasks.review import record_progress

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "budget-review.json"
SPEC = {"model": {"stats": {"neurons": 2_000_000, "parameters": 5_000_000, "multiply_adds": 2 * 10**9}},
        "training": {"batch_size": 64, "epochs": 3}, "dataset": {"samples": 100_000, "bytes": 10**9},
        "constraints": {"providers": ["aws", "gcp"], "max_gpus": 4}}


def _example() -> dict[str, Any]:
    """Return the example review cut to the jobs an inline answer takes (the whole file is queued)."""
    raw: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return {**raw, "jobs": raw["jobs"][:INLINE_MAX_JOBS]}


def _review(jobs: int, **top: Any) -> dict[str, Any]:
    return {"name": "many", "budget_usd": 500, "providers": ["aws", "gcp"], **top,
            "jobs": [{"name": f"job {i}", "team": ("a", "b")[i % 2], "runs": 1 + i % 3, "spec": SPEC}
                     for i in range(jobs)]}


def _document(client: FlaskClient, answer: Any, *, timeout_s: float = 180.0) -> dict[str, Any]:
    """Return a review's document: the answer's own when the job ended within its wait, else the job's
    result once it ends (a loaded machine can outlast a wait; the test is about the result, not the time)."""
    if answer.status_code == 200:
        document: dict[str, Any] = answer.get_json()
        return document
    assert answer.status_code == 202, answer.get_json()
    deadline = time.monotonic() + timeout_s
    while True:
        job = client.get(answer.headers["Location"] + "?wait=20").get_json()
        if job["status"] in ("done", "failed"):
            assert job["status"] == "done", job
            result: dict[str, Any] = job["result"]
            return result
        assert time.monotonic() < deadline, job


def test_a_small_review_is_answered_inline_as_json(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/reports", json={**_example(), "format": "json"})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert [j["name"] for j in body["jobs"]] == [j["name"] for j in _example()["jobs"]]
    assert body["standing"]["budget_usd"] == _example()["budget_usd"]
    assert {t["team"] for t in body["teams"]} == {j.get("team", j.get("owner")) for j in _example()["jobs"]}


def test_the_html_format_is_a_page_that_may_run_and_fetch_nothing(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/reports", json={**_example(), "format": "html"})
    assert answer.status_code == 200
    assert answer.mimetype == "text/html"
    assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
    page = answer.get_data(as_text=True)
    assert page.count("<svg") == 2 and "https://" not in page


def test_csv_and_markdown_come_with_their_media_types(embedded_client: FlaskClient) -> None:
    csv_answer = embedded_client.post("/v1/reports", json={**_review(2), "format": "csv"})
    assert csv_answer.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(csv_answer.get_data(as_text=True))))
    assert [r["row"] for r in rows].count("job") == 2
    md = embedded_client.post("/v1/reports", json={**_review(2), "format": "markdown"})
    assert md.mimetype == "text/markdown" and md.get_data(as_text=True).startswith("# Budget review")


def test_a_bad_field_is_a_422_problem_naming_its_path(embedded_client: FlaskClient) -> None:
    review = _example()
    review["jobs"][2]["spec"]["training"]["batch_size"] = -1
    answer = embedded_client.post("/v1/reports", json=review)
    assert answer.status_code == 422
    assert answer.mimetype == "application/problem+json"
    assert "jobs[2].spec.training.batch_size" in answer.get_json()["errors"]


def test_an_unknown_preset_is_a_422_naming_its_job(embedded_client: FlaskClient) -> None:
    review = _example()
    review["jobs"][1]["spec"]["model"] = {"preset": "bert-bse"}
    answer = embedded_client.post("/v1/reports", json=review)
    assert answer.status_code == 422
    assert list(answer.get_json()["errors"]) == ["jobs[1].spec.model.preset"]


def test_a_large_review_runs_as_a_job_with_progress(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=2).test_client()
    answer = client.post("/v1/reports", json=_review(4, format="html"))
    assert answer.status_code == 202
    location = answer.headers["Location"]
    assert location.startswith("/v1/reports/review-")
    assert answer.headers["Link"] == f'<{location}?format=html>; rel="alternate"'
    done = wait_for_job(client, location, timeout_s=30)
    assert done["status"] == "done", done
    assert done["progress"] == {"done": 4, "total": 4}
    assert len(done["result"]["jobs"]) == 4
    page = client.get(location + "?format=html")
    assert page.mimetype == "text/html" and "<svg" in page.get_data(as_text=True)


def test_the_same_large_review_twice_is_one_job(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=1).test_client()
    first = client.post("/v1/reports", json=_review(3))
    second = client.post("/v1/reports", json=_review(3))
    assert first.headers["Location"] == second.headers["Location"]
    wait_for_job(client, first.headers["Location"], timeout_s=30)


def test_unknown_reports_and_formats_are_refused(embedded_client: FlaskClient) -> None:
    assert embedded_client.get("/v1/reports/review-" + "0" * 64).status_code == 404
    assert embedded_client.get("/v1/reports/" + "0" * 64).status_code == 404
    answer = embedded_client.get("/v1/reports/review-x?format=pdf")
    assert answer.status_code == 422 and "format" in answer.get_json()["errors"]


def test_progress_is_written_only_on_a_running_job() -> None:
    store = MemoryJobStore()
    store.put({**new_record("j", ttl_s=60)}, ttl_s=60)
    record_progress(store, "j", done=1, total=3)
    assert "progress" not in (store.get("j") or {})
    store.put({**new_record("j", ttl_s=60), "status": RUNNING}, ttl_s=60)
    record_progress(store, "j", done=2, total=3)
    assert (store.get("j") or {})["progress"] == {"done": 2, "total": 3}


def test_a_large_review_through_redis_and_a_celery_worker(queue_client: FlaskClient) -> None:
    answer = queue_client.post("/v1/reports", json=_review(7))
    assert answer.status_code == 202, answer.get_json()
    done = wait_for_job(queue_client, answer.headers["Location"], timeout_s=60)
    assert done["status"] == "done", done
    assert done["progress"] == {"done": 7, "total": 7}
    assert done["result"]["total"]["jobs"] == 7
    csv_answer = queue_client.get(answer.headers["Location"] + "?format=csv")
    assert csv_answer.mimetype == "text/csv"


def test_a_large_review_that_prefers_to_wait_is_answered_with_its_document(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=2).test_client()
    answer = client.post("/v1/reports", json={**_review(4), "format": "csv"}, headers={"Prefer": "wait=20"})
    assert answer.status_code == 200 and answer.mimetype == "text/csv"
    assert answer.headers["Preference-Applied"] == "wait=20"
    rows = list(csv.DictReader(io.StringIO(answer.get_data(as_text=True))))
    assert [r["row"] for r in rows].count("job") == 4


def test_a_queued_review_states_when_to_ask_again_from_its_size(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=2, REVIEW_EXPECTED_S_PER_JOB=1.0).test_client()
    answer = client.post("/v1/reports", json=_review(6))
    assert answer.status_code == 202
    if answer.get_json()["status"] in ("queued", "running"):
        assert 1 <= int(answer.headers["Retry-After"]) <= 6  # six jobs of a second each, fewer once some ran
    assert answer.get_json()["progress"]["total"] == 6
    done = client.get(answer.headers["Location"] + "?wait=20").get_json()
    assert done["status"] == "done" and len(done["result"]["jobs"]) == 6


def test_a_large_review_is_fanned_out_in_chunks_and_joined_in_order(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=2, REVIEW_CHUNK_JOBS=3).test_client()
    inline = make_app().test_client().post("/v1/reports", json=_review(5)).get_json()  # one process, no chunks
    answer = client.post("/v1/reports", json=_review(11), headers={"Prefer": "wait=20"})
    body = _document(client, answer)
    assert [j["name"] for j in body["jobs"]] == [f"job {i}" for i in range(11)]  # four chunks, in order
    # The first five jobs' reviews are the same whether done in one pass or in chunks.
    assert body["jobs"][:5] == inline["jobs"]
    assert body["total"]["jobs"] == 11 and sum(t["jobs"] for t in body["teams"]) == 11


def test_a_chunk_delivered_twice_is_counted_once() -> None:
    store = MemoryJobStore()
    store.claim(new_record("r", ttl_s=60, extra={"progress": {"done": 0, "total": 5}}), ttl_s=60)
    assert store.add_chunk("r", index=0, payload="{}", jobs=3, chunks=2, total_jobs=5, at="t") == (True, False)
    assert store.add_chunk("r", index=0, payload="{}", jobs=3, chunks=2, total_jobs=5, at="t") == (False, False)
    record = store.get("r")
    assert record is not None and record["progress"] == {"done": 3, "total": 5}
    assert store.add_chunk("r", index=1, payload="{}", jobs=2, chunks=2, total_jobs=5, at="t") == (True, True)
    record = store.get("r")
    assert record is not None and record["progress"] == {"done": 5, "total": 5}


def test_a_review_fanned_out_through_redis_counts_each_chunk_once_even_when_delivered_twice(
        queue_client: FlaskClient, queue_app: Flask) -> None:
    from workers.tasks.review import REVIEW_CHUNK_TASK
    from workers.tasks.runtime import runtime

    queue_app.config["REVIEW_CHUNK_JOBS"] = 2
    try:
        request = _review(7)
        request["name"] = "fanned out"
        answer = queue_client.post("/v1/reports", json=request, headers={"Prefer": "wait=60"})
        body = _document(queue_client, answer)
        assert [j["name"] for j in body["jobs"]] == [f"job {i}" for i in range(7)]
        job_id = answer.headers["Location"].rsplit("/", 1)[1]
        record = queue_client.get(answer.headers["Location"]).get_json()
        assert record["progress"] == {"done": 7, "total": 7}
        # A chunk delivered again after the whole was recorded (a worker killed before its ack): nothing moves.
        # The worker drops the chunks just after it records the whole (never before: a crash between the two
        # keeps them), so a client can see the job done a moment before they are gone: wait for that.
        store = runtime(queue_app).jobs
        deadline = time.monotonic() + 10
        while store.chunk_payloads(job_id) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert store.add_chunk(job_id, index=0, payload="{}", jobs=2, chunks=4, total_jobs=7, at="t") == (True, False)
        store.drop_chunks(job_id)
        first_chunk = {**request, "jobs": request["jobs"][:2]}
        runtime(queue_app).queue.enqueue(REVIEW_CHUNK_TASK, job_id, 0, 4, 0, first_chunk, 7)
        time.sleep(1.0)
        again = queue_client.get(answer.headers["Location"]).get_json()
        assert again["progress"] == {"done": 7, "total": 7} and again["result"] == record["result"]
    finally:
        queue_app.config["REVIEW_CHUNK_JOBS"] = 25


def test_jobs_alike_are_chunked_together_and_the_review_keeps_the_request_order(
        make_app: Callable[..., Flask]) -> None:
    from workers.tasks.review import shape_order

    other = {**SPEC, "training": {**SPEC["training"], "batch_size": SPEC["training"]["batch_size"] * 2}}
    request = _review(9)
    for i in (1, 4, 7):  # every third job another spec
        request["jobs"][i]["spec"] = other
    assert shape_order(request["jobs"]) == [0, 2, 3, 5, 6, 8, 1, 4, 7]
    inline = make_app(REPORT_INLINE_MAX_JOBS=100).test_client().post("/v1/reports", json=request).get_json()
    client = make_app(REPORT_INLINE_MAX_JOBS=2, REVIEW_CHUNK_JOBS=4).test_client()
    answer = client.post("/v1/reports", json=request, headers={"Prefer": "wait=20"})
    body = _document(client, answer)
    assert [j["name"] for j in body["jobs"]] == [f"job {i}" for i in range(9)]
    assert body["jobs"] == inline["jobs"] and body["total"] == inline["total"]
