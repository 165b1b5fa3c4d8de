"""A recommendation's result: the ranked options, the rejected offers, and the catalog it used."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.types import Pricing
from workers.ranking.energy import Energy
from workers.ranking.purchase import PurchaseOption
from workers.ranking.runcost import Checkpoints, StartUp
from workers.sizing.requirements import CodedWarning, Mitigation, Requirements


@dataclass(frozen=True)
class StrategyChoice:
    """How an option spreads the job: the strategy the ranking chose (or the spec named), in fields."""

    data_parallel: str  # plain, zero1, zero2, zero3, hybrid_shard, parameter_server
    tensor_parallel: int
    pipeline_stages: int
    offload_optimizer: bool
    offload_parameters: bool
    adapter: str  # "none", "lora" or "qlora"
    adapter_rank: int
    checkpointing: str  # none, selective, full
    batch_size: int  # micro-batch per GPU that fits
    update_interval: int  # gradient accumulation that keeps the effective batch
    total_gpus: int
    gpu_memory_per_gpu_bytes: int  # predicted peak on each GPU
    host_offload_bytes_per_node: int  # what offload keeps in each machine's memory
    bottleneck: str  # compute, memory-bandwidth, network, nvlink, pcie
    communication_ms: float  # per iteration, the part not hidden behind compute
    strategies_considered: int  # feasible combinations timed on this machine shape


@dataclass(frozen=True)
class ScalingPoint:
    """The top option's machine type and strategy on n machines: where adding machines stops paying off."""

    nodes: int
    total_gpus: int
    training_hours: float
    training_cost_usd: float
    speedup: float  # over one machine
    efficiency: float  # speedup / nodes
    strategy: str = ""  # the fastest strategy that fits this count, in words (strategy_text)


@dataclass(frozen=True)
class RankedOption:
    """One machine the job can run on, with its time, cost and the reason for its place."""

    rank: int
    provider: str
    instance_type: str
    region: str
    pricing: Pricing
    gpu: str
    gpu_count: int
    gpu_memory_bytes: int  # memory of one GPU of the offer
    vcpus: int
    host_memory_bytes: int
    storage_bytes: int  # local storage of the offer
    cpu_single_thread_score: float
    price_per_hour_usd: float
    training_hours: float
    training_cost_usd: float
    fits: bool
    why: str
    warnings: tuple[CodedWarning, ...] = ()
    pareto: bool = False  # on the cost/time Pareto front of the options
    storage_cost_usd: float = 0.0  # block storage added where local disk is short
    iteration_ms: float = 0.0
    energy: Energy | None = None  # kWh and kg CO2e with their coefficients; None: unknown hours or region
    nodes: int = 1  # machines of this instance type; the price and the machine fields are per machine
    parallelism: StrategyChoice | None = None  # set when the ranking searched strategies
    # The run behind training_hours (the whole wall-clock) and training_cost_usd (runplan.py):
    compute_hours: float = 0.0  # the training steps alone
    billed_hours: float = 0.0
    start_up: StartUp | None = None
    start_up_hours: float = 0.0  # start_up's whole wait, set in brief options too (a review's sweeps read it)
    checkpoints: Checkpoints | None = None
    loader_workers: int = 0  # per GPU
    threads_per_core: int = 1  # vCPUs per physical core (cpu_scores.threads_per_core; 1 where unknown)
    percentile: float = 0.0  # spot: the percentile the deadline and budget were checked on
    percentile_hours: float = 0.0
    percentile_cost_usd: float = 0.0
    expected_interruptions: float = 0.0
    mtbi_hours: float = 0.0
    interruption_source: str = ""
    owned: bool = False  # one of the team's own machines (constraints.owned_gpus)
    data_transfer_cost_usd: float = 0.0  # moving the data set into the region (in training_cost_usd)
    data_transfer: str = ""  # from where, at what price per GB, its source; "" where dataset.location is absent
    price_source: str = ""  # where price_per_hour_usd comes from (the catalog offer's source)
    price_as_of: str | None = None  # the ISO date that source says the price was true; None where it says none


@dataclass(frozen=True)
class Rejected:
    """An offer family that cannot run the job, and why."""

    instance_type: str
    reason: str
    provider: str = ""
    gpu: str = ""
    gpu_count: int = 0


@dataclass(frozen=True)
class Recommendation:
    """Everything a ranking job returns."""

    requirements: Requirements
    options: tuple[RankedOption, ...]
    rejected: tuple[Rejected, ...]
    catalog_version: str
    prices_as_of: str
    plan: tuple[Mitigation, ...] = ()  # when nothing fits: the out-of-memory plan and what it opens
    scaling: tuple[ScalingPoint, ...] = ()  # the top option on 1, 2, 4, ... machines (strategy ranking)
    purchase: tuple[PurchaseOption, ...] = ()  # "what would we buy": with "onprem" in providers
