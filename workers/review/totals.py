"""A review's per-job result and its sums: per team and overall, against the budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workers.review.budget import MISSES_DEADLINE, Pick, Plan, Sweep
from workers.review.sweeps import SweepComparison
from workers.review.yearly import JobYear
from workers.sizing.requirements import CodedWarning

OK, FAILED = "ok", "failed"
OWNED_PRICING = "owned"  # catalog.types.Pricing.OWNED: a plan on the team's own cards


@dataclass(frozen=True)
class JobReview:
    """One job of a review: its two picks, what the totals count, its options' front, its sweep."""

    name: str
    team: str
    runs: int
    parallel: int
    status: str  # OK or FAILED
    cheapest: Pick  # the cheapest option that meets the deadline
    fastest: Pick  # the fastest option within the budget
    planned: Plan | None = None  # what the totals count (see budget.planned)
    planned_basis: str = ""
    front: tuple[Plan, ...] = ()  # the cost/time Pareto front of its options, all runs on each
    sample: tuple[Plan, ...] = ()  # one plan per machine, the best few by cost x time (for the chart)
    options_count: int = 0
    sweep: Sweep | None = None
    sweep_comparison: SweepComparison | None = None
    gpu_memory_bytes: int = 0  # peak memory of one training step on one GPU
    warnings: tuple[CodedWarning, ...] = ()
    error_field: str = ""  # FAILED: the field at fault, e.g. "jobs[3].spec.constraints.regions"
    error_reason: str = ""
    year: JobYear | None = None  # its runs on demand, on spot and committed (workers/review/yearly.py)


@dataclass(frozen=True)
class Total:
    """Sums over some jobs (a team's, or all): the planned cost and hours, and what is missing from them."""

    team: str  # "" for the overall total
    jobs: int
    runs: int
    cost_usd: float  # the planned cost of all runs
    machine_hours: float
    gpu_hours: float
    fastest_cost_usd: float  # if each job took its fastest option within budget (else its planned one)
    unplanned_jobs: int  # failed, or with no option: their cost is not in the sums
    jobs_missing_deadline: int
    share_of_cost: float  # of the overall planned cost (1.0 for the overall total)
    energy_kwh: float = 0.0  # of the planned options (PUE included)
    co2e_kg: float = 0.0
    # The planned cost split: rented machines, and the team's own cards (their power). Buying cards
    # (capital spending) is never in these sums: it is the review's buy-vs-rent section, apart.
    rental_cost_usd: float = 0.0
    owned_power_usd: float = 0.0


@dataclass(frozen=True)
class BudgetStanding:
    """The overall planned cost against the review's budget."""

    budget_usd: float | None
    cost_usd: float
    remaining_usd: float | None  # budget - cost; negative: over budget by that much
    over_budget: bool
    used_share: float | None  # cost / budget


def _fastest_or_planned_usd(job: JobReview) -> float:
    """Return the job's cost on its fastest option within budget, else on its planned option, else 0."""
    if job.fastest.plan is not None:
        return job.fastest.plan.cost_usd
    return job.planned.cost_usd if job.planned is not None else 0.0


def _sum(jobs: Sequence[JobReview], *, team: str, overall_cost_usd: float) -> Total:
    plans = [j.planned for j in jobs if j.planned is not None]
    cost = sum(p.cost_usd for p in plans)
    return Total(
        team=team, jobs=len(jobs), runs=sum(j.runs for j in jobs), cost_usd=cost,
        machine_hours=sum(p.machine_hours for p in plans), gpu_hours=sum(p.gpu_hours for p in plans),
        fastest_cost_usd=sum(_fastest_or_planned_usd(j) for j in jobs),
        unplanned_jobs=len(jobs) - len(plans),
        jobs_missing_deadline=sum(1 for j in jobs if j.planned_basis == MISSES_DEADLINE),
        share_of_cost=cost / overall_cost_usd if overall_cost_usd > 0 else 0.0,
        energy_kwh=sum(p.energy_kwh for p in plans), co2e_kg=sum(p.co2e_kg for p in plans),
        rental_cost_usd=sum(p.cost_usd for p in plans if p.pricing != OWNED_PRICING),
        owned_power_usd=sum(p.cost_usd for p in plans if p.pricing == OWNED_PRICING),
    )


def overall_total(jobs: Sequence[JobReview]) -> Total:
    """Return the sums over every job of the review."""
    cost = sum(j.planned.cost_usd for j in jobs if j.planned is not None)
    return _sum(jobs, team="", overall_cost_usd=cost)


def team_totals(jobs: Sequence[JobReview]) -> tuple[Total, ...]:
    """Return the sums per team, dearest team first (ties by name)."""
    overall = overall_total(jobs)
    teams: dict[str, list[JobReview]] = {}
    for j in jobs:
        teams.setdefault(j.team, []).append(j)
    totals = [_sum(members, team=team, overall_cost_usd=overall.cost_usd) for team, members in teams.items()]
    return tuple(sorted(totals, key=lambda t: (-t.cost_usd, t.team)))


def budget_standing(total: Total, *, budget_usd: float | None) -> BudgetStanding:
    """Return the overall planned cost against the budget: over or under, and by how much."""
    if budget_usd is None:
        return BudgetStanding(None, total.cost_usd, None, False, None)
    return BudgetStanding(
        budget_usd=budget_usd, cost_usd=total.cost_usd, remaining_usd=budget_usd - total.cost_usd,
        over_budget=total.cost_usd > budget_usd,
        used_share=total.cost_usd / budget_usd if budget_usd > 0 else None,
    )
