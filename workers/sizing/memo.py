"""A small cache keyed by an object's identity, for per-model work the ranking loop repeats ~130 times.

Frozen dataclasses hash by value, which for a model of 200 layer rows costs more than the work being
saved; the cache keys on `id()` and keeps the object itself to make sure the id was not reused.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class IdentityMemo(Generic[V]):
    """Remember values computed for (an object, a small key), for the last `size` pairs."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._data: OrderedDict[tuple[int, Hashable], tuple[object, V]] = OrderedDict()

    def get(self, owner: object, key: Hashable, compute: Callable[[], V]) -> V:
        """Return the value for (owner, key), computing and remembering it when absent."""
        slot = (id(owner), key)
        hit = self._data.get(slot)
        if hit is not None and hit[0] is owner:
            return hit[1]
        value = compute()
        self._data[slot] = (owner, value)
        if len(self._data) > self._size:
            self._data.popitem(last=False)
        return value
