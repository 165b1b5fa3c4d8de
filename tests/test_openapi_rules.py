"""The rules the OpenAPI document states beyond the fields (service/openapi_rules.py) are the service's:
what the document refuses the service refuses, what it accepts the service answers; the unstated rules
name the errors they are for and no others."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from flask.testing import FlaskClient

from service.openapi_rules import _COMMON_LAYER_FIELDS, LAYER_LIST, REGION, UNSTATED_RULES
from workers.sizing.layers.build import ALIASES, RULES
from workers.sizing.layers.fields import COMMON_KEYS


def _validator(client: FlaskClient, name: str) -> jsonschema.Draft202012Validator:
    spec = client.get("/openapi.json").get_json()
    return jsonschema.Draft202012Validator({"$ref": f"#/components/schemas/{name}",
                                            "components": spec["components"]})


def test_every_common_layer_field_is_typed_and_every_layer_type_has_one_branch(
        embedded_client: FlaskClient) -> None:
    assert set(_COMMON_LAYER_FIELDS) == COMMON_KEYS - {"type"}
    spec = embedded_client.get("/openapi.json").get_json()
    branches = spec["components"]["schemas"]["Model"]["properties"]["layers"]["items"]["oneOf"]
    names = [name for branch in branches for name in branch["properties"]["type"]["enum"]]
    assert sorted(names) == sorted({*RULES, *ALIASES})  # each type and alias in exactly one branch
    dense = next(b for b in branches if "dense" in b["properties"]["type"]["enum"])
    assert set(dense["propertyNames"]["enum"]) == COMMON_KEYS | RULES["dense"].keys


DENSE = {"type": "fc", "units": 4}


@pytest.mark.parametrize(("body", "field"), [
    ({"model": {"layers": [DENSE]}, "training": {"batch_size": 1}}, "model.input_shape"),
    ({"model": {"layers": [{**DENSE, "kernel": 3}], "input_shape": [8]}, "training": {"batch_size": 1}},
     "model.layers[0].kernel"),
    ({"model": {"layers": [{**DENSE, "name": "input"}], "input_shape": [8]}, "training": {"batch_size": 1}},
     "model.layers[0].name"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 1, "parallelism": {
        "data_parallel": "zero1", "offload": {"parameters": True}}}}, "training.parallelism.offload.parameters"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 1}, "gpus": ["t5"]}, "gpus[0]"),
    ({"model": {"stats": {"neurons": 1, "parameters": 1, "multiply_adds": 1}, "input_shape": [8]},
      "training": {"batch_size": 1}}, "model.input_shape"),
])
def test_what_the_document_refuses_the_service_refuses_naming_the_field(
        embedded_client: FlaskClient, body: dict[str, Any], field: str) -> None:
    assert not _validator(embedded_client, "EstimateRequest").is_valid(body)
    answer = embedded_client.post("/v1/estimate", json=body)
    assert answer.status_code == 422 and field in answer.get_json()["errors"], answer.get_json()


@pytest.mark.parametrize("body", [
    {"model": {"layers": [DENSE], "input_shape": [8]}, "training": {"batch_size": 1}},
    {"model": {"layers": [{"type": "embedding", "vocab": 100, "dim": 8}]},
     "training": {"batch_size": 1, "sequence_length": 16}},
    {"model": {"preset": "resnet50"}, "training": {"batch_size": 1, "parallelism": {
        "data_parallel": "fsdp", "offload": {"parameters": True}}}, "gpus": ["t4"]},
    {"model": {"preset": "resnet18", "input_shape": [3, 32, 32]}, "training": {"batch_size": 1}},
])
def test_what_the_document_accepts_the_service_answers(embedded_client: FlaskClient, body: dict[str, Any]) -> None:
    assert _validator(embedded_client, "EstimateRequest").is_valid(body)
    assert embedded_client.post("/v1/estimate", json=body).status_code == 200


def test_an_unstated_rule_names_its_errors_and_no_stated_one() -> None:
    assert LAYER_LIST.names("jobs[3].spec.model.layers[2]", "layer 2 (fc_2, dense): dense expects 1-D or 2-D")
    assert LAYER_LIST.names("spec.model.layers[0].out_features", "required for a dense layer")
    assert not LAYER_LIST.names("model.layers[0].kernel", "a dense layer has no field 'kernel'")
    assert not LAYER_LIST.names("model.input_shape", "required with layers")
    assert REGION.names("dataset.location.region", "unknown aws region 'mars-1'")
    assert not REGION.names("gpus[0]", "unknown region 'x'")
    assert all(rule in UNSTATED_RULES[("/v1/reports", "post")] for rule in UNSTATED_RULES[("/v1/estimate", "post")])


def test_each_listed_operation_documents_its_rules_in_its_422_response(embedded_client: FlaskClient) -> None:
    paths = embedded_client.get("/openapi.json").get_json()["paths"]
    for (path, method), rules in UNSTATED_RULES.items():
        description = paths[path][method]["responses"]["422"]["description"]
        assert all(rule.text in description for rule in rules), path


@pytest.mark.parametrize("training, constraints", [
    # Longer than the deadline (the run must end by then), and longer than the whole run on the slowest card.
    ({"batch_size": 32, "checkpoint_every_hours": 500}, {"deadline_hours": 100}),
    ({"batch_size": 32, "checkpoint_every_hours": 5000}, {}),
])
def test_both_checkpoint_refusals_of_a_ranking_are_named_by_its_listed_rule(
        embedded_client: FlaskClient, training: dict[str, Any], constraints: dict[str, Any]) -> None:
    from service.openapi_rules import CHECKPOINTS

    body = {"model": {"preset": "resnet18"}, "training": training, "constraints": constraints,
            "dataset": {"samples": 50_000}}
    answer = embedded_client.post("/v1/recommendations", json=body)
    assert answer.status_code == 422, answer.get_json()
    (field, (reason, *_)), = answer.get_json()["errors"].items()
    assert CHECKPOINTS.names(field, reason), (field, reason)
    assert CHECKPOINTS in UNSTATED_RULES[("/v1/recommendations", "post")]
    assert not CHECKPOINTS.names(field, "Must be greater than 0.")
