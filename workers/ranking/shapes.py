"""Machine shapes judged once for a job: fit, CPU-adjusted time, storage need, before any price is seen."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from catalog.commitments import TERM_HOURS
from catalog.types import Offer, Pricing, Provider
from workers.ranking.catalog_index import BlockTable, CatalogIndex, Machine
from workers.ranking.costing import (
    BYTES_PER_BILLED_GB,
    HOURS_PER_MONTH,
    ONPREM_REGION,
    onprem_instance_type,
    owned_gpu_counts,
    owned_power_per_hour_usd,
)
from workers.ranking.energy import GridFactor
from workers.ranking.host_need import HostKey, host_key, host_memory_need_bytes, host_needs
from workers.ranking.machine_table import Judged, MachineTable
from workers.ranking.purchase import BestRental
from workers.ranking.runplan import MachineParts, RunPlan, RunPlanner, plan_from_parts, run_figures
from workers.ranking.scope import Scope
from workers.ranking.transfer import BYTES_PER_GB, Transfer, transfer_into
from workers.sizing.machine import (
    loader_share,
)
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec

# A shape's rejection kinds, in the order they are checked: the first that fails is the reason.
NO_ESTIMATE = "no-estimate"
GPU_MEMORY = "gpu-memory"
HOST_MEMORY = "host-memory"
DEADLINE = "deadline"
SPOT_RESTARTS = "spot-restarts"
# ...and the kinds judged per offer, once a price is known.
NO_STORAGE_PRICE = "no-storage-price"
BUDGET = "budget"
CARBON = "carbon"  # over constraints.max_co2e_kg, or no grid intensity to show it is not

CpuAdjust = Callable[[float, float, float], float]  # (per-GPU iteration ms, CPU score, loader cores) -> ms


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
    _parts: MachineParts | None = None  # `parts`
    _parts_from: tuple[RunPlanner, bool] | None = None  # (planner, data on the machine's own disk): `parts` asked
    training_hours = 0.0  # CPU-stretched training steps alone
    start_up_s = 0.0  # the run's wait before its first step (its parts' total_s), set where the run is judged
    _checked_hours = 0.0  # checked_hours; NaN: past the deadline on expected hours, the percentile not worked out
    is_spot_run = False
    spot_percentile = 0.9
    budget_scale = 1.0  # the budget is held to cost x this: the percentile over the expected figure
    workers = 0  # loader workers per GPU
    egress_usd = 0.0  # moving the data set into the machine's regions: once, and again at each spot restart
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

    @property
    def parts(self) -> MachineParts | None:
        """Return what the run takes from the machine (runplan.py): set, or worked out when first asked
        (judge_arrays works a ranking's figures out over arrays and leaves each shape its planner)."""
        parts = self._parts
        if parts is None and self._parts_from is not None:
            planner, on_own_disk = self._parts_from
            parts = self._parts = planner.parts_for(self.m, local_disk_holds_data=on_own_disk)
        return parts

    @parts.setter
    def parts(self, parts: MachineParts | None) -> None:
        self._parts = parts

    @property
    def checked_hours(self) -> float:
        """Return the hours held to the deadline: expected, or the percentile on spot (worked out when asked,
        for a spot run already past the deadline on its expected hours)."""
        hours = self._checked_hours
        if hours != hours and self.parts is not None:  # NaN
            hours = self._checked_hours = run_figures(self.parts, training_hours=self.training_hours,
                                                      provider=self.m.provider, percentile=self.spot_percentile)[2]
        return hours

    @checked_hours.setter
    def checked_hours(self, hours: float) -> None:
        self._checked_hours = hours

    @property
    def plan(self) -> RunPlan | None:
        """Return the whole run (start-up, checkpoints, billing, spot restarts), built when it is shown."""
        if self.parts is None:
            return None
        built: RunPlan | None = self.__dict__.get("_plan")
        if built is None:
            built = self.__dict__["_plan"] = plan_from_parts(
                self.parts, training_hours=self.training_hours, provider=self.m.provider,
                percentile=self.spot_percentile)
        return built


def _judge_all(shapes: list[Shape], per_gpu: Mapping[tuple[str, int], PerGpu], *, job: JobSpec,
               requirements: Requirements, host_need: Mapping[HostKey, int], cpu_adjust: CpuAdjust,
               hours_known: bool,
               block_table: BlockTable, planner: RunPlanner) -> None:
    """Fill in each shape's fit, time and storage need, or the first reason it cannot run the job.

    One loop over the shapes with what does not change between them read once: the loader workers and
    their cores per (vCPUs, GPU count, threads per core), the storage need, the block storage table.
    The plain model: with the data set's size known, judge_shapes takes judge_arrays.judge_in_arrays,
    the same findings over arrays.
    """
    dataset = job.dataset
    storage_min, storage_max = requirements.storage_min_bytes, requirements.storage_max_bytes
    share_of: dict[tuple[int, int, int], tuple[int, float]] = {}
    onprem = Provider.ONPREM
    for shape in shapes:
        m = shape.m
        pg = shape.per_gpu = per_gpu.get((m.gpu, m.gpu_count))
        if pg is None:
            shape.reject = NO_ESTIMATE
            continue
        if not pg.fits:
            shape.reject = GPU_MEMORY
            continue
        host_need_bytes = shape.host_memory_needed_bytes = host_need[host_key(m)]
        if m.host_memory_bytes < host_need_bytes:
            shape.reject = HOST_MEMORY
            continue
        ms = base_ms = pg.iteration_ms
        per = (m.vcpus, m.gpu_count, m.threads_per_core)
        share = share_of.get(per)
        if share is None:
            share = share_of[per] = loader_share(dataset, vcpus=m.vcpus, gpu_count=m.gpu_count,
                                                   threads_per_core=m.threads_per_core)
        shape.workers = share[0]
        if m.cpu_score > 0 and ms > 0:
            ms = max(ms, cpu_adjust(ms, m.cpu_score, share[1]))
        stretch = ms / base_ms if base_ms > 0 else 1.0
        shape.iteration_ms = ms
        local_disk_holds_data = m.storage_bytes >= storage_min
        if hours_known:
            reject = plan_shape_run(shape, training_hours=pg.training_hours * stretch, job=job, planner=planner,
                                    local_disk_holds_data=local_disk_holds_data)
            if reject:
                shape.reject = reject
                continue
        else:
            throughput = pg.throughput_samples_per_s
            seconds_per_sample = stretch / throughput if throughput > 0 else math.inf
            shape.time_metric = seconds_per_sample
            shape.cost_mult = seconds_per_sample / 3600.0
            if m.pricing in TERM_HOURS:
                shape.cost_mult = float(TERM_HOURS[m.pricing])
        if m.provider is not onprem and not local_disk_holds_data:
            shape.block_bytes = storage_max
            if hours_known:
                shape.block_factor = shape.block_bytes / BYTES_PER_BILLED_GB * shape.hours / HOURS_PER_MONTH
            shape.block_prices, shape.block_fallback = block_table.get(m.provider, ({}, None))


def plan_shape_run(shape: Shape, *, training_hours: float, job: JobSpec, planner: RunPlanner,
                   local_disk_holds_data: bool, machines: int = 1, saved_parameters: int | None = None,
                   writers: int = 1) -> str | None:
    """Fill in a shape's whole run (start-up, staging, checkpoints, billing, spot restarts) on its machines.

    The one place a shape's wall time, billed hours and deadline check come from, for the plain
    ranking and the strategy ranking alike; `machines` instances of the shape each bill the run, and on
    spot a reclaim of any of them stops it (runplan.run_mtbi_hours).
    `saved_parameters` and `writers`: what a checkpoint saves and how many machines write it at once
    (RunPlanner.parts_for). Return the rejection kind, or None when the run is fine.
    """
    m = shape.m
    on_own_disk = local_disk_holds_data or m.provider is Provider.ONPREM
    moved = m.transfer
    parts = shape.parts = planner.parts_for(m, local_disk_holds_data=on_own_disk, saved_parameters=saved_parameters,
                                            writers=writers, machines=machines)
    shape.training_hours, shape.start_up_s = training_hours, parts.total_s
    shape.spot_percentile = planner.percentile
    deadline = job.constraints.deadline_hours
    wall, billed, checked, checked_billed, interruptions, refused = run_figures(
        parts, training_hours=training_hours, provider=m.provider, percentile=planner.percentile,
        deadline_hours=deadline)
    if refused:
        return SPOT_RESTARTS
    if moved is not None and moved.usd_per_gb > 0:  # each staging copies the data set again, per machine
        stagings = 1.0 + (interruptions if interruptions is not None else 0.0)
        shape.egress_usd = job.dataset.size_bytes / BYTES_PER_GB * moved.usd_per_gb * stagings * machines
    shape.is_spot_run = interruptions is not None
    shape.hours = shape.time_metric = wall
    shape.cost_mult = billed * machines
    shape.checked_hours = checked
    if checked != checked:  # NaN: a spot run past the deadline on its expected hours, so on its percentile
        return DEADLINE
    shape.budget_scale = checked_billed / billed if billed > 0 else 1.0
    term_hours = TERM_HOURS.get(m.pricing)
    if term_hours is not None:  # a commitment is paid for every hour of its term, used or not, per machine
        shape.cost_mult, shape.budget_scale = float(term_hours * machines), 1.0
    if deadline is not None and checked > deadline:
        return DEADLINE
    return None


def by_transfer(m: Machine, location: tuple[str, str]) -> list[Machine]:
    """Return a cloud machine as one copy per price of moving the data set into its regions (transfer.py).

    The egress price and the staging rate differ by region, so offers with the same move are judged
    together and apart from the rest; an owned machine holds the data already.
    """
    if m.provider is Provider.ONPREM:
        return [m]
    groups: dict[Transfer, list[int]] = {}
    for i, o in enumerate(m.offers):
        groups.setdefault(transfer_into(location, m.provider, o.region), []).append(i)
    return [m.subset(keep, t) for t, keep in sorted(groups.items(), key=lambda g: (g[0].usd_per_gb, g[0].kind))]


def owned_machines(job: JobSpec, *, requirements: Requirements, index: CatalogIndex,
                    scope: Scope) -> list[Machine]:
    """Return the machines the team's own cards make (constraints.owned_gpus), each priced at its power.

    The purchase is already made, so an owned machine costs what it draws while the job runs; buying
    cards is a separate question (purchase.py), never a rental at an amortised rate.
    """
    machines: list[Machine] = []
    if Pricing.OWNED not in scope.pricing:
        return machines
    for owned in sorted(job.constraints.owned_gpus, key=lambda o: o.gpu):
        if not scope.allows(owned.gpu):
            continue
        machines.extend(onprem_machine(job, requirements=requirements, index=index, gpu=owned.gpu, gpu_count=n)
                        for n in owned_gpu_counts(owned.count, max_gpus=scope.max_gpus))
    return machines


def onprem_machine(job: JobSpec, *, requirements: Requirements, index: CatalogIndex, gpu: str,
                   gpu_count: int) -> Machine:
    """Return a team's machine of `gpu_count` cards (owned, or a purchase weighed), priced at its power."""
    card = index.cards.get(gpu)
    watts, source, as_of = ((card.power_watts, card.source, card.as_of) if card is not None
                            else index.gpu_power.get(gpu, (0, "", "")))
    rate = job.constraints.onprem.electricity_usd_per_kwh
    price = owned_power_per_hour_usd(power_watts=watts, gpu_count=gpu_count, electricity_usd_per_kwh=rate)
    name = onprem_instance_type(gpu, gpu_count)
    # The price is power alone: the cards' board power at the job's electricity rate, which is the user's (or
    # the default's) and carries no market date, so the price has none (as_of None); the card's figure keeps its
    # own date in the source (launched YYYY-MM), never as the date of this price
    launched = f" (card launched {as_of})" if as_of else ""
    offer = Offer(provider=Provider.ONPREM, instance_type=name, region=ONPREM_REGION, pricing=Pricing.OWNED,
                  price_per_hour_usd=price, as_of=None,
                  source=f"power only: {gpu_count} x {watts:g} W board power at ${rate:g}/kWh "
                         f"(constraints.onprem.electricity_usd_per_kwh); board power: {source or 'unknown'}{launched}")
    # The team's host is taken to have the memory and disk the job needs; its CPU is unknown.
    return Machine(provider=Provider.ONPREM, instance_type=name, gpu=gpu, gpu_count=gpu_count,
                   vcpus=0, storage_bytes=requirements.storage_max_bytes,
                   host_memory_bytes=host_memory_need_bytes(job, requirements, gpu_count=gpu_count),
                   cpu_score=0.0, card_memory_bytes=index.gpu_memory.get(gpu, 0),
                   offers=(offer,), pricing=Pricing.OWNED)


def judge_shapes(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                 index: CatalogIndex, scope: Scope, cpu_adjust: CpuAdjust, hours_known: bool) -> list[Shape]:
    """Return every machine in scope (cloud, then owned), judged, in the order of provider and name."""
    return judge_scope(job, requirements=requirements, per_gpu=per_gpu, index=index, scope=scope,
                       cpu_adjust=cpu_adjust, hours_known=hours_known)[0]


def _scope_machines(job: JobSpec, *, requirements: Requirements, index: CatalogIndex,
                    scope: Scope) -> tuple[list[Machine], MachineTable, bool]:
    """Return the machines in scope (cloud, then owned) in the order of provider and name, the index's table of
    the scope, and whether the job has machines of its own (owned boxes, or split by the price of the data's move)."""
    table = index.scoped(providers=scope.providers, max_gpus=scope.max_gpus, pricing=scope.pricing, gpus=scope.gpus)
    machines = list(table.machines)
    owned = owned_machines(job, requirements=requirements, index=index, scope=scope)
    if owned:  # the index's machines are already in order
        known = {(m.provider_name, m.instance_type) for m in machines}
        machines += [m for m in owned if (m.provider_name, m.instance_type) not in known]
        machines.sort(key=lambda m: (m.provider_name, m.instance_type))
    location = job.dataset.location
    moved = location is not None and location[0] in ("aws", "gcp") and job.dataset.size_bytes > 0
    if moved:
        machines = [part for m in machines for part in by_transfer(m, location)]  # type: ignore[arg-type]
    return machines, table, bool(owned) or moved


def judge_scope(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                index: CatalogIndex, scope: Scope, cpu_adjust: CpuAdjust,
                hours_known: bool) -> tuple[list[Shape], Judged | None]:
    """Return judge_shapes' shapes, and with hours known their findings as arrays (judge_arrays.py)."""
    machines, table, own = _scope_machines(job, requirements=requirements, index=index, scope=scope)
    shapes = list(map(Shape, machines, range(len(machines))))
    block_table = index.block_table
    if hours_known:  # the same findings over arrays, for the hundreds of shapes of a ranking
        from workers.ranking.judge_arrays import judge_in_arrays  # it imports this module

        if own:
            table = MachineTable(machines)
        host_need = host_needs(job, requirements, table.host_keys, per_gpu)
        judged = judge_in_arrays(shapes, per_gpu, job=job, requirements=requirements, host_need=host_need,
                                 block_table=block_table, planner=RunPlanner(job), table=table)
        return shapes, judged
    host_need = host_needs(job, requirements, map(host_key, machines), per_gpu)
    _judge_all(shapes, per_gpu, job=job, requirements=requirements, host_need=host_need, cpu_adjust=cpu_adjust,
               hours_known=hours_known, block_table=block_table, planner=RunPlanner(job))
    return shapes, None


def cheapest_rental(shapes: Sequence[Shape]) -> BestRental | None:
    """Return the cheapest rented run among the shapes that meet the constraints: what a purchase is held against."""
    rented = [s for s in shapes if s.best_cost < math.inf and s.m.pricing is not Pricing.OWNED]
    best = min(rented, key=lambda s: (s.best_cost, s.hours, s.m.provider_name, s.m.instance_type), default=None)
    if best is None:
        return None
    label = f"{best.m.provider_name} {best.m.instance_type} {best.m.pricing.value}"
    return BestRental(best.best_cost, best.hours, label)

