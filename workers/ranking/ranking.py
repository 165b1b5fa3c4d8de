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
- balanced: the knee of the cost/time front first (front.py: the front's point of least cost x
  hours), then the rest by cost x hours. Ties by cost.
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

With the size known and no carbon, owned cards, purchase or region filter taking part, steps 1-3 run over
the judging's arrays (ranked_arrays.py), a shape built only for what reads one (the options shown, a few
rejected groups' members): the same answer, tested against these steps (tests/test_ranked_arrays.py).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter
from typing import Any

from catalog.energy import EnergyTable, load_energy
from catalog.types import Catalog, Pricing, Provider
from workers.ranking.candidates import Span, collect_candidates
from workers.ranking.carbon import annotate_energy, apply_carbon, offer_co2e_kg, offer_energy
from workers.ranking.catalog_index import catalog_index
from workers.ranking.front import Row, knee_first, pareto_test
from workers.ranking.purchase import PurchaseOption, purchase_options
from workers.ranking.ranked_arrays import (
    collect_in_arrays,
    judge_lazily,
    nothing_fits_in_arrays,
    options_front,
    rows_in_arrays,
)
from workers.ranking.reasons import (
    commitment_warnings,
    option_warnings,
    rejection_reason,
    transfer_text,
    transfer_warnings,
    why_line,
)
from workers.ranking.recommendation import RankedOption, Recommendation, Rejected
from workers.ranking.rejected_arrays import rejected_in_arrays
from workers.ranking.runcost import SECONDS_PER_HOUR
from workers.ranking.scope import Scope, cards_on_sale, check_data_location, resolve_scope
from workers.ranking.shapes import (
    BUDGET,
    CARBON,
    GPU_MEMORY,
    NO_ESTIMATE,
    NO_STORAGE_PRICE,
    CpuAdjust,
    Shape,
    cheapest_rental,
    judge_scope,
)
from workers.sizing.machine import iteration_ms_with_cpu
from workers.sizing.requirements import CodedWarning, PerGpu, Requirements
from workers.sizing.spec import JobSpec, Objective

REGIONS_PER_MACHINE = 2  # a machine takes at most this many places in a list per pricing kind
# The array ranking builds a shape per option listed, one by one; the plain one builds every shape in one pass.
# Measured (bert, resnet50 examples, CPU, brief): arrays 35-40% faster at 10 options, 7-9% at 200, alike at 400,
# 4-6% slower at every option (a budget review's REVIEW_OPTION_LIMIT).
ARRAYS_MAX_LIMIT = 200


def _cpu_adjust(job: JobSpec) -> CpuAdjust:
    """Return the CPU-stretched iteration time for this job, memoised per (iteration ms, CPU score)."""
    preprocess_ms = job.dataset.preprocess_ms_per_sample
    batch_size = job.training.batch_size
    memo: dict[tuple[float, float, float], float] = {}

    def adjust(iteration_ms: float, cpu_score: float, cores: float) -> float:
        if preprocess_ms <= 0:
            return iteration_ms
        key = (iteration_ms, cpu_score, cores)
        if key not in memo:
            memo[key] = iteration_ms_with_cpu(iteration_ms, batch_size=batch_size,
                                              preprocess_ms_per_sample=preprocess_ms,
                                              cpu_single_thread_score=cpu_score, workers=cores)
        return memo[key]

    return adjust


