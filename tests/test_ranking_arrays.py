"""The ranking's array paths agree with the plain per-shape ones: shapes (judge_arrays against
shapes._judge_all) and offers' costs (candidates._costed_in_arrays against a plain loop over the offers)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pytest

from catalog.loader import load_catalog
from catalog.types import Catalog, Offer, Pricing
from tests.recommending import changed_example
from workers.ranking.candidates import Span, _costed_in_arrays, collect_candidates
from workers.ranking.catalog_index import catalog_index
from workers.ranking.host_need import host_key, host_needs
from workers.ranking.ranking import _cpu_adjust
from workers.ranking.recommend import estimate_per_gpu
from workers.ranking.runplan import RunPlanner
from workers.ranking.scope import gpu_counts_in_scope, resolve_scope
from workers.ranking.shapes import (
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    SPOT_RESTARTS,
    Shape,
    _judge_all,
    judge_scope,
    judge_shapes,
)
from workers.schemas import JobSpecSchema
from workers.schemas.specs import build_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec, Objective

JOBS = {
    "bert on every pricing kind, data in us-east-1": changed_example(
        "bert-finetune", constraints={"pricing": ["on_demand", "spot", "committed_1y", "committed_3y"]},
        dataset={"location": {"provider": "aws", "region": "us-east-1"}}),
    "resnet50 on spot, a tight deadline": changed_example("resnet50-imagenet", constraints={
        "pricing": ["spot"], "deadline_hours": 20, "max_gpus": 8}),
    "gpt2 on spot and on demand, no deadline": changed_example("gpt2-pretrain", constraints={
        "pricing": ["spot", "on_demand"], "max_gpus": 8}),
    "spot checkpoints too far apart to make progress": changed_example(
        "dcgan-faces", training={"checkpoint_every_hours": 80.0}, constraints={"pricing": ["spot"]}),
    "the team's own cards beside the clouds": changed_example("team-owns-4x3090"),
    "resnet50 on block storage, a budget that cuts": changed_example("resnet50-imagenet", constraints={
        "budget_usd": 300, "deadline_hours": 60, "pricing": ["spot", "on_demand"]}, objective="balanced"),
    "bert by time": changed_example("bert-finetune", objective="time"),
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _found(s: Shape) -> dict[str, object]:
    """Return what judging set on a shape, by attribute: its run parts set, or left to be worked out when asked."""
    found = {k: v for k, v in vars(s).items() if k not in ("_parts", "_parts_from")}
    if "_parts" in vars(s) or "_parts_from" in vars(s):
        found["parts"] = s.parts
    return found


def _same(a: object, b: object) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _judged(raw: dict[str, Any], catalog: Catalog) -> tuple[JobSpec, Requirements, Mapping[Any, PerGpu], list[Shape]]:
    known = {g.slug: g for g in catalog.gpus}
    job = build_job(JobSpecSchema().load(raw))
    requirements = estimate_requirements(job, known_gpus=known)
    per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
    shapes = judge_shapes(job, requirements=requirements, per_gpu=per_gpu, index=catalog_index(catalog),
                          scope=resolve_scope(job.constraints, catalog), cpu_adjust=_cpu_adjust(job), hours_known=True)
    return job, requirements, per_gpu, shapes


def test_shapes_judged_in_arrays_are_judged_as_one_by_one(catalog: Catalog) -> None:
    seen: set[str | None] = set()
    spot_runs = block_storage = cpu_bound = 0
    for name, raw in JOBS.items():
        job, requirements, per_gpu, shapes = _judged(raw, catalog)
        alone = [Shape(s.m, s.idx) for s in shapes]
        host_need = host_needs(job, requirements, [host_key(s.m) for s in shapes], per_gpu)
        _judge_all(alone, per_gpu, job=job, requirements=requirements, host_need=host_need, cpu_adjust=_cpu_adjust(job),
                   hours_known=True, block_table=catalog_index(catalog).block_table, planner=RunPlanner(job))
        for judged, plain in zip(shapes, alone, strict=True):
            assert _found(judged).keys() == _found(plain).keys(), (name, judged.m.instance_type)
            for field, value in _found(plain).items():
                assert _same(getattr(judged, field), value), (name, judged.m.instance_type, field)
            seen.add(judged.reject)
            spot_runs += judged.is_spot_run
            block_storage += judged.block_factor > 0
            cpu_bound += judged.per_gpu is not None and judged.iteration_ms > judged.per_gpu.iteration_ms
    # the cases the arrays tell apart all came up
    assert {None, DEADLINE, SPOT_RESTARTS, GPU_MEMORY, HOST_MEMORY} <= seen
    assert spot_runs > 0 and block_storage > 0 and cpu_bound > 0


def _plain_costs(s: Shape, budget_usd: float, objective: Objective) -> tuple[Any, ...]:
    """Return a machine's kept costs, offers, first key, cheapest, and cheapest over the budget, offer by offer."""
    kept: list[tuple[float, Offer]] = []
    over: list[tuple[float, str, Pricing]] = []
    for o, rate in zip(s.m.offers, s.m.block_rates, strict=True):
        cost = o.price_per_hour_usd * s.cost_mult
        if s.block_factor:
            cost += s.block_factor * rate
        cost += s.egress_usd
        if cost > budget_usd / s.budget_scale:
            over.append((cost, o.region, o.pricing))
        else:
            kept.append((cost, o))
    least = min((c for c, _, _ in over), default=None)
    mark = min(((c * s.budget_scale, r, p) for c, r, p in over if c == least), default=None)
    if not kept:
        return None, mark
    cheapest = min(c for c, _ in kept)
    key = {Objective.TIME: s.time_metric, Objective.BALANCED: cheapest * s.time_metric}.get(objective, cheapest)
    return ([c for c, _ in kept], [o for _, o in kept], key, cheapest, None), mark


