"""The spec's `model` in each of its four forms resolves to statistics; anything else is refused clearly."""

from __future__ import annotations

import base64

import pytest
from onnx_builders import RESIDUAL_CNN_LAYERS, residual_cnn_onnx

from workers.modelimport.models import resolve_model
from workers.sizing.errors import OnnxError, SpecError, UnknownNameError
from workers.sizing.presets.registry import preset_stats


def test_preset_form_uses_the_training_sequence_length() -> None:
    m = resolve_model({"preset": "gpt2"}, sequence_length=256)
    assert m.sequence_length == 256
    assert m.multiply_adds == preset_stats("gpt2", sequence_length=256).multiply_adds


def test_preset_form_accepts_an_input_shape() -> None:
    m = resolve_model({"preset": "resnet18", "input_shape": [3, 448, 448]}, sequence_length=None)
    assert m.multiply_adds > 3 * preset_stats("resnet18").multiply_adds


def test_stats_form_gives_totals_without_rows() -> None:
    m = resolve_model(
        {"stats": {"neurons": 11e6, "parameters": 25_600_000, "multiply_adds": 4.1e9}}, sequence_length=None
    )
    assert (m.neurons, m.parameters, m.multiply_adds) == (11_000_000, 25_600_000, 4_100_000_000)
    assert m.layers == ()


def test_layers_form_and_onnx_form_agree() -> None:
    layers = resolve_model({"layers": RESIDUAL_CNN_LAYERS, "input_shape": [3, 16, 16]}, sequence_length=None)
    text = base64.b64encode(residual_cnn_onnx()).decode()
    from_text = resolve_model({"onnx": text}, sequence_length=None)
    from_bytes = resolve_model({"onnx": residual_cnn_onnx()}, sequence_length=None)
    assert (layers.neurons, layers.parameters, layers.multiply_adds) == (
        from_text.neurons,
        from_text.parameters,
        from_text.multiply_adds,
    )
    assert from_bytes.parameters == from_text.parameters


@pytest.mark.parametrize(
    "model", [{}, {"preset": "resnet50", "stats": {"neurons": 1, "parameters": 1, "multiply_adds": 1}}]
)
def test_not_exactly_one_form_is_a_spec_error(model: dict[str, object]) -> None:
    with pytest.raises(SpecError, match="exactly one") as caught:
        resolve_model(model, sequence_length=None)
    assert caught.value.field == "model"


def test_unknown_model_field_suggests_the_right_one() -> None:
    with pytest.raises(UnknownNameError) as caught:
        resolve_model({"preset": "resnet50", "input_shap": [3, 224, 224]}, sequence_length=None)
    assert "input_shape" in caught.value.suggestions


@pytest.mark.parametrize(
    ("stats", "field"),
    [
        ({"neurons": -1, "parameters": 10, "multiply_adds": 10}, "model.stats.neurons"),
        ({"neurons": 1, "parameters": float("inf"), "multiply_adds": 10}, "model.stats.parameters"),
        ({"neurons": 1, "parameters": 10}, "model.stats.multiply_adds"),
    ],
)
def test_bad_totals_name_their_field(stats: dict[str, object], field: str) -> None:
    with pytest.raises(SpecError) as caught:
        resolve_model({"stats": stats}, sequence_length=None)
    assert caught.value.field == field


def test_input_shape_does_not_go_with_plain_totals() -> None:
    with pytest.raises(SpecError) as caught:
        resolve_model(
            {"stats": {"neurons": 1, "parameters": 1, "multiply_adds": 1}, "input_shape": [3]},
            sequence_length=None,
        )
    assert caught.value.field == "model.input_shape"


def test_text_that_is_not_base64_is_an_onnx_error() -> None:
    with pytest.raises(OnnxError) as caught:
        resolve_model({"onnx": "this is not base64!"}, sequence_length=None)
    assert caught.value.field == "model.onnx"


def test_unknown_preset_is_reported_with_suggestions() -> None:
    with pytest.raises(UnknownNameError, match="did you mean"):
        resolve_model({"preset": "resnet-5O"}, sequence_length=None)
