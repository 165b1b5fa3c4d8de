"""A small cache keyed by an object's identity, for per-model work the ranking loop repeats ~130 times.

Frozen dataclasses hash by value, which for a model of 200 layer rows costs more than the work being
saved; the cache keys on `id()` and holds the object by a weak reference, both to make sure the id was
not reused and to forget an object's values when it dies. A strong reference kept every model a memo
had seen alive (up to 64 per memo, 4,096 in the strategy memos) after its request ended: a process that
had answered 31 estimates of 10,000-layer models held 310,000 layer rows, ~100 MB, and each full
garbage collection walked them (~110 ms). An object that cannot be weakly referenced (a tuple) is held
as before.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class _Strong:
    """A strong stand-in for weakref.ref, for an owner that cannot be weakly referenced."""

    __slots__ = ("_owner",)

    def __init__(self, owner: object) -> None:
        self._owner = owner

    def __call__(self) -> object:
        return self._owner


class IdentityMemo(Generic[V]):
    """Remember values computed for (an object, a small key), for the last `size` pairs of live objects."""

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._data: OrderedDict[tuple[int, Hashable], tuple[Callable[[], object], V]] = OrderedDict()
        # per owner's id: its reference (whose callback forgets the owner's pairs) and the keys held for it
        self._owners: dict[int, tuple[Callable[[], object], set[Hashable]]] = {}

    def __len__(self) -> int:
        return len(self._data)

    def get(self, owner: object, key: Hashable, compute: Callable[[], V]) -> V:
        """Return the value for (owner, key), computing and remembering it when absent."""
        oid = id(owner)
        slot = (oid, key)
        hit = self._data.get(slot)
        if hit is not None and hit[0]() is owner:
            return hit[1]
        value = compute()
        held = self._owners.get(oid)
        if held is None or held[0]() is not owner:
            held = self._owners[oid] = (self._reference(owner, oid), set())
        held[1].add(key)
        self._data[slot] = (held[0], value)
        if len(self._data) > self._size:
            (old_id, old_key), _ = self._data.popitem(last=False)
            self._forget_key(old_id, old_key)
        return value

    def _reference(self, owner: object, oid: int) -> Callable[[], object]:
        forget = weakref.WeakMethod(self._forget_owner)  # the memo is not kept alive by its owners

        def died(_: object) -> None:
            _call(forget, oid)

        try:
            return weakref.ref(owner, died)
        except TypeError:  # not weakly referable: held, as every owner was before
            return _Strong(owner)

    def _forget_key(self, oid: int, key: Hashable) -> None:
        held = self._owners.get(oid)
        if held is not None:
            held[1].discard(key)
            if not held[1]:
                self._owners.pop(oid, None)  # another thread (the embedded mode's pool) may have forgotten it

    def _forget_owner(self, oid: int) -> None:
        held = self._owners.pop(oid, None)
        if held is not None:
            for key in held[1]:
                self._data.pop((oid, key), None)


def _call(method: weakref.WeakMethod[Any], oid: int) -> None:
    bound = method()
    if bound is not None:
        bound(oid)
