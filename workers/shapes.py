"""Machine shapes judged once for a job: fit, CPU-adjusted time, storage need, before any price is seen."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from catalog.types import Catalog, InstanceType, Offer, OnPremCard, Pricing, Provider
from workers.costing import (
    BYTES_PER_BILLED_GB,
    HOURS_PER_MONTH,
    ONPREM_REGION,
    block_storage_price_table,
    cheapest_cards,
    onprem_gpu_counts,
    onprem_instance_type,
    onprem_price_per_hour_usd,
)
from workers.scope import Scope
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec

# A shape's rejection kinds, in the order they are checked: the first that fails is the reason.
NO_ESTIMATE = "no-estimate"
GPU_MEMORY = "gpu-memory"
HOST_MEMORY = "host-memory"
DEADLINE = "deadline"
# ...and the kinds judged per offer, once a price is known.
NO_STORAGE_PRICE = "no-storage-price"
BUDGET = "budget"

CpuAdjust = Callable[[float, float], float]  # (per-GPU iteration ms, CPU single-thread score) -> ms


class Shape:
    """One instance type (or owned machine) as judged for the job; mutable only while ranking runs."""

    __slots__ = (
        "best_cost", "block_bytes", "block_factor", "block_fallback", "block_prices", "card_memory_bytes",
        "cost_mult", "cpu_score", "family", "gpu", "gpu_count", "host_memory_bytes", "hours", "idx",
        "instance_type", "iteration_ms", "missing_storage_regions", "over_budget", "per_gpu", "provider",
        "provider_name", "reject", "seen", "storage_bytes", "time_metric", "vcpus",
    )

    def __init__(self, *, idx: int, provider: Provider, instance_type: str, gpu: str, gpu_count: int,
                 vcpus: int, host_memory_bytes: int, storage_bytes: int, cpu_score: float,
                 card_memory_bytes: int) -> None:
        self.idx = idx
        self.provider = provider
        self.provider_name: str = provider.value
        self.instance_type = instance_type
        self.family = instance_family(instance_type, gpu=gpu, provider=provider)
        self.gpu = gpu
        self.gpu_count = gpu_count
        self.vcpus = vcpus
        self.host_memory_bytes = host_memory_bytes
        self.storage_bytes = storage_bytes
        self.cpu_score = cpu_score
        self.card_memory_bytes = card_memory_bytes
        self.per_gpu: PerGpu | None = None
        self.reject: str | None = None
        self.iteration_ms = 0.0
        self.hours = 0.0  # 0.0 when the data set's size is unknown
        self.time_metric = math.inf  # hours, or seconds per sample when hours are unknown
        self.cost_mult = math.inf  # what the hourly price is multiplied by: hours, or hours per sample
        self.block_bytes = 0  # block storage added because local disk is short
        self.block_factor = 0.0  # billed GB x hours / 730: times USD per GB-month gives the storage cost
        self.block_prices: Mapping[str, float] = {}
        self.block_fallback: float | None = None
        # Outcomes, filled by the ranking loop.
        self.best_cost = math.inf  # cheapest offer that meets every constraint
        self.seen = False  # an offer in scope was rejected with the shape's own reason
        self.over_budget: tuple[float, str, str] | None = None  # cheapest (cost, region, pricing) over it
        self.missing_storage_regions: set[str] = set()


def instance_family(instance_type: str, *, gpu: str, provider: Provider) -> str:
    """Return the family an instance type belongs to: "g5" for g5.xlarge, "a2-highgpu" for a2-highgpu-1g."""
    if provider is Provider.ONPREM and instance_type.startswith("onprem-"):
        return f"onprem-{gpu}"
    if "." in instance_type:
        return instance_type.split(".", 1)[0]
    return instance_type.rsplit("-", 1)[0] if "-" in instance_type else instance_type


BlockTable = Mapping[Provider, tuple[dict[str, float], float | None]]


def _judge(shape: Shape, *, job: JobSpec, requirements: Requirements,
           per_gpu: Mapping[tuple[str, int], PerGpu], cpu_adjust: CpuAdjust, hours_known: bool,
           block_table: BlockTable) -> None:
    """Fill in the shape's fit, time and storage need, or the first reason it cannot run the job."""
    pg = per_gpu.get((shape.gpu, shape.gpu_count))
    shape.per_gpu = pg
    if pg is None:
        shape.reject = NO_ESTIMATE
        return
    if not pg.fits:
        shape.reject = GPU_MEMORY
        return
    if shape.host_memory_bytes < requirements.host_memory_bytes:
        shape.reject = HOST_MEMORY
        return
    ms = pg.iteration_ms
    if shape.cpu_score > 0 and ms > 0:
        ms = max(ms, cpu_adjust(ms, shape.cpu_score))
    stretch = ms / pg.iteration_ms if pg.iteration_ms > 0 else 1.0
    shape.iteration_ms = ms
    if hours_known:
        shape.hours = pg.training_hours * stretch
        shape.time_metric = shape.cost_mult = shape.hours
        deadline = job.constraints.deadline_hours
        if deadline is not None and shape.hours > deadline:
            shape.reject = DEADLINE
            return
    else:
        throughput = pg.throughput_samples_per_s
        seconds_per_sample = stretch / throughput if throughput > 0 else math.inf
        shape.time_metric = seconds_per_sample
        shape.cost_mult = seconds_per_sample / 3600.0
    if shape.provider is not Provider.ONPREM and shape.storage_bytes < requirements.storage_min_bytes:
        shape.block_bytes = requirements.storage_max_bytes
        if hours_known:
            shape.block_factor = shape.block_bytes / BYTES_PER_BILLED_GB * shape.hours / HOURS_PER_MONTH
        shape.block_prices, shape.block_fallback = block_table.get(shape.provider, ({}, None))


