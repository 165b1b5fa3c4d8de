"""The layer list's fast reading (workers/schemas/layer_list.py) loads and refuses exactly as the plain fields do."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from marshmallow import Schema, ValidationError, fields, validates

from workers.schemas.layer_list import MAX_LAYER_NUMBER, LayerList, unbounded_number_errors, unbounded_numbers
from workers.schemas.specs import flatten_errors


class _Fast(Schema):
    layers = LayerList(fields.Dict(keys=fields.String()))

    @validates("layers")
    def _numbers(self, layers: list[dict[str, Any]], **_: Any) -> None:
        errors = unbounded_number_errors(layers)
        if errors:
            raise ValidationError(errors)


class _Plain(Schema):
    """Every layer through marshmallow's fields and every layer's values checked one by one."""

    layers = fields.List(fields.Dict(keys=fields.String()))

    @validates("layers")
    def _numbers(self, layers: list[dict[str, Any]], **_: Any) -> None:
        errors = {index: bad for index, layer in enumerate(layers) if (bad := unbounded_numbers(layer))}
        if errors:
            raise ValidationError(errors)


def _outcome(schema: Schema, layers: object) -> tuple[str, Any]:
    try:
        return "loaded", schema.load({"layers": layers})["layers"]
    except ValidationError as exc:
        return "refused", flatten_errors(exc.messages)


_numbers = st.one_of(
    st.integers(min_value=-3, max_value=3), st.sampled_from([MAX_LAYER_NUMBER, MAX_LAYER_NUMBER + 1,
                                                             -MAX_LAYER_NUMBER - 1, 10**400, 512]),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e15, 1.5e15, math.inf, -math.inf, math.nan]), st.booleans(),
)
_scalars = st.one_of(_numbers, st.none(), st.sampled_from(["relu", "dense", "a"]))
_values = st.one_of(_scalars, st.lists(_scalars, max_size=3), st.lists(st.lists(_numbers, max_size=2), max_size=2),
                    st.dictionaries(st.sampled_from(["a", "b"]), _numbers, max_size=2))
_keys = st.one_of(st.sampled_from(["type", "out_features", "kernel", "p", "name"]), st.integers(0, 2))
_layer = st.one_of(st.dictionaries(_keys, _values, max_size=4), st.none(), st.just("relu"), st.just([1]))


def _same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    """Compare outcomes, NaN equal to NaN and 1, 1.0 and True told apart."""
    return repr(a) == repr(b)


@settings(deadline=None)  # a shared machine's load is no failure
@given(st.lists(st.sampled_from([{"type": "dense", "out_features": 512}, {"type": "relu"},
                                 {"type": "conv2d", "kernel": [3, 3], "out_channels": 1.0},
                                 {"type": "dropout", "p": 0.1, "frozen": True}]), min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 29), _layer), max_size=3))
def test_fast_reading_loads_and_refuses_as_the_plain_fields(base: list[dict[str, Any]],
                                                           changes: list[tuple[int, Any]]) -> None:
    layers: list[Any] = [dict(layer) for layer in base]
    for index, layer in changes:
        layers[index % len(layers)] = layer
    assert _same(_outcome(_Fast(), layers), _outcome(_Plain(), layers))


@settings(deadline=None)  # a shared machine's load is no failure
@given(st.lists(_layer, max_size=6))
def test_any_layer_list_reads_as_the_plain_fields(layers: list[Any]) -> None:
    assert _same(_outcome(_Fast(), layers), _outcome(_Plain(), layers))


def test_a_refused_number_far_down_a_long_list_is_named_by_its_index_and_field() -> None:
    layers: list[Any] = [{"type": "dense", "out_features": 512}, {"type": "relu"}] * 5000
    layers[4711] = {"type": "dense", "out_features": 10**16}
    layers[4712] = {"type": "conv2d", "kernel": [3, math.nan]}
    state, errors = _outcome(_Fast(), layers)
    assert state == "refused"
    assert set(errors) == {"layers[4711].out_features", "layers[4712].kernel"}
    assert "finite number" in errors["layers[4711].out_features"][0]


def test_loaded_layers_are_copies() -> None:
    layer = {"type": "dense", "out_features": 4}
    loaded = _Fast().load({"layers": [layer, layer]})["layers"]
    assert loaded == [layer, layer]
    assert all(copy is not layer for copy in loaded)
