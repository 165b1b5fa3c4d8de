"""What the layer builder remembers of a layer to place its repeats again: keys and the rows worked out once.

A layer's rows depend on its own fields and input shapes (its key), on whether its input was already kept and
on whether it is float32 under autocast (autocast.py), nothing else; a repeat of it (a transformer block after
a block) takes the same rows under its own names (`LayerRows.place`). `plain_key` is the cheaper key of a
plain layer (no name, no wiring) as the builder first reads it; `layer_key` the key of any layer whose rows
depend on nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workers.sizing.layers.fields import Part, Shape
from workers.sizing.stats import LayerStats


def plain_key(raw: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """Return a plain-layer key with its lists (a kernel [3, 3]) as tuples of their items and types, or None."""
    type_name, shape, items, kinds = raw
    listed = []
    for k, v in items:
        if type(v) is list:
            if not all(type(x) in (int, float, str, bool) for x in v):
                return None
            v = (tuple(v), tuple(map(type, v)))
        listed.append((k, v))
    try:
        hash(key := (type_name, shape, tuple(listed), kinds))
    except TypeError:  # an object among the values
        return None
    return key


class LayerRows:
    """A layer's rows as worked out once, and what they did to the walk's bookkeeping, to place again.

    The rows depend on the layer (its key), on whether its input was already kept and on its dtype under
    autocast, nothing else, so a repeat of the layer whose input is kept alike gets equal rows under its own
    names: the same tensors kept (the source or its parts), the same views, the same parameters counted.
    """

    __slots__ = ("fp32", "frozen", "ids", "kept_refs", "output_shape", "rows", "single", "suffixes", "trainable",
                 "view_refs")

    def __init__(self, parts: Sequence[Part], rows: Sequence[LayerStats], kept_refs: list[int],
                 view_refs: list[tuple[int, int]], trainable: int, frozen: int, fp32: list[bool]) -> None:
        self.rows = [(dict(r.__dict__), p.suffix) for r, p in zip(rows, parts, strict=True)]
        last = len(parts) - 1
        self.ids = [None if k == last else f".{p.suffix or k}" for k, p in enumerate(parts)]
        self.single = len(parts) == 1
        self.kept_refs, self.view_refs = kept_refs, view_refs
        self.trainable, self.frozen = trainable, frozen
        self.output_shape = parts[-1].output_shape
        self.suffixes = None
        self.fp32 = fp32  # per part, whether its output is float32 under autocast (autocast.py)

    def place(self, layer_name: str, source_id: str, rows: list[LayerStats], kept: set[str],
              storage: dict[str, str], taken: set[str], fp32: dict[str, bool]) -> bool:
        """Append the rows named for `layer_name`; False (nothing done) when a part's name is already in use."""
        if self.single:  # most layers (a linear, an activation): one row, its name the layer's or layer.suffix
            if layer_name in kept or layer_name in storage:
                return False
            d, suffix = self.rows[0]
            row = object.__new__(LayerStats)
            name = f"{layer_name}.{suffix}" if suffix else layer_name
            d["name"] = name
            object.__setattr__(row, "__dict__", d.copy())
            rows.append(row)
            taken.add(name)
            if suffix:
                taken.add(layer_name)
            for ref in self.kept_refs:
                kept.add(source_id if ref < 0 else layer_name)
            for _, ref in self.view_refs:
                storage[layer_name] = source_id if ref < 0 else layer_name
            fp32[layer_name] = self.fp32[0]
            return True
        ids = [layer_name if tail is None else layer_name + tail for tail in self.ids]
        for pid in ids:
            if pid in kept or pid in storage:
                return False
        new, set_dict, append, add = object.__new__, object.__setattr__, rows.append, taken.add
        for d, suffix in self.rows:
            row = new(LayerStats)
            name = f"{layer_name}.{suffix}" if suffix else layer_name
            d["name"] = name  # the template's own dict, copied below: an equal frozen row under its own name
            set_dict(row, "__dict__", d.copy())
            append(row)
            add(name)
        add(layer_name)
        for ref in self.kept_refs:
            kept.add(source_id if ref < 0 else ids[ref])
        for k, ref in self.view_refs:
            storage[ids[k]] = source_id if ref < 0 else ids[ref]
        fp32.update(zip(ids, self.fp32, strict=True))
        return True


# Rules that read more than a layer's own fields and input shapes (meta_lstm: the trainable parameters
# listed before it) are worked out every time.
_NOT_REMEMBERED = frozenset({"meta_lstm"})
_WIRING = frozenset({"name", "from", "inputs"})


def layer_key(spec: Mapping[str, object], type_name: str,
               shapes: tuple[Shape, ...]) -> tuple[object, ...] | None:
    """Return what a layer's parts depend on, hashable, or None when they depend on more (or it cannot hash)."""
    if type_name in _NOT_REMEMBERED:
        return None
    items = []
    for k, v in spec.items():
        if k in _WIRING:
            continue
        if isinstance(v, list):
            if not all(type(x) in (int, float, str, bool) for x in v):
                return None
            v = ("__list__", *((type(x).__name__, x) for x in v))
        elif type(v) not in (int, float, str, bool) and v is not None:
            return None
        items.append((k, type(v).__name__, v))  # the type too: 1, 1.0 and True hash alike
    return (type_name, shapes, tuple(sorted(items)))
