"""The review orchestrator: a ranking per job, failures kept to their job, progress, totals, buy-vs-rent."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.types import Catalog
from tests.review_builders import (
    FakeRanking,
    card,
    catalog,
    gpu_spec,
    item,
    job,
    option,
    per_gpu,
    recommendation,
)
from workers.review.budget import (
    DEADLINE,
    DURATION_UNKNOWN,
    FAILED,
    MEETS_DEADLINE,
    MISSES_DEADLINE,
    OWNED_FASTEST,
    Review,
    Sweep,
    SweepKind,
)
from workers.review.review import REVIEW_OPTION_LIMIT, run_review, scoped_job
from workers.sizing.errors import SpecError

CHEAP = option("g4dn.xlarge", hours=10.0, price=0.5, gpu="t4")
FAST = option("p4d.1", hours=2.0, price=8.0, gpu="a100-40gb")
FOUR_SMALL = option("g4dn.12xlarge", hours=3.0, price=4.0, gpu="t4", gpu_count=4)
ROWS = (per_gpu("t4", hours=10.0), per_gpu("a100-40gb", hours=2.0))


def _catalog() -> Catalog:
    return catalog(gpus=[gpu_spec("t4", memory_gib=16, bandwidth_gb_per_s=320)],
                   cards=[card("t4", 2000.0, 70)])


def test_each_job_gets_its_picks_and_the_review_its_totals() -> None:
    ranking = FakeRanking({"train": recommendation([CHEAP, FAST], per_gpu_rows=ROWS),
                           "tune": recommendation([CHEAP, FAST, FOUR_SMALL], per_gpu_rows=ROWS)})
    review = Review(name="q3", budget_usd=100.0, items=(
        item("train", team="vision", deadline_hours=12.0),
        item("tune", team="nlp", runs=12, sweep=Sweep(SweepKind.GRID, 2)),
    ))
    result = run_review(review, _catalog(), recommend_fn=ranking)
    train, tune = result.jobs
    assert train.cheapest.plan is not None and train.cheapest.plan.instance_type == "g4dn.xlarge"
    assert train.fastest.plan is not None and train.fastest.plan.instance_type == "p4d.1"
    assert tune.planned is not None and tune.planned.cost_usd == pytest.approx(12 * 5.0)
    assert tune.sweep_comparison is not None and tune.sweep_comparison.parallel is not None
    assert tune.sweep_comparison.advice is not None and tune.sweep_comparison.advice.follows_advice
    assert train.sweep_comparison is None
    assert result.total.cost_usd == pytest.approx(5.0 + 60.0)
    assert result.standing.remaining_usd == pytest.approx(100.0 - 65.0)
    assert {t.team for t in result.teams} == {"vision", "nlp"}


def test_one_failing_job_is_reported_and_the_others_reviewed() -> None:
    ranking = FakeRanking({"good": recommendation([CHEAP], per_gpu_rows=ROWS),
                           "bad": SpecError("constraints.regions", "unknown region 'mars-1'"),
                           "buggy": ZeroDivisionError("oops"),
                           "also-good": recommendation([FAST], per_gpu_rows=ROWS)})
    review = Review(name="r", items=(item("good"), item("bad"), item("buggy"), item("also-good")))
    result = run_review(review, _catalog(), recommend_fn=ranking)
    statuses = [j.status for j in result.jobs]
    assert statuses == ["ok", "failed", "failed", "ok"]
    bad, buggy = result.jobs[1], result.jobs[2]
    assert bad.error_field == "jobs[1].spec.constraints.regions" and "mars-1" in bad.error_reason
    assert buggy.error_field == "jobs[2]" and "oops" not in buggy.error_reason
    assert bad.cheapest.reason == FAILED and bad.planned is None
    assert result.total.unplanned_jobs == 2
    assert result.total.cost_usd == pytest.approx(CHEAP.training_cost_usd + FAST.training_cost_usd)


def test_progress_is_reported_after_every_job_failed_or_not() -> None:
    ranking = FakeRanking({"a": recommendation([CHEAP]), "b": SpecError("model", "bad"),
                           "c": recommendation([FAST])})
    calls: list[tuple[int, int]] = []
    run_review(Review(name="r", items=(item("a"), item("b"), item("c"))), _catalog(), recommend_fn=ranking,
               on_progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_the_ranking_sees_every_option_with_no_per_run_limits() -> None:
    spec = job("a", budget_usd=5.0, deadline_hours=1.0, providers=("aws", "onprem"))
    scoped = scoped_job(item("a", spec=spec), providers=("gcp", "onprem"))
    assert scoped.constraints.budget_usd is None and scoped.constraints.deadline_hours is None
    assert scoped.constraints.providers == ("onprem",)
    assert scoped.limit == REVIEW_OPTION_LIMIT


def test_the_spec_deadline_holds_for_all_runs() -> None:
    ranking = FakeRanking({"a": recommendation([CHEAP, FAST], per_gpu_rows=ROWS)})
    spec = job("a", deadline_hours=9.0)
    review = Review(name="r", items=(item("a", runs=5, spec=spec),))
    result = run_review(review, _catalog(), recommend_fn=ranking)
    (a,) = result.jobs
    assert a.cheapest.reason == DEADLINE  # 5 runs of 2 h at best, in turn: 10 h
    assert a.planned_basis == MISSES_DEADLINE and result.total.jobs_missing_deadline == 1
    assert ranking.seen[0].constraints.deadline_hours is None


def test_parallel_runs_can_meet_a_deadline_runs_in_turn_cannot() -> None:
    ranking = FakeRanking({"a": recommendation([CHEAP, FAST], per_gpu_rows=ROWS)})
    review = Review(name="r", items=(item("a", runs=5, parallel=5, deadline_hours=10.0),))
    (a,) = run_review(review, _catalog(), recommend_fn=ranking).jobs
    assert a.cheapest.plan is not None and a.cheapest.plan.instance_type == "g4dn.xlarge"


def test_a_job_whose_providers_the_review_forbids_fails_with_its_field() -> None:
    ranking = FakeRanking({})
    spec = job("a", providers=("gcp",))
    result = run_review(Review(name="r", providers=("aws",), items=(item("a", spec=spec),)), _catalog(),
                        recommend_fn=ranking)
    assert result.jobs[0].error_field == "jobs[0].spec.constraints.providers"
    assert ranking.seen == []


def test_a_job_of_unknown_length_is_reviewed_without_a_cost() -> None:
    ranking = FakeRanking({"a": recommendation([CHEAP], iterations_total=0)})
    (a,) = run_review(Review(name="r", items=(item("a"),)), _catalog(), recommend_fn=ranking).jobs
    assert a.status == "ok" and a.cheapest.reason == DURATION_UNKNOWN and a.planned is None


def test_buy_vs_rent_counts_the_hours_of_the_jobs_that_fit_one_card() -> None:
    too_big = (per_gpu("t4", hours=4.0, fits=False),)
    ranking = FakeRanking({"a": recommendation([CHEAP], per_gpu_rows=ROWS),
                           "b": recommendation([CHEAP], per_gpu_rows=too_big)})
    review = Review(name="r", items=(item("a", runs=3), item("b")))
    result = run_review(review, _catalog(), recommend_fn=ranking)
    (t4,) = result.buy_vs_rent
    assert t4.review_hours == pytest.approx(3 * 10.0) and t4.review_jobs == 1


def test_a_job_planned_on_the_teams_own_cards_takes_their_fastest_box_not_the_cents_cheaper_one() -> None:
    one = replace(option("onprem-1x-rtx-3090", hours=8.8, price=0.05, gpu="rtx-3090", provider="onprem",
                         region="onprem", pricing="owned"), owned=True)
    four = replace(option("onprem-4x-rtx-3090", hours=2.4, price=0.2, gpu="rtx-3090", gpu_count=4,
                          provider="onprem", region="onprem", pricing="owned"), owned=True)
    ranking = FakeRanking({"mine": recommendation([one, four, FAST], per_gpu_rows=ROWS),
                           "tight": recommendation([one, four, FAST], per_gpu_rows=ROWS)})
    review = Review(name="r", items=(item("mine", deadline_hours=24.0), item("tight", deadline_hours=2.0)))
    mine, tight = run_review(review, _catalog(), recommend_fn=ranking).jobs
    assert mine.cheapest.plan is not None and mine.cheapest.plan.instance_type == "onprem-1x-rtx-3090"
    assert mine.planned is not None and mine.planned.instance_type == "onprem-4x-rtx-3090"
    assert mine.planned_basis == OWNED_FASTEST
    # No owned box meets a 2 h deadline: the cheapest that does (rented) is planned, as before.
    assert tight.planned is not None and tight.planned.instance_type == "p4d.1"
    assert tight.planned_basis == MEETS_DEADLINE


def test_a_run_spread_over_several_machines_counts_them_and_says_so() -> None:
    # A strategy option of 4 single-GPU machines bills 4 machines: its plan counts 4 machine-hours an hour
    # and 4 GPU-hours, shows "4 x type", and is no sweep schedule (a trial takes one GPU of one machine).
    from service.reports.document import _where
    from workers.schemas.review_result import PlanSchema

    spread = replace(option("g5g.xlarge", hours=27.0, price=4 * 0.42, gpu="t4g"), nodes=4,
                     training_cost_usd=4 * 0.42 * 27.0)
    one = option("g6.12xlarge", hours=14.0, price=4.6, gpu="l4", gpu_count=4)
    ranking = FakeRanking({"aug": recommendation([spread, one], per_gpu_rows=(per_gpu("t4g", hours=100.0),))})
    review = Review(name="q", budget_usd=1000.0, items=(item("aug", runs=2, sweep=Sweep(SweepKind.GRID, 2)),))
    result = run_review(review, _catalog(), recommend_fn=ranking)
    (aug,) = result.jobs
    assert aug.cheapest.plan is not None and aug.cheapest.plan.nodes == 4
    assert aug.cheapest.plan.machine_hours == pytest.approx(2 * 27.0 * 4)
    assert aug.cheapest.plan.gpu_hours == pytest.approx(2 * 27.0 * 4)
    dumped = PlanSchema().dump(aug.cheapest.plan)
    assert dumped["nodes"] == 4 and _where(dumped) == "4 x g5g.xlarge (aws us-east-1, on_demand; 4x t4g)"
    comparison = aug.sweep_comparison
    assert comparison is None or comparison.sequential is None or comparison.sequential.instance_type != "g5g.xlarge"
