"""The step walk's allocations, tensor by tensor, for the caching allocator's simulation (allocator.py).

walk_step (step_walk.py) records its forward and backward rows here as it walks; what outlives the
step (weights, optimizer state, DDP's buckets) and the optimizer step's own events are worked out here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workers.sizing.allocator import FREE, OPTIMIZER_STATE, Event
from workers.sizing.efficiency import ALLREDUCE_BUCKET_BYTES
from workers.sizing.overheads import (
    MASTER_WEIGHT_BYTES,
    PER_TENSOR_TEMPORARY_COPIES,
    largest_tensor,
    state_tensor_bytes,
)
from workers.sizing.preference import reference_weight_bytes
from workers.sizing.spec import OptimizerImplementation, Training
from workers.sizing.stats import ModelStats

if TYPE_CHECKING:
    from workers.sizing.step_walk import Shards


@dataclass
class Trace:
    """The step's allocations, tensor by tensor, for the caching allocator's simulation (allocator.py).

    `persistent`: sizes allocated once before the first step (weights, DDP buckets); `state`: the
    optimizer state's tensors, which the first step() makes where OPTIMIZER_STATE stands in `events`
    (torch.optim creates exp_avg and momentum buffers lazily); `events`: one step's allocations and
    frees, in order, (key, bytes) or (key, FREE).
    """

    persistent: list[int] = field(default_factory=list)
    state: list[int] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    def alloc(self, key: object, size: int) -> None:
        """Record an allocation (sizes of 0 allocate nothing)."""
        if size > 0:
            self.events.append((key, size))

    def free(self, key: object) -> None:
        """Record a free."""
        self.events.append((key, FREE))


def optimizer_step_events(t: Trace, model: ModelStats, training: Training, temporaries: int) -> None:
    """Record the optimizer step and the step's end: state at the first step, the temporaries, frees.

    foreach allocates every row's temporary at once, then frees them; a per-tensor loop allocates
    and frees each row's copies in turn (scaled so that the largest row's make `temporaries`);
    a fused kernel allocates none.
    """
    t.free(("grad_in", 0))
    t.events.append((OPTIMIZER_STATE, 0))  # the state is made by the first step() (torch.optim: lazily)
    implementation = training.optimizer_implementation
    if implementation is OptimizerImplementation.PER_TENSOR and temporaries:
        copies = PER_TENSOR_TEMPORARY_COPIES[training.optimizer]
        per_copy = temporaries / copies / max(1, largest_tensor(model))
        for i, row in enumerate(model.layers):
            keys = [("temp", i, k) for k in range(copies)]
            for key in keys:
                t.alloc(key, math.ceil(row.parameters * per_copy))
            for key in keys:
                t.free(key)
    elif implementation is OptimizerImplementation.FOREACH:
        per_parameter = temporaries / max(1, model.parameters)
        for i, row in enumerate(model.layers):  # foreach: one temporary per parameter, all at once
            t.alloc(("temp", i), math.ceil(row.parameters * per_parameter))
        for i in range(len(model.layers)):
            t.free(("temp", i))
    for i in range(len(model.layers)):
        t.free(("grad", i))  # zero_grad(set_to_none=True) before the next step
    t.free("held")
    t.free("batch")


def persistent_tensors(t: Trace, model: ModelStats, training: Training, shards: Shards, buckets: int) -> None:
    """Record the tensors that outlive the step: each row's weights and optimizer state, DDP's buckets."""
    states = state_tensor_bytes(training.optimizer, ema=training.ema)  # bytes a weight of each state tensor
    reference = reference_weight_bytes(training, adapted=training.parallelism.adapter is not None)  # a DPO's copy
    for row in model.layers:
        size = math.ceil(row.parameters * MASTER_WEIGHT_BYTES / shards.parameters)
        t.persistent += [size] if size else []
        t.persistent += [math.ceil(row.parameters * reference / shards.parameters)] if size and reference else []
        t.state += [math.ceil(row.parameters * b / shards.optimizer_state) for b in states] if size else []
    if model.frozen_parameters:
        t.persistent.append(math.ceil(model.frozen_parameters * (MASTER_WEIGHT_BYTES + reference) / shards.parameters))
    full, rest = divmod(buckets, ALLREDUCE_BUCKET_BYTES)
    t.persistent += [ALLREDUCE_BUCKET_BYTES] * full + ([rest] if rest else [])
