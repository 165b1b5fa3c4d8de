"""A model's rows grouped by their figures: each distinct row once, how many rows are it, and which.

A 10,000-layer model of a few kinds of block has a few distinct rows besides their names, and the walk's
arrays (walk_arrays.py), the per-layer work (timing.py) and the model checks (checks.py) each read
every row's figures. Reading them here, once per model object, makes those passes one: the figures are
gathered and counted in C, and each reader works over the distinct rows.
"""

from __future__ import annotations

import operator
from collections import Counter
from dataclasses import dataclass
from typing import Any

from workers.sizing.memo import IdentityMemo
from workers.sizing.stats import ModelStats

# Every figure a reader of the table uses; two rows with all of them equal differ only in name, type and
# pattern (which no reader of the table reads).
FIGURES = ("output_shape", "neurons", "saved_values", "saved_mask_bytes", "fused_saved_values",
           "fused_saved_mask_bytes", "parameters", "shared_parameters", "kind", "multiply_adds", "traffic_values",
           "passes", "kernel_positions", "fused_multiply_adds", "frozen", "frozen_parameters", "autocast_extra_bytes")
_FIGURES = operator.attrgetter(*FIGURES)


def figures(*names: str) -> operator.itemgetter[Any]:
    """Return a getter of the named figures (in that order) from one of the table's distinct rows."""
    return operator.itemgetter(*(FIGURES.index(name) for name in names))


@dataclass(frozen=True)
class RowTable:
    """The distinct rows' figures in the order each first appears, with how many rows are each."""

    distinct: tuple[tuple[Any, ...], ...]
    counts: tuple[int, ...]
    _index: tuple[int, ...]

    def index(self) -> list[int]:
        """Return, per row, the position of its figures in `distinct`."""
        return list(self._index)


_TABLES: IdentityMemo[RowTable] = IdentityMemo(16)


def row_table(model: ModelStats) -> RowTable:
    """Return the model's rows grouped by their figures, worked out once per model object."""
    return _TABLES.get(model, (), lambda: _table(model))


def _table(model: ModelStats) -> RowTable:
    # one hash of each row's figures: its position among the distinct ones, a new one at the end
    positions: dict[tuple[Any, ...], int] = {}
    at = positions.setdefault
    index = tuple(at(f, len(positions)) for f in map(_FIGURES, model.layers))
    counted = Counter(index)
    return RowTable(distinct=tuple(positions), counts=tuple(map(counted.__getitem__, range(len(positions)))),
                    _index=index)