def rank_offers(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                catalog: Catalog, energy: EnergyTable | None = None, brief: bool = False) -> Recommendation:
    """Rank every offer in scope for the job by its objective; reject the rest with reasons.

    `energy` holds the PUE and grid intensities (the bundled catalog/data/energy.json by default).
    `brief`: the options carry their figures only, no words (why, warnings) and no run details (start-up,
    checkpoints, spot risk): what a budget review reads of a job's thousands of options.
    """
    scope = resolve_scope(job.constraints, catalog)
    check_data_location(job.dataset, catalog)
    index = catalog_index(catalog)
    hours_known = requirements.iterations_total > 0
    table, tdp_watts = energy or load_energy(), {g.slug: float(g.tdp_watts) for g in catalog.gpus}
    max_co2e = job.constraints.max_co2e_kg if hours_known else None
    carbon_ranks = max_co2e is not None or job.objective is Objective.CARBON
    budget = job.constraints.budget_usd
    budget_usd = budget if budget is not None and hours_known else math.inf
    owned = Pricing.OWNED in scope.pricing and bool(job.constraints.owned_gpus or index.sells_owned)
    if ranks_in_arrays(job, scope, hours_known=hours_known, carbon_ranks=carbon_ranks, owned=owned):
        book, judged = judge_lazily(job, requirements=requirements, per_gpu=per_gpu, index=index, scope=scope)
        found = collect_in_arrays(book, judged, scope=scope, budget_usd=budget_usd, objective=job.objective)
        top = rows_in_arrays(job, found, book.machines, judged.table)
        shapes: Sequence[Shape] = book
        front = options_front(found)
        nothing_fits = not found and nothing_fits_in_arrays(book, found)
        rejected = rejected_in_arrays(book, found, job=job, requirements=requirements, catalog=catalog)
    else:
        shapes, judged_or_none = judge_scope(job, requirements=requirements, per_gpu=per_gpu, index=index,
                                             scope=scope, cpu_adjust=_cpu_adjust(job), hours_known=hours_known)
        spans = collect_candidates(shapes, scope=scope, objective=job.objective, budget_usd=budget_usd,
                                   judged=judged_or_none)
        if carbon_ranks:  # the CO2e of every offer that meets the other constraints takes part in the ranking
            annotate_energy([sp.shape for sp in spans], job=job, table=table, tdp_watts=tdp_watts)
            spans = apply_carbon(spans, max_co2e_kg=max_co2e, by_carbon=job.objective is Objective.CARBON)
        top = ordered_rows(job, spans, owned=owned)
        feasible = [(s.time_metric, s.best_cost) for s in shapes if s.best_cost < math.inf]
        front = (pareto_test(feasible), min(map(itemgetter(1), feasible), default=math.inf),
                 min(map(itemgetter(0), feasible), default=math.inf))
        nothing_fits = False  # a span is an offer that fits: only without any can nothing fit
        if not spans:
            in_scope = [s for s in shapes if s.seen or s.best_cost < math.inf or s.over_budget is not None
                        or s.over_co2e is not None
                        or s.missing_storage_regions]
            nothing_fits = bool(in_scope) and all(s.reject in (GPU_MEMORY, NO_ESTIMATE) for s in in_scope)
        rejected = _rejected(shapes, job=job, requirements=requirements, catalog=catalog)
    if not carbon_ranks:  # only the options shown need their energy (it was 20% of a ranking done for all)
        shown = {row[-1]: shapes[row[-1]] for row in top}
        annotate_energy(list(shown.values()), job=job, table=table, tdp_watts=tdp_watts)
    options = _options(top, shapes, front=front, job=job, hours_known=hours_known,
                       regions=index.regions_by_provider, brief=brief)
    return Recommendation(
        requirements=requirements,
        options=options,
        rejected=rejected,
        catalog_version=catalog.version,
        prices_as_of=catalog.prices_as_of,
        plan=requirements.mitigations if nothing_fits else (),
        purchase=_purchase(job, shapes=shapes, per_gpu=per_gpu, catalog=catalog, scope=scope)
        if Provider.ONPREM in scope.providers else (),
    )


def ranks_in_arrays(job: JobSpec, scope: Scope, *, hours_known: bool, carbon_ranks: bool, owned: bool) -> bool:
    """Return whether the ranking is worked out over arrays, without a shape per machine (ranked_arrays.py): with
    the data set's size known, every region in scope, no carbon, owned cards or purchase taking part, and a list
    short enough (ARRAYS_MAX_LIMIT) that building only its options' shapes saves more than it costs."""
    return (hours_known and not scope.regions and not carbon_ranks and not owned
            and Provider.ONPREM not in scope.providers and job.limit <= ARRAYS_MAX_LIMIT)


def _purchase(job: JobSpec, *, shapes: Sequence[Shape], per_gpu: Mapping[tuple[str, int], PerGpu], catalog: Catalog,
              scope: Scope) -> tuple[PurchaseOption, ...]:
    """Return the "what would we buy" section, held against the cheapest rental that meets the constraints."""
    hours = {pair: row.training_hours for pair, row in per_gpu.items() if row.fits}
    return purchase_options(job, cards=cards_on_sale(catalog_index(catalog), scope), hours=hours,
                            best_rental=cheapest_rental(shapes), max_gpus=scope.max_gpus,
                            throughput={pair: per_gpu[pair].throughput_samples_per_s for pair in hours})


def ordered_rows(job: JobSpec, spans: list[Span], *, owned: bool = True) -> list[Row]:
    """Return the rows to show: the team's own cards first, fastest first, then the rented by the objective.

    Owned cards are paid for and their power differs by cents; under `balanced` the rented rows start
    at the knee of the cost/time front (front.knee_first). `owned`: False where no span can be owned.
    """
    owned_spans, rented_spans = [], spans
    if owned:
        owned_spans = [sp for sp in spans if sp.shape.m.pricing is Pricing.OWNED]
        rented_spans = [sp for sp in spans if sp.shape.m.pricing is not Pricing.OWNED]
    owned_rows = top_rows(replace(job, objective=Objective.TIME), [Span(sp.shape, sp.costs, sp.offers, Objective.TIME)
                                                               for sp in owned_spans])
    rented_rows = top_rows(job, rented_spans, limit=max(job.limit - len(owned_rows), 0))
    if job.objective is Objective.BALANCED:
        rented_rows = knee_first(rented_rows, rented_spans)
    return owned_rows + rented_rows


