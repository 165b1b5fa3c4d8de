"""Ranks a catalog's offers for one job: what fits, how long it takes, what it costs, and why not the rest.

The fit and time of the job on each (GPU model, count) are estimated once, before ranking, and
passed in as `per_gpu`; ranking joins them to the offers, so it grows with the catalog only by a
cheap per-offer step:
1. every machine shape in scope is judged once (shapes.py): GPU memory (`PerGpu.fits`, headroom
   included), host memory against the data held in memory, the CPU (a slower one stretches the
   iteration through `iteration_ms_with_cpu`, with a warning, rather than being rejected), local
   disk against the storage need (block storage of the full need is priced in where local disk
   is short of its minimum), and the deadline;
2. every offer of a shape that passes gets its total cost, hourly price x hours + block storage,
   and is checked against the budget (candidates.py; owned machines are priced by
   costing.onprem_price_per_hour_usd, with 1, 2, 4 or 8 cards);
3. the options are ordered by the objective and the first `limit` kept; each is marked when it
   lies on the cost/time Pareto front of all the options and gets a one-line `why`. Shapes that
   cannot run the job are grouped by provider, family, GPU and reason into `rejected`.

Objectives:
- cost: cheapest total first, ties by time;
- time: fastest first, ties by cost;
- balanced: the smallest geometric mean of cost and time, each relative to the best option,
  sqrt((cost / cheapest cost) x (hours / fastest hours)): 1.0 is an option both cheapest and
  fastest; halving the cost is worth as much as halving the time. It orders options as cost x
  hours does, so it needs no second pass. Ties by cost.
Every tie is then broken by provider, instance type, region, pricing kind and price, so that the
same input gives the same order whatever the order of the catalog.

Budget and deadline reject: an option over the budget or past the deadline is not ranked, and its
family is listed in `rejected` with the figure that fails (the cheapest cost, the fastest time),
so the options are exactly what may be bought. Providers, regions, pricing kinds and max_gpus only
scope the catalog (scope.py). When nothing in scope has the GPU memory for the job, `plan` is the
sizing core's out-of-memory plan (recommend.py replaces it with one that names the options each
step opens). When the
data set's size is unknown there are no training hours: time is then the time per sample and cost
the price per sample, budget and deadline go unchecked, and each option warns so.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Mapping

from catalog.energy import EnergyTable, load_energy
from catalog.types import Catalog, Pricing
from workers.ranking.candidates import Span, collect_candidates
from workers.ranking.carbon import annotate_energy, apply_carbon, offer_co2e_kg, offer_energy
from workers.ranking.catalog_index import catalog_index
from workers.ranking.reasons import option_warnings, rejection_reason, why_line
from workers.ranking.recommendation import RankedOption, Recommendation, Rejected
from workers.ranking.scope import resolve_scope
from workers.ranking.shapes import (
    BUDGET,
    CARBON,
    GPU_MEMORY,
    NO_ESTIMATE,
    NO_STORAGE_PRICE,
    CpuAdjust,
    Shape,
    judge_shapes,
)
from workers.sizing.machine import iteration_ms_with_cpu
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec, Objective

# One row per option that meets every constraint: the two sort keys, the tie-breaks, then what
# the option needs to be built (price, cost, shape index).
Row = tuple[float, float, str, str, str, Pricing, float, float, int]


def _cpu_adjust(job: JobSpec) -> CpuAdjust:
    """Return the CPU-stretched iteration time for this job, memoised per (iteration ms, CPU score)."""
    preprocess_ms = job.dataset.preprocess_ms_per_sample
    batch_size = job.training.batch_size
    memo: dict[tuple[float, float], float] = {}

    def adjust(iteration_ms: float, cpu_score: float) -> float:
        if preprocess_ms <= 0:
            return iteration_ms
        key = (iteration_ms, cpu_score)
        if key not in memo:
            memo[key] = iteration_ms_with_cpu(iteration_ms, batch_size=batch_size,
                                              preprocess_ms_per_sample=preprocess_ms,
                                              cpu_single_thread_score=cpu_score)
        return memo[key]

    return adjust


def pareto_test(points: list[tuple[float, float]]) -> Callable[[float, float], bool]:
    """Return a test: is (time, cost) on the Pareto front, no point as good in both and better in one?

    `points` must include every option's (time, cost), or at least the cheapest cost at each time.
    """
    cheapest_at: dict[float, float] = {}
    for t, c in points:
        if c < cheapest_at.get(t, math.inf):
            cheapest_at[t] = c
    times = sorted(cheapest_at)
    before: list[float] = []  # before[i]: the cheapest cost among times[:i]
    running = math.inf
    for t in times:
        before.append(running)
        running = min(running, cheapest_at[t])

    def on_front(t: float, c: float) -> bool:
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t and cheapest_at[t] < c:
            return False
        return not before[i] <= c if i < len(before) else not running <= c

    return on_front


def rank_offers(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                catalog: Catalog, energy: EnergyTable | None = None) -> Recommendation:
    """Rank every offer in scope for the job by its objective; reject the rest with reasons.

    `energy` holds the PUE and grid intensities (the bundled catalog/data/energy.json by default).
    """
    scope = resolve_scope(job.constraints, catalog)
    hours_known = requirements.iterations_total > 0
    shapes = judge_shapes(job, requirements=requirements, per_gpu=per_gpu, index=catalog_index(catalog),
                          scope=scope, cpu_adjust=_cpu_adjust(job), hours_known=hours_known)
    table, tdp_watts = energy or load_energy(), {g.slug: float(g.tdp_watts) for g in catalog.gpus}
    max_co2e = job.constraints.max_co2e_kg if hours_known else None
    carbon_ranks = max_co2e is not None or job.objective is Objective.CARBON
    if carbon_ranks:  # every shape's CO2e takes part in the ranking
        annotate_energy(shapes, job=job, table=table, tdp_watts=tdp_watts)
    budget = job.constraints.budget_usd
    spans = collect_candidates(shapes, scope=scope, objective=job.objective,
                               budget_usd=budget if budget is not None and hours_known else math.inf)
    if carbon_ranks:
        spans = apply_carbon(spans, max_co2e_kg=max_co2e, by_carbon=job.objective is Objective.CARBON)
    top = top_rows(job, spans)
    if not carbon_ranks:  # only the options shown need their energy (it was 20% of a ranking done for all)
        shown = {row[-1]: shapes[row[-1]] for row in top}
        annotate_energy(list(shown.values()), job=job, table=table, tdp_watts=tdp_watts)
    options = _options(top, shapes, job=job, hours_known=hours_known)
    in_scope = [s for s in shapes if s.seen or s.best_cost < math.inf or s.over_budget is not None
                or s.over_co2e is not None
                or s.missing_storage_regions]
    nothing_fits = bool(in_scope) and all(s.reject in (GPU_MEMORY, NO_ESTIMATE) for s in in_scope)
    return Recommendation(
        requirements=requirements,
        options=options,
        rejected=_rejected(shapes, job=job, requirements=requirements, catalog=catalog),
        catalog_version=catalog.version,
        prices_as_of=catalog.prices_as_of,
        plan=requirements.mitigations if nothing_fits else (),
    )


def top_rows(job: JobSpec, spans: list[Span]) -> list[Row]:
    """Return the `limit` best rows in order: bound the first key, then sort the rows under it by all keys.

    With at least `limit` machines, the limit-th smallest of their best keys bounds the limit-th
    smallest key overall (that many machines each have an offer at or under it), so only offers at
    or under it can make the cut, ties included.
    """
    limit = max(job.limit, 0)
    if limit == 0 or not spans:
        return []
    bests = heapq.nsmallest(limit, (span.min_key for span in spans))
    threshold = bests[-1] if len(spans) >= limit else math.inf
    by_cost, by_time = job.objective is Objective.COST, job.objective is Objective.TIME
    by_carbon = job.objective is Objective.CARBON
    rows: list[Row] = []
    for span in spans:
        if span.min_key > threshold:
            continue
        s = span.shape
        t, provider, name = s.time_metric, s.m.provider_name, s.m.instance_type
        for cost, o in zip(span.costs, span.offers, strict=True):
            key = offer_co2e_kg(s, o.region) if by_carbon else cost if by_cost else t if by_time else cost * t
            if key <= threshold:
                rows.append((key, t if by_cost else cost, provider, name, o.region, o.pricing,
                             o.price_per_hour_usd, cost, s.idx))
    rows.sort()
    return rows[:limit]


def _options(top: list[Row], shapes: list[Shape], *, job: JobSpec,
             hours_known: bool) -> tuple[RankedOption, ...]:
    """Build the ranked options from the kept rows, marking the Pareto front of all the options."""
    feasible = [s for s in shapes if s.best_cost < math.inf]
    on_front = pareto_test([(s.time_metric, s.best_cost) for s in feasible])
    best_cost = min((s.best_cost for s in feasible), default=math.inf)
    best_time = min((s.time_metric for s in feasible), default=math.inf)
    options: list[RankedOption] = []
    for rank, (_, _, _, _, region, pricing, price, cost, idx) in enumerate(top, start=1):
        s = shapes[idx]
        m = s.m
        storage_cost = cost - price * s.cost_mult if hours_known else 0.0
        score = math.sqrt(cost / best_cost * s.time_metric / best_time) if best_cost * best_time > 0 else 1.0
        energy = offer_energy(s, region) if hours_known else None
        why = why_line(s, pricing=pricing.value, price_per_hour_usd=price, cost_usd=cost,
                       storage_cost_usd=storage_cost, hours_known=hours_known, job=job, balanced_score=score)
        if energy is not None and (job.objective is Objective.CARBON or job.constraints.max_co2e_kg is not None):
            why = f"{energy.co2e_kg:,.1f} kg CO2e ({energy.energy_kwh:,.0f} kWh); {why}"
        options.append(RankedOption(
            rank=rank, provider=m.provider_name, instance_type=m.instance_type, region=region,
            pricing=pricing, gpu=m.gpu, gpu_count=m.gpu_count, gpu_memory_bytes=m.card_memory_bytes,
            vcpus=m.vcpus, host_memory_bytes=m.host_memory_bytes, storage_bytes=m.storage_bytes,
            cpu_single_thread_score=m.cpu_score, price_per_hour_usd=price,
            training_hours=s.hours, training_cost_usd=cost if hours_known else 0.0, fits=True,
            why=why,
            warnings=option_warnings(s, pricing=pricing.value, hours_known=hours_known),
            pareto=on_front(s.time_metric, cost),
            storage_cost_usd=storage_cost,
            iteration_ms=s.iteration_ms,
            energy=energy,
        ))
    return tuple(options)


def _rejected(shapes: list[Shape], *, job: JobSpec, requirements: Requirements,
              catalog: Catalog) -> tuple[Rejected, ...]:
    """Group the shapes with no option by provider, family, GPU and reason, one reason per group."""
    groups: dict[tuple[str, str, str, str], list[Shape]] = {}
    for s in shapes:
        if s.best_cost < math.inf:
            continue
        if s.seen and s.reject is not None:
            kind = s.reject
        elif s.over_budget is not None:
            kind = BUDGET
        elif s.over_co2e is not None:
            kind = CARBON
        elif s.missing_storage_regions:
            kind = NO_STORAGE_PRICE
        else:
            continue  # no offer in scope
        groups.setdefault((s.m.provider_name, s.m.family, s.m.gpu, kind), []).append(s)
    rejected: list[Rejected] = []
    for (provider, _, gpu, kind), members in sorted(groups.items()):
        members.sort(key=lambda s: (s.m.gpu_count, s.m.vcpus, s.m.host_memory_bytes, s.m.instance_type))
        counts = {s.m.gpu_count for s in members}
        rejected.append(Rejected(
            instance_type=", ".join(s.m.instance_type for s in members),
            reason=rejection_reason(kind, members, requirements=requirements, job=job, catalog=catalog),
            provider=provider, gpu=gpu, gpu_count=counts.pop() if len(counts) == 1 else 0,
        ))
    return tuple(rejected)
