"""A recommendation spec that the job would refuse is refused at submit time, with the field named."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.service_helpers import example_spec


@pytest.mark.parametrize(("change", "field"), [
    ({"model": {"preset": "resnt50"}}, "model.preset"),
    ({"constraints": {"regions": ["mars-1"]}}, "constraints.regions"),
    ({"training": {"batch_size": 8, "profile": {"gpu": "gtx-9999", "iteration_ms": 50.0}}},
     "training.profile.gpu"),
    ({"model": {"layers": [{"type": "dense", "units": 10}], "input_shape": [3, 32, 32]}}, "model.layers[0]"),
])
def test_a_spec_the_job_would_refuse_is_a_422_at_submit(
        embedded_client: FlaskClient, change: dict[str, Any], field: str) -> None:
    answer = embedded_client.post("/v1/recommendations", json={**example_spec("bert-finetune"), **change})
    body = answer.get_json()
    assert answer.status_code == 422
    assert answer.mimetype == "application/problem+json"
    assert any(key.startswith(field) for key in body["errors"]), body
    assert "Location" not in answer.headers