def top_rows(job: JobSpec, spans: list[Span], *, limit: int | None = None) -> list[Row]:
    """Return the `limit` best rows in order: bound the first key, then sort the rows under it by all keys.

    With at least `limit` machines, the limit-th smallest of their best keys bounds the limit-th
    smallest key overall (that many machines each have an offer at or under it), so only offers at
    or under it can make the cut, ties included.
    """
    limit = max(job.limit if limit is None else limit, 0)
    if limit == 0 or not spans:
        return []
    # Each machine (provider, instance type) keeps at least one row at or under its best key, whatever
    # the cap on its regions: `limit` machines' best keys bound the list.
    machine_best: dict[tuple[str, str], float] = {}
    for span in spans:
        m = span.shape.m
        k = (m.provider_name, m.instance_type)
        if span.min_key < machine_best.get(k, math.inf) or k not in machine_best:
            machine_best[k] = span.min_key
    bests = heapq.nsmallest(limit, machine_best.values())
    threshold = bests[-1] if len(machine_best) >= limit else math.inf
    by_cost, by_time = job.objective is Objective.COST, job.objective is Objective.TIME
    by_carbon = job.objective is Objective.CARBON
    # Unknown CO2e is inf, so under the carbon objective many offers can tie at an inf threshold; they
    # are ordered by cost, and `limit` machines whose every offer is unknown bound the cost of those kept.
    cost_bound = math.inf
    if by_carbon and threshold == math.inf:
        unknown = [span.shape.best_cost for span in spans if span.min_key == math.inf]
        if len(unknown) >= limit:
            cost_bound = heapq.nsmallest(limit, unknown)[-1]
    rows: list[Row] = []
    for span in spans:
        if span.min_key > threshold:
            continue
        s = span.shape
        t, provider, name = s.time_metric, s.m.provider_name, s.m.instance_type
        if by_carbon:
            if span.min_key == math.inf and s.best_cost > cost_bound:
                continue
            co2 = span.co2 if span.co2 is not None else [offer_co2e_kg(s, o.region) for o in span.offers]
            rows.extend((key, cost, provider, name, o.region, o.pricing, o.price_per_hour_usd, cost, s.idx)
                        for key, cost, o in zip(co2, span.costs, span.offers, strict=True)
                        if key < threshold or (key == threshold and cost <= cost_bound))
            continue
        for cost, o in zip(span.costs, span.offers, strict=True):
            key = cost if by_cost else t if by_time else cost * t
            if key <= threshold:
                rows.append((key, t if by_cost else cost, provider, name, o.region, o.pricing,
                             o.price_per_hour_usd, cost, s.idx))
    rows.sort()
    return _fewest_regions(rows, limit)


def _fewest_regions(rows: list[Row], limit: int) -> list[Row]:
    """Return the first `limit` sorted rows, each machine in at most REGIONS_PER_MACHINE regions per pricing kind,
    in the objective's order.

    A machine sold at one price in ten regions would otherwise fill the whole list and hide every
    other machine. Its other regions still fill a list that other machines leave short; a user who
    wants a particular region names it in constraints.regions.
    """
    kept: list[Row] = []
    spare: list[Row] = []
    seen: dict[tuple[str, str, Pricing], int] = {}
    for row in rows:
        k = (row[2], row[3], row[5])
        n = seen.get(k, 0)
        if n < REGIONS_PER_MACHINE:
            seen[k] = n + 1
            kept.append(row)
            if len(kept) == limit:
                return kept
        else:
            spare.append(row)
    if not spare:
        return kept
    return sorted(kept + spare[:limit - len(kept)])  # the list stays in the objective's order


