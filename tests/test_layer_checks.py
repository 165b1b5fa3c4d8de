"""Layer lists that are wrong say where and why; graph features: frozen, shared, repeated layers; totals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from workers.sizing.errors import ShapeError, SpecError, UnknownNameError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.stats import ModelStats


def stats(layers: list[dict[str, object]], shape: list[int] | None = None, seq: int | None = None) -> ModelStats:
    return compute_model_stats(layers, input_shape=shape, sequence_length=seq)


def test_unknown_layer_type_suggests_the_closest() -> None:
    with pytest.raises(UnknownNameError) as caught:
        stats([{"type": "relu"}, {"type": "conv2"}], [3, 8, 8])
    assert caught.value.field == "model.layers[1].type"
    assert "conv2d" in caught.value.suggestions


def test_misspelt_field_suggests_the_right_one() -> None:
    with pytest.raises(UnknownNameError) as caught:
        stats([{"type": "conv2d", "out_channels": 8, "kernal": 3}], [3, 8, 8])
    assert caught.value.field == "model.layers[0].kernal"
    assert "kernel" in caught.value.suggestions


@pytest.mark.parametrize("bad", [-3, 0, 2.5, True, "3", float("nan")])
def test_kernel_must_be_a_positive_whole_number(bad: object) -> None:
    with pytest.raises(SpecError) as caught:
        stats([{"type": "conv2d", "out_channels": 8, "kernel": bad}], [3, 8, 8])
    assert caught.value.field == "model.layers[0].kernel"


def test_whole_floats_are_accepted_as_integers() -> None:
    assert stats([{"type": "dense", "out_features": 10.0}], [4]).parameters == 50


def test_missing_required_field_is_named() -> None:
    with pytest.raises(SpecError) as caught:
        stats([{"type": "conv2d", "kernel": 3}], [3, 8, 8])
    assert caught.value.field == "model.layers[0].out_channels"


def test_kernel_larger_than_the_input_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match=r"does not fit input \[3, 4, 4\]"):
        stats([{"type": "conv2d", "out_channels": 8, "kernel": 7}], [3, 4, 4])


def test_inputs_naming_no_earlier_layer_suggest_one() -> None:
    with pytest.raises(UnknownNameError) as caught:
        stats([{"type": "relu", "name": "stem"}, {"type": "add", "inputs": ["stem", "stme2"]}], [3, 8, 8])
    assert caught.value.field == "model.layers[1].inputs"


def test_duplicate_layer_names_are_rejected() -> None:
    with pytest.raises(SpecError, match="taken"):
        stats([{"type": "relu", "name": "a"}, {"type": "relu", "name": "a"}], [3])


def test_negative_input_shape_is_rejected() -> None:
    with pytest.raises(SpecError) as caught:
        stats([{"type": "relu"}], [3, -224, 224])
    assert caught.value.field == "model.input_shape[1]"


def test_field_prefix_locates_errors_inside_another_document() -> None:
    with pytest.raises(SpecError) as caught:
        compute_model_stats(
            [{"type": "relu", "bogus": 1}],
            input_shape=[3],
            sequence_length=None,
            field_prefix="jobs[2].model.layers",
        )
    assert caught.value.field == "jobs[2].model.layers[0].bogus"


def test_frozen_layers_count_frozen_parameters_and_keep_nothing() -> None:
    m = stats([{"type": "dense", "out_features": 8, "frozen": True}, {"type": "relu", "frozen": True}], [4])
    assert m.parameters == 0
    assert m.frozen_parameters == 40
    assert all(r.saved_values == 0 for r in m.layers)


def test_shared_weights_are_not_counted_twice() -> None:
    m = stats(
        [
            {"type": "dense", "out_features": 8, "bias": False},
            {"type": "dense", "out_features": 8, "bias": False, "shared_weights": True},
        ],
        [8],
    )
    assert m.parameters == 64
    assert m.multiply_adds == 128


def test_repeat_multiplies_work_but_not_weights() -> None:
    once = stats([{"type": "dense", "out_features": 8}], [4])
    thrice = stats([{"type": "dense", "out_features": 8, "repeat": 3}], [4])
    assert thrice.parameters == once.parameters
    assert thrice.multiply_adds == 3 * once.multiply_adds
    assert thrice.neurons == 3 * once.neurons


def test_totals_are_the_sums_of_the_rows() -> None:
    m = stats(
        [
            {"type": "conv2d", "out_channels": 8, "kernel": 3},
            {"type": "relu"},
            {"type": "global_avg_pool"},
            {"type": "dense", "out_features": 2},
        ],
        [3, 32, 32],
    )
    assert m.neurons == sum(r.neurons for r in m.layers) == 8 * 30 * 30 * 2 + 8 + 2
    assert m.parameters == sum(r.parameters for r in m.layers)
    assert m.multiply_adds == sum(r.multiply_adds for r in m.layers)


def test_the_documented_example_computes() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "layers.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(.*?)```", text, re.S)
    assert block is not None
    spec = json.loads(block.group(1))
    m = stats(spec["model"]["layers"], spec["model"]["input_shape"])
    assert m.layers[-1].output_shape == (10,)
    assert m.parameters == (3 * 9 * 32 + 64) + 2 * (32 * 9 * 32 + 64) + (32 * 10 + 10)  # stem, block, head
