"""A budget review's arithmetic: each job's runs timed and priced on its options, the picks, and the totals.

How a review reads a job (the words of the review request):
- `runs` is how many times the job runs (the trials of a hyper-parameter search, say); every run
  costs what one run costs on the option (domain.md §7: "N trials cost N jobs");
- `parallel` is how many runs go at once, each on its own machine of the option; the runs then
  take ceil(runs / parallel) back-to-back waves of one run's hours;
- the job's deadline is the wall-clock for all its runs, its budget the cost of all its runs.
  Where the review item gives neither, the spec's constraints are read the same way; a job
  with no budget of its own is held to the whole review's budget.
Scaling every option by the same runs and waves keeps their order, so both picks lie on the
cost/time Pareto front of the options, and the front is all a review keeps of them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from catalog.providers import PROVIDER_NAMES
from catalog.types import Pricing
from workers.ranking.recommendation import RankedOption
from workers.ranking.shapes import BUDGET, DEADLINE
from workers.sizing.spec import JobSpec, OnPremAssumptions

# Reason codes: why a pick has no plan, or why a job has none at all.
NO_OPTION = "no-option"  # no machine in scope can run the job (it fits nowhere, or the scope is empty)
DURATION_UNKNOWN = "duration-unknown"  # dataset.samples not given: no hours, so no cost
# DEADLINE (no option finishes all runs by the deadline) and BUDGET (none runs them within the budget)
# are the ranking's own rejection codes, imported above: one spelling for both.
FAILED = "failed"  # the job could not be reviewed at all (see JobReview.error_*)

# Where a limit came from.
FROM_JOB, FROM_SPEC, FROM_REVIEW, NO_LIMIT = "job", "spec", "review", "none"

# What the totals count for a job.
MEETS_DEADLINE = "cheapest-meeting-deadline"
MISSES_DEADLINE = "cheapest-missing-deadline"  # no option meets it: the least the job can cost
# The cheapest is on the team's own cards, whose power differs by cents between them: the fastest of
# those that meet the deadline, as the ranking puts owned cards first, fastest first (ranking.ordered_rows).
OWNED_FASTEST = "owned-fastest-meeting-deadline"


class SweepKind(StrEnum):
    """How a hyper-parameter search picks its trials."""

    GRID = "grid"
    RANDOM = "random"


@dataclass(frozen=True)
class Sweep:
    """A hyper-parameter search: its kind and how many parameters it varies."""

    kind: SweepKind
    parameters: int


@dataclass(frozen=True)
class ReviewItem:
    """One named job of a review: whose it is, how often it runs, and its own limits if any."""

    name: str
    team: str
    job: JobSpec
    runs: int = 1
    parallel: int = 1  # runs at once, each on its own machine
    sweep: Sweep | None = None
    budget_usd: float | None = None  # for all runs; None: the spec's, else the review's
    deadline_hours: float | None = None  # wall-clock for all runs; None: the spec's


@dataclass(frozen=True)
class Review:
    """A list of named jobs held against one budget and the providers allowed."""

    name: str
    items: tuple[ReviewItem, ...]
    budget_usd: float | None = None
    providers: tuple[str, ...] = PROVIDER_NAMES
    onprem: OnPremAssumptions = field(default_factory=OnPremAssumptions)


@dataclass(frozen=True)
class Plan:
    """One option with all of a job's runs on it: `parallel` machines at once, in waves."""

    provider: str
    instance_type: str
    region: str
    pricing: str
    gpu: str
    gpu_count: int  # per machine
    price_per_hour_usd: float  # per machine
    run_hours: float  # one run
    run_cost_usd: float  # one run, block storage included
    runs: int
    parallel: int
    wall_hours: float  # all runs: waves x one run's hours
    machine_hours: float  # runs x one run's hours x its machines
    gpu_hours: float  # machine hours x GPUs per machine
    cost_usd: float  # runs x one run's cost
    energy_kwh: float = 0.0  # runs x one run's kWh (PUE included; ranking/energy.py); 0.0: unknown
    co2e_kg: float = 0.0  # runs x one run's kg CO2e; 0.0: unknown
    nodes: int = 1  # machines of the instance type one run takes (a strategy over several machines)


@dataclass(frozen=True)
class Pick:
    """The option a review picks under one limit, or why there is none and what comes closest."""

    plan: Plan | None
    reason: str = ""  # a reason code when plan is None
    limit: float | None = None  # the deadline hours or the budget USD the pick was held to
    limit_source: str = NO_LIMIT
    closest: Plan | None = None  # with reason DEADLINE: the fastest option; BUDGET: the cheapest


# Plans (or single-GPU machines) within this share of the fastest wall-clock are as fast: the cheapest of them
# is taken (an H100 on spot, 9.8 h a run with its restarts, rather than the same H100 on demand at 9.7 h for
# 9x the price) [rule of thumb: within the estimate's own error, as sweeps.COST_TIE is for cost].
TIME_TIE = 0.05

def plan_runs(option: RankedOption, *, runs: int, parallel: int) -> Plan:
    """Return the option with `runs` runs on it, `parallel` at a time."""
    at_once = max(1, min(parallel, runs))
    waves = math.ceil(runs / at_once)
    machine_hours = runs * option.training_hours * option.nodes
    return Plan(
        provider=option.provider, instance_type=option.instance_type, region=option.region,
        pricing=option.pricing, gpu=option.gpu, gpu_count=option.gpu_count,
        price_per_hour_usd=option.price_per_hour_usd, run_hours=option.training_hours,
        run_cost_usd=option.training_cost_usd, runs=runs, parallel=at_once,
        wall_hours=waves * option.training_hours, machine_hours=machine_hours,
        gpu_hours=machine_hours * option.gpu_count, cost_usd=runs * option.training_cost_usd,
        energy_kwh=runs * option.energy.energy_kwh if option.energy is not None else 0.0,
        co2e_kg=runs * option.energy.co2e_kg if option.energy is not None else 0.0,
        nodes=option.nodes,
    )