def test_offers_costed_in_arrays_are_costed_as_one_by_one(catalog: Catalog) -> None:
    over_budget = on_block_storage = 0
    for name, raw in JOBS.items():
        job, _, _, shapes = _judged(raw, catalog)
        budget = job.constraints.budget_usd if job.constraints.budget_usd is not None else math.inf
        costed = [s for s in shapes if s.reject is None and s.m.block_rates_complete]
        spans: list[Span] = []
        _costed_in_arrays(costed, spans, budget_usd=budget, objective=job.objective)
        together = {id(span.shape): span for span in spans}
        assert len(together) == len(spans)  # one span a machine
        for s in costed:
            span = together.get(id(s))
            found = (span.costs, list(span.offers), span.min_key, s.best_cost, span.co2) if span else None
            assert (found, s.over_budget) == _plain_costs(s, budget, job.objective), (name, s.m.instance_type)
            over_budget += s.over_budget is not None
            on_block_storage += s.block_factor > 0
    assert over_budget > 0 and on_block_storage > 0  # both of the arrays' extra terms came up


def test_offers_collected_from_the_judged_arrays_are_collected_as_shape_by_shape(catalog: Catalog) -> None:
    over_budget = seen = 0
    for name, raw in JOBS.items():
        job = build_job(JobSpecSchema().load(raw))
        known = {g.slug: g for g in catalog.gpus}
        requirements = estimate_requirements(job, known_gpus=known)
        per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
        scope = resolve_scope(job.constraints, catalog)
        budget = job.constraints.budget_usd if job.constraints.budget_usd is not None else math.inf
        found = []
        for use_arrays in (True, False):
            shapes, judged = judge_scope(job, requirements=requirements, per_gpu=per_gpu, index=catalog_index(catalog),
                                         scope=scope, cpu_adjust=_cpu_adjust(job), hours_known=True)
            assert judged is not None
            spans = collect_candidates(shapes, scope=scope, objective=job.objective, budget_usd=budget,
                                       judged=judged if use_arrays else None)
            found.append(([(sp.shape.idx, sp.costs, list(sp.offers), sp.min_key, sp.co2) for sp in spans], shapes))
        assert found[0][0] == found[1][0], name
        for together, alone in zip(found[0][1], found[1][1], strict=True):
            assert _found(together).keys() == _found(alone).keys(), (name, alone.m.instance_type)
            for field, value in _found(alone).items():  # m: each judging's copy where the data set moves
                assert field == "m" or _same(getattr(together, field), value), (name, alone.m.instance_type, field)
            over_budget += alone.over_budget is not None
            seen += alone.seen
    assert over_budget > 0 and seen > 0


def test_poisson_quantiles_over_arrays_are_poisson_quantile_of_each_mean() -> None:
    import numpy as np

    from workers.ranking.judge_arrays import _poisson_quantiles
    from workers.ranking.spot import poisson_quantile

    means = [0.0, 1e-9, 0.003, 0.05, 0.1, 0.37, 0.5, 1.0, 1.7, 2.5, 3.9, 7.0, 12.5, 40.0, 150.0]
    means += [i / 97 for i in range(1, 400)]
    for percentile in (0.5, 0.8, 0.9, 0.95, 0.99):
        found = _poisson_quantiles(np.array(means), percentile).tolist()
        assert found == [float(poisson_quantile(m, percentile)) for m in means], percentile


def test_a_machines_rejection_keys_are_its_own_figures_on_every_copy(shipped: Catalog) -> None:
    from workers.ranking.shapes import by_transfer

    for m in catalog_index(shipped).machines:
        for part in [m, *by_transfer(m, ("aws", "us-east-1"))]:
            assert part.rejected_group == (part.provider_name, part.family, part.gpu)
            assert part.listing_key == (part.gpu_count, part.vcpus, part.host_memory_bytes, part.instance_type)
