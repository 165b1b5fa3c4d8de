"""Live tensor bytes of one training step from the profiler's memory timeline (the first method).

`torch.profiler.profile(profile_memory=True, record_shapes=True, with_stack=True)` records every
allocation of the step; `MemoryProfile`, the analysis behind `export_memory_timeline`, sorts each
tensor into a category (parameter, optimizer state, input, activation, gradient, temporary,
autograd detail) and `MemoryProfileTimeline` turns that into bytes per category over time. The
step's phases are marked with `record_function` and read back from the same event tree, so the
peak's time maps to its phase.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch.profiler import ProfilerActivity, profile, record_function
from torch.profiler._memory_profiler import _CATEGORY_TO_INDEX, MemoryProfileTimeline

PHASE_PREFIX = "gpugauge.phase."
# The kernel scaled_dot_product_attention dispatched to, by the op the profiler saw (CPU names;
# the CUDA ones for completeness): what the core takes as `training.attention`.
SDPA_KERNELS = {
    "aten::_scaled_dot_product_attention_math": "math",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "flash",
    "aten::_scaled_dot_product_flash_attention": "flash",
    "aten::_scaled_dot_product_efficient_attention": "efficient",
}


@dataclass(frozen=True)
class TimelinePeak:
    """The step's peak of live bytes, its phase and what the profiler says the bytes are."""

    peak_bytes: int
    peak_phase: str
    by_category: dict[str, int]
    phase_peaks: dict[str, int]
    attention_kernels: tuple[str, ...] = ()  # scaled_dot_product_attention's kernels in the step


def phase(name: str) -> Any:
    """Return a context manager marking one phase of the step in the profiler's event tree."""
    return record_function(PHASE_PREFIX + name)


def profile_step(step: Callable[[], None]) -> TimelinePeak:
    """Run `step` (which marks its phases with `phase`) under the profiler and read the peak."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
                 with_stack=True) as prof:
        step()
    memory_profile = prof._memory_profile()
    windows: list[tuple[int, int, str]] = []
    for event in memory_profile._op_tree.dfs():
        name = event.name
        if name.startswith(PHASE_PREFIX):
            windows.append((event.start_time_ns // 1000, event.end_time_ns // 1000, name[len(PHASE_PREFIX):]))
    windows.sort()
    times, sizes = MemoryProfileTimeline(memory_profile)._coalesce_timeline("cpu")
    names = {index + 1: ("unknown" if category is None else category.name.lower())
             for category, index in _CATEGORY_TO_INDEX.items()}

    def phase_at(t_us: int) -> str:
        found = "before"
        for start, end, label in windows:
            if start <= t_us:
                found = label if t_us <= end else f"after-{label}"
        return found

    peak_index = max(range(len(times)), key=lambda i: sum(sizes[i]))
    phase_peaks: dict[str, int] = {}
    for t, row in zip(times, sizes, strict=True):
        label = phase_at(t)
        phase_peaks[label] = max(phase_peaks.get(label, 0), sum(row))
    by_category = {names[i]: value for i, value in enumerate(sizes[peak_index]) if i in names and value}
    kernels = tuple(sorted({SDPA_KERNELS[e.name] for e in prof.events() if e.name in SDPA_KERNELS}))
    return TimelinePeak(sum(sizes[peak_index]), phase_at(times[peak_index]), by_category, phase_peaks, kernels)
