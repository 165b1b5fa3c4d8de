"""The review's arithmetic: runs and waves, picks under deadline and budget, sweeps, buy-vs-rent, totals."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import pytest

from catalog.types import Pricing, Provider
from tests.review_builders import card, catalog, gpu_spec, instance, item, job, offer, option, per_gpu
from workers.ranking.costing import HOURS_PER_YEAR
from workers.review.budget import (
    BUDGET,
    DEADLINE,
    FROM_JOB,
    FROM_REVIEW,
    FROM_SPEC,
    MEETS_DEADLINE,
    MISSES_DEADLINE,
    NO_OPTION,
    Pick,
    Sweep,
    SweepKind,
    cheapest_within_deadline,
    fastest_within_budget,
    job_budget,
    pareto_front,
    plan_runs,
    planned,
)
from workers.review.ownership import NEVER, NO_CLOUD_GPU, ReviewUse, add_use, buy_vs_rent
from workers.review.sweeps import (
    COST_TIE,
    GRID_MAX_PARAMETERS,
    NO_SINGLE_GPU,
    NO_SMALL_GPUS,
    SINGLE_GPU_DOMINATED,
    TIME_TIE,
    advise_sweep,
    compare_sweep,
)
from workers.review.totals import OK, JobReview, budget_standing, overall_total, team_totals
from workers.sizing.spec import OnPremAssumptions

SLOW_CHEAP = option("slow.cheap", hours=10.0, price=1.0)
MID = option("mid", hours=4.0, price=4.0)
FAST_DEAR = option("fast.dear", hours=1.0, price=30.0)
DOMINATED = option("dominated", hours=12.0, price=2.0)


def _plans(runs: int = 1, parallel: int = 1):
    return [plan_runs(o, runs=runs, parallel=parallel) for o in (SLOW_CHEAP, MID, FAST_DEAR, DOMINATED)]


def test_every_run_costs_what_one_run_costs() -> None:
    one = plan_runs(MID, runs=1, parallel=1)
    twelve = plan_runs(MID, runs=12, parallel=1)
    assert twelve.cost_usd == pytest.approx(12 * one.cost_usd)
    assert twelve.machine_hours == pytest.approx(12 * one.run_hours)


def test_parallel_runs_finish_in_waves_at_the_same_cost() -> None:
    in_turn = plan_runs(MID, runs=10, parallel=1)
    four_at_once = plan_runs(MID, runs=10, parallel=4)
    assert four_at_once.wall_hours == pytest.approx(3 * MID.training_hours)  # waves of 4, 4, 2
    assert in_turn.wall_hours == pytest.approx(10 * MID.training_hours)
    assert four_at_once.cost_usd == pytest.approx(in_turn.cost_usd)


def test_more_machines_than_runs_count_as_one_per_run() -> None:
    plan = plan_runs(MID, runs=3, parallel=50)
    assert plan.parallel == 3
    assert plan.wall_hours == pytest.approx(MID.training_hours)


def test_the_front_drops_an_option_slower_and_dearer_than_another() -> None:
    front = pareto_front(_plans())
    names = [p.instance_type for p in front]
    assert "dominated" not in names
    assert names == ["fast.dear", "mid", "slow.cheap"]
    assert all(a.cost_usd > b.cost_usd for a, b in itertools.pairwise(front))


def test_cheapest_meeting_the_deadline_skips_cheaper_slower_options() -> None:
    pick = cheapest_within_deadline(_plans(runs=2), deadline_hours=8.0, source=FROM_JOB)
    assert pick.plan is not None and pick.plan.instance_type == "mid"  # 2 runs x 4 h = 8 h
    assert pick.limit == 8.0 and pick.limit_source == FROM_JOB


def test_no_option_meets_the_deadline_names_the_fastest() -> None:
    pick = cheapest_within_deadline(_plans(runs=3), deadline_hours=2.0)
    assert pick.plan is None and pick.reason == DEADLINE
    assert pick.closest is not None and pick.closest.instance_type == "fast.dear"


def test_fastest_within_budget_skips_faster_dearer_options() -> None:
    pick = fastest_within_budget(_plans(runs=2), budget_usd=40.0)
    assert pick.plan is not None and pick.plan.instance_type == "mid"  # 2 x $16; fast.dear is 2 x $30


def test_fastest_within_budget_takes_the_cheapest_of_those_about_as_fast() -> None:
    on_demand = option("a4-highgpu-8g", hours=0.877, price=88.0, pricing="on_demand")
    spot = option("a4-highgpu-8g", hours=0.878, price=32.0, pricing="spot")  # its restarts: a minute longer
    clearly_faster = option("faster", hours=0.877 / (1 + TIME_TIE) - 0.01, price=200.0)
    pick = fastest_within_budget([plan_runs(o, runs=3, parallel=3) for o in (on_demand, spot)], budget_usd=None)
    assert pick.plan is not None and pick.plan.pricing == "spot"
    pick = fastest_within_budget([plan_runs(o, runs=3, parallel=3) for o in (on_demand, spot, clearly_faster)],
                                 budget_usd=None)
    assert pick.plan is not None and pick.plan.instance_type == "faster"


def test_no_option_within_budget_names_the_cheapest() -> None:
    pick = fastest_within_budget(_plans(runs=2), budget_usd=5.0)
    assert pick.plan is None and pick.reason == BUDGET
    assert pick.closest is not None and pick.closest.instance_type == "slow.cheap"


def test_a_job_with_no_options_has_no_pick() -> None:
    assert cheapest_within_deadline([], deadline_hours=None).reason == NO_OPTION
    assert fastest_within_budget([], budget_usd=None).reason == NO_OPTION


def test_a_jobs_own_budget_comes_before_its_spec_and_the_review() -> None:
    assert job_budget(item("a", budget_usd=10.0, spec=job("a", budget_usd=20.0)),
                      review_budget_usd=30.0) == (10.0, FROM_JOB)
    assert job_budget(item("a", spec=job("a", budget_usd=20.0)), review_budget_usd=30.0) == (20.0, FROM_SPEC)
    assert job_budget(item("a"), review_budget_usd=30.0) == (30.0, FROM_REVIEW)


def test_a_missed_deadline_still_counts_the_least_the_job_can_cost() -> None:
    plans = _plans(runs=3)
    plan, basis = planned(cheapest_within_deadline(plans, deadline_hours=1.0), plans)
    assert basis == MISSES_DEADLINE
    assert plan is not None and plan.cost_usd == min(p.cost_usd for p in plans)
    plan, basis = planned(cheapest_within_deadline(plans, deadline_hours=None), plans)
    assert basis == MEETS_DEADLINE


@pytest.mark.parametrize("parameters", range(1, 8))
def test_grid_is_advised_up_to_three_parameters_and_random_beyond(parameters: int) -> None:
    advice = advise_sweep(Sweep(SweepKind.GRID, parameters), trials=64)
    assert (advice.advised is SweepKind.GRID) == (parameters <= GRID_MAX_PARAMETERS)
    assert advice.follows_advice == (parameters <= GRID_MAX_PARAMETERS)
    assert advice.log_scale == (parameters <= GRID_MAX_PARAMETERS)
    assert advice.values_per_parameter == pytest.approx(64 ** (1 / parameters))


def test_trials_one_per_small_gpu_beat_one_large_gpu_in_turn() -> None:
    large = option("p4d.1", hours=1.0, price=8.0, gpu="a100-40gb")
    small_single = option("g4dn.xlarge", hours=3.0, price=0.5, gpu="t4")
    small_four = option("g4dn.12xlarge", hours=0.9, price=4.0, gpu="t4", gpu_count=4)
    rows = [per_gpu("t4", hours=3.0), per_gpu("a100-40gb", hours=1.0), per_gpu("t4", 4, hours=0.9)]
    sweep = compare_sweep([large, small_single, small_four], rows, trials=12)
    assert sweep.sequential is not None and sweep.parallel is not None
    assert sweep.sequential.instance_type == "p4d.1"
    assert sweep.sequential.wall_hours == pytest.approx(12 * 1.0)
    assert sweep.sequential.cost_usd == pytest.approx(12 * 8.0)
    assert sweep.parallel.instance_type == "g4dn.12xlarge"
    assert sweep.parallel.waves == 3 and sweep.parallel.trials_at_once == 4
    assert sweep.parallel.wall_hours == pytest.approx(3 * 3.0)  # each trial on one T4, 4 at a time
    assert sweep.parallel.cost_usd == pytest.approx(4.0 * 9.0)
    assert sweep.speedup == pytest.approx(12 / 9)
    assert sweep.extra_cost_usd == pytest.approx(36.0 - 96.0)


def test_a_sweep_starts_its_machine_once_and_each_trial_keeps_its_runs_checkpoints() -> None:
    # Each option's run: 0.1 h of start-up (provisioning, boot, environment, staging), then its steps
    # and checkpoints. The large GPU's trial is its run less the start-up (1.0 h); the T4 machine's
    # run is 0.9 h after start-up over 0.8 h of steps, so each 3 h trial on one T4 takes 3 x 1.125.
    large = replace(option("p4d.1", hours=1.1, price=8.0, gpu="a100-40gb"), start_up_hours=0.1, compute_hours=0.95)
    four = replace(option("g4dn.12xlarge", hours=1.0, price=4.0, gpu="t4", gpu_count=4), start_up_hours=0.1,
                   compute_hours=0.8)
    sweep = compare_sweep([large, four], [per_gpu("t4", hours=3.0)], trials=12)
    assert sweep.sequential is not None and sweep.parallel is not None
    assert sweep.sequential.trial_hours == pytest.approx(1.0)
    assert sweep.sequential.wall_hours == pytest.approx(0.1 + 12 * 1.0)  # not 12 start-ups
    assert sweep.sequential.cost_usd == pytest.approx(8.0 * 12.1)
    assert sweep.parallel.trial_hours == pytest.approx(3.0 * 1.125)
    assert sweep.parallel.wall_hours == pytest.approx(0.1 + 3 * 3.375)
    assert sweep.parallel.cost_usd == pytest.approx(4.0 * (0.1 + 3 * 3.375))
    assert sweep.speedup == pytest.approx(12.1 / 10.225)


def test_of_single_gpu_machines_about_as_fast_the_cheaper_runs_the_trials_in_turn() -> None:
    """The same H100 on spot (its restarts make each run a little longer) and on demand at 9x the price."""
    on_demand = option("a3-highgpu-1g", hours=9.7, price=11.0, gpu="h100-sxm")
    spot = option("a3-highgpu-1g", hours=9.8, price=1.27, gpu="h100-sxm", pricing="spot")
    sweep = compare_sweep([on_demand, spot], [per_gpu("h100-sxm", hours=9.7)], trials=3)
    assert sweep.sequential is not None and sweep.sequential.pricing == "spot"
    assert sweep.sequential.cost_usd == pytest.approx(1.27 * 3 * 9.8)
    # a machine clearly faster still wins, whatever it costs
    faster = option("p6-b200", hours=9.8 / (1 + TIME_TIE) - 0.1, price=14.0, gpu="b200")
    sweep = compare_sweep([on_demand, spot, faster], [per_gpu("h100-sxm", hours=9.7)], trials=3)
    assert sweep.sequential is not None and sweep.sequential.instance_type == "p6-b200"


def test_of_small_gpu_machines_costing_about_the_same_the_faster_is_shown() -> None:
    large = option("big", hours=1.0, price=8.0, gpu="h100-sxm")
    rows = [per_gpu("t4", hours=1.0)]
    two = option("two", hours=1.0, price=1.0, gpu="t4", gpu_count=2)  # 12 trials: 6 waves, 6 h, $6.00
    four = option("four", hours=1.0, price=2.04, gpu="t4", gpu_count=4)  # 3 waves, 3 h, $6.12: 2% dearer
    sweep = compare_sweep([large, two, four], rows, trials=12)
    assert sweep.parallel is not None and sweep.parallel.instance_type == "four"
    assert sweep.parallel.cost_usd == pytest.approx(6.12) and sweep.parallel.wall_hours == pytest.approx(3.0)
    dear_four = option("four", hours=1.0, price=2.0 * (1 + COST_TIE) + 0.01, gpu="t4", gpu_count=4)
    sweep = compare_sweep([large, two, dear_four], rows, trials=12)
    assert sweep.parallel is not None and sweep.parallel.instance_type == "two"  # past the tie: the cheaper


def test_a_job_whose_trial_needs_a_machine_of_several_gpus_has_no_one_gpu_schedule() -> None:
    """A trial in turn on one GPU, over twice as slow as and dearer than on eight: no schedule to weigh, said why."""
    one = option("a3-highgpu-1g", hours=182.0, price=1.28, gpu="h100-sxm")  # offloaded: 7.6 days, $233
    eight = option("p6-b200.48xlarge", hours=5.0, price=19.1, gpu="b200", gpu_count=8)  # $95.50
    sweep = compare_sweep([one, eight], [per_gpu("h100-sxm", hours=182.0)], trials=2)
    assert sweep.sequential is None and sweep.sequential_reason == SINGLE_GPU_DOMINATED
    near = option("p6-b200.48xlarge", hours=100.0, price=2.0, gpu="b200", gpu_count=8)  # not twice as fast
    kept = compare_sweep([one, near], [per_gpu("h100-sxm", hours=182.0)], trials=2)
    assert kept.sequential is not None and kept.sequential.instance_type == "a3-highgpu-1g"
    alone = compare_sweep([eight], [per_gpu("b200", 8, hours=5.0)], trials=2)
    assert alone.sequential is None and alone.sequential_reason == NO_SINGLE_GPU


def test_a_partial_last_wave_still_pays_for_the_whole_machine() -> None:
    large = option("big", hours=1.0, price=8.0, gpu="h100-sxm")
    eight = option("eight", hours=0.2, price=8.0, gpu="t4", gpu_count=8)
    sweep = compare_sweep([large, eight], [per_gpu("t4", hours=2.0)], trials=9)
    assert sweep.parallel is not None
    assert sweep.parallel.waves == 2
    assert sweep.parallel.cost_usd == pytest.approx(8.0 * 4.0)


def test_a_machine_of_gpus_as_dear_as_the_large_one_is_not_small() -> None:
    large = option("big", hours=1.0, price=3.0, gpu="a100-40gb")
    dear_pair = option("pair", hours=0.6, price=7.0, gpu="a100-80gb", gpu_count=2)
    sweep = compare_sweep([large, dear_pair], [per_gpu("a100-80gb", hours=1.0)], trials=4)
    assert sweep.parallel is None and sweep.parallel_reason == NO_SMALL_GPUS
    assert sweep.speedup == 0.0


def test_block_storage_is_paid_for_as_long_as_the_machine_is_held() -> None:
    large = option("big", hours=2.0, price=10.0, gpu="h100-sxm")
    four = option("four", hours=1.0, price=2.0, gpu="t4", gpu_count=4, storage_cost_usd=1.0)
    sweep = compare_sweep([large, four], [per_gpu("t4", hours=5.0)], trials=4)
    assert sweep.parallel is not None
    assert sweep.parallel.machine_price_per_hour_usd == pytest.approx(3.0)
    assert sweep.parallel.cost_usd == pytest.approx(3.0 * 5.0)


def _ownership_catalog():
    gpus = [gpu_spec("rtx-3090", memory_gib=24, bandwidth_gb_per_s=936),
            gpu_spec("a10g", memory_gib=24, bandwidth_gb_per_s=600),
            gpu_spec("l40s", memory_gib=48, bandwidth_gb_per_s=864),
            gpu_spec("a100-80gb", memory_gib=80, bandwidth_gb_per_s=2039),
            gpu_spec("t4", memory_gib=16, bandwidth_gb_per_s=320)]
    instances = [instance(Provider.AWS, "g5.xlarge", "a10g"), instance(Provider.AWS, "p4de", "a100-80gb", 8),
                 instance(Provider.GCP, "g2-l40s", "l40s"), instance(Provider.AWS, "g4dn.xlarge", "t4")]
    offers = [offer(Provider.AWS, "g5.xlarge", 1.0), offer(Provider.AWS, "p4de", 40.96),
              offer(Provider.GCP, "g2-l40s", 2.0, region="us-central1"),
              offer(Provider.AWS, "g4dn.xlarge", 0.2, pricing=Pricing.SPOT),
              offer(Provider.AWS, "g4dn.xlarge", 0.5)]
    cards = [card("rtx-3090", 1500.0, 350), card("rtx-3090", 1800.0, 350), card("t4", 2000.0, 70),
             card("a10g", 3000.0, 150)]
    return catalog(gpus, instances, offers, cards)


def test_break_even_is_the_purchase_over_the_hourly_saving() -> None:
    assumptions = OnPremAssumptions(host_price_usd=1000.0, electricity_usd_per_kwh=0.2, utilisation=0.5)
    rows = buy_vs_rent(_ownership_catalog(), providers=("aws", "gcp", "onprem"), assumptions=assumptions,
                       use={"a10g": ReviewUse(500.0, 2)})
    (a10g,) = rows
    assert a10g.same_gpu and a10g.cloud is not None and a10g.cloud.instance_type == "g5.xlarge"
    power = 150 / 1000 * 0.2
    assert a10g.power_usd_per_hour == pytest.approx(power)
    assert a10g.break_even_hours == pytest.approx((3000.0 + 1000.0) / (1.0 - power))
    assert a10g.break_even_years == pytest.approx(a10g.break_even_hours / (HOURS_PER_YEAR * 0.5))
    assert a10g.pays_off_within_lifetime == (a10g.break_even_years <= assumptions.lifetime_years)
    assert not a10g.pays_off_for_review and a10g.review_jobs == 2


def test_a_card_the_cloud_lacks_is_held_against_the_cheapest_gpu_as_big_and_fast() -> None:
    rows = buy_vs_rent(_ownership_catalog(), providers=("aws", "gcp"), assumptions=OnPremAssumptions(),
                       use={"rtx-3090": ReviewUse(10_000.0, 1)})
    (rtx,) = rows
    assert not rtx.same_gpu
    # a10g has too little bandwidth, l40s too little too (864 < 936): the A100 80GB per GPU-hour it is
    assert rtx.cloud is not None and rtx.cloud.gpu == "a100-80gb"
    assert rtx.cloud.price_per_gpu_hour_usd == pytest.approx(40.96 / 8)
    assert rtx.card_price_usd == 1500.0  # the cheapest listing of the card
    assert rtx.pays_off_for_review == (rtx.break_even_hours <= 10_000.0)


def test_a_card_the_cloud_lacks_is_held_against_the_cheapest_price_of_the_same_work() -> None:
    # The review's jobs take 1,000 h on the card; the same jobs 1,500 h on an A10G ($1.00/h), 600 h on an
    # L40S ($2.00/h), 400 h on an A100 80GB ($5.12/h): a card-hour's work costs $1.50, $1.20 and $2.05.
    use = ReviewUse(1_000.0, 3, {"a10g": 1_500.0, "l40s": 600.0, "a100-80gb": 400.0, "rtx-4090": 700.0})
    assumptions = OnPremAssumptions(host_price_usd=1000.0, electricity_usd_per_kwh=0.2)
    (rtx,) = buy_vs_rent(_ownership_catalog(), providers=("aws", "gcp"), assumptions=assumptions,
                         use={"rtx-3090": use})
    assert rtx.cloud is not None and rtx.cloud.gpu == "l40s" and not rtx.same_gpu
    assert rtx.cloud_hours_per_card_hour == pytest.approx(0.6)
    assert rtx.rent_per_card_hour_usd == pytest.approx(1.2)
    power = 350 / 1000 * 0.2
    assert rtx.break_even_hours == pytest.approx((1500.0 + 1000.0) / (1.2 - power))


def test_use_of_two_sets_of_jobs_keeps_only_the_models_that_hold_both() -> None:
    first = ReviewUse(10.0, 1, {"a10g": 15.0, "l40s": 6.0})
    second = ReviewUse(20.0, 2, {"l40s": 12.0})  # an a10g does not hold one of these jobs
    both = add_use(first, second)
    assert both == ReviewUse(30.0, 3, {"l40s": 18.0})
    assert add_use(None, first) == first
    assert add_use(first, ReviewUse(1.0, 1)).other_hours is None  # not recorded on one side: unknown


def test_spot_prices_are_not_what_owning_is_held_against() -> None:
    rows = buy_vs_rent(_ownership_catalog(), providers=("aws",), assumptions=OnPremAssumptions(),
                       use={"t4": ReviewUse(1.0, 1)})
    assert rows[0].cloud is not None and rows[0].cloud.price_per_gpu_hour_usd == pytest.approx(0.5)


def test_a_cloud_cheaper_than_the_cards_power_never_breaks_even() -> None:
    rows = buy_vs_rent(_ownership_catalog(), providers=("aws",),
                       assumptions=OnPremAssumptions(electricity_usd_per_kwh=10.0),
                       use={"t4": ReviewUse(1.0, 1)})
    assert rows[0].break_even_hours is None and rows[0].reason == NEVER
    assert not rows[0].pays_off_within_lifetime


def test_a_card_with_no_comparable_cloud_gpu_says_so() -> None:
    cat = _ownership_catalog()
    rows = buy_vs_rent(cat, providers=("gcp",), assumptions=OnPremAssumptions(),
                       use={"rtx-3090": ReviewUse(1.0, 1)})
    assert rows[0].cloud is None and rows[0].reason == NO_CLOUD_GPU and rows[0].break_even_hours is None


def test_cards_no_job_of_the_review_runs_on_are_left_out() -> None:
    rows = buy_vs_rent(_ownership_catalog(), providers=("aws",), assumptions=OnPremAssumptions(),
                       use={"t4": ReviewUse(5.0, 1), "a10g": ReviewUse(0.0, 0)})
    assert [r.gpu for r in rows] == ["t4"]


def _job_review(name: str, team: str, *, cost_per_run: float, runs: int = 1) -> JobReview:
    plan = plan_runs(option(name, hours=1.0, price=cost_per_run), runs=runs, parallel=1)
    return JobReview(name=name, team=team, runs=runs, parallel=1, status=OK, cheapest=Pick(plan),
                     fastest=Pick(plan), planned=plan, planned_basis=MEETS_DEADLINE)


def test_team_totals_add_up_to_the_overall_total() -> None:
    failed = Pick(None, "failed")
    jobs = [_job_review("a", "vision", cost_per_run=100.0, runs=3),
            _job_review("b", "nlp", cost_per_run=50.0), _job_review("c", "vision", cost_per_run=10.0),
            JobReview(name="d", team="nlp", runs=1, parallel=1, status="failed", cheapest=failed,
                      fastest=failed)]
    teams = team_totals(jobs)
    overall = overall_total(jobs)
    assert [t.team for t in teams] == ["vision", "nlp"]
    assert teams[0].cost_usd == pytest.approx(310.0) and teams[0].runs == 4
    assert sum(t.cost_usd for t in teams) == pytest.approx(overall.cost_usd)
    assert math.fsum(t.share_of_cost for t in teams) == pytest.approx(1.0)
    assert overall.unplanned_jobs == 1 and teams[1].unplanned_jobs == 1


def test_the_standing_says_by_how_much_the_plan_is_over_or_under() -> None:
    overall = overall_total([_job_review("a", "vision", cost_per_run=120.0)])
    over = budget_standing(overall, budget_usd=100.0)
    under = budget_standing(overall, budget_usd=200.0)
    assert over.over_budget and over.remaining_usd == pytest.approx(-20.0)
    assert not under.over_budget and under.remaining_usd == pytest.approx(80.0)
    assert under.used_share == pytest.approx(0.6)
    assert budget_standing(overall, budget_usd=None).remaining_usd is None


def test_the_review_says_why_a_job_of_several_gpus_has_no_one_gpu_schedule() -> None:
    from service.reports.document import sweeps_section

    comparison = {"trials": 2, "sequential": None, "parallel": None, "sequential_reason": SINGLE_GPU_DOMINATED,
                  "parallel_reason": NO_SMALL_GPUS, "speedup": 0.0, "advice": None}
    section = sweeps_section({"jobs": [{"name": "llama3-8b full SFT", "sweep_comparison": comparison}]})
    assert section is not None
    assert any(note.startswith("llama3-8b full SFT: a run on one GPU is slower and dearer") for note in section.notes)
