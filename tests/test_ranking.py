"""The ranking core: fit, cost, constraints, objectives, Pareto front, reasons, determinism."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ranking_builders import (
    GIB,
    card,
    catalog,
    gpu,
    instance,
    job,
    offer,
    per_gpu,
    rank,
    requirements,
)

from catalog.types import Catalog, Pricing, Provider
from workers.ranking.front import knee_index
from workers.ranking.run_words import usd_text
from workers.sizing.errors import SpecError
from workers.sizing.requirements import Mitigation, PerGpu
from workers.sizing.spec import Objective, OnPremAssumptions, OwnedGpus

AWS, GCP, ONPREM = Provider.AWS, Provider.GCP, Provider.ONPREM
SPOT, ON_DEMAND = Pricing.SPOT, Pricing.ON_DEMAND
def _world() -> tuple[Catalog, dict[tuple[str, int], PerGpu]]:
    """Three cloud shapes: a V100 too small, an A10G that fits slowly, an A100 that fits fast."""
    cat = catalog(
        [gpu("v100-16gb", 16, name="Tesla V100 16GB"), gpu("a10g", 24), gpu("a100-80gb", 80)],
        [instance(AWS, "p3.2xlarge", "v100-16gb"), instance(AWS, "g5.xlarge", "a10g"),
         instance(GCP, "a2-ultragpu-1g", "a100-80gb")],
        [offer(AWS, "p3.2xlarge", "us-east-1", 0.5), offer(AWS, "g5.xlarge", "us-east-1", 1.0),
         offer(AWS, "g5.xlarge", "us-east-1", 0.4, SPOT), offer(AWS, "g5.xlarge", "eu-west-1", 1.2),
         offer(GCP, "a2-ultragpu-1g", "us-central1", 4.0),
         offer(GCP, "a2-ultragpu-1g", "us-central1", 1.5, SPOT)],
    )
    table = {("v100-16gb", 1): per_gpu("v100-16gb", need_gib=20.0, fits=False, hours=8.0),
             ("a10g", 1): per_gpu("a10g", need_gib=20.0, hours=10.0),
             ("a100-80gb", 1): per_gpu("a100-80gb", need_gib=20.0, hours=3.0)}
    return cat, table


_rank = rank


def test_cost_objective_ranks_the_cheapest_fitting_option_first() -> None:
    cat, table = _world()
    rec = _rank(job(objective=Objective.COST), cat, table)
    costs = [o.training_cost_usd for o in rec.options]
    assert costs == sorted(costs)
    assert (rec.options[0].instance_type, rec.options[0].pricing) == ("g5.xlarge", "spot")
    first = rec.options[0]
    assert first.training_cost_usd == pytest.approx(0.4 * first.billed_hours)
    assert first.billed_hours > first.compute_hours == pytest.approx(10.0)  # start-up and restarts are billed
    assert "p3.2xlarge" not in {o.instance_type for o in rec.options}
    assert [o.rank for o in rec.options] == list(range(1, len(rec.options) + 1))


def test_time_objective_ranks_the_fastest_first_and_cheaper_among_equals() -> None:
    cat, table = _world()
    rec = _rank(job(objective=Objective.TIME), cat, table)
    hours = [o.training_hours for o in rec.options]
    assert hours == sorted(hours)
    # On spot the same machine takes longer: its expected restarts.
    assert [(o.instance_type, o.pricing) for o in rec.options[:2]] == [
        ("a2-ultragpu-1g", "on_demand"), ("a2-ultragpu-1g", "spot")]
    assert rec.options[1].training_hours > rec.options[0].training_hours


def test_balanced_objective_puts_the_knee_of_the_front_first_then_orders_by_cost_times_hours() -> None:
    cat, table = _world()
    rec = _rank(job(objective=Objective.BALANCED), cat, table)
    assert rec.options[0].pareto
    products = [o.training_cost_usd * o.training_hours for o in rec.options[1:]]
    assert products == sorted(products)
    # Each says where it stands against the cheapest and the fastest option, in the figures shown.
    cheapest = min(o.training_cost_usd for o in rec.options)
    fastest = min(o.training_hours for o in rec.options)
    for o in rec.options:
        cost = ("the cheapest" if o.training_cost_usd <= cheapest * 1.0005
                else f"{o.training_cost_usd / cheapest:.2f}x the cheapest's cost")
        time = ("the fastest" if o.training_hours <= fastest * 1.0005
                else f"{o.training_hours / fastest:.2f}x the fastest's time")
        assert o.why.startswith(f"{cost}, {time}; "), o.why


def test_the_knee_is_the_front_point_farthest_below_the_line_between_its_ends() -> None:
    # (hours, cost), fastest first: 4 h for $10 is the knee, buying the last 3 h costs 10x.
    front = [(1.0, 100.0), (4.0, 10.0), (8.0, 8.0), (16.0, 7.0)]
    assert knee_index(front) == 1
    assert knee_index([(1.0, 5.0), (2.0, 4.0)]) == 0  # half the time for 25% more: worth it
    assert knee_index([(1.0, 5.0), (1.2, 2.0)]) == 1  # 17% less time for 2.5x the cost: not
    assert knee_index([(1.0, 1.0)]) == 0


def test_a_hair_faster_front_point_is_not_the_knee_when_it_costs_far_more() -> None:
    # The ResNet-50 example's front: three 8 x B200 machines whose start-ups differ by a minute.
    front = [(0.7150, 45.00), (0.7162, 22.81), (0.7175, 13.38)]
    assert knee_index(front) == 2


def test_budget_rejects_options_over_it_naming_the_cost() -> None:
    cat, table = _world()
    everything = {(o.instance_type, o.pricing): o for o in _rank(job(limit=100), cat, table).options}
    g5 = everything[("g5.xlarge", "spot")]
    budget = round(g5.percentile_cost_usd + 0.01, 2)  # spot is held to its percentile cost
    rec = _rank(job(budget_usd=budget), cat, table)
    assert [(o.instance_type, o.pricing) for o in rec.options] == [("g5.xlarge", "spot")]
    [a100] = [r for r in rec.rejected if r.instance_type == "a2-ultragpu-1g"]
    assert "us-central1, spot" in a100.reason and f"${budget:.2f} budget" in a100.reason
    a2 = everything[("a2-ultragpu-1g", "spot")]
    assert f"${a2.percentile_cost_usd:.2f}" in a100.reason


def test_spot_budget_is_checked_on_the_percentile_not_the_expected_cost() -> None:
    cat, table = _world()
    g5 = next(o for o in _rank(job(limit=100), cat, table).options if (o.instance_type, o.pricing) == (
        "g5.xlarge", "spot"))
    assert g5.percentile_cost_usd > g5.training_cost_usd
    between = (g5.percentile_cost_usd + g5.training_cost_usd) / 2
    kept = {(o.instance_type, o.pricing) for o in _rank(job(budget_usd=between, limit=100), cat, table).options}
    assert ("g5.xlarge", "spot") not in kept


def test_deadline_rejects_options_that_take_too_long() -> None:
    cat, table = _world()
    rec = _rank(job(deadline_hours=5.0), cat, table)
    assert {o.instance_type for o in rec.options} == {"a2-ultragpu-1g"}
    [g5] = [r for r in rec.rejected if r.instance_type == "g5.xlarge"]
    assert "takes 10." in g5.reason and "5 h deadline" in g5.reason


def test_a_gpu_too_small_is_rejected_with_the_memory_figures() -> None:
    cat, table = _world()
    table[("v100-16gb", 1)] = replace(table[("v100-16gb", 1)], gpu_memory_bytes=int(31.2 * GIB))
    rec = _rank(job(), cat, table)
    [v100] = [r for r in rec.rejected if r.gpu == "v100-16gb"]
    assert v100.reason == "needs 31.2 GiB per GPU; Tesla V100 16GB has 16.0 GiB"
    assert (v100.provider, v100.instance_type, v100.gpu_count) == ("aws", "p3.2xlarge", 1)


def test_a_gpu_that_fits_without_headroom_is_rejected_as_too_tight() -> None:
    cat, table = _world()
    table[("v100-16gb", 1)] = replace(table[("v100-16gb", 1)], gpu_memory_bytes=int(15.5 * GIB))
    [v100] = [r for r in _rank(job(), cat, table).rejected if r.gpu == "v100-16gb"]
    assert "15.5 GiB" in v100.reason and "headroom" in v100.reason


def test_rejected_sizes_of_one_family_share_one_row() -> None:
    cat = catalog([gpu("t4", 16)],
                  [instance(AWS, "g4dn.xlarge", "t4"), instance(AWS, "g4dn.2xlarge", "t4", vcpus=16)],
                  [offer(AWS, "g4dn.xlarge", "us-east-1", 0.5), offer(AWS, "g4dn.2xlarge", "us-east-1", 0.7),
                   offer(AWS, "g4dn.2xlarge", "us-west-2", 0.7)])
    rec = _rank(job(), cat, {("t4", 1): per_gpu("t4", need_gib=20.0, fits=False)})
    assert len(rec.rejected) == 1
    assert rec.rejected[0].instance_type == "g4dn.xlarge, g4dn.2xlarge"


def test_host_memory_short_of_the_data_is_rejected_naming_both_figures() -> None:
    cat, table = _world()
    cat = replace(cat, instances=(*cat.instances[:1], instance(AWS, "g5.xlarge", "a10g", host_gib=16),
                                  cat.instances[2]))
    rec = _rank(job(), cat, table, requirements(need_gib=20.0, host_gib=100.0))
    [g5] = [r for r in rec.rejected if r.gpu == "a10g"]
    assert "100.0 GiB" in g5.reason and "16.0 GiB" in g5.reason
    assert "g5.xlarge" not in {o.instance_type for o in rec.options}


def test_cards_on_sale_are_never_ranked_against_rentals() -> None:
    cat, table = _world()
    cat = replace(cat, gpus=(*cat.gpus, gpu("rtx-3090", 24)), onprem_cards=(card("rtx-3090", 1500.0, 350),))
    table.update({("rtx-3090", n): per_gpu("rtx-3090", n, hours=12.0 / n) for n in (1, 2, 4, 8)})
    for providers in (("aws", "gcp"), ("aws", "gcp", "onprem")):
        rec = _rank(job(providers=providers, limit=100), cat, table)
        assert rec.options and {o.provider for o in rec.options} <= {"aws", "gcp"}
    assert _rank(job(), cat, table).purchase == ()


def test_the_purchase_section_prices_cards_host_and_power_against_the_best_rental() -> None:
    assumptions = OnPremAssumptions(lifetime_years=2.0, utilisation=0.25, electricity_usd_per_kwh=0.3,
                                    host_price_usd=2000.0)
    cat, table = _world()
    cat = replace(cat, gpus=(*cat.gpus, gpu("rtx-3090", 24)), onprem_cards=(card("rtx-3090", 1500.0, 350),))
    table.update({("rtx-3090", n): per_gpu("rtx-3090", n, hours=12.0 / n) for n in (1, 2, 4, 8)})
    rec = _rank(job(providers=("aws", "gcp", "onprem"), onprem=assumptions, max_gpus=4), cat, table)
    by_count = {p.gpu_count: p for p in rec.purchase}
    assert set(by_count) == {1, 2, 4}
    two = by_count[2]
    assert two.purchase_usd == pytest.approx(1500.0 * 2 + 2000.0)
    assert two.power_cost_usd == pytest.approx(350 * 2 * two.job_hours * 0.3 / 1000)
    assert two.job_hours > 6.0  # 12 h / 2 cards, plus the environment's start
    best_rental = min(o.training_cost_usd for o in rec.options)
    assert two.rental_cost_usd == pytest.approx(best_rental)
    assert two.break_even_runs == pytest.approx(two.purchase_usd / (best_rental - two.power_cost_usd))
    assert two.break_even_hours == pytest.approx(two.break_even_runs * two.job_hours)
    assert two.hours_of_use == pytest.approx(2.0 * 8760 * 0.25)
    assert two.pays_off == (two.break_even_hours <= two.hours_of_use)


def test_a_teams_own_cards_come_first_costed_at_their_power() -> None:
    cat, table = _world()
    cat = replace(cat, gpus=(*cat.gpus, gpu("rtx-3090", 24)), onprem_cards=(card("rtx-3090", 1500.0, 350),))
    table.update({("rtx-3090", n): per_gpu("rtx-3090", n, hours=40.0 / n) for n in (1, 2, 4)})
    owned = (OwnedGpus(gpu="rtx-3090", count=4),)
    rec = _rank(job(owned_gpus=owned, objective=Objective.TIME), cat, table)
    firsts = [o for o in rec.options if o.owned]
    assert [o.gpu_count for o in firsts] == [4, 2, 1]  # fastest first, before any rental
    assert rec.options[:3] == tuple(firsts)
    four = firsts[0]
    assert (four.provider, four.pricing, four.instance_type) == ("onprem", "owned", "onprem-4x-rtx-3090")
    assert four.price_per_hour_usd == pytest.approx(350 * 4 * 0.15 / 1000)  # power only, at $0.15/kWh
    assert "power only" in four.why


def test_owned_cards_the_catalog_does_not_know_are_refused_naming_the_entry() -> None:
    cat, table = _world()
    with pytest.raises(SpecError) as raised:
        _rank(job(owned_gpus=(OwnedGpus(gpu="rtx-3090", count=2), OwnedGpus(gpu="a10", count=1))), cat, table)
    assert raised.value.field == "constraints.owned_gpus[0].gpu"


def test_pricing_constraint_keeps_only_the_named_kinds() -> None:
    cat, table = _world()
    spot = _rank(job(pricing=("spot",)), cat, table)
    on_demand = _rank(job(pricing=("on_demand",)), cat, table)
    assert spot.options and {o.pricing for o in spot.options} == {"spot"}
    assert on_demand.options and {o.pricing for o in on_demand.options} == {"on_demand"}


def test_provider_region_and_gpu_count_constraints_leave_the_rest_out() -> None:
    cat, table = _world()
    cat = replace(cat, instances=(*cat.instances, instance(AWS, "g5.48xlarge", "a10g", 8)),
                  offers=(*cat.offers, offer(AWS, "g5.48xlarge", "us-east-1", 8.0)))
    table[("a10g", 8)] = per_gpu("a10g", 8, hours=1.5)
    assert {o.provider for o in _rank(job(providers=("gcp",)), cat, table).options} == {"gcp"}
    assert {o.region for o in _rank(job(regions=("eu-west-1",)), cat, table).options} == {"eu-west-1"}
    assert "g5.48xlarge" not in {o.instance_type for o in _rank(job(max_gpus=4), cat, table).options}
    assert "g5.48xlarge" in {o.instance_type for o in _rank(job(max_gpus=8), cat, table).options}


@pytest.mark.parametrize(("field", "constraints", "valid"), [
    ("constraints.providers", {"providers": ("aws", "azure")}, "aws, gcp, onprem"),
    ("constraints.regions", {"regions": ("us-esat-1",)}, "eu-west-1, us-central1, us-east-1"),
    ("constraints.pricing", {"pricing": ("reserved",)}, "on_demand, spot, owned"),
])
def test_unknown_constraint_names_raise_naming_the_field_and_the_valid_ones(
        field: str, constraints: dict[str, tuple[str, ...]], valid: str) -> None:
    cat, table = _world()
    with pytest.raises(SpecError) as raised:
        _rank(job(**constraints), cat, table)
    assert raised.value.field == field
    assert valid in raised.value.reason


def test_limit_caps_the_options_and_keeps_the_best() -> None:
    cat, table = _world()
    full = _rank(job(limit=100), cat, table)
    capped = _rank(job(limit=2), cat, table)
    assert len(full.options) == 5
    assert capped.options == full.options[:2]


def test_equal_options_are_ordered_by_provider_instance_and_region() -> None:
    cat = catalog([gpu("a10g", 24)], [instance(AWS, "g5.xlarge", "a10g")],
                  [offer(AWS, "g5.xlarge", r, 1.0) for r in ("us-west-2", "ap-south-1", "eu-west-1")])
    rec = _rank(job(), cat, {("a10g", 1): per_gpu("a10g")})
    assert [o.region for o in rec.options] == ["ap-south-1", "eu-west-1", "us-west-2"]


def test_nothing_fits_returns_the_out_of_memory_plan() -> None:
    cat, table = _world()
    table = {k: replace(v, fits=False) for k, v in table.items()}
    plan = (Mitigation(kind="smaller-batch", description="halve the batch", gpu_memory_bytes=12 * GIB,
                       batch_size=16),)
    rec = _rank(job(), cat, table, requirements(need_gib=20.0, mitigations=plan))
    assert rec.options == ()
    assert rec.plan == plan
    assert len(rec.rejected) == 3


def test_no_plan_when_something_fits_but_the_budget_rules_it_out() -> None:
    cat, table = _world()
    plan = (Mitigation(kind="smaller-batch", description="halve the batch", gpu_memory_bytes=GIB),)
    rec = _rank(job(budget_usd=0.01), cat, table, requirements(need_gib=20.0, mitigations=plan))
    assert rec.options == () and rec.plan == ()


def test_unknown_data_size_ranks_by_price_per_sample_and_warns() -> None:
    cat, table = _world()
    table = {k: replace(v, training_hours=0.0) for k, v in table.items()}
    table[("a100-80gb", 1)] = replace(table[("a100-80gb", 1)], iteration_ms=20.0,
                                      throughput_samples_per_s=32 / 20.0 * 1000)
    rec = _rank(job(budget_usd=0.01), cat, table, requirements(need_gib=20.0, iterations_total=0))
    per_sample = [o.price_per_hour_usd / (32 / o.iteration_ms * 1000) for o in rec.options]
    assert len(rec.options) == 5 and per_sample == sorted(per_sample)
    assert all("duration-unknown" in {w.code for w in o.warnings} for o in rec.options)


def test_spot_options_warn_of_interruption() -> None:
    cat, table = _world()
    for o in _rank(job(), cat, table).options:
        assert ("spot-interruption" in {w.code for w in o.warnings}) == (o.pricing == "spot")


def test_why_names_the_memory_headroom_and_the_cost() -> None:
    cat, table = _world()
    first = _rank(job(), cat, table).options[0]
    assert "20.0 GiB of 24.0 GiB per GPU (17% headroom)" in first.why
    assert f"{usd_text(first.training_cost_usd)} total" in first.why
    assert "training +" in first.why and "start-up" in first.why
