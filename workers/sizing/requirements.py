"""What a job needs, as the contract's `requirements` object: memory, time per GPU, machine, advice."""

from __future__ import annotations

import operator
from dataclasses import dataclass, fields
from enum import StrEnum

from workers.sizing.strategies.types import Parallelism


@dataclass(frozen=True)
class MemoryBreakdown:
    """Peak GPU memory of one training step, by term, in bytes.

    The fields are the one list of memory terms: the contract's `gpu_memory_breakdown` keys are their
    names without `_bytes` (by_term), and the schema, the advice and the CLI all read them from here.
    """

    activations_bytes: int
    parameters_bytes: int
    gradients_bytes: int
    optimizer_state_bytes: int
    framework_reserve_bytes: int

    @property
    def total_bytes(self) -> int:
        """Return the sum of the terms."""
        return sum(_TERM_VALUES(self))  # by_term's values, read in C (an estimate asks ~50 times per GPU model)

    def by_term(self) -> dict[str, int]:
        """Return the terms under their contract names ("activations", ..., "framework_reserve")."""
        return {name.removesuffix("_bytes"): getattr(self, name) for name in MEMORY_TERM_FIELDS}


MEMORY_TERM_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(MemoryBreakdown))
MEMORY_TERMS: tuple[str, ...] = tuple(name.removesuffix("_bytes") for name in MEMORY_TERM_FIELDS)
_TERM_VALUES = operator.attrgetter(*MEMORY_TERM_FIELDS)


class Bottleneck(StrEnum):
    """What bounds an iteration's time; NONE where no estimate names one."""

    NONE = ""
    COMPUTE = "compute"
    MEMORY_BANDWIDTH = "memory-bandwidth"
    LAUNCH_OVERHEAD = "launch-overhead"
    ALL_REDUCE = "all-reduce"
    CPU_PREPROCESSING = "cpu-preprocessing"
    NETWORK = "network"  # the exchange between machines (strategies/collectives.py)
    NVLINK = "nvlink"  # tensor parallel's all-reduces, or sharding's collectives inside a machine
    PCIE = "pcie"  # offload's transfers to and from host memory


class MitigationKind(StrEnum):
    """The steps of the out-of-memory plan (domain.md §5), in order of simplicity."""

    FUSED_OPTIMIZER = "fused-optimizer"  # the update as one in-place kernel: no foreach temporaries
    FUSED_LOSS = "fused-loss"  # the output projection and its cross-entropy chunk by chunk: no logits held
    SMALLER_BATCH = "smaller-batch"
    CHANGE_NETWORK = "change-network"
    RECOMPUTE = "recompute"
    MIXED_PRECISION = "mixed-precision"
    MORE_GPUS = "more-gpus"
    SHARDING = "sharding"
    CHECKPOINTING = "checkpointing"  # selective or full (strategies/checkpointing.py)
    ADAPTERS = "adapters"  # LoRA / QLoRA: changes the method
    OFFLOAD = "offload"
    COMBINED = "combined"  # the same-card changes that keep the method, together (oom_combined.py)


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
    bottleneck: Bottleneck = Bottleneck.NONE
    cpu_single_thread_score: float = 0.0  # score one data-loading thread needs to keep this GPU fed
    # The iteration's split by what bounds it (timing.IterationTime), for the energy estimate: layers
    # bound by arithmetic, layers bound by memory traffic; the rest of iteration_ms is the GPU waiting.
    compute_ms: float = 0.0
    memory_ms: float = 0.0
    # Reported runs whose fitted correction scaled this row's time (workers/sizing/reported.py).
    calibrated_by_runs: tuple[str, ...] = ()
    calibrated_by_gpus: tuple[str, ...] = ()
    peak_phase: str = "backward"  # where the step's memory peaks: forward, backward or optimizer_step


@dataclass(frozen=True)
class CodedWarning:
    """A coded warning: a rule of domain.md that applies to this job."""

    code: str
    message: str


@dataclass(frozen=True)
class Mitigation:
    """One step of the out-of-memory plan, with what it leaves in memory and what it costs in time."""

    kind: MitigationKind
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
    parallelism: Parallelism | None = None  # the strategy this step names (sharding, adapters, offload, ...)
    keeps_method: bool = False  # an adapters row that only quantises a LoRA job's base (not dumped)


@dataclass(frozen=True)
class Requirements:
    """Everything the job needs, ready to dump as the contract's `requirements`."""

    gpu_memory_bytes: int
    gpu_memory_breakdown: MemoryBreakdown
    baseline_formula_bytes: int
    host_memory_bytes: int
    storage_min_bytes: int
    storage_max_bytes: int
    cpu_single_thread_score: float  # per loader worker: the requirement is loader_workers x this score
    flops_per_iteration: float
    iterations_per_epoch: int
    iterations_total: int
    per_gpu: tuple[PerGpu, ...]
    warnings: tuple[CodedWarning, ...]
    mitigations: tuple[Mitigation, ...]
    calibrated_by_runs: tuple[str, ...] = ()  # the reported runs behind any per-GPU correction
    calibrated_by_gpus: tuple[str, ...] = ()
    loader_workers: int = 0  # per GPU; 0: no pre-processing to do
    peak_phase: str = "backward"  # the phase of the step whose moment sets gpu_memory_bytes
    memory_calibrated: bool = False  # scaled to a measured step (training.profile.tensor_memory_bytes)
    loader_host_bytes_per_gpu: int = 0  # in host_memory_bytes: one GPU's loader workers (machine.loader_host_bytes)
    loader_workers_in_memory: int = 0  # the workers those bytes count (machine.loaders_in_use)
