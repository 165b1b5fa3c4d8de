"""A review ranks each distinct job once, and keeps of a job's options what the old full plans gave."""

from __future__ import annotations

import random

from catalog.loader import load_catalog
from tests.review_builders import FakeRanking, item, job, option, recommendation
from workers.ranking.recommend import recommend
from workers.review.budget import Review, machine_sample, pareto_front, plan_runs
from workers.review.review import SAMPLE_PER_JOB, _front_and_sample, review_jobs, scoped_job
from workers.sizing.errors import SpecError


def test_the_front_and_sample_are_those_of_every_plan() -> None:
    rng = random.Random(7)
    options = [option(f"m{i % 40}", hours=rng.choice([1.0, 2.0, 3.5, rng.uniform(0.5, 9)]),
                      price=rng.choice([1.0, 2.0, rng.uniform(0.1, 30)]), region=f"r{i % 3}",
                      pricing=rng.choice(["on_demand", "spot"]), provider=rng.choice(["aws", "gcp"]))
               for i in range(600)]
    for runs, parallel in ((1, 1), (7, 3), (12, 12), (5, 9)):
        plans = [plan_runs(o, runs=runs, parallel=parallel) for o in options]
        front, sample = _front_and_sample(options, runs=runs, parallel=parallel)
        assert front == pareto_front(plans) and len(front) > 1
        assert sample == machine_sample(plans, limit=SAMPLE_PER_JOB) and len(sample) == SAMPLE_PER_JOB


def test_jobs_ranked_alike_are_ranked_once_and_each_reviewed_as_its_own() -> None:
    ranking = FakeRanking({"a": recommendation([option("x", hours=2.0, price=3.0), option("y", hours=1.0,
                                                                                           price=9.0)]),
                           "b": SpecError("constraints.regions", "unknown region 'mars-1'")})
    items = (item("one", spec=job("a")), item("two", spec=job("b")), item("three", spec=job("a"), runs=4),
             item("four", spec=job("b"), team="nlp"), item("five", spec=job("a"), deadline_hours=1.5))
    jobs, _ = review_jobs(Review(name="r", items=items), load_catalog(), recommend_fn=ranking, first_index=10)
    assert [j.model.name for j in ranking.seen] == ["a", "b"]  # each ranked once
    assert [r.name for r in jobs] == ["one", "two", "three", "four", "five"]
    one, two, three, four, five = jobs
    assert one.planned is not None and three.planned is not None
    assert three.planned.cost_usd == 4 * one.planned.cost_usd and three.runs == 4
    assert five.cheapest.plan is not None and five.cheapest.plan.instance_type == "y"  # its own deadline
    assert (two.error_field, four.error_field) == ("jobs[11].spec.constraints.regions",
                                                   "jobs[13].spec.constraints.regions")
    assert four.team == "nlp"


def test_brief_options_carry_the_full_options_figures() -> None:
    catalog = load_catalog()
    spec = scoped_job(item("m", spec=job("m", providers=("aws", "gcp"))), providers=("aws", "gcp"))
    full, brief = recommend(spec, catalog), recommend(spec, catalog, brief=True)
    assert len(full.options) == len(brief.options) > 100
    figures = ("provider", "instance_type", "region", "pricing", "gpu", "gpu_count", "price_per_hour_usd",
               "training_hours", "training_cost_usd", "storage_cost_usd", "energy", "fits", "pareto",
               "compute_hours", "start_up_hours")  # the last two: what a sweep reads of the run
    for a, b in zip(full.options, brief.options, strict=True):
        assert all(getattr(a, f) == getattr(b, f) for f in figures)
        assert a.why and not b.why and b.warnings == ()
        assert a.start_up is not None and b.start_up is None
        assert a.start_up_hours == a.start_up.total_s / 3600.0 > 0
