"""Hand-built options, recommendations, jobs and catalogs for the budget review tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from catalog.types import Catalog, GpuSpec, InstanceType, Offer, OnPremCard, Pricing, Provider
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.review.budget import ReviewItem, Sweep
from workers.sizing.requirements import CodedWarning, MemoryBreakdown, PerGpu, Requirements
from workers.sizing.spec import Constraints, Dataset, JobSpec, Training
from workers.sizing.stats import ModelStats

GIB = 2**30


def option(instance_type: str, *, hours: float, price: float, gpu: str = "a10g", gpu_count: int = 1,
           provider: str = "aws", region: str = "us-east-1", pricing: str = "on_demand",
           storage_cost_usd: float = 0.0, fits: bool = True) -> RankedOption:
    """Return one ranked option whose run costs price x hours plus its block storage."""
    return RankedOption(
        rank=1, provider=provider, instance_type=instance_type, region=region, pricing=pricing, gpu=gpu,
        gpu_count=gpu_count, gpu_memory_bytes=24 * GIB, vcpus=8, host_memory_bytes=64 * GIB,
        storage_bytes=0, cpu_single_thread_score=1000.0, price_per_hour_usd=price, training_hours=hours,
        training_cost_usd=price * hours + storage_cost_usd, fits=fits, why="test",
        storage_cost_usd=storage_cost_usd,
    )


def per_gpu(gpu: str, count: int = 1, *, hours: float, fits: bool = True) -> PerGpu:
    """Return the job's fit and time on `count` of a GPU."""
    return PerGpu(gpu=gpu, gpu_count=count, fits=fits, gpu_memory_bytes=8 * GIB, iteration_ms=100.0,
                  throughput_samples_per_s=320.0, training_hours=hours)


def requirements(*, per_gpu_rows: Sequence[PerGpu] = (), iterations_total: int = 10_000,
                 warnings: Sequence[CodedWarning] = ()) -> Requirements:
    """Return requirements with these per-GPU rows."""
    need = 8 * GIB
    return Requirements(
        gpu_memory_bytes=need,
        gpu_memory_breakdown=MemoryBreakdown(activations_bytes=need, parameters_bytes=0, gradients_bytes=0,
                                             optimizer_state_bytes=0,
                                             framework_reserve_bytes=0),
        baseline_formula_bytes=need, host_memory_bytes=16 * GIB, storage_min_bytes=10**9,
        storage_max_bytes=2 * 10**9, cpu_single_thread_score=800.0, flops_per_iteration=1e12,
        iterations_per_epoch=iterations_total, iterations_total=iterations_total, per_gpu=tuple(per_gpu_rows),
        warnings=tuple(warnings), mitigations=())


def recommendation(options: Sequence[RankedOption], *, per_gpu_rows: Sequence[PerGpu] = (),
                   iterations_total: int = 10_000) -> Recommendation:
    """Return a recommendation of these options."""
    req = requirements(per_gpu_rows=per_gpu_rows, iterations_total=iterations_total)
    return Recommendation(requirements=req, options=tuple(options), rejected=(), catalog_version="test-1",
                          prices_as_of="2024-01-01")


def job(model_name: str = "m", *, budget_usd: float | None = None, deadline_hours: float | None = None,
        providers: tuple[str, ...] = ("aws", "gcp", "onprem")) -> JobSpec:
    """Return a small job; the model's name lets a fake ranking tell jobs apart."""
    return JobSpec(model=ModelStats(name=model_name, neurons=10**6, parameters=10**6, multiply_adds=10**9),
                   training=Training(batch_size=32), dataset=Dataset(samples=320_000, size_bytes=10**9),
                   constraints=Constraints(budget_usd=budget_usd, deadline_hours=deadline_hours,
                                           providers=providers))


def item(name: str, *, team: str = "vision", runs: int = 1, parallel: int = 1, sweep: Sweep | None = None,
         budget_usd: float | None = None, deadline_hours: float | None = None,
         spec: JobSpec | None = None) -> ReviewItem:
    """Return a review item whose job's model is named after it."""
    return ReviewItem(name=name, team=team, job=spec or job(name), runs=runs, parallel=parallel, sweep=sweep,
                      budget_usd=budget_usd, deadline_hours=deadline_hours)


def gpu_spec(slug: str, *, memory_gib: float, bandwidth_gb_per_s: float) -> GpuSpec:
    """Return a GPU with this memory and bandwidth."""
    return GpuSpec(slug=slug, name=slug.upper(), architecture="ampere", compute_capability="8.6", year=2021,
                   memory_bytes=int(memory_gib * GIB), memory_bandwidth_gb_per_s=bandwidth_gb_per_s,
                   fp32_tflops=30.0, fp16_tflops=120.0, bf16_tflops=120.0, pcie_gen=4, nvlink_gb_per_s=0.0,
                   tdp_watts=300, launch_price_usd=None, segment="datacenter", source="test",
                   source_date="2024-01-01")


def instance(provider: Provider, name: str, gpu: str, count: int = 1) -> InstanceType:
    """Return a cloud machine shape."""
    return InstanceType(provider=provider, instance_type=name, gpu=gpu, gpu_count=count, vcpus=8,
                        host_memory_bytes=64 * GIB, local_storage_bytes=0, cpu_model="test",
                        cpu_single_thread_score=1000.0, network_gbit_per_s=10.0, source="test",
                        source_date="2024-01-01")


def offer(provider: Provider, name: str, price: float, *, region: str = "us-east-1",
          pricing: Pricing = Pricing.ON_DEMAND) -> Offer:
    """Return a price for a machine shape."""
    return Offer(provider=provider, instance_type=name, region=region, pricing=pricing,
                 price_per_hour_usd=price, source="test", as_of="2024-01-01")


def card(gpu: str, price_usd: float, power_watts: int) -> OnPremCard:
    """Return a card a team can buy."""
    return OnPremCard(gpu=gpu, price_usd=price_usd, power_watts=power_watts, source="test",
                      as_of="2024-01-01")


def catalog(gpus: Sequence[GpuSpec] = (), instances: Sequence[InstanceType] = (),
            offers: Sequence[Offer] = (), cards: Sequence[OnPremCard] = ()) -> Catalog:
    """Return a catalog of these rows."""
    return Catalog(version="test-1", prices_as_of="2024-01-01", sources=("test",), gpus=tuple(gpus),
                   instances=tuple(instances), offers=tuple(offers), onprem_cards=tuple(cards))


class FakeRanking:
    """A stand-in for workers.ranking.recommend.recommend, answering by the job's model name."""

    def __init__(self, answers: Mapping[str, Recommendation | Exception]) -> None:
        self.answers = answers
        self.seen: list[JobSpec] = []

    def __call__(self, job: JobSpec, catalog: Catalog) -> Recommendation:
        self.seen.append(job)
        answer = self.answers[job.model.name]
        if isinstance(answer, Exception):
            raise answer
        return answer
