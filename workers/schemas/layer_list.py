"""The job spec's layer list as a marshmallow field, read in a few passes of C rather than per layer.

marshmallow's List of Dict passes every key of every layer through a String field, and a number check
that reads every layer's values one by one costs a few microseconds a layer: for a 10,000-layer model
that was most of the schema's time. Here a list of plain dicts with string keys is checked over its
distinct layer types and keys and copied as the Dict field would; the number check reads the set of
distinct values of all layers at once, and only when one of them is refused (or a value is nested
deeper than a list) reads layer by layer, to name each refused field at its index. Anything else (a
layer that is not a dict, a key that is not a string) goes through marshmallow's fields, for their
messages.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import Any

from marshmallow import fields

# A number inside a free-form layer (units, channels, kernel, rates) never comes near this; the bound
# keeps 400-digit integers and 1e308 out of the core's arithmetic. NaN and Infinity are refused too.
MAX_LAYER_NUMBER = 10**15
_SCALARS = frozenset({str, int, float, bool, type(None)})


class LayerList(fields.List[dict[str, Any]]):
    """A list of layer objects: each a mapping with string keys, copied; the values are the core's to read."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[dict[str, Any] | None]:
        if isinstance(value, list) and value and set(map(type, value)) == {dict} \
                and all(type(key) is str for key in set(chain.from_iterable(value))):
            copies: list[dict[str, Any] | None] = list(map(dict, value))
            return copies  # the length is checked by the field's validator
        return super()._deserialize(value, attr, data, **kwargs)


def unbounded_number_errors(layers: list[dict[str, Any]]) -> dict[int, dict[str, list[str]]]:
    """Return {index: {key: [message]}} for the layers holding a refused number (see unbounded_numbers)."""
    if _all_bounded(layers):
        return {}
    return {index: bad for index, layer in enumerate(layers) if (bad := unbounded_numbers(layer))}


def _all_bounded(layers: list[dict[str, Any]]) -> bool:
    """Say, reading each distinct value once, that no layer holds a refused number (False: look closer).

    Equal values of different types (1, 1.0, True) are refused alike, so a set of the values decides;
    lists are opened one level, as unbounded_numbers reads them; anything deeper is left to it.
    """
    values = list(chain.from_iterable(map(dict.values, layers)))
    try:
        distinct = set(values)
    except TypeError:  # a list among them: its items read as values, one level down
        lists = [v for v in values if type(v) is list]
        try:
            distinct = {v for v in values if type(v) is not list}.union(chain.from_iterable(lists))
        except TypeError:
            return False  # a list in a list, an object: unbounded_numbers reads them
    if not set(map(type, distinct)) <= _SCALARS:
        return False
    # NaN and Infinity fail the comparison too
    return all(-MAX_LAYER_NUMBER <= v <= MAX_LAYER_NUMBER for v in distinct if type(v) in (int, float))


def unbounded_numbers(layer: dict[str, Any]) -> dict[str, list[str]]:
    """Return {key: [message]} for the layer's values holding a refused number (spec.LAYER_VALUE_SCHEMA)."""
    if all(type(v) is str or (type(v) is int and -MAX_LAYER_NUMBER <= v <= MAX_LAYER_NUMBER)
           for v in layer.values()):
        return {}  # the usual layer: names and whole numbers in range

    def bad(value: Any, *, bounded: bool) -> bool:
        if isinstance(value, list):  # a kernel [3, 3]: the core reads numbers there, one list deep
            return any(bad(item, bounded=bounded and not isinstance(item, list)) for item in value)
        if isinstance(value, dict):
            return any(bad(item, bounded=False) for item in value.values())
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return True  # at any depth: NaN and Infinity are not JSON, and never reach the core
        return bounded and not -MAX_LAYER_NUMBER <= value <= MAX_LAYER_NUMBER  # ints compare exactly

    return {key: [f"must be a finite number between -{MAX_LAYER_NUMBER:.0e} and {MAX_LAYER_NUMBER:.0e}"]
            for key, value in layer.items() if bad(value, bounded=True)}
