"""PyTorch's CUDA caching allocator, simulated over one training step's allocations: what it reserves.

nvidia-smi and `max_memory_reserved` see the allocator's segments, not the live tensors. The rules,
from pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (commit 001074d, read 2026-12-01; the
commit's date is not in our index):

- every request is rounded up to a multiple of 512 bytes (kMinBlockSize);
- requests up to 1 MiB (kSmallSize) come from a small pool of 2 MiB segments (kSmallBuffer);
  larger ones from the large pool: requests under 10 MiB (kMinLargeAlloc) get a 20 MiB segment
  (kLargeBuffer), larger ones a segment rounded up to 2 MiB (kRoundLarge);
- a request takes the smallest cached free block that holds it (best fit) and splits it when the
  rest is at least 512 bytes (small pool) or more than 1 MiB (large pool); only when none fits is a
  new segment allocated (cudaMalloc);
- a freed block merges with its free neighbours of the same segment; segments are kept (no
  empty_cache), so what is reserved only grows.

The step's allocations come from the ordered walk (step_walk.walk_step with a trace): each layer's
kept tensors, outputs, gradients and the optimizer's temporaries, in order, for two steps: the
second reuses the first's cache, the steady state a measured run is read in (more steps reserve
no more: tests/test_allocator.py). The slack is the peak reserved minus
the peak of the requested bytes; it goes to `framework_reserve` (memory.py).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field

from catalog.units import MIB

MIN_BLOCK_BYTES = 512
SMALL_REQUEST_BYTES = 1 * MIB
SMALL_SEGMENT_BYTES = 2 * MIB
LARGE_SEGMENT_BYTES = 20 * MIB
MIN_LARGE_ALLOC_BYTES = 10 * MIB
ROUND_LARGE_BYTES = 2 * MIB

# A trace event: (key, bytes) allocates a tensor of that size under the key; (key, -1) frees it.
Event = tuple[object, int]
FREE = -1
OPTIMIZER_STATE = "optimizer_state"  # marks where the first step allocates the optimizer's state


def round_request(size: int) -> int:
    """Return the block size a request takes (a multiple of 512 bytes, at least 512)."""
    return max(MIN_BLOCK_BYTES, -(-size // MIN_BLOCK_BYTES) * MIN_BLOCK_BYTES)


def segment_bytes(size: int) -> int:
    """Return the size of the segment cudaMalloc'ed for a (rounded) request no cached block holds."""
    if size <= SMALL_REQUEST_BYTES:
        return SMALL_SEGMENT_BYTES
    if size < MIN_LARGE_ALLOC_BYTES:
        return LARGE_SEGMENT_BYTES
    return -(-size // ROUND_LARGE_BYTES) * ROUND_LARGE_BYTES


@dataclass(slots=True, eq=False)
class _Block:
    segment: int
    offset: int
    size: int
    small: bool
    free: bool = True
    prev: _Block | None = None
    next: _Block | None = None


@dataclass(slots=True)
class _Pool:
    small: bool
    free: list[tuple[int, int, int]] = field(default_factory=list)  # (size, segment, offset), sorted
    blocks: dict[tuple[int, int], _Block] = field(default_factory=dict)  # free blocks by (segment, offset)

    def add(self, block: _Block) -> None:
        block.free = True
        bisect.insort(self.free, (block.size, block.segment, block.offset))
        self.blocks[(block.segment, block.offset)] = block

    def remove(self, block: _Block) -> None:
        index = bisect.bisect_left(self.free, (block.size, block.segment, block.offset))
        del self.free[index]
        del self.blocks[(block.segment, block.offset)]
        block.free = False

    def best_fit(self, size: int) -> _Block | None:
        index = bisect.bisect_left(self.free, (size, -1, -1))
        if index == len(self.free):
            return None
        _, segment, offset = self.free[index]
        return self.blocks[(segment, offset)]


@dataclass
class CachingAllocator:
    """The caching allocator's state: its segments and the blocks handed out."""

    reserved: int = 0
    requested: int = 0
    peak_reserved: int = 0
    peak_requested: int = 0
    _pools: tuple[_Pool, _Pool] = field(default_factory=lambda: (_Pool(small=True), _Pool(small=False)))
    _live: dict[object, tuple[_Block, int]] = field(default_factory=dict)
    _segments: int = 0

    def malloc(self, key: object, size: int) -> None:
        """Hand out a block for a tensor of `size` bytes under `key`."""
        if size <= 0:
            return
        rounded = round_request(size)
        pool = self._pools[0] if rounded <= SMALL_REQUEST_BYTES else self._pools[1]
        block = pool.best_fit(rounded)
        if block is None:
            block = _Block(self._segments, 0, segment_bytes(rounded), pool.small)
            self._segments += 1
            self.reserved += block.size
            self.peak_reserved = max(self.peak_reserved, self.reserved)
        else:
            pool.remove(block)
        block.free = False
        rest = block.size - rounded
        if rest >= MIN_BLOCK_BYTES if pool.small else rest > SMALL_REQUEST_BYTES:
            tail = _Block(block.segment, block.offset + rounded, rest, pool.small, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = tail
            block.next, block.size = tail, rounded
            pool.add(tail)
        self._live[key] = (block, size)
        self.requested += size
        self.peak_requested = max(self.peak_requested, self.requested)

    def release(self, key: object) -> None:
        """Return a tensor's block to the cache, merged with its free neighbours."""
        found = self._live.pop(key, None)
        if found is None:
            return
        block, size = found
        self.requested -= size
        pool = self._pools[0] if block.small else self._pools[1]
        for neighbour in (block.prev, block.next):
            if neighbour is not None and neighbour.free:
                pool.remove(neighbour)
                if neighbour is block.prev:
                    neighbour.size += block.size
                    neighbour.next = block.next
                    if block.next is not None:
                        block.next.prev = neighbour
                    block = neighbour
                else:
                    block.size += neighbour.size
                    block.next = neighbour.next
                    if neighbour.next is not None:
                        neighbour.next.prev = block
        pool.add(block)


def replay(events: list[Event], *, persistent: Sequence[int] = (), state: Sequence[int] = (),
           steps: int = 2) -> CachingAllocator:
    """Allocate the persistent tensors, run one step's events `steps` times, and return the allocator.

    `state` is allocated where the first step reaches OPTIMIZER_STATE: between the first backward
    and the first update, into whatever that step's freed activations left cached.
    """
    allocator = CachingAllocator()
    for i, size in enumerate(persistent):
        allocator.malloc(("persistent", i), size)
    for step in range(steps):
        for key, size in events:
            if key == OPTIMIZER_STATE:
                for i, part in enumerate(state if step == 0 else ()):
                    allocator.malloc(("state", i), part)
            elif size == FREE:
                allocator.release(key)
            else:
                allocator.malloc(key, size)
    return allocator
