"""The OpenAPI document says what the service does: Accept chooses a report's media type, report jobs and
review results validate against their declared schemas (every field declared, typed), undeclared query
parameters are refused as the document says."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from flask import Flask
from flask.testing import FlaskClient

from service.api.reports import INLINE_MAX_JOBS
from tests.service_helpers import wait_for_job

EXAMPLE = {key: value for key, value in json.loads(
    (Path(__file__).resolve().parent.parent / "examples" / "budget-review.json").read_text()).items()
    if key != "format"}  # the media type is the test's to choose
# The example review mixes a dozen jobs; an inline answer takes at most INLINE_MAX_JOBS of them.
EXAMPLE = {**EXAMPLE, "jobs": EXAMPLE["jobs"][:INLINE_MAX_JOBS]}


def document_schema(client: FlaskClient, name: str) -> dict[str, Any]:
    """Return a component schema with the document's components beside it, for jsonschema."""
    spec = client.get("/openapi.json").get_json()
    return {**spec["components"]["schemas"][name], "components": spec["components"]}


def validator(client: FlaskClient, name: str) -> jsonschema.Draft202012Validator:
    spec = client.get("/openapi.json").get_json()
    schema = {"$ref": f"#/components/schemas/{name}", "components": spec["components"]}
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize(("accept", "media_type"), [
    ("text/csv", "text/csv"), ("text/markdown", "text/markdown"), ("text/html", "text/html"),
    ("application/json", "application/json"), ("*/*", "application/json")])
def test_accept_chooses_the_reports_media_type(embedded_client: FlaskClient, accept: str, media_type: str) -> None:
    answer = embedded_client.post("/v1/reports", json=EXAMPLE, headers={"Accept": accept})
    assert answer.status_code == 200
    assert answer.mimetype == media_type


def test_a_format_named_in_the_body_wins_over_accept(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/reports", json={**EXAMPLE, "format": "csv"}, headers={"Accept": "text/html"})
    assert answer.mimetype == "text/csv"


def test_every_report_media_type_is_documented(embedded_client: FlaskClient) -> None:
    spec = embedded_client.get("/openapi.json").get_json()
    for path, method in (("/v1/reports", "post"), ("/v1/reports/{job_id}", "get")):
        content = spec["paths"][path][method]["responses"]["200"]["content"]
        assert {"application/json", "text/csv", "text/markdown", "text/html"} <= set(content), path


def test_a_review_and_its_job_validate_against_the_document(make_app: Callable[..., Flask]) -> None:
    client = make_app(REPORT_INLINE_MAX_JOBS=0).test_client()
    queued = client.post("/v1/reports", json=EXAMPLE)
    assert queued.status_code == 202
    job_schema = validator(client, "ReviewJobStatus")
    job_schema.validate(queued.get_json())
    done = wait_for_job(client, queued.headers["Location"], timeout_s=60)
    assert done["status"] == "done" and {"progress", "created_at", "updated_at", "expires_after_s"} <= set(done)
    job_schema.validate(done)  # the result (every job's sweep advice with its message) included
    advice = [j["sweep_comparison"]["advice"] for j in done["result"]["jobs"]
              if j.get("sweep_comparison") and j["sweep_comparison"].get("advice")]
    assert advice and all(isinstance(a["message"], str) for a in advice)


@pytest.mark.parametrize(("name", "field"), [("Requirements", "storage_bytes"), ("Recommendation", "catalog"),
                                             ("ReviewResult", "catalog"), ("SweepAdvice", "kind"),
                                             ("SweepAdvice", "advised"), ("SweepAdvice", "message")])
def test_fields_the_contract_shapes_have_a_type(embedded_client: FlaskClient, name: str, field: str) -> None:
    assert "type" in document_schema(embedded_client, name)["properties"][field]


@pytest.mark.parametrize("path", ["/v1/catalog", "/healthz", "/readyz", "/v1/recommendations/nope",
                                  "/v1/catalog/instances", "/v1/reports/review-nope"])
def test_an_undeclared_query_parameter_is_a_422_naming_it(embedded_client: FlaskClient, path: str) -> None:
    answer = embedded_client.get(path + "?not_a_filter=1")
    assert answer.status_code == 422
    assert answer.content_type == "application/problem+json"
    assert "not_a_filter" in answer.get_json()["errors"]


def test_the_slack_command_is_in_the_document_without_an_api_key(make_app: Callable[..., Flask]) -> None:
    spec = make_app(API_KEYS="k").test_client().get("/openapi.json").get_json()
    operation = spec["paths"]["/slack/commands"]["post"]
    assert operation["security"] == []
    assert "application/x-www-form-urlencoded" in operation["requestBody"]["content"]


def test_submit_answers_link_to_the_job_they_name(embedded_client: FlaskClient) -> None:
    spec = embedded_client.get("/openapi.json").get_json()
    for path, target in (("/v1/recommendations", "/v1/recommendations/{job_id}"),
                         ("/v1/reports", "/v1/reports/{job_id}")):
        (link,) = spec["paths"][path]["post"]["responses"]["202"]["links"].values()
        assert link["parameters"] == {"job_id": "$response.body#/id"}
        pointer = link["operationRef"].removeprefix("#/paths/").removesuffix("/get").replace("~1", "/")
        assert pointer == target and "get" in spec["paths"][target]
