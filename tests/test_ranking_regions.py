"""A machine sold in many regions takes at most two places per pricing kind while other machines fill the list."""

from __future__ import annotations

from ranking_builders import catalog, gpu, instance, job, offer, per_gpu, requirements

from catalog.types import Pricing, Provider
from workers.ranking.ranking import REGIONS_PER_MACHINE, rank_offers

AWS, GCP = Provider.AWS, Provider.GCP
REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-north-1", "ap-south-1")


def _world() -> tuple:
    """One cheap machine in six regions, two dearer machines in one region each."""
    cat = catalog(
        [gpu("a10g", 24), gpu("l4", 24), gpu("a100-80gb", 80)],
        [instance(AWS, "g5.xlarge", "a10g"), instance(AWS, "g6.xlarge", "l4"),
         instance(GCP, "a2-ultragpu-1g", "a100-80gb")],
        [*(offer(AWS, "g5.xlarge", r, 1.0 + i / 100) for i, r in enumerate(REGIONS)),
         *(offer(AWS, "g5.xlarge", r, 0.4, Pricing.SPOT) for r in REGIONS),
         offer(AWS, "g6.xlarge", "us-east-1", 1.5), offer(GCP, "a2-ultragpu-1g", "us-central1", 4.0)],
    )
    table = {("a10g", 1): per_gpu("a10g", need_gib=20.0, hours=10.0),
             ("l4", 1): per_gpu("l4", need_gib=20.0, hours=10.0),
             ("a100-80gb", 1): per_gpu("a100-80gb", need_gib=20.0, hours=3.0)}
    return cat, table


def test_a_machine_in_many_regions_leaves_room_for_other_machines() -> None:
    cat, table = _world()
    rec = rank_offers(job(limit=6), requirements=requirements(need_gib=20.0), per_gpu=table, catalog=cat)
    seen = [(o.instance_type, o.pricing) for o in rec.options]
    assert seen.count(("g5.xlarge", "spot")) == REGIONS_PER_MACHINE
    assert seen.count(("g5.xlarge", "on_demand")) == REGIONS_PER_MACHINE
    assert {"g6.xlarge", "a2-ultragpu-1g"} <= {o.instance_type for o in rec.options}
    # The regions kept are the machine's cheapest ones, and the list stays ordered by cost.
    assert [o.region for o in rec.options if o.instance_type == "g5.xlarge" and o.pricing == "on_demand"] == \
        list(REGIONS[:REGIONS_PER_MACHINE])
    costs = [o.training_cost_usd for o in rec.options]
    assert costs == sorted(costs)


def test_other_regions_fill_a_list_that_other_machines_leave_short() -> None:
    cat, table = _world()
    rec = rank_offers(job(limit=12), requirements=requirements(need_gib=20.0), per_gpu=table, catalog=cat)
    g5 = [o for o in rec.options if o.instance_type == "g5.xlarge"]
    assert len(rec.options) == 12  # six spot, six on demand... less the two places the others take
    assert len(g5) == 10
    costs = [o.training_cost_usd for o in rec.options]
    assert costs == sorted(costs)  # filled, the list is still in the objective's order
