"""Every bad request gets an RFC 9457 problem+json with the right status, never a 500."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.service_helpers import example_spec

PROBLEM = "application/problem+json"


def _problem(answer: Any, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == PROBLEM
    body: dict[str, Any] = json.loads(answer.get_data(as_text=True))
    assert body["status"] == status and body["title"] and body["type"]
    return body


def _post_raw(client: FlaskClient, path: str, body: str) -> Any:
    return client.post(path, data=body, content_type="application/json")


def test_wrong_content_type_is_415(embedded_client: FlaskClient) -> None:
    answer = embedded_client.post("/v1/estimate", data=json.dumps(example_spec()), content_type="text/plain")
    assert "text/plain" in _problem(answer, 415)["detail"]


def test_a_body_without_content_type_is_415(embedded_client: FlaskClient) -> None:
    _problem(embedded_client.post("/v1/recommendations", data=b"{}"), 415)


def test_malformed_json_is_400_saying_where(embedded_client: FlaskClient) -> None:
    body = _problem(_post_raw(embedded_client, "/v1/estimate", '{"model": {'), 400)
    assert "line 1" in body["detail"]


@pytest.mark.parametrize("body", ['{"n": ' + "9" * 5000 + "}", "[" * 100_000], ids=["5000-digit-int", "deep"])
def test_json_python_cannot_decode_is_400_not_500(embedded_client: FlaskClient, body: str) -> None:
    _problem(_post_raw(embedded_client, "/v1/estimate", body), 400)


def test_unknown_field_is_422_naming_it(embedded_client: FlaskClient) -> None:
    spec = example_spec()
    spec["training"]["warp_speed"] = 9
    body = _problem(embedded_client.post("/v1/estimate", json=spec), 422)
    assert "training.warp_speed" in body["errors"]


@pytest.mark.parametrize(("section", "field", "value"), [
    ("training", "batch_size", 0),
    ("training", "batch_size", 10**400),
    ("training", "epochs", -1),
    ("dataset", "samples", -5),
    ("constraints", "max_gpus", 0),
    ("training", "batch_size", 2.5),
    ("training", "precision", "fp7"),
])
def test_out_of_range_or_wrong_typed_numbers_are_422_naming_the_field(
        embedded_client: FlaskClient, section: str, field: str, value: Any) -> None:
    spec = example_spec()
    spec.setdefault(section, {})[field] = value
    body = _problem(embedded_client.post("/v1/recommendations", json=spec), 422)
    assert f"{section}.{field}" in body["errors"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_422_naming_the_field(embedded_client: FlaskClient, literal: str) -> None:
    raw = json.dumps(example_spec()).replace('"epochs": 90', f'"epochs": {literal}')
    assert literal in raw
    body = _problem(_post_raw(embedded_client, "/v1/estimate", raw), 422)
    assert "training.epochs" in body["errors"]


def test_body_over_the_limit_is_413(make_app: Callable[..., Flask]) -> None:
    client = make_app(MAX_CONTENT_LENGTH=1024).test_client()
    spec = example_spec()
    spec["constraints"]["regions"] = ["us-east-1"] * 200
    _problem(client.post("/v1/recommendations", json=spec), 413)


def test_unknown_job_id_is_404(embedded_client: FlaskClient) -> None:
    body = _problem(embedded_client.get("/v1/recommendations/" + "0" * 64), 404)
    assert "unknown" in body["detail"]


def test_unknown_path_is_404(embedded_client: FlaskClient) -> None:
    _problem(embedded_client.get("/v1/nothing-here"), 404)


def test_method_not_allowed_is_405_with_allow(embedded_client: FlaskClient) -> None:
    answer = embedded_client.put("/v1/estimate", json={})
    _problem(answer, 405)
    assert "POST" in answer.headers["Allow"]


def test_a_model_the_core_refuses_is_422_naming_the_field(embedded_client: FlaskClient) -> None:
    spec = example_spec()
    spec["model"] = {"preset": "resnet5O"}  # letter O: passes the schema, the core knows no such preset
    body = _problem(embedded_client.post("/v1/estimate", json=spec), 422)
    assert "model.preset" in body["errors"]


def test_with_api_keys_a_request_without_one_is_401(make_app: Callable[..., Flask]) -> None:
    client = make_app(API_KEYS="s3cret,other").test_client()
    answer = client.post("/v1/estimate", json=example_spec())
    _problem(answer, 401)
    assert answer.headers["WWW-Authenticate"].lower().startswith("bearer")
    _problem(client.post("/v1/estimate", json=example_spec(), headers={"Authorization": "Bearer nope"}), 401)


def test_with_api_keys_a_listed_key_or_its_sha256_is_let_in(make_app: Callable[..., Flask]) -> None:
    import hashlib

    digest = hashlib.sha256(b"s3cret").hexdigest()
    for setting in ("s3cret", digest):
        client = make_app(API_KEYS=setting).test_client()
        answer = client.get("/v1/catalog", headers={"Authorization": "Bearer s3cret"})
        assert answer.status_code == 200


def test_probes_and_docs_need_no_key(make_app: Callable[..., Flask]) -> None:
    client = make_app(API_KEYS="s3cret").test_client()
    for path in ("/healthz", "/readyz", "/openapi.json", "/docs"):
        assert client.get(path).status_code == 200, path


def test_an_unexpected_error_is_500_without_internals(make_app: Callable[..., Flask]) -> None:
    def broken_loader() -> Any:
        raise RuntimeError("secret internal detail")

    client = make_app(CATALOG_LOADER=broken_loader).test_client()
    body = _problem(client.get("/v1/catalog"), 500)
    assert "secret" not in json.dumps(body) and body["request_id"]


def test_a_sequence_too_long_to_size_names_the_sequence_not_an_internal_total(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"batch_size": 1, "sequence_length": 4_194_304, "precision": "bf16-mixed"}}
    body = _problem(_post_raw(embedded_client, "/v1/estimate", json.dumps(spec)), 422)
    assert "training.sequence_length" in body["errors"] and "model.stats" not in json.dumps(body)
    assert "4,194,304 tokens" in body["errors"]["training.sequence_length"][0]
    spec["training"]["sequence_length"] = 131_072  # long, but sized: an answer, not an error
    assert _post_raw(embedded_client, "/v1/estimate", json.dumps(spec)).status_code == 200
