"""Ranking for jobs bigger than one GPU: every machine type on 1, 2, 4, ... machines, each with its best strategy.

It runs instead of the plain ranking when the spec names a strategy, when no machine holds the job
in plain data parallel, or when `constraints.max_gpus` allows more GPUs than one machine carries.
For each instance type in scope and each machine count n (n x its GPUs within max_gpus; owned
machines only n = 1), the sizing core's `auto` search (strategies/search.py) finds the fastest
strategy that fits; the option then costs n x the hourly price x the hours, the machines starting
together (one start-up each, in parallel), and says its strategy in `parallelism`, `nodes` and
`why`. Offers are costed, filtered and ordered as in ranking.py (candidates.collect_candidates,
ranking.top_rows). `scaling` lists the top option's instance type and strategy family on each
machine count, to show where adding machines stops paying off. What each option says (its fields, its
line, its warnings) is strategy_words.py's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from catalog.energy import load_energy
from catalog.types import Catalog, GpuSpec, Pricing, Provider
from workers.ranking.candidates import Span, collect_candidates
from workers.ranking.carbon import annotate_energy, apply_carbon, offer_energy
from workers.ranking.catalog_index import CatalogIndex, Machine, catalog_index
from workers.ranking.costing import BYTES_PER_BILLED_GB, HOURS_PER_MONTH
from workers.ranking.front import Row, pareto_test
from workers.ranking.host_need import host_memory_need_bytes
from workers.ranking.left_out import left_out_reason
from workers.ranking.purchase_search import searched_purchase
from workers.ranking.ranking import ordered_rows, run_fields
from workers.ranking.reasons import (
    commitment_warnings,
    host_memory_reason,
    is_cpu_bound,
    transfer_text,
    transfer_warnings,
)
from workers.ranking.recommendation import RankedOption, Recommendation, Rejected, ScalingPoint
from workers.ranking.runplan import RunPlanner
from workers.ranking.scope import Scope, resolve_scope
from workers.ranking.shapes import Shape, by_transfer, owned_machines, plan_shape_run
from workers.ranking.strategy_words import (
    micro_batch_per_gpu,
    option_host_warnings,
    strategy_choice,
    strategy_text,
    strategy_warnings,
    why_text,
)
from workers.sizing.checkpoint import checkpoint_parameters
from workers.sizing.machine import iteration_ms_with_cpu, loader_share
from workers.sizing.multigpu import MAX_GPUS_PER_NODE
from workers.sizing.requirements import Bottleneck, PerGpu, Requirements
from workers.sizing.schedule import training_hours
from workers.sizing.spec import JobSpec, Objective
from workers.sizing.strategies.collectives import host_share
from workers.sizing.strategies.named import names_strategy
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.search import LayoutChoice, best_layout
from workers.sizing.strategies.types import Parallelism

# Machines a search tries, to the schema's 1,024 GPUs (wider.MAX_GPUS_LIMIT) on 8-GPU machines; 64 stopped at 512
MAX_NODES = 128
_UNBOUNDED = 1 << 62  # host memory that binds nothing


def strategies_apply(job: JobSpec, *, nothing_fits: bool) -> bool:
    """Return whether the ranking should search strategies: named in the spec, needed, or many GPUs allowed."""
    return (job.training.parallelism != Parallelism() or nothing_fits
            or job.constraints.max_gpus > MAX_GPUS_PER_NODE)


def _node_counts(m: Machine, max_gpus: int) -> list[int]:
    """Return the machine counts to try: 1, 2, 4, ... within max_gpus (one for owned or network-less machines)."""
    if m.provider is Provider.ONPREM or m.network_gbit_per_s <= 0:
        return [1] if m.gpu_count <= max_gpus else []
    counts, n = [], 1
    while n * m.gpu_count <= max_gpus and n <= MAX_NODES:
        counts.append(n)
        n *= 2
    return counts


class _Search:
    """The search's results, one per (GPU, GPUs per machine, machines, network, host memory)."""

    def __init__(self, job: JobSpec, requirements: Requirements, known: dict[str, GpuSpec],
                 profile_gpu: GpuSpec | None) -> None:
        self.job, self.requirements, self.known, self.profile_gpu = job, requirements, known, profile_gpu
        self.found: dict[tuple[str, int, int, float, float, int], LayoutChoice | None] = {}

    def best(self, m: Machine, nodes: int) -> LayoutChoice | None:
        """Return the fastest strategy for n machines of this shape, or None when none fits."""
        gpu = self.known.get(m.gpu)
        if gpu is None:
            return None
        need = host_memory_need_bytes(self.job, self.requirements, gpu_count=m.gpu_count, vcpus=m.vcpus)
        # Host memory only binds offload: search once per GPU shape without it, and again for a
        # machine whose host cannot hold what the fastest layout offloads.
        network = m.network_gbit_per_s if nodes > 1 else 0.0  # one machine: its network carries nothing
        share = host_share(m.vcpus)  # a slice of a host updates offloaded state at its share of the host's rate
        best = self._searched(gpu, m, nodes, network, share, _UNBOUNDED, 0)
        # The team's own host is taken to have the memory the job needs (shapes.owned_machines), what
        # the layout keeps there (offload, adapters' paged state) included.
        if best is None or m.pricing is Pricing.OWNED \
                or need + best.memory.host_bytes_per_gpu * m.gpu_count <= m.host_memory_bytes:
            return best
        return self._searched(gpu, m, nodes, network, share, m.host_memory_bytes, need)

    def _searched(self, gpu: GpuSpec, m: Machine, nodes: int, network: float, share: float, host_memory_bytes: int,
                  need: int) -> LayoutChoice | None:
        """Return the search's answer at a whole host's CPU-Adam rate, and again at the machine's share of it where
        that answer offloads the optimizer: a slower host only slows offload, so an answer without it stands."""
        choice = self._search(gpu, m, nodes, network, 1.0, host_memory_bytes, need)
        if choice is not None and share < 1.0 and choice.layout.offload.optimizer:
            choice = self._search(gpu, m, nodes, network, share, host_memory_bytes, need)
        return choice

    def _search(self, gpu: GpuSpec, m: Machine, nodes: int, network: float, share: float, host_memory_bytes: int,
                need: int) -> LayoutChoice | None:
        key = (m.gpu, m.gpu_count, nodes, network, share, -1 if host_memory_bytes == _UNBOUNDED
               else host_memory_bytes - need)
        if key not in self.found:
            self.found[key] = best_layout(self.job, gpu, gpus_per_node=m.gpu_count, nodes=nodes,
                                          network_gbit_per_s=network, host_memory_bytes=host_memory_bytes,
                                          host_need_bytes=need, profile_gpu=self.profile_gpu, host_share=share)
        return self.found[key]


