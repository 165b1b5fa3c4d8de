"""The catalog's plain types: GPU specifications, instance shapes, price offers and on-prem cards."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Provider(StrEnum):
    """Where an offer comes from."""

    AWS = "aws"
    GCP = "gcp"
    ONPREM = "onprem"


class Pricing(StrEnum):
    """How an offer is billed."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    OWNED = "owned"  # on-prem: purchase price amortised into an hourly cost
    COMMITTED_1Y = "committed_1y"  # 1-year commitment, no upfront: an hourly rate paid for every hour of the term
    COMMITTED_3Y = "committed_3y"  # 3-year commitment, no upfront (catalog/commitments.py)
    SAVINGS_PLAN_1Y = "savings_plan_1y"  # AWS EC2 Instance Savings Plan, 1 year, no upfront (fetchers/aws_savings.py)
    SAVINGS_PLAN_3Y = "savings_plan_3y"  # AWS EC2 Instance Savings Plan, 3 years, no upfront


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model's datasheet figures, each row with its source and date."""

    slug: str  # e.g. "gtx-1080-ti", "v100-16gb"
    name: str  # display name, e.g. "GeForce GTX 1080 Ti"
    architecture: str  # "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "kepler"
    compute_capability: str  # e.g. "6.1"
    year: int
    memory_bytes: int
    memory_bandwidth_gb_per_s: float
    fp32_tflops: float  # dense, non-tensor
    fp16_tflops: float  # dense; tensor cores where the card has them, else the card's fp16 rate
    bf16_tflops: float  # dense tensor; 0.0 where the card has no bf16
    pcie_gen: int
    nvlink_gb_per_s: float  # per-GPU total NVLink bandwidth; 0.0 where none
    tdp_watts: int
    launch_price_usd: float | None  # for cards people buy; None for data-centre parts sold in systems
    segment: str  # "consumer", "workstation", "datacenter"
    source: str
    source_date: str  # ISO date the figures were read


@dataclass(frozen=True)
class InstanceType:
    """One cloud machine shape (or on-prem box) and what it carries."""

    provider: Provider
    instance_type: str  # e.g. "p3.2xlarge", "a2-highgpu-1g"
    gpu: str  # GpuSpec.slug
    gpu_count: int
    vcpus: int
    host_memory_bytes: int
    local_storage_bytes: int  # 0 when the shape has no local disk
    cpu_model: str
    cpu_single_thread_score: float  # see catalog/cpu_scores.py for the reference scale
    network_gbit_per_s: float
    source: str
    source_date: str


@dataclass(frozen=True)
class Offer:
    """A price for one instance type in one region under one pricing kind."""

    provider: Provider
    instance_type: str
    region: str
    pricing: Pricing
    price_per_hour_usd: float
    source: str
    as_of: str | None  # ISO date the source says the price was true; None when the source does not say


@dataclass(frozen=True)
class BlockStoragePrice:
    """What a provider charges for network block storage in a region."""

    provider: Provider
    region: str
    kind: str  # e.g. "gp3", "pd-balanced"
    price_per_gb_month_usd: float
    source: str
    as_of: str | None  # as for Offer.as_of


@dataclass(frozen=True)
class OnPremCard:
    """A GPU a team can buy, with what it costs to own and run."""

    gpu: str  # GpuSpec.slug
    price_usd: float
    power_watts: int
    source: str
    as_of: str  # ISO date or month the price was true (a launch price: the launch month)


@dataclass(frozen=True)
class Exclusion:
    """A price a build, import or refresh left out, and the plausibility check that caught it."""

    provider: Provider
    item: str  # the instance type, or for a price part "accelerator H100 x8" / "host a3-highgpu-8g"
    region: str
    pricing: Pricing
    price_per_hour_usd: float
    check: str  # "bad-price", "spot-not-below-on-demand", "regional-outlier", "family-jump"
    reason: str


@dataclass(frozen=True)
class Catalog:
    """One consistent version of everything gpugauge ranks against."""

    version: str
    prices_as_of: str  # the oldest cloud price's as_of; "unknown" when any is undated (catalog.freshness)
    sources: tuple[str, ...]
    gpus: tuple[GpuSpec, ...]
    instances: tuple[InstanceType, ...] = ()
    offers: tuple[Offer, ...] = ()
    block_storage: tuple[BlockStoragePrice, ...] = ()
    onprem_cards: tuple[OnPremCard, ...] = ()
    prices_as_of_by_provider: tuple[tuple[str, str], ...] = ()  # (provider, oldest as_of or "unknown")
    excluded: tuple[Exclusion, ...] = ()
    undated_sources: tuple[str, ...] = ()  # sources of cloud prices without a date (catalog.freshness)
    _gpu_index: dict[str, GpuSpec] = field(default_factory=dict, compare=False, repr=False)

    def gpu(self, slug: str) -> GpuSpec:
        """Return the GPU with this slug; KeyError when the catalog has none."""
        if not self._gpu_index:
            self._gpu_index.update({g.slug: g for g in self.gpus})
        return self._gpu_index[slug]


@dataclass(frozen=True)
class CatalogSummary:
    """What an answer that uses no offer needs of a catalog: its version, price date and GPU table."""

    version: str
    prices_as_of: str  # as Catalog.prices_as_of: the oldest pay-as-you-go cloud price's as_of, or "unknown"
    gpus: tuple[GpuSpec, ...]
