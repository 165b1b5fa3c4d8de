"""What a job needs, as the contract's `requirements` object: memory, time per GPU, machine, advice."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MemoryBreakdown:
    """Peak GPU memory of one training step, by term, in bytes."""

    activations: int
    parameters: int
    gradients: int
    optimizer_state: int
    framework_reserve: int

    @property
    def total_bytes(self) -> int:
        """Return the sum of the terms."""
        return (self.activations + self.parameters + self.gradients
                + self.optimizer_state + self.framework_reserve)


@dataclass(frozen=True)
class PerGpu:
    """Fit and time of the job on `gpu_count` GPUs of one model."""

    gpu: str
    gpu_count: int
    fits: bool
    gpu_memory_bytes: int
    iteration_ms: float
    throughput_samples_per_s: float
    training_hours: float
    speedup_vs_one_gpu: float = 1.0
    calibrated: bool = False  # True when scaled from a measured profile
    bottleneck: str = ""  # "compute", "memory-bandwidth", "all-reduce", "cpu-preprocessing"
    cpu_single_thread_score: float = 0.0  # score one data-loading thread needs to keep this GPU fed


@dataclass(frozen=True)
class Warning:
    """A coded warning: a rule of domain.md that applies to this job."""

    code: str
    message: str


@dataclass(frozen=True)
class Mitigation:
    """One step of the out-of-memory plan, with what it leaves in memory and what it costs in time."""

    kind: str  # "smaller-batch", "recompute", "mixed-precision", "more-gpus", "sharding", "change-network"
    description: str
    gpu_memory_bytes: int
    time_factor: float = 1.0  # training time relative to the job as given
    batch_size: int | None = None
    learning_rate: float | None = None
    update_interval: int | None = None
    gpu_count: int | None = None
    layers: tuple[str, ...] = ()
    gpu: str | None = None  # the card this step makes the job fit (added by the sizing core)
    opens: tuple[str, ...] = ()  # options this step would open, one line each (added by the recommendation)


@dataclass(frozen=True)
class Requirements:
    """Everything the job needs, ready to dump as the contract's `requirements`."""

    gpu_memory_bytes: int
    gpu_memory_breakdown: MemoryBreakdown
    baseline_formula_bytes: int
    host_memory_bytes: int
    storage_min_bytes: int
    storage_max_bytes: int
    cpu_single_thread_score: float
    flops_per_iteration: float
    iterations_per_epoch: int
    iterations_total: int
    per_gpu: tuple[PerGpu, ...]
    warnings: tuple[Warning, ...]
    mitigations: tuple[Mitigation, ...]
