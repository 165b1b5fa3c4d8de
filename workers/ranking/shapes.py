"""Machine shapes judged once for a job: fit, CPU-adjusted time, storage need, before any price is seen."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from catalog.types import Offer, Pricing, Provider
from workers.ranking.catalog_index import BlockTable, CatalogIndex, Machine
from workers.ranking.costing import (
    BYTES_PER_BILLED_GB,
    HOURS_PER_MONTH,
    ONPREM_REGION,
    onprem_gpu_counts,
    onprem_instance_type,
    onprem_price_per_hour_usd,
)
from workers.ranking.energy import GridFactor
from workers.ranking.scope import Scope
from workers.sizing.machine import host_memory_bytes
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
CARBON = "carbon"  # over constraints.max_co2e_kg, or no grid intensity to show it is not

CpuAdjust = Callable[[float, float], float]  # (per-GPU iteration ms, CPU single-thread score) -> ms


class Shape:
    """One machine as judged for one job: its fit, time and storage need, then the ranking's findings.

    Plain attributes with class defaults, so that judging a shape sets only what differs.
    """

    reject: str | None = None  # the first reason the machine cannot run the job
    per_gpu: PerGpu | None = None
    iteration_ms = 0.0
    hours = 0.0  # 0.0 when the data set's size is unknown
    time_metric = math.inf  # hours, or seconds per sample when hours are unknown
    cost_mult = math.inf  # what the hourly price is multiplied by: hours, or hours per sample
    block_bytes = 0  # block storage added because local disk is short
    block_factor = 0.0  # billed GB x hours / 730: times USD per GB-month gives the storage cost
    block_prices: Mapping[str, float] = {}
    block_fallback: float | None = None
    host_memory_needed_bytes = 0
    # What the ranking loop finds.
    best_cost = math.inf  # cheapest offer that meets every constraint
    seen = False  # an offer in scope was rejected for the shape's own reason
    over_budget: tuple[float, str, Pricing] | None = None  # cheapest (cost, region, pricing) over the budget
    missing_storage_regions: frozenset[str] | set[str] = frozenset()
    # The carbon step's findings (carbon.py): energy drawn by the machine, and each region's grid factor.
    it_kwh = 0.0  # IT energy of the whole run, before PUE
    gpu_watts = 0.0
    host_watts = 0.0
    grid_factors: Mapping[str, GridFactor] = {}
    over_co2e: tuple[float, str, Pricing] | None = None  # least (kg CO2e, region, pricing) over max_co2e_kg

    def __init__(self, machine: Machine, idx: int) -> None:
        self.m = machine
        self.idx = idx


def _judge(shape: Shape, pg: PerGpu | None, *, job: JobSpec, requirements: Requirements, host_need_bytes: int,
           cpu_adjust: CpuAdjust, hours_known: bool, block_table: BlockTable) -> None:
    """Fill in the shape's fit, time and storage need, or the first reason it cannot run the job."""
    m = shape.m
    shape.per_gpu = pg
    if pg is None:
        shape.reject = NO_ESTIMATE
        return
    if not pg.fits:
        shape.reject = GPU_MEMORY
        return
    shape.host_memory_needed_bytes = host_need_bytes
    if m.host_memory_bytes < host_need_bytes:
        shape.reject = HOST_MEMORY
        return
    ms = pg.iteration_ms
    if m.cpu_score > 0 and ms > 0:
        ms = max(ms, cpu_adjust(ms, m.cpu_score))
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
    if m.provider is not Provider.ONPREM and m.storage_bytes < requirements.storage_min_bytes:
        shape.block_bytes = requirements.storage_max_bytes
        if hours_known:
            shape.block_factor = shape.block_bytes / BYTES_PER_BILLED_GB * shape.hours / HOURS_PER_MONTH
        shape.block_prices, shape.block_fallback = block_table.get(m.provider, ({}, None))


def host_memory_need_bytes(job: JobSpec, requirements: Requirements, *, gpu_count: int) -> int:
    """Return the host memory a machine with `gpu_count` GPUs needs for the job.

    The requirements are for one GPU; each further GPU runs one more training process on the host
    (machine.host_memory_bytes of the sizing core).
    """
    extra = host_memory_bytes(job.dataset, gpu_count=gpu_count) - host_memory_bytes(job.dataset, gpu_count=1)
    return requirements.host_memory_bytes + extra


def owned_machines(job: JobSpec, *, requirements: Requirements, index: CatalogIndex,
                    scope: Scope) -> list[Machine]:
    """Return the machines a team could buy from the catalog's cards, each with its amortised offer."""
    machines: list[Machine] = []
    if Provider.ONPREM not in scope.providers or Pricing.OWNED not in scope.pricing:
        return machines
    for gpu in sorted(index.cards):
        listed = index.cards[gpu]
        for n in onprem_gpu_counts(scope.max_gpus):
            price = onprem_price_per_hour_usd(listed, gpu_count=n, assumptions=job.constraints.onprem)
            name = onprem_instance_type(gpu, n)
            offer = Offer(provider=Provider.ONPREM, instance_type=name, region=ONPREM_REGION,
                          pricing=Pricing.OWNED, price_per_hour_usd=price, source=listed.source,
                          as_of=listed.as_of)
            # An owned machine is bought to the job's needs: host memory, disk and CPU are whatever
            # the job asks for, paid for by the host price of the assumptions.
            machines.append(Machine(provider=Provider.ONPREM, instance_type=name, gpu=gpu, gpu_count=n,
                                    vcpus=0, storage_bytes=requirements.storage_max_bytes,
                                    host_memory_bytes=host_memory_need_bytes(job, requirements, gpu_count=n),
                                    cpu_score=0.0, card_memory_bytes=index.gpu_memory.get(gpu, 0),
                                    offers=(offer,)))
    return machines


def judge_shapes(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                 index: CatalogIndex, scope: Scope, cpu_adjust: CpuAdjust, hours_known: bool) -> list[Shape]:
    """Return every machine in scope (cloud, then owned), judged, in the order of provider and name."""
    providers, max_gpus = scope.providers, scope.max_gpus
    machines = [m for m in index.machines if m.provider in providers and 0 < m.gpu_count <= max_gpus]
    owned = owned_machines(job, requirements=requirements, index=index, scope=scope)
    if owned:  # the index's machines are already in order
        known = {(m.provider_name, m.instance_type) for m in machines}
        machines += [m for m in owned if (m.provider_name, m.instance_type) not in known]
        machines.sort(key=lambda m: (m.provider_name, m.instance_type))
    shapes = [Shape(m, i) for i, m in enumerate(machines)]
    block_table = index.block_table
    host_need = {n: host_memory_need_bytes(job, requirements, gpu_count=n)
                 for n in {m.gpu_count for m in machines}}
    for shape in shapes:
        m = shape.m
        _judge(shape, per_gpu.get((m.gpu, m.gpu_count)), job=job, requirements=requirements,
               host_need_bytes=host_need[m.gpu_count], cpu_adjust=cpu_adjust, hours_known=hours_known,
               block_table=block_table)
    return shapes
