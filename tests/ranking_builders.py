"""Small hand-built catalogs, jobs and per-GPU tables for the ranking tests and the ranking bench."""

from __future__ import annotations

from collections.abc import Sequence

from catalog.types import (
    BlockStoragePrice,
    Catalog,
    GpuSpec,
    InstanceType,
    Offer,
    OnPremCard,
    Pricing,
    Provider,
)
from workers.ranking.ranking import rank_offers
from workers.ranking.recommendation import Recommendation
from workers.sizing.requirements import MemoryBreakdown, Mitigation, PerGpu, Requirements
from workers.sizing.spec import Constraints, Dataset, JobSpec, Objective, Training
from workers.sizing.stats import ModelStats

GIB = 2**30
GB = 10**9


def gpu(slug: str, memory_gib: float, *, name: str | None = None) -> GpuSpec:
    """Return a GPU with the given memory and plausible other figures."""
    return GpuSpec(slug=slug, name=name or slug.upper(), architecture="ampere", compute_capability="8.6",
                   year=2021, memory_bytes=int(memory_gib * GIB), memory_bandwidth_gb_per_s=600.0,
                   fp32_tflops=30.0, fp16_tflops=120.0, bf16_tflops=120.0, pcie_gen=4, nvlink_gb_per_s=0.0,
                   tdp_watts=300, launch_price_usd=None, segment="datacenter", source="test",
                   source_date="2024-01-01")


def instance(provider: Provider, name: str, gpu_slug: str, count: int = 1, *, host_gib: float = 64,
             disk_gb: float = 2000, cpu_score: float = 1000.0, vcpus: int = 8,
             cpu_model: str = "test cpu") -> InstanceType:
    """Return an instance shape."""
    return InstanceType(provider=provider, instance_type=name, gpu=gpu_slug, gpu_count=count, vcpus=vcpus,
                        host_memory_bytes=int(host_gib * GIB), local_storage_bytes=int(disk_gb * GB),
                        cpu_model=cpu_model, cpu_single_thread_score=cpu_score, network_gbit_per_s=10.0,
                        source="test", source_date="2024-01-01")


def offer(provider: Provider, name: str, region: str, price: float,
          pricing: Pricing = Pricing.ON_DEMAND) -> Offer:
    """Return a price offer."""
    return Offer(provider=provider, instance_type=name, region=region, pricing=pricing,
                 price_per_hour_usd=price, source="test", as_of="2024-01-01")


def catalog(gpus: Sequence[GpuSpec], instances: Sequence[InstanceType], offers: Sequence[Offer], *,
            block: Sequence[BlockStoragePrice] = (), cards: Sequence[OnPremCard] = ()) -> Catalog:
    """Return a catalog of these rows."""
    return Catalog(version="test-1", prices_as_of="2024-01-01", sources=("test",), gpus=tuple(gpus),
                   instances=tuple(instances), offers=tuple(offers), block_storage=tuple(block),
                   onprem_cards=tuple(cards))


def block_price(provider: Provider, region: str, per_gb_month: float, kind: str = "gp3") -> BlockStoragePrice:
    """Return a block storage price."""
    return BlockStoragePrice(provider=provider, region=region, kind=kind, price_per_gb_month_usd=per_gb_month,
                             source="test", as_of="2024-01-01")


def card(gpu_slug: str, price_usd: float, power_watts: int) -> OnPremCard:
    """Return a card a team can buy."""
    return OnPremCard(gpu=gpu_slug, price_usd=price_usd, power_watts=power_watts, source="test",
                      as_of="2024-01-01")


def per_gpu(gpu_slug: str, count: int = 1, *, hours: float = 10.0, need_gib: float = 10.0, fits: bool = True,
            iteration_ms: float = 100.0, speedup: float | None = None) -> PerGpu:
    """Return the fit and time of the job on `count` of this GPU."""
    return PerGpu(gpu=gpu_slug, gpu_count=count, fits=fits, gpu_memory_bytes=int(need_gib * GIB),
                  iteration_ms=iteration_ms, throughput_samples_per_s=32 * count / iteration_ms * 1000,
                  training_hours=hours, speedup_vs_one_gpu=speedup if speedup is not None else float(count),
                  bottleneck="compute")


def requirements(*, need_gib: float = 10.0, host_gib: float = 16.0, storage_min_gb: float = 450.0,
                 storage_max_gb: float = 600.0, iterations_total: int = 10_000,
                 mitigations: tuple[Mitigation, ...] = ()) -> Requirements:
    """Return a job's requirements."""
    need = int(need_gib * GIB)
    return Requirements(
        gpu_memory_bytes=need,
        gpu_memory_breakdown=MemoryBreakdown(activations_bytes=need, parameters_bytes=0, gradients_bytes=0,
                                             optimizer_state_bytes=0,
                                             framework_reserve_bytes=0),
        baseline_formula_bytes=need, host_memory_bytes=int(host_gib * GIB),
        storage_min_bytes=int(storage_min_gb * GB), storage_max_bytes=int(storage_max_gb * GB),
        cpu_single_thread_score=800.0, flops_per_iteration=1e12, iterations_per_epoch=iterations_total,
        iterations_total=iterations_total, per_gpu=(), warnings=(), mitigations=mitigations)


def job(*, objective: Objective = Objective.COST, limit: int = 10, preprocess_ms: float = 0.0,
        **constraints: object) -> JobSpec:
    """Return a small job with these constraints."""
    return JobSpec(model=ModelStats(name="m", neurons=1_000_000, parameters=1_000_000, multiply_adds=10**9),
                   training=Training(batch_size=32),
                   dataset=Dataset(samples=320_000, size_bytes=150 * GB, preprocess_ms_per_sample=preprocess_ms),
                   constraints=Constraints(**constraints),  # type: ignore[arg-type]
                   objective=objective, limit=limit)


def rank(j: JobSpec, cat: Catalog, table: dict[tuple[str, int], PerGpu],
         req: Requirements | None = None) -> Recommendation:
    """Rank the catalog's offers for the job, with its requirements (20 GiB a GPU unless given) and per-GPU rows."""
    return rank_offers(j, requirements=req or requirements(need_gib=20.0), per_gpu=table, catalog=cat)
