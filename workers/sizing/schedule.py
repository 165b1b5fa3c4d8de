"""Iterations per epoch, total iterations, evaluation passes and training hours (domain.md §3)."""

from __future__ import annotations

import math

from workers.sizing.efficiency import EVAL_FRACTION_OF_DATA
from workers.sizing.spec import Dataset, Training

MS_PER_HOUR = 3_600_000.0


def iterations_per_epoch(samples: int, *, batch_size: int, gpu_count: int = 1) -> int:
    """Return ceil(samples / (batch x GPUs)): one iteration covers a batch on every GPU (0 if unknown)."""
    if samples <= 0:
        return 0
    return math.ceil(samples / (batch_size * gpu_count))


def iterations_total(samples: int, training: Training, *, gpu_count: int = 1) -> int:
    """Return the iterations of the whole run: per epoch x epochs, rounded up."""
    return math.ceil(iterations_per_epoch(samples, batch_size=training.batch_size, gpu_count=gpu_count)
                     * training.epochs)


def evaluation_passes(training: Training) -> int:
    """Return how many epochs also evaluate: one every `eval_every_epochs` (0: none)."""
    if training.eval_every_epochs <= 0:
        return 0
    return math.floor(training.epochs / training.eval_every_epochs)


def evaluation_ms(dataset: Dataset, training: Training, *, forward_ms: float, gpu_count: int = 1) -> float:
    """Return the time of every evaluation pass: a held-out share of the data, forward only."""
    passes = evaluation_passes(training)
    if passes == 0 or dataset.samples <= 0:
        return 0.0
    held_out = math.ceil(dataset.samples * EVAL_FRACTION_OF_DATA)
    steps = iterations_per_epoch(held_out, batch_size=training.batch_size, gpu_count=gpu_count)
    return passes * steps * forward_ms


def training_hours(dataset: Dataset, training: Training, *, iteration_ms: float, forward_ms: float,
                   gpu_count: int = 1) -> float:
    """Return time per iteration x total iterations, plus evaluation, in hours (0: samples unknown)."""
    total_ms = iterations_total(dataset.samples, training, gpu_count=gpu_count) * iteration_ms
    total_ms += evaluation_ms(dataset, training, forward_ms=forward_ms, gpu_count=gpu_count)
    return total_ms / MS_PER_HOUR
