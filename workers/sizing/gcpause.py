"""Pausing the cyclic garbage collector while a big model's rows are made.

A 10,000-layer model makes ~20,000 objects that all stay alive (its rows); the collector, counting
allocations, runs a young collection every 700 of them and promotes every survivor, and every tenth
escalates; where a full collection falls inside the build it walks every object the process holds
(100-250 ms in a process that is not frozen; workers.tasks.runtime.settle freezes the serving ones).
Reference counting frees what the build discards either way; paused, the survivors are looked at once,
at the next allocation after it. The pause is process-wide but short (the build, ~25 ms), and a
collector some other code turned off stays off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collection_paused() -> Iterator[None]:
    """Run the block with automatic collection off, then back on if it was on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
