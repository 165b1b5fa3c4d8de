"""Iterations per epoch, total iterations, evaluation passes and training hours (domain.md §3)."""

from __future__ import annotations

import math

from workers.sizing.efficiency import EVAL_FRACTION_OF_DATA
from workers.sizing.spec import Dataset, Training

MS_PER_HOUR = 3_600_000.0

# Start-up before the first iteration, counted once per run. domain.md §4: for a run under about
# ten minutes, start-up (and, on several GPUs, setting up their communication) dominates. Estimates,
# not measurements: importing the framework, creating the CUDA context (1.3 GiB of it on a V100, HF
# docs) and starting data-loader workers take ~20 s; a data-parallel run adds process-group / NCCL
# set-up and the first broadcast of the weights, ~10 s plus ~2 s per GPU.
STARTUP_MS = 20_000.0
MULTI_GPU_STARTUP_MS = 10_000.0
MULTI_GPU_STARTUP_MS_PER_GPU = 2_000.0


def startup_ms(*, gpu_count: int) -> float:
    """Return the one-off start-up time of a run on `gpu_count` GPUs."""
    if gpu_count <= 1:
        return STARTUP_MS
    return STARTUP_MS + MULTI_GPU_STARTUP_MS + MULTI_GPU_STARTUP_MS_PER_GPU * gpu_count


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
    """Return start-up, time per iteration x total iterations, and evaluation, in hours (0: samples unknown)."""
    iterations = iterations_total(dataset.samples, training, gpu_count=gpu_count)
    if iterations == 0:
        return 0.0
    total_ms = startup_ms(gpu_count=gpu_count) + iterations * iteration_ms
    total_ms += evaluation_ms(dataset, training, forward_ms=forward_ms, gpu_count=gpu_count)
    return total_ms / MS_PER_HOUR