def judge_shapes(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                 catalog: Catalog, scope: Scope, cpu_adjust: CpuAdjust,
                 hours_known: bool) -> tuple[list[Shape], list[Offer]]:
    """Return every shape in scope, judged, in a fixed order, and the owned machines as offers."""
    gpu_memory = {g.slug: g.memory_bytes for g in catalog.gpus}
    block_table = block_storage_price_table(catalog.block_storage)
    shapes: list[Shape] = []
    insts: dict[tuple[str, str], InstanceType] = {}
    for inst in catalog.instances:
        if inst.provider in scope.providers and 0 < inst.gpu_count <= scope.max_gpus:
            insts[(inst.provider.value, inst.instance_type)] = inst
    for _, inst in sorted(insts.items()):
        shapes.append(Shape(idx=len(shapes), provider=inst.provider, instance_type=inst.instance_type,
                            gpu=inst.gpu, gpu_count=inst.gpu_count, vcpus=inst.vcpus,
                            host_memory_bytes=inst.host_memory_bytes, storage_bytes=inst.local_storage_bytes,
                            cpu_score=inst.cpu_single_thread_score,
                            card_memory_bytes=gpu_memory.get(inst.gpu, 0)))
    owned: list[Offer] = []
    if Provider.ONPREM in scope.providers and Pricing.OWNED in scope.pricing:
        cards: Mapping[str, OnPremCard] = cheapest_cards(catalog.onprem_cards)
        for gpu in sorted(cards):
            for n in onprem_gpu_counts(scope.max_gpus):
                name = onprem_instance_type(gpu, n)
                if ("onprem", name) in insts:
                    continue
                # An owned machine is bought to the job's needs: host memory, disk and CPU are
                # whatever the job asks for, paid for by the host price of the assumptions.
                shapes.append(Shape(idx=len(shapes), provider=Provider.ONPREM, instance_type=name, gpu=gpu,
                                    gpu_count=n, vcpus=0, host_memory_bytes=requirements.host_memory_bytes,
                                    storage_bytes=requirements.storage_max_bytes, cpu_score=0.0,
                                    card_memory_bytes=gpu_memory.get(gpu, 0)))
                price = onprem_price_per_hour_usd(cards[gpu], gpu_count=n, assumptions=job.constraints.onprem)
                owned.append(Offer(provider=Provider.ONPREM, instance_type=name, region=ONPREM_REGION,
                                   pricing=Pricing.OWNED, price_per_hour_usd=price, source=cards[gpu].source,
                                   as_of=cards[gpu].as_of))
    for shape in shapes:
        _judge(shape, job=job, requirements=requirements, per_gpu=per_gpu, cpu_adjust=cpu_adjust,
               hours_known=hours_known, block_table=block_table)
    return shapes, owned
