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


def test_a_presets_images_take_another_input_shape_and_the_wrong_forms_are_refused_by_name(
        embedded_client: FlaskClient) -> None:
    def estimate(model: dict[str, Any]) -> Any:
        return embedded_client.post("/v1/estimate", json={"model": model, "training": {"batch_size": 128}})

    cifar, imagenet = estimate({"preset": "resnet18", "input_shape": [3, 32, 32]}), estimate({"preset": "resnet18"})
    assert cifar.status_code == 200 and imagenet.status_code == 200  # it was a 422: "goes with layers only"
    small, big = cifar.get_json(), imagenet.get_json()
    assert small["gpu_memory_breakdown"]["activations"] * 40 < big["gpu_memory_breakdown"]["activations"]
    assert small["gpu_memory_breakdown"]["parameters"] == big["gpu_memory_breakdown"]["parameters"]
    for model in ({"preset": "gpt2", "input_shape": [3, 32, 32]},  # token ids: the sequence length says it
                  {"stats": {"neurons": 1, "parameters": 1, "multiply_adds": 1}, "input_shape": [3]},
                  {"preset": "resnet18", "input_shape": [32, 32]}):  # a convolution reads [channels, h, w]
        answer = estimate(model)
        assert answer.status_code == 422, model
        assert any(key.startswith("model.input_shape") for key in answer.get_json()["errors"]), answer.get_json()
