"""GET /openapi.json (OpenAPI 3.1 from the same schemas) and GET /docs, served without a CDN."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask import Flask
from flask.testing import FlaskClient

CONTRACT_PATHS = ("/v1/estimate", "/v1/recommendations", "/v1/recommendations/{job_id}", "/v1/catalog",
                  "/v1/catalog/gpus", "/v1/catalog/instances", "/healthz", "/readyz")


def test_the_spec_is_openapi_3_1_with_every_contract_path(embedded_client: FlaskClient) -> None:
    spec = embedded_client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    assert set(CONTRACT_PATHS) <= set(spec["paths"])


def test_the_spec_documents_errors_as_problem_json(embedded_client: FlaskClient) -> None:
    spec = embedded_client.get("/openapi.json").get_json()
    estimate = spec["paths"]["/v1/estimate"]["post"]["responses"]
    for status in ("413", "415", "422"):
        assert "application/problem+json" in estimate[status]["content"], status
    shared = spec["components"]["responses"]
    assert all("application/json" not in r.get("content", {}) for r in shared.values())


def test_the_spec_refuses_unknown_fields_like_the_api(embedded_client: FlaskClient) -> None:
    schemas = embedded_client.get("/openapi.json").get_json()["components"]["schemas"]
    assert schemas["JobSpec"]["additionalProperties"] is False


def test_the_docs_page_loads_its_assets_from_this_server(embedded_client: FlaskClient) -> None:
    page = embedded_client.get("/docs")
    assert page.status_code == 200
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.get_data(as_text=True))
    assert sources and all(s.startswith("/docs/assets/") for s in sources)
    for source in sources:
        asset = embedded_client.get(source)
        asset.close()
        assert asset.status_code == 200, source


def test_with_api_keys_the_spec_asks_for_a_bearer_key_except_on_the_probes(make_app: Callable[..., Flask]) -> None:
    spec = make_app(API_KEYS="s3cret").test_client().get("/openapi.json").get_json()
    assert spec["security"] == [{"bearerAuth": []}]
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert spec["paths"]["/healthz"]["get"]["security"] == []


def test_an_open_api_declares_no_security(embedded_client: FlaskClient) -> None:
    assert "security" not in embedded_client.get("/openapi.json").get_json()
