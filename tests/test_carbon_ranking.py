"""The carbon objective's fast path keeps the exact order: the top rows equal the head of the full ordering."""

from __future__ import annotations

import random

import pytest

from catalog.types import Pricing, Provider
from tests.ranking_builders import block_price, catalog, gpu, instance, job, offer, per_gpu, requirements
from workers.ranking.ranking import rank_offers
from workers.sizing.spec import Objective

REAL = ("us-east-1", "us-west-2", "eu-west-1", "eu-north-1", "ap-southeast-3", "af-south-1")
FAKE = ("region-00", "region-01", "region-02")  # no grid factor: CO2e unknown (inf)


def _synthetic(seed: int, regions: tuple[str, ...]):  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    gpus = [gpu(s, m) for s, m in (("t4", 16), ("a10g", 24), ("l4", 24), ("a100-80gb", 80))]
    insts = [instance(Provider.AWS, f"{g.slug}-x.{n}x-s{i}", g.slug, n, host_gib=64, disk_gb=rng.choice([0, 4000]))
             for i, (g, n) in enumerate((rng.choice(gpus), rng.choice([1, 2, 4])) for _ in range(24))]
    offers = [offer(Provider.AWS, inst.instance_type, r, round(rng.uniform(0.2, 9.0), 2), p)
              for inst in insts for r in regions for p in (Pricing.ON_DEMAND, Pricing.SPOT)]
    blocks = [block_price(Provider.AWS, r, 0.1) for r in regions]
    table = {(g.slug, n): per_gpu(g.slug, n, hours=rng.uniform(1, 30) / n, speedup=n * 0.9)
             for g in gpus for n in (1, 2, 4)}
    return catalog(gpus, insts, offers, block=blocks), table


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("regions", [REAL + FAKE, FAKE, REAL])
def test_top_carbon_options_are_the_head_of_the_full_order(seed: int, regions: tuple[str, ...]) -> None:
    cat, table = _synthetic(seed, regions)
    req = requirements(need_gib=4.0, host_gib=8.0)
    few = rank_offers(job(objective=Objective.CARBON, limit=5), requirements=req, per_gpu=table, catalog=cat)
    every = rank_offers(job(objective=Objective.CARBON, limit=1000), requirements=req, per_gpu=table, catalog=cat)

    def key(o):  # type: ignore[no-untyped-def]
        return (o.instance_type, o.region, o.pricing, round(o.training_cost_usd, 9))

    assert len(few.options) == 5
    assert [key(o) for o in few.options] == [key(o) for o in every.options[:5]]
    co2 = [o.energy.co2e_kg if o.energy else float("inf") for o in every.options]
    assert co2 == sorted(co2)
