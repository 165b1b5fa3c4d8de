"""Spec loading shared by every face: flat field errors, defaults, canonical form, human units."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from workers.schemas.humanize import apply_human_units, parse_count
from workers.schemas.specs import canonical_json, flatten_errors, load_job, spec_digest, validate_spec

SPEC = {"model": {"preset": "resnet18"}, "training": {"batch_size": 32}}


def test_flatten_errors_gives_dotted_paths_with_list_indices() -> None:
    nested = {"model": {"_schema": ["give exactly one"], "layers": {3: {"kernel": ["Missing."]}}},
              "training": {"batch_size": ["Too small."]}}
    assert flatten_errors(nested) == {"model": ["give exactly one"], "model.layers[3].kernel": ["Missing."],
                                      "training.batch_size": ["Too small."]}


def test_every_section_gets_its_documented_defaults() -> None:
    data = validate_spec(SPEC)
    assert data["training"]["precision"] == "fp32" and data["training"]["optimizer"] == "adam"
    assert data["constraints"]["providers"] == ["aws", "gcp"]  # the clouds; buying is asked for
    assert data["constraints"]["onprem"]["lifetime_years"] == 3.0
    assert data["constraints"]["owned_gpus"] == [] and data["constraints"]["spot_percentile"] == 0.9
    assert data["dataset"]["loader_workers"] is None and data["dataset"]["preprocess_serial"] is False
    assert data["objective"] == "cost" and data["limit"] == 10
    assert data["training"]["tf32_matmul"] is None  # the framework's default


def test_tf32_matmul_reaches_the_core() -> None:
    for value in (False, True, None):
        _, job = load_job({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, "tf32_matmul": value}})
        assert job.training.tf32_matmul is value


def test_equal_specs_have_equal_canonical_forms_and_digests() -> None:
    a = validate_spec({"training": {"epochs": 7, "batch_size": 32}, "model": {"preset": "resnet18"}})
    b = validate_spec({"model": {"preset": "resnet18"}, "training": {"batch_size": 32, "epochs": 7.0}})
    assert canonical_json(a) == canonical_json(b)
    assert spec_digest(a, catalog_version="v1") == spec_digest(b, catalog_version="v1")
    assert spec_digest(a, catalog_version="v1") != spec_digest(a, catalog_version="v2")


def test_a_different_spec_has_a_different_digest() -> None:
    a = validate_spec(SPEC)
    b = validate_spec({**SPEC, "training": {"batch_size": 64}})
    assert spec_digest(a, catalog_version="v1") != spec_digest(b, catalog_version="v1")


@pytest.mark.parametrize(("raw", "field"), [
    ([1, 2], "body"),
    ({"training": {"batch_size": 8}}, "model"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": True}}, "training.batch_size"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 2.5}}, "training.batch_size"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 10**400}}, "training.batch_size"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 8}, "extra": 1}, "extra"),
    ({"model": {"onnx": "%%%"}, "training": {"batch_size": 8}}, "model.onnx"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, "epochs": float("inf")}}, "training.epochs"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, "precision": "fp7"}}, "training.precision"),
    ({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, "tf32_matmul": "maybe"}}, "training.tf32_matmul"),
])
def test_bad_specs_name_the_field(raw: object, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        load_job(raw)
    assert field in info.value.messages


def test_core_errors_come_out_as_field_errors_too() -> None:
    with pytest.raises(ValidationError) as info:
        load_job({"model": {"preset": "gpt3"}, "training": {"batch_size": 8}})
    assert list(info.value.messages) == ["model.preset"]


def test_human_units_become_plain_numbers() -> None:
    raw = {**SPEC, "dataset": {"bytes": "150GB", "samples": "1.28M"},
           "constraints": {"budget_usd": "$500", "deadline_hours": "2d"}}
    out = apply_human_units(raw)
    assert out["dataset"] == {"bytes": 150 * 10**9, "samples": 1_280_000}
    assert out["constraints"] == {"budget_usd": 500.0, "deadline_hours": 48.0}
    assert raw["dataset"]["bytes"] == "150GB"  # the input is not changed


@pytest.mark.parametrize(("text", "count"), [("1281167", 1281167), ("50k", 50_000), ("1.28M", 1_280_000),
                                             ("2B", 2 * 10**9), ("1T", 10**12), ("15t", 15 * 10**12)])
def test_parse_count_reads_suffixes(text: str, count: int) -> None:
    assert parse_count(text) == count


@pytest.mark.parametrize("text", ["", "-5", "1.2.3", "ten", "5x"])
def test_parse_count_refuses_what_is_not_a_count(text: str) -> None:
    with pytest.raises(ValueError):
        parse_count(text)


def test_a_sequence_length_said_as_a_context_is_binary() -> None:
    # "--seq 2k" was refused by the CLI ("invalid int value"); a context of 4k is 4,096 tokens, as Slack reads it
    out = apply_human_units({**SPEC, "training": {"batch_size": 8, "sequence_length": "4k"}})
    assert out["training"]["sequence_length"] == 4096
    assert apply_human_units({**SPEC, "training": {"batch_size": 8, "sequence_length": "2048"}})["training"] == {
        "batch_size": 8, "sequence_length": 2048}
    with pytest.raises(ValidationError) as info:
        apply_human_units({**SPEC, "training": {"batch_size": 8, "sequence_length": "0"}})
    assert list(info.value.messages) == ["training.sequence_length"]


def test_a_bad_human_unit_names_its_field() -> None:
    with pytest.raises(ValidationError) as info:
        apply_human_units({**SPEC, "dataset": {"bytes": "lots"}})
    assert list(info.value.messages) == ["dataset.bytes"]


@pytest.mark.parametrize(("layers", "field", "words"), [
    ([{"type": "linear", "out_features": 8}, 5], "model.layers[1]", "mapping"),
    ([{"type": "linear", "out_features": 8}, {"type": "linear", "out_features": 10**30}],
     "model.layers[1].out_features", "finite number"),
    ([{"type": "linear", "out_features": float("inf")}], "model.layers[0].out_features", "finite number"),
    ([{"type": "conv2d", "out_channels": 8, "kernel_size": [3, 10**30]}], "model.layers[0].kernel_size", "finite"),
    ("relu", "model.layers", "list"),
    ([], "model.layers", "Length"),
])
def test_a_bad_layer_list_is_refused_naming_the_layer(layers: object, field: str, words: str) -> None:
    raw = {"model": {"layers": layers, "input_shape": [4]}, "training": {"batch_size": 2}}
    with pytest.raises(ValidationError) as refused:
        validate_spec(raw)
    messages = refused.value.messages
    assert isinstance(messages, dict) and field in messages, messages
    assert words.lower() in str(messages[field]).lower() or words == "Length", messages


def test_a_layer_list_loads_as_copies_of_its_layers() -> None:
    layers = [{"type": "linear", "out_features": 8, "name": "fc"}, {"type": "relu"}]
    loaded = validate_spec({"model": {"layers": layers, "input_shape": [4]}, "training": {"batch_size": 2}})
    assert loaded["model"]["layers"] == layers
    assert all(a is not b for a, b in zip(loaded["model"]["layers"], layers, strict=True))