def _key(plan: Plan) -> tuple[str, str, str, str]:
    return (plan.provider, plan.instance_type, plan.region, plan.pricing)


def pareto_front(plans: Iterable[Plan]) -> tuple[Plan, ...]:
    """Return the plans no other plan beats on both wall-clock and cost, fastest first."""
    front: list[Plan] = []
    for p in sorted(plans, key=lambda p: (p.wall_hours, p.cost_usd, _key(p))):
        if not front or p.cost_usd < front[-1].cost_usd:
            front.append(p)
    return tuple(front)


def _cheap_key(plan: Plan) -> tuple[float, float, tuple[str, str, str, str]]:
    return (plan.cost_usd, plan.wall_hours, _key(plan))


def machine_sample(plans: Iterable[Plan], *, limit: int) -> tuple[Plan, ...]:
    """Return each machine's cheapest plan (any region or pricing), the `limit` best by cost x wall-clock.

    cost x time is the ranking's balanced order (workers/ranking/ranking.py): the sample keeps the options
    a reader would weigh, one point per machine, for the cost-against-time chart.
    """
    best: dict[tuple[str, str], Plan] = {}
    for p in plans:
        known = best.get((p.provider, p.instance_type))
        if known is None or _cheap_key(p) < _cheap_key(known):
            best[(p.provider, p.instance_type)] = p
    ranked = sorted(best.values(), key=lambda p: (p.cost_usd * p.wall_hours, p.cost_usd, _key(p)))
    return tuple(ranked[:limit])


def cheapest_within_deadline(plans: Sequence[Plan], *, deadline_hours: float | None,
                             source: str = NO_LIMIT) -> Pick:
    """Pick the cheapest plan that finishes all runs by the deadline (ties: the faster)."""
    if not plans:
        return Pick(None, NO_OPTION, deadline_hours, source)
    ok = [p for p in plans if deadline_hours is None or p.wall_hours <= deadline_hours]
    if not ok:
        fastest = min(plans, key=lambda p: (p.wall_hours, p.cost_usd, _key(p)))
        return Pick(None, DEADLINE, deadline_hours, source, closest=fastest)
    return Pick(min(ok, key=lambda p: (p.cost_usd, p.wall_hours, _key(p))), "", deadline_hours, source)


def fastest_within_budget(plans: Sequence[Plan], *, budget_usd: float | None, source: str = NO_LIMIT) -> Pick:
    """Pick the fastest plan whose runs all fit in the budget: of those within TIME_TIE of it, the cheapest."""
    if not plans:
        return Pick(None, NO_OPTION, budget_usd, source)
    ok = [p for p in plans if budget_usd is None or p.cost_usd <= budget_usd]
    if not ok:
        cheapest = min(plans, key=lambda p: (p.cost_usd, p.wall_hours, _key(p)))
        return Pick(None, BUDGET, budget_usd, source, closest=cheapest)
    fastest = min(p.wall_hours for p in ok)
    about = [p for p in ok if p.wall_hours <= fastest * (1.0 + TIME_TIE)]
    return Pick(min(about, key=lambda p: (p.cost_usd, p.wall_hours, _key(p))), "", budget_usd, source)


def job_deadline(item: ReviewItem) -> tuple[float | None, str]:
    """Return the deadline for all of the item's runs and where it came from."""
    if item.deadline_hours is not None:
        return item.deadline_hours, FROM_JOB
    if item.job.constraints.deadline_hours is not None:
        return item.job.constraints.deadline_hours, FROM_SPEC
    return None, NO_LIMIT


def job_budget(item: ReviewItem, *, review_budget_usd: float | None) -> tuple[float | None, str]:
    """Return the budget for all of the item's runs and where it came from (the review's at most)."""
    if item.budget_usd is not None:
        return item.budget_usd, FROM_JOB
    if item.job.constraints.budget_usd is not None:
        return item.job.constraints.budget_usd, FROM_SPEC
    if review_budget_usd is not None:
        return review_budget_usd, FROM_REVIEW
    return None, NO_LIMIT


def planned(cheapest: Pick, plans: Sequence[Plan], *, owned: Sequence[Plan] = ()) -> tuple[Plan | None, str]:
    """Return what the totals count for a job: the cheapest plan meeting the deadline, else the cheapest.

    Where that is one of the team's own machines, the fastest of `owned` (the owned plans) meeting the
    deadline instead: a 4-card box that runs the job in a quarter of the time costs cents more power.
    """
    if cheapest.plan is not None:
        if cheapest.plan.pricing == Pricing.OWNED.value:
            ok = [p for p in owned if cheapest.limit is None or p.wall_hours <= cheapest.limit]
            fastest = min(ok, key=lambda p: (p.wall_hours, p.cost_usd, _key(p)), default=cheapest.plan)
            if fastest.wall_hours < cheapest.plan.wall_hours:
                return fastest, OWNED_FASTEST
        return cheapest.plan, MEETS_DEADLINE
    if cheapest.reason == DEADLINE:
        return cheapest_plan(plans), MISSES_DEADLINE
    return None, ""


def cheapest_plan(plans: Sequence[Plan]) -> Plan | None:
    """Return the cheapest plan (ties: the faster), or None when there are none."""
    return min(plans, key=lambda p: (p.cost_usd, p.wall_hours, _key(p))) if plans else None
