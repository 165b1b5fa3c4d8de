"""Measure one training step: two warm-up steps, then the profiler's timeline and the storage tracker."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any

import torch

from service.probe.tracking import LiveStorages, kept_bytes_by_layer
from validation.measure.step import Trainer, state_tensors
from validation.measure.timeline import phase, profile_step

WARMUP_STEPS = 2


@dataclass(frozen=True)
class StepMeasurement:
    """What one step held at its peak, by two methods, with per-layer kept bytes and phase times."""

    peak_bytes: int  # profiler memory timeline
    peak_phase: str
    by_category: dict[str, int]
    phase_peaks: dict[str, int]
    tracker_peak_bytes: int  # TorchDispatchMode storage tracker
    tracker_peak_phase: str
    tracker_phase_peaks: dict[str, int]
    kept_by_layer: dict[str, int]
    phase_ms: dict[str, float]
    attention_kernels: tuple[str, ...] = ()  # scaled_dot_product_attention's kernels (timeline.SDPA_KERNELS)


def _no_mark(_name: str) -> contextlib.AbstractContextManager[Any]:
    return contextlib.nullcontext()


def measure(trainer: Trainer) -> StepMeasurement:
    """Warm up, then measure one step by each method (the steps are identical in shape)."""
    torch.manual_seed(0)
    for _ in range(WARMUP_STEPS):
        trainer.step(_no_mark)
    timeline = profile_step(lambda: trainer.step(phase))
    tracker = LiveStorages()
    kept: dict[str, int] = {}
    times: dict[str, float] = {}

    @contextlib.contextmanager
    def tracked(name: str) -> Any:
        tracker.set_phase(name)
        start = time.perf_counter()
        yield
        times[name] = times.get(name, 0.0) + (time.perf_counter() - start) * 1000

    # The tracker sees what exists now: weights, buffers, optimizer state, the batch, and the previous
    # step's held outputs and gradients (which the step's zero_grad and locals then release).
    with tracker:
        tracker.seed(list(state_tensors(trainer)))
        with kept_bytes_by_layer(trainer.modules, kept):
            trainer.step(tracked)
    return StepMeasurement(
        peak_bytes=timeline.peak_bytes,
        peak_phase=timeline.peak_phase,
        by_category=timeline.by_category,
        phase_peaks=timeline.phase_peaks,
        tracker_peak_bytes=tracker.peak_bytes,
        tracker_peak_phase=tracker.peak_phase,
        tracker_phase_peaks=tracker.phase_peaks,
        kept_by_layer=kept,
        phase_ms=times,
        attention_kernels=timeline.attention_kernels,
    )
