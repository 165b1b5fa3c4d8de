"""The largest batch per GPU a job fits on a card with the headroom every fit keeps (memory.usable_memory_bytes): the
fit answer's "largest batch that fits", found by doubling from 1 and halving back, everything else as the job says.

It reads the same peak as the job's own fit, so it is as right as that peak: the validation's largest-batch records
(`gpugauge validate`, "largest batch that fit") are the check, and TensorFlow 1's BERT runs of 2018 read far above
what they ran (README, "Where it misses").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from catalog.types import GpuSpec
from workers.sizing.errors import SizingError
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.preference import batch_unit
from workers.sizing.spec import JobSpec

MAX_BATCH = 8192  # beyond any card's memory for a model worth sizing; the search stops here


def largest_passing(fits: Callable[[int], bool], *, most: int) -> int:
    """Return the largest batch `fits` accepts, doubling from 1 while it does (up to `most`) and halving back; 0
    where batch 1 does not fit. The validation's largest-batch rows search the same way (workers/accuracy)."""
    if not fits(1):
        return 0
    low, high = 1, 2
    while high <= most and fits(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return low


def largest_batch(job: JobSpec, gpus: Sequence[GpuSpec], *, slug: str, gpu_count: int = 1) -> int:
    """Return the largest batch per GPU whose peak fits `gpu_count` of `slug` with headroom; 0 where batch 1 does not
    (the job's plan says what else to change), MAX_BATCH where that still fits. A preference job's batch is in pairs,
    as its spec says it (the core sizes their two sequences each: preference.py)."""
    unit = batch_unit(job.training)

    def fits(batch: int) -> bool:
        trial = replace(job, training=replace(job.training, batch_size=batch * unit))
        try:
            return bool(estimate_on_gpus(trial, gpus, slugs=[slug], gpu_count=gpu_count).per_gpu[0].fits)
        except SizingError:  # a batch the layout cannot take (a micro-batch that does not divide it): no fit
            return False

    return min(largest_passing(fits, most=MAX_BATCH), MAX_BATCH)