def _options(top: list[Row], shapes: Sequence[Shape], *, front: tuple[Callable[[float, float], bool], float, float],
             job: JobSpec, hours_known: bool, regions: Mapping[Provider, tuple[str, ...]],
             brief: bool = False) -> tuple[RankedOption, ...]:
    """Build the ranked options from the kept rows, marking the Pareto front of all the options.

    `front`: the test of the cost/time front of every shape with an offer that meets every constraint
    (front.pareto_test of their (time, cheapest cost)), and the least cost and time among them.
    """
    on_front, best_cost, best_time = front
    options: list[RankedOption] = []
    for rank, (_, _, _, _, region, pricing, price, cost, idx) in enumerate(top, start=1):
        s = shapes[idx]
        m = s.m
        storage_cost = cost - price * s.cost_mult - s.egress_usd if hours_known else 0.0
        balanced = (cost / best_cost, s.time_metric / best_time) if best_cost * best_time > 0 else (1.0, 1.0)
        energy = offer_energy(s, region) if hours_known else None
        why = ""
        warnings: tuple[CodedWarning, ...] = ()
        run: dict[str, Any] = {}
        if not brief:
            why = why_line(s, pricing=pricing.value, price_per_hour_usd=price, cost_usd=cost,
                           storage_cost_usd=storage_cost, hours_known=hours_known, job=job, balanced=balanced)
            if energy is not None and (job.objective is Objective.CARBON or job.constraints.max_co2e_kg is not None):
                why = f"{energy.co2e_kg:,.1f} kg CO2e ({energy.energy_kwh:,.0f} kWh); {why}"
            warnings = (commitment_warnings(pricing, price_per_hour_usd=price)
                        + option_warnings(s, pricing=pricing.value, hours_known=hours_known, job=job)
                        + transfer_warnings(s, region=region, job=job, regions=regions.get(m.provider, ()),
                                            cost_usd=cost))
            run = run_fields(s, cost=cost, hours_known=hours_known)
        else:  # what a review's sweep reads of the run: its steps' hours and its start-up
            run = {"compute_hours": s.training_hours, "start_up_hours": s.start_up_s / SECONDS_PER_HOUR}
        options.append(RankedOption(
            rank=rank, provider=m.provider_name, instance_type=m.instance_type, region=region,
            pricing=pricing, gpu=m.gpu, gpu_count=m.gpu_count, gpu_memory_bytes=m.card_memory_bytes,
            vcpus=m.vcpus, host_memory_bytes=m.host_memory_bytes, storage_bytes=m.storage_bytes,
            cpu_single_thread_score=m.cpu_score, price_per_hour_usd=price,
            training_hours=s.hours, training_cost_usd=cost if hours_known else 0.0, fits=True,
            why=why,
            warnings=warnings,
            pareto=on_front(s.time_metric, cost),
            storage_cost_usd=storage_cost,
            iteration_ms=s.iteration_ms,
            energy=energy,
            loader_workers=s.workers if job.dataset.preprocess_ms_per_sample > 0 else 0,
            threads_per_core=m.threads_per_core,
            owned=pricing is Pricing.OWNED,
            **run,
            **m.price_origin(region), data_transfer_cost_usd=s.egress_usd if hours_known else 0.0,
            data_transfer="" if brief else transfer_text(s, job=job),
        ))
    return tuple(options)


def run_fields(s: Shape, *, cost: float, hours_known: bool) -> dict[str, Any]:
    """Return an option's run figures (start-up, checkpoints, billing, spot risk) from its shape's plan."""
    plan = s.plan
    spot = plan.spot if plan is not None else None
    return {
        "compute_hours": plan.training_hours if plan is not None else 0.0,
        "billed_hours": plan.billed_hours if plan is not None else 0.0,
        "start_up": plan.start_up if plan is not None else None,
        "start_up_hours": s.start_up_s / SECONDS_PER_HOUR,
        "checkpoints": plan.checkpoints if plan is not None else None,
        "percentile": spot.percentile if spot is not None else 0.0,
        "percentile_hours": spot.percentile_hours if spot is not None else 0.0,
        "percentile_cost_usd": cost * s.budget_scale if spot is not None and hours_known else 0.0,
        "expected_interruptions": spot.expected_interruptions if spot is not None else 0.0,
        "mtbi_hours": spot.mtbi_hours if spot is not None else 0.0,
        "interruption_source": plan.rate.described if plan is not None and plan.rate is not None else "",
    }


def _rejected(shapes: Sequence[Shape], *, job: JobSpec, requirements: Requirements,
              catalog: Catalog) -> tuple[Rejected, ...]:
    """Group the shapes with no option by provider, family, GPU and reason, one reason per group."""
    # Keyed by ((provider, family, GPU), reason): sorted as the flat 4-tuple would be.
    groups: dict[tuple[tuple[str, str, str], str], list[Shape]] = {}
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
        groups.setdefault((s.m.rejected_group, kind), []).append(s)
    rejected: list[Rejected] = []
    for ((provider, _, gpu), kind), members in sorted(groups.items()):
        members.sort(key=lambda s: s.m.listing_key)  # (GPUs, vCPUs, host memory, instance type)
        counts = {s.m.gpu_count for s in members}
        rejected.append(Rejected(
            instance_type=", ".join(dict.fromkeys(s.m.instance_type for s in members)),
            reason=rejection_reason(kind, members, requirements=requirements, job=job, catalog=catalog),
            provider=provider, gpu=gpu, gpu_count=counts.pop() if len(counts) == 1 else 0,
        ))
    return tuple(rejected)