def checkpoint_writers(layout: Layout, *, nodes: int) -> int:
    """Return the machines that write a checkpoint's shards at once.

    Sharded states (ZeRO, FSDP) and pipeline stages are saved by the ranks that hold them (torch
    distributed checkpoint, DeepSpeed's per-rank files), so a state spread over k machines is written k
    ways; replicas (plain data parallel, hybrid sharding's copies per machine) write one copy.
    """
    spread = layout.shard_degree * layout.tensor_parallel * layout.pipeline_stages
    return max(1, min(nodes, -(-spread // max(1, layout.gpus_per_node))))


def _shape(m: Machine, idx: int, nodes: int, c: LayoutChoice, *, job: JobSpec, requirements: Requirements,
           index: CatalogIndex, planner: RunPlanner) -> Shape:
    """Return a shape for n machines running the choice: time, cost multiplier, storage, deadline."""
    s = Shape(m, idx)
    dp = c.layout.data_parallel_degree
    training = replace(job.training, batch_size=c.batch_size, update_interval=c.update_interval)
    hours = training_hours(job.dataset, training, iteration_ms=c.time.iteration_ms, forward_ms=c.time.forward_ms,
                           gpu_count=dp)
    s.per_gpu = PerGpu(gpu=m.gpu, gpu_count=c.layout.gpu_count, fits=True,
                       gpu_memory_bytes=c.memory.breakdown.total_bytes, iteration_ms=c.time.iteration_ms,
                       throughput_samples_per_s=c.time.samples_per_iteration * 1000.0 / c.time.iteration_ms,
                       training_hours=hours, calibrated=c.time.calibrated, bottleneck=c.time.bottleneck,
                       compute_ms=c.time.compute_ms - c.time.memory_ms, memory_ms=c.time.memory_ms)
    stretch = _cpu_stretch(s, c, job=job)
    hours *= stretch
    s.host_memory_needed_bytes = host_memory_need_bytes(job, requirements, gpu_count=m.gpu_count, vcpus=m.vcpus)
    if requirements.iterations_total > 0:
        # The same run as a plain option's: start-up, staging, checkpoints, billing, spot restarts.
        s.reject = plan_shape_run(s, training_hours=hours, job=job, planner=planner, machines=nodes,
                                  saved_parameters=checkpoint_parameters(job, c.layout.adapter),
                                  writers=checkpoint_writers(c.layout, nodes=nodes),
                                  local_disk_holds_data=m.storage_bytes >= requirements.storage_min_bytes)
    else:
        per_sample_s = stretch / s.per_gpu.throughput_samples_per_s
        s.time_metric, s.cost_mult = per_sample_s, per_sample_s / 3600.0 * nodes
    if m.provider is not Provider.ONPREM and m.storage_bytes < requirements.storage_min_bytes:
        s.block_bytes = requirements.storage_max_bytes
        if requirements.iterations_total > 0:
            s.block_factor = s.block_bytes / BYTES_PER_BILLED_GB * s.hours / HOURS_PER_MONTH * nodes
        s.block_prices, s.block_fallback = index.block_table.get(m.provider, ({}, None))
    return s


def _cpu_stretch(s: Shape, c: LayoutChoice, *, job: JobSpec) -> float:
    """Set the shape's loader workers and CPU-stretched iteration; return the stretch (1.0: the GPUs set the pace).

    The plain ranking's rule (shapes._judge_all): each GPU's loader workers on their share of the machine's
    cores (machine.loader_share) must prepare its micro-batch within the GPU's iteration, else they set it.
    """
    m = s.m
    base = c.time.iteration_ms
    s.workers, cores = loader_share(job.dataset, vcpus=m.vcpus, gpu_count=m.gpu_count,
                                    threads_per_core=m.threads_per_core)
    s.iteration_ms = base
    if job.dataset.preprocess_ms_per_sample <= 0 or m.cpu_score <= 0 or base <= 0:
        return 1.0
    s.iteration_ms = iteration_ms_with_cpu(base, batch_size=micro_batch_per_gpu(c),
                                           preprocess_ms_per_sample=job.dataset.preprocess_ms_per_sample,
                                           cpu_single_thread_score=m.cpu_score, workers=cores)
    return s.iteration_ms / base


def _machines(job: JobSpec, requirements: Requirements, index: CatalogIndex, scope: Scope,
              only: tuple[str, str] | None = None) -> list[Machine]:
    """Return the cloud machines in scope and the owned boxes, in provider and name order (`only`: one type)."""
    # The index holds an instance type once per pricing kind (its spot run is judged apart).
    pool = index.machines if only is None else [m for m in index.machines
                                                if m.provider_name == only[0] and m.instance_type == only[1]]
    machines = [m for m in pool if m.provider in scope.providers and 0 < m.gpu_count <= scope.max_gpus
                and m.pricing in scope.pricing and scope.allows(m.gpu)]
    known = {(m.provider_name, m.instance_type) for m in machines}
    machines += [m for m in owned_machines(job, requirements=requirements, index=index, scope=scope)
                 if (m.provider_name, m.instance_type) not in known]
    if only is not None:
        machines = [m for m in machines if (m.provider_name, m.instance_type) == only]
    machines.sort(key=lambda m: (m.provider_name, m.instance_type))
    location = job.dataset.location
    if location is not None and location[0] in ("aws", "gcp") and job.dataset.size_bytes > 0:
        machines = [part for m in machines for part in by_transfer(m, location)]  # egress by region (shapes.py)
    return machines


def rank_strategies(job: JobSpec, *, requirements: Requirements, catalog: Catalog,
                    profile_gpu: GpuSpec | None = None, only: tuple[str, str] | None = None) -> Recommendation:
    """Rank every machine type and count in scope, each with the fastest strategy that fits.

    `only` (provider, instance type) ranks that one machine type alone, on every count.
    """
    scope = resolve_scope(job.constraints, catalog)
    index = catalog_index(catalog)
    search = _Search(job, requirements, {g.slug: g for g in catalog.gpus}, profile_gpu)
    planner = RunPlanner(job)
    shapes: list[Shape] = []
    nodes_of: list[int] = []
    choices: list[LayoutChoice] = []
    unfit: dict[tuple[str, str, str], list[Machine]] = {}
    short_host: dict[tuple[str, str, str], list[Machine]] = {}  # the host cannot hold even the plain job's needs
    gpus = {g.slug: g for g in catalog.gpus}
    unsupported: dict[tuple[str, str, str], list[Machine]] = {}  # cards left out (left_out.py)
    for m in _machines(job, requirements, index, scope, only):
        if m.gpu in gpus and left_out_reason(job, gpus[m.gpu]):
            unsupported.setdefault(m.rejected_group, []).append(m)
            continue
        fitted = False
        for nodes in _node_counts(m, scope.max_gpus):
            c = search.best(m, nodes)
            if c is None:
                continue
            fitted = True
            shapes.append(_shape(m, len(shapes), nodes, c, job=job, requirements=requirements, index=index,
                                 planner=planner))
            nodes_of.append(nodes)
            choices.append(c)
        if not fitted:
            short = m.pricing is not Pricing.OWNED \
                and m.host_memory_bytes < host_memory_need_bytes(job, requirements, gpu_count=m.gpu_count,
                                                                     vcpus=m.vcpus)
            (short_host if short else unfit).setdefault(m.rejected_group, []).append(m)
    hours_known = requirements.iterations_total > 0
    annotate_energy(shapes, job=job, table=load_energy(), tdp_watts={g.slug: float(g.tdp_watts) for g in catalog.gpus})
    for s, nodes in zip(shapes, nodes_of, strict=True):
        s.it_kwh *= nodes  # n machines draw n times one machine's energy
    budget = job.constraints.budget_usd
    spans = collect_candidates(shapes, scope=scope, objective=job.objective,
                               budget_usd=budget if budget is not None and hours_known else math.inf)
    max_co2e = job.constraints.max_co2e_kg if hours_known else None
    if max_co2e is not None or job.objective is Objective.CARBON:
        spans = apply_carbon(spans, max_co2e_kg=max_co2e, by_carbon=job.objective is Objective.CARBON)
    rows = ordered_rows(job, spans)
    options = _options(rows, shapes, nodes_of, choices, job=job, hours_known=hours_known,
                       regions=index.regions_by_provider)
    no_fit = (f"no strategy fits {{gpu}} within {scope.max_gpus} GPUs: even fully sharded with full "
              "checkpointing, offload and micro-batch 1 the job exceeds its memory")

    def host_reason(ms: list[Machine]) -> str:
        return host_memory_reason([(host_memory_need_bytes(job, requirements, gpu_count=x.gpu_count, vcpus=x.vcpus),
                                    x.host_memory_bytes) for x in ms], data_in_memory=job.dataset.in_memory)

    def reason(kind: str, gpu: str, ms: list[Machine]) -> str:
        if kind == "host":
            return host_reason(ms)
        return left_out_reason(job, gpus[gpu]) if kind == "framework" else no_fit.format(gpu=gpu)

    rejected = tuple(Rejected(instance_type=_type_names(ms), provider=provider, gpu=gpu,
                              gpu_count=counts.pop() if len(counts := {x.gpu_count for x in ms}) == 1 else 0,
                              reason=reason(kind, gpu, ms))
                     for kind, groups in (("memory", unfit), ("host", short_host), ("framework", unsupported))
                     for (provider, _, gpu), ms in sorted(groups.items()))
    top = options[0] if options else None
    if top is not None and names_strategy(job):
        requirements = _named_requirements(requirements, choices[rows[0][-1]], top)
    purchase = searched_purchase(job, requirements=requirements, index=index, scope=scope, best=search.best,
                                 shapes=shapes) if Provider.ONPREM in scope.providers else ()
    return Recommendation(requirements=requirements, options=options, rejected=rejected,
                          catalog_version=catalog.version, prices_as_of=catalog.prices_as_of, purchase=purchase,
                          scaling=_scaling(shapes[rows[0][-1]] if top is not None and top.parallelism is not None
                                           else None, shapes, nodes_of, choices, spans_cost=_cheapest_costs(spans)))


def _named_requirements(requirements: Requirements, c: LayoutChoice, top: RankedOption) -> Requirements:
    """Return the requirements with the memory of the strategy the spec names, as the top option runs it.

    Plain data parallel would be the wrong figure for a job that names sharding, adapters or offload;
    the top option follows every field the spec names and fills its `auto` ones.
    """
    offload_host = c.memory.host_bytes_per_gpu * c.layout.gpus_per_node
    return replace(requirements, gpu_memory_bytes=c.memory.breakdown.total_bytes,
                   gpu_memory_breakdown=c.memory.breakdown, peak_phase=c.memory.peak_phase,
                   memory_calibrated=False, host_memory_bytes=requirements.host_memory_bytes + offload_host)


def _host_bytes(m: Machine, c: LayoutChoice) -> int:
    """Return the option's host memory: the machine's, or on the team's own cards (taken to have what the job
    needs, shapes.onprem_machine) that need with what the layout keeps there (offload, adapters' paged state)."""
    kept = c.memory.host_bytes_per_gpu * m.gpu_count if m.pricing is Pricing.OWNED else 0
    return m.host_memory_bytes + kept


def _cheapest_costs(spans: list[Span]) -> dict[int, float]:
    """Return each shape's cheapest cost among its offers in scope."""
    return {span.shape.idx: min(span.costs) for span in spans}


def _options(rows: list[Row], shapes: list[Shape], nodes_of: list[int], choices: list[LayoutChoice], *,
             job: JobSpec, hours_known: bool,
             regions: Mapping[Provider, tuple[str, ...]]) -> tuple[RankedOption, ...]:
    """Build the ranked options, each with its strategy in fields and words."""
    feasible = [s for s in shapes if s.best_cost < math.inf]
    on_front = pareto_test([(s.time_metric, s.best_cost) for s in feasible])
    options: list[RankedOption] = []
    for rank, (_, _, _, _, region, pricing, price, cost, idx) in enumerate(rows, start=1):
        s, nodes, c = shapes[idx], nodes_of[idx], choices[idx]
        m = s.m
        strategy = strategy_choice(c)
        if is_cpu_bound(s):
            strategy = replace(strategy, bottleneck=Bottleneck.CPU_PREPROCESSING.value)
        storage_cost = cost - price * s.cost_mult - s.egress_usd if hours_known else 0.0
        options.append(RankedOption(
            rank=rank, provider=m.provider_name, instance_type=m.instance_type, region=region,
            pricing=pricing, gpu=m.gpu, gpu_count=m.gpu_count, gpu_memory_bytes=m.card_memory_bytes,
            vcpus=m.vcpus, host_memory_bytes=_host_bytes(m, c), storage_bytes=m.storage_bytes,
            cpu_single_thread_score=m.cpu_score, price_per_hour_usd=price, training_hours=s.hours,
            training_cost_usd=cost if hours_known else 0.0, fits=True,
            why=why_text(s, strategy, nodes=nodes, price=price, cost=cost, hours_known=hours_known, job=job),
            warnings=commitment_warnings(pricing, price_per_hour_usd=price, machines=nodes)
            + strategy_warnings(s, strategy, nodes=nodes, pricing=pricing.value, shapes=shapes, nodes_of=nodes_of)
            + tuple(option_host_warnings(s, c, job=job))
            + transfer_warnings(s, region=region, job=job, regions=regions.get(m.provider, ()), cost_usd=cost),
            pareto=on_front(s.time_metric, cost), storage_cost_usd=storage_cost, iteration_ms=s.iteration_ms,
            nodes=nodes, parallelism=strategy, energy=offer_energy(s, region) if hours_known else None,
            loader_workers=s.workers if job.dataset.preprocess_ms_per_sample > 0 else 0,
            threads_per_core=s.m.threads_per_core,
            owned=pricing is Pricing.OWNED,
            **run_fields(s, cost=cost, hours_known=hours_known),
            **m.price_origin(region),
            data_transfer_cost_usd=s.egress_usd if hours_known else 0.0, data_transfer=transfer_text(s, job=job),
        ))
    return tuple(options)


def _scaling(top: Shape | None, shapes: list[Shape], nodes_of: list[int], choices: list[LayoutChoice], *,
             spans_cost: dict[int, float]) -> tuple[ScalingPoint, ...]:
    """Return the top option's machine on each machine count that fits, with time, cost and speed-up.

    The same machine means the same catalog row: its instance type at the top option's pricing kind
    (and region group, where the data set's location splits them), so each count appears once. Each
    count runs the fastest strategy that fits it (`strategy`): fewer machines may need a slower one
    (offload, more checkpointing), so an efficiency above 100% is that strategy's cost, not the network.
    """
    if top is None:
        return ()
    points = [(nodes_of[i], s) for i, s in enumerate(shapes) if s.m is top.m and s.hours > 0 and i in spans_cost]
    points.sort(key=lambda p: p[0])
    if not points:
        return ()
    base_nodes, base = points[0]
    return tuple(ScalingPoint(nodes=n, total_gpus=n * s.m.gpu_count, training_hours=s.hours,
                              training_cost_usd=spans_cost[s.idx],
                              speedup=base.hours / s.hours * 1.0,
                              efficiency=base.hours / s.hours / (n / base_nodes),
                              strategy=strategy_text(strategy_choice(choices[s.idx]), nodes=n))
                 for n, s in points)


def _type_names(machines: list[Machine]) -> str:
    """Each instance type once (one machine per region and pricing), in ranking._rejected's listing order."""
    return ", ".join(dict.fromkeys(m.instance_type for m in sorted(machines, key=lambda m: m.listing_key)))
