"""A repeated layer placed from its first rows (layers/build.py) gives what working it out afresh gives."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workers.sizing.errors import SizingError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.stats import ModelStats

# Layers that keep the [16, 8, 8] feature map's shape, so that any sequence of them is a valid model; some
# keep their input or output for backward, some are views, some carry lists, floats or flags.
_PALETTE: list[dict[str, Any]] = [
    {"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
    {"type": "conv2d", "out_channels": 16, "kernel": [3, 3], "padding": [1, 1]},
    {"type": "conv2d", "out_channels": 16.0, "kernel": 1},
    {"type": "batchnorm"},
    {"type": "relu"},
    {"type": "relu", "frozen": True},
    {"type": "dropout", "p": 0.1},
    {"type": "dropout", "p": 0.1, "repeat": 2},
    {"type": "gelu"},
    {"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1, "passes": 2},
]


def _outcome(layers: list[dict[str, Any]]) -> ModelStats | tuple[str, str]:
    try:
        return compute_model_stats(layers, input_shape=[16, 8, 8], sequence_length=None)
    except SizingError as exc:
        return exc.field, exc.reason


def _afresh(layers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same model with every layer named as its default: no layer takes the repeat's short path."""
    out = []
    for i, layer in enumerate(layers):
        out.append({**layer, "name": layer.get("name", _default_name(layer, i))})
    return out


def _default_name(layer: dict[str, Any], index: int) -> str:
    return f"{layer['type']}_{index}"  # the palette's types are canonical


_blocks = st.lists(st.integers(0, len(_PALETTE) - 1), min_size=1, max_size=4)


@settings(deadline=None)  # a shared machine's load is no failure
@given(_blocks, st.integers(1, 30), st.lists(st.integers(0, 119), max_size=3), st.booleans())
def test_repeated_blocks_give_the_rows_worked_out_one_by_one(block: list[int], repeats: int,
                                                             residuals: list[int], collide: bool) -> None:
    layers: list[dict[str, Any]] = [{"type": "relu", "name": "stem"}]
    for _ in range(repeats):
        layers += [copy.deepcopy(_PALETTE[k]) for k in block]
    for at in residuals:  # a residual add from the stem somewhere down the list
        layers.insert(1 + at % len(layers), {"type": "add", "from": "stem"})
    if collide:  # a later layer named as an earlier layer's default name: refused at the same index
        layers.append({"type": "relu", "name": _default_name(layers[1], 1)})
    fast = _outcome(layers)
    assert fast == _outcome(_afresh(layers))
    assert repr(fast) == repr(_outcome(_afresh(layers)))  # 1 and 1.0 apart too


def test_a_refused_layer_far_down_a_repeated_list_is_named_at_its_index() -> None:
    layers: list[dict[str, Any]] = [{"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
                                    {"type": "relu"}] * 3000
    layers = [dict(layer) for layer in layers]
    layers[4711] = {"type": "conv2d", "out_channels": 16, "kernel": [3, 3, 3]}
    assert _outcome(layers) == ("model.layers[4711].kernel", "needs 2 values (one per spatial axis), got 3")


def test_a_repeat_after_a_kept_and_after_an_unkept_input_keeps_what_each_keeps() -> None:
    conv = _PALETTE[0]
    block = [{"type": "batchnorm"}, conv, {"type": "relu"}, conv, {"type": "dropout", "p": 0.1}, conv,
             {"type": "gelu"}, conv, {"type": "reshape", "shape": [16, 8, 8]}, conv]
    layers = [copy.deepcopy(layer) for _ in range(20) for layer in block]
    assert _outcome(layers) == _outcome(_afresh(layers))


def test_a_default_name_taken_by_an_earlier_layer_is_refused_at_the_repeat() -> None:
    for kind in ("relu", "dropout", "batchnorm"):  # keeping its output, a mask, its input
        layers: list[dict[str, Any]] = [{"type": kind}, {"type": kind}, {"type": kind, "name": f"{kind}_5"},
                                        {"type": kind}, {"type": kind}, {"type": kind}]
        assert _outcome(layers) == ("model.layers[5].name",
                                    f"must be a new, non-empty name; '{kind}_5' is taken or invalid")
