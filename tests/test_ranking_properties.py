"""Properties of the ranking on random catalogs: the Pareto marks, order independence, limits, scope."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ranking_builders import block_price, catalog, gpu, instance, job, offer, per_gpu, requirements

from catalog.types import Catalog, Pricing, Provider
from workers.ranking.ranking import rank_offers
from workers.ranking.recommendation import Recommendation
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec, Objective

AWS, GCP = Provider.AWS, Provider.GCP
SPOT, ON_DEMAND = Pricing.SPOT, Pricing.ON_DEMAND


def _rank(j: JobSpec, cat: Catalog, table: dict[tuple[str, int], PerGpu],
          req: Requirements | None = None) -> Recommendation:
    return rank_offers(j, requirements=req or requirements(need_gib=20.0), per_gpu=table, catalog=cat)

def _random_world(rng: random.Random, n_shapes: int) -> tuple[Catalog, dict[tuple[str, int], PerGpu]]:
    gpus = [gpu(f"g{i}", rng.choice([8, 16, 24])) for i in range(n_shapes)]
    insts = [instance(rng.choice([AWS, GCP]), f"fam{i % 3}.size{i}", g.slug, disk_gb=rng.choice([0, 5000]))
             for i, g in enumerate(gpus)]
    offers = [offer(inst.provider, inst.instance_type, region, rng.choice([0.5, 1.0, 1.5, 2.0, 3.0]), pricing)
              for inst in insts for region in ("r1", "r2") for pricing in (ON_DEMAND, SPOT)
              if rng.random() < 0.8]
    # r2 sometimes has no block storage price: those offers then need local disk.
    blocks = [block_price(p, r, rate) for p in (AWS, GCP) for r, rate in (("r1", 0.1), ("r2", 0.13))
              if r == "r1" or rng.random() < 0.5]
    table = {(g.slug, 1): per_gpu(g.slug, hours=rng.choice([1.0, 2.0, 4.0, 8.0]), fits=rng.random() < 0.8)
             for g in gpus}
    return catalog(gpus, insts, offers, block=blocks), table


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), objective=st.sampled_from(list(Objective)))
def test_pareto_marks_exactly_the_non_dominated_options(seed: int, objective: Objective) -> None:
    cat, table = _random_world(random.Random(seed), 8)
    rec = _rank(job(objective=objective, limit=1000), cat, table, requirements(need_gib=4))
    points = [(o.training_cost_usd, o.training_hours) for o in rec.options]
    for o in rec.options:
        c, h = o.training_cost_usd, o.training_hours
        dominated = any(c2 <= c and h2 <= h and (c2 < c or h2 < h) for c2, h2 in points)
        assert o.pareto is not dominated
    if rec.options:
        assert any(o.pareto for o in rec.options)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), shuffle_seed=st.integers(0, 10**6),
       objective=st.sampled_from(list(Objective)), budget=st.sampled_from([None, 10.0, 30.0]))
def test_ranking_does_not_depend_on_catalog_order(seed: int, shuffle_seed: int, objective: Objective,
                                                  budget: float | None) -> None:
    cat, table = _random_world(random.Random(seed), 10)
    shuffler = random.Random(shuffle_seed)
    offers, insts = list(cat.offers), list(cat.instances)
    shuffler.shuffle(offers)
    shuffler.shuffle(insts)
    shuffled = replace(cat, offers=tuple(offers), instances=tuple(insts))
    j = job(objective=objective, limit=7, budget_usd=budget)
    req = requirements(need_gib=4)
    assert _rank(j, shuffled, table, req) == _rank(j, cat, table, req)


def test_every_option_cost_is_price_times_hours_plus_storage() -> None:
    cat, table = _random_world(random.Random(7), 12)
    for o in _rank(job(limit=1000), cat, table, requirements(need_gib=4)).options:
        expected = o.price_per_hour_usd * o.billed_hours + o.storage_cost_usd
        assert o.training_cost_usd == pytest.approx(expected)
        assert math.isfinite(o.training_cost_usd) and o.fits


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), limit=st.integers(1, 15), objective=st.sampled_from(list(Objective)),
       budget=st.sampled_from([None, 6.0, 20.0]))
def test_a_limit_keeps_the_first_options_of_the_full_ranking(seed: int, limit: int, objective: Objective,
                                                             budget: float | None) -> None:
    cat, table = _random_world(random.Random(seed), 9)
    req = requirements(need_gib=4)
    full = _rank(job(objective=objective, limit=10_000, budget_usd=budget), cat, table, req)
    capped = _rank(job(objective=objective, limit=limit, budget_usd=budget), cat, table, req)
    assert capped.options == full.options[:limit]
    assert capped.rejected == full.rejected


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), objective=st.sampled_from(list(Objective)),
       budget=st.sampled_from([None, 6.0, 20.0]))
def test_naming_every_region_and_pricing_kind_ranks_as_naming_none(seed: int, objective: Objective,
                                                                   budget: float | None) -> None:
    cat, table = _random_world(random.Random(seed), 9)
    req = requirements(need_gib=4)
    every = _rank(job(objective=objective, limit=50, budget_usd=budget, regions=("r1", "r2"),
                      pricing=("spot", "on_demand")), cat, table, req)
    unnamed = _rank(job(objective=objective, limit=50, budget_usd=budget, pricing=("on_demand", "spot", "owned")),
                    cat, table, req)
    assert every == unnamed
