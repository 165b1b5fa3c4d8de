"""Runs a budget review: a recommendation per job, each job's picks and sweep, then totals and buy-vs-rent.

One job that cannot be reviewed (a field the ranking refuses, or a bug) is reported in the
review as failed, with the field at fault where there is one; the other jobs go on.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from catalog.commitments import COMMITTED
from catalog.types import Catalog, Pricing
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.review.budget import (
    DURATION_UNKNOWN,
    FAILED,
    Pick,
    Plan,
    Review,
    ReviewItem,
    cheapest_within_deadline,
    fastest_within_budget,
    job_budget,
    job_deadline,
    plan_runs,
    planned,
)
from workers.review.ownership import BuyVsRent, ReviewUse, add_use, buy_vs_rent
from workers.review.sweeps import compare_sweep
from workers.review.totals import FAILED as JOB_FAILED
from workers.review.totals import OK, BudgetStanding, JobReview, Total, budget_standing, overall_total, team_totals
from workers.review.yearly import CommittedRates, YearlyComparison, committed_rates, job_year, yearly_comparison
from workers.sizing.errors import SizingError
from workers.sizing.spec import JobSpec, OnPremAssumptions

log = logging.getLogger(__name__)

ONPREM = "onprem"  # catalog.types.Provider.ONPREM: cards bought, not rented

RecommendFn = Callable[[JobSpec, Catalog], Recommendation]
ProgressFn = Callable[[int, int], None]

# A review wants every option of a job, not the ranking's usual top ten: the picks and the
# cost/time front are taken from all of them.
REVIEW_OPTION_LIMIT = 100_000
# Machines per job kept for the cost/time chart besides the front: enough to show the spread,
# few enough that a 200-job review stays a few MB of JSON.
SAMPLE_PER_JOB = 12


@dataclass(frozen=True)
class ReviewResult:
    """A whole review: per job, per team, overall against the budget, and buy-vs-rent."""

    name: str
    budget_usd: float | None
    providers: tuple[str, ...]
    onprem: OnPremAssumptions
    jobs: tuple[JobReview, ...]
    teams: tuple[Total, ...]
    total: Total
    standing: BudgetStanding
    buy_vs_rent: tuple[BuyVsRent, ...]
    catalog_version: str
    prices_as_of: str
    yearly: YearlyComparison | None = None  # a year of the jobs on demand, on spot and committed


def scoped_job(item: ReviewItem, *, providers: tuple[str, ...]) -> JobSpec:
    """Return the item's job as the review ranks it: review providers only, no per-run limits, every option.

    Budget and deadline are left to the review, which holds them against all of a job's runs,
    not against one run as the ranking would. Buying cards is a review-wide question: with "onprem"
    among the review's providers every job is also sized on the cards on sale (for buy-vs-rent),
    which never enter its rental plan. Committed pricing kinds are left out of the runs' plans (a run
    there would be costed as a whole term each); the review compares commitments for the year
    separately (workers/review/yearly.py). A job that asks only for commitments is planned on demand.
    """
    c = item.job.constraints
    allowed = tuple(p for p in c.providers if p in providers)
    if ONPREM in providers and ONPREM not in allowed and allowed:
        allowed = (*allowed, ONPREM)
    pricing = tuple(k for k in c.pricing if k not in {p.value for p in COMMITTED}) or (Pricing.ON_DEMAND.value,)
    constraints = dataclasses.replace(c, providers=allowed, pricing=pricing, budget_usd=None, deadline_hours=None)
    return dataclasses.replace(item.job, constraints=constraints, limit=REVIEW_OPTION_LIMIT)


def failed_review(item: ReviewItem, *, field: str, reason: str) -> JobReview:
    """Return the review of a job that could not be reviewed."""
    nothing = Pick(None, FAILED)
    return JobReview(name=item.name, team=item.team, runs=item.runs, parallel=item.parallel,
                     status=JOB_FAILED, cheapest=nothing, fastest=nothing, sweep=item.sweep,
                     error_field=field, error_reason=reason)


def review_item(item: ReviewItem, rec: Recommendation, *, review_budget_usd: float | None,
                rates: CommittedRates | None = None, fitting: Sequence[RankedOption] | None = None,
                keys: Sequence[tuple[str, str, str, str]] | None = None) -> JobReview:
    """Return one job's review from its recommendation: picks, planned cost, front and sweep.

    `fitting` (the options that fit) and `keys` (each one's provider, type, region and pricing) may be
    given when several items share the recommendation (review_jobs): they are the same for each.
    """
    deadline, deadline_source = job_deadline(item)
    budget, budget_source = job_budget(item, review_budget_usd=review_budget_usd)
    req = rec.requirements
    if req.iterations_total <= 0:
        cheapest = Pick(None, DURATION_UNKNOWN, deadline, deadline_source)
        fastest = Pick(None, DURATION_UNKNOWN, budget, budget_source)
        return JobReview(name=item.name, team=item.team, runs=item.runs, parallel=item.parallel, status=OK,
                         cheapest=cheapest, fastest=fastest, options_count=len(rec.options), sweep=item.sweep,
                         gpu_memory_bytes=req.gpu_memory_bytes, warnings=req.warnings)
    if fitting is None:
        fitting = [o for o in rec.options if o.fits]
    front, sample = _front_and_sample(fitting, runs=item.runs, parallel=item.parallel, keys=keys)
    # Both picks, what comes closest and the cheapest lie on the cost/time front (budget.py): the
    # picks over the front are those over every plan.
    cheapest = cheapest_within_deadline(front, deadline_hours=deadline, source=deadline_source)
    fastest = fastest_within_budget(front, budget_usd=budget, source=budget_source)
    owned = [plan_runs(o, runs=item.runs, parallel=item.parallel) for o in fitting if o.owned] \
        if cheapest.plan is not None and cheapest.plan.pricing == Pricing.OWNED.value else []
    plan, basis = planned(cheapest, front, owned=owned)
    sweep = None
    # The sweep and the year read fitting options only: passing those alone changes nothing.
    if item.runs > 1 or item.sweep is not None:
        sweep = compare_sweep(fitting, req.per_gpu, trials=item.runs, sweep=item.sweep)
    return JobReview(
        name=item.name, team=item.team, runs=item.runs, parallel=min(item.parallel, item.runs), status=OK,
        cheapest=cheapest, fastest=fastest, planned=plan, planned_basis=basis, front=front, sample=sample,
        options_count=len(fitting), sweep=item.sweep, sweep_comparison=sweep,
        gpu_memory_bytes=req.gpu_memory_bytes, warnings=req.warnings,
        year=job_year(fitting, runs=item.runs, rates=rates or {}, deadline_hours=deadline, parallel=item.parallel),
    )


def option_keys(options: Sequence[RankedOption]) -> list[tuple[str, str, str, str]]:
    """Return each option's (provider, instance type, region, pricing): the ties' order of a review's plans."""
    return [(o.provider, o.instance_type, o.region, o.pricing) for o in options]


def _front_and_sample(options: Sequence[RankedOption], *, runs: int, parallel: int,
                      keys: Sequence[tuple[str, str, str, str]] | None = None,
                      ) -> tuple[tuple[Plan, ...], tuple[Plan, ...]]:
    """Return pareto_front and machine_sample of the options' plans, making Plans only of what they keep.

    A job has thousands of options and a review thousands of jobs: each option's wall-clock and cost
    are worked out as plan_runs does (the same products), and only the front and the sample become Plans.
    Points are plain tuples (wall-clock, cost, key, position): sorting them is sorting by the first three
    with ties in the options' order, as a stable sort by those three is.
    """
    at_once = max(1, min(parallel, runs))
    waves = math.ceil(runs / at_once)
    keys = keys if keys is not None else option_keys(options)
    points = [(waves * o.training_hours, runs * o.training_cost_usd, key, i)
              for i, (o, key) in enumerate(zip(options, keys, strict=True))]
    best: dict[tuple[str, str], tuple[float, float, tuple[str, str, str, str], int]] = {}
    for wall, cost, key, i in points:  # as machine_sample: each machine's cheapest, by (cost, wall-clock, key)
        candidate = (cost, wall, key, i)  # on a tie the first seen stays, as the position says
        known = best.get(key[:2])
        if known is None or candidate < known:
            best[key[:2]] = candidate
    points.sort()  # as pareto_front
    front: list[int] = []
    least_cost = math.inf
    for _, cost, _, i in points:
        if not front or cost < least_cost:
            front.append(i)
            least_cost = cost
    ranked = sorted(best.values(), key=lambda p: (p[0] * p[1], p[0], p[2]))[:SAMPLE_PER_JOB]
    return (tuple(plan_runs(options[i], runs=runs, parallel=parallel) for i in front),
            tuple(plan_runs(options[p[3]], runs=runs, parallel=parallel) for p in ranked))


def _add_use(use: dict[str, ReviewUse], item: ReviewItem, rec: Recommendation) -> None:
    """Add the hours the item's runs would keep one card of each GPU model busy, and on each other model."""
    hours = {p.gpu: item.runs * p.training_hours for p in rec.requirements.per_gpu
             if p.gpu_count == 1 and p.fits and p.training_hours > 0}
    for gpu, h in hours.items():
        use[gpu] = add_use(use.get(gpu), ReviewUse(h, 1, {g: o for g, o in hours.items() if g != gpu}))


def _default_recommend() -> RecommendFn:
    # The ranking entry point, imported when first needed so that tests can pass their own; brief: a
    # review reads the options' figures, never their words (workers/ranking/ranking.py rank_offers).
    from workers.ranking.recommend import recommend

    found: RecommendFn = functools.partial(recommend, brief=True)
    return found


def _default_explain() -> RecommendFn:
    # The full ranking, with its words: run only for a job no option holds, for what would hold it.
    from workers.ranking.recommend import recommend

    return recommend


def _explained(job: JobSpec, catalog: Catalog, ranked: Recommendation, explain: RecommendFn) -> Recommendation:
    """Return a ranking no option of which fits with the warnings of its full ranking: what would hold the job
    (`max-gpus-limits`: "raise constraints.max_gpus to 32"), which a brief ranking does not work out."""
    try:
        full = explain(job, catalog)
    except Exception:  # the brief ranking stands; its job is still reviewed
        log.exception("review: the full ranking of a job no option holds failed")
        return ranked
    return dataclasses.replace(ranked, requirements=dataclasses.replace(ranked.requirements,
                                                                         warnings=full.requirements.warnings))


def review_jobs(review: Review, catalog: Catalog, *, indexes: range | None = None,
                first_index: int = 0, positions: Sequence[int] | None = None,
                recommend_fn: RecommendFn | None = None, explain_fn: RecommendFn | None = None,
                on_job: Callable[[], None] | None = None) -> tuple[list[JobReview], dict[str, ReviewUse]]:
    """Review the jobs at `indexes` of the review (default: all), isolating failures per job.

    Return their reviews and the hours they would keep each GPU model busy: the part of a review
    that a worker can do on one chunk of its jobs (workers/tasks/review.py fans them out). A chunk's
    review holds its jobs only; `positions` are their places in the whole (default: from `first_index`
    on), for error fields. Jobs alike are ranked once, and items alike (the same job, runs, limits
    and sweep) reviewed once, whatever their names and teams. A job no option holds is ranked once more in full
    (`explain_fn`; by default the ranking's own where `recommend_fn` is not given) for what would hold it.
    """
    recommend = recommend_fn or _default_recommend()
    explain = explain_fn
    if explain is None and recommend_fn is None:  # a caller's own ranking (tests) is not second-guessed
        explain = _default_explain()
    use: dict[str, ReviewUse] = {}
    rates = committed_rates(catalog)
    wanted = list(indexes if indexes is not None else range(len(review.items)))
    # Jobs the review ranks alike (the same spec, whatever their names, teams, runs and limits) are
    # ranked once: the ranking is a function of the scoped job and the catalog.
    shapes: dict[JobSpec, list[int]] = {}
    for index in wanted:
        shapes.setdefault(scoped_job(review.items[index], providers=review.providers), []).append(index)
    def place(index: int) -> int:
        return positions[index] if positions is not None else first_index + index

    reviewed: dict[int, JobReview] = {}
    for job, members in shapes.items():
        first = members[0]
        ranked = _rank_one(place(first), review.items[first], job, review=review, catalog=catalog,
                           recommend=recommend)
        alike: dict[tuple[object, ...], JobReview] = {}
        fitting = [o for o in ranked.options if o.fits] if isinstance(ranked, Recommendation) else []
        if isinstance(ranked, Recommendation) and not fitting and explain is not None:
            ranked = _explained(job, catalog, ranked, explain)
        keys = option_keys(fitting)  # one ranking, its items' variants: worked out once
        for index in members:
            item = review.items[index]
            if isinstance(ranked, Recommendation):
                _add_use(use, item, ranked)
                key = (item.runs, item.parallel, item.sweep, item.budget_usd, item.deadline_hours)
                known = alike.get(key)
                if known is None:
                    known = alike[key] = review_item(item, ranked, review_budget_usd=review.budget_usd, rates=rates,
                                                     fitting=fitting, keys=keys)
                reviewed[index] = dataclasses.replace(known, name=item.name, team=item.team)
            else:
                field, reason = ranked
                reviewed[index] = failed_review(item, field=field.replace(f"jobs[{place(first)}]",
                                                                          f"jobs[{place(index)}]", 1),
                                                reason=reason)
            if on_job is not None:
                on_job()
    return [reviewed[index] for index in wanted], use


def merge_use(parts: Iterable[Mapping[str, ReviewUse]]) -> dict[str, ReviewUse]:
    """Add up the GPU use of several chunks of a review."""
    merged: dict[str, ReviewUse] = {}
    for part in parts:
        for gpu, used in part.items():
            merged[gpu] = add_use(merged.get(gpu), used)
    return merged


def combine_review(review: Review, catalog: Catalog, *, jobs: Sequence[JobReview],
                   use: Mapping[str, ReviewUse]) -> ReviewResult:
    """Return the whole review from its jobs' reviews, in order: totals, standing and buy-vs-rent."""
    everything = overall_total(jobs)
    return ReviewResult(
        name=review.name, budget_usd=review.budget_usd, providers=review.providers, onprem=review.onprem,
        jobs=tuple(jobs), teams=team_totals(jobs), total=everything,
        standing=budget_standing(everything, budget_usd=review.budget_usd),
        buy_vs_rent=buy_vs_rent(catalog, providers=review.providers, assumptions=review.onprem, use=dict(use)),
        catalog_version=catalog.version, prices_as_of=catalog.prices_as_of,
        yearly=yearly_comparison((j.name, j.year) for j in jobs),
    )


def run_review(review: Review, catalog: Catalog, *, recommend_fn: RecommendFn | None = None,
               on_progress: ProgressFn | None = None) -> ReviewResult:
    """Review every job against the catalog, isolating failures per job, reporting progress as it goes."""
    total, done = len(review.items), [0]

    def one_done() -> None:
        done[0] += 1
        if on_progress is not None:
            on_progress(done[0], total)

    jobs, use = review_jobs(review, catalog, recommend_fn=recommend_fn, on_job=one_done)
    return combine_review(review, catalog, jobs=jobs, use=use)


def _rank_one(index: int, item: ReviewItem, job: JobSpec, *, review: Review, catalog: Catalog,
              recommend: RecommendFn) -> Recommendation | tuple[str, str]:
    """Rank one scoped job; a failure becomes (field, reason), logged, and never stops the review."""
    prefix = f"jobs[{index}]"
    if not job.constraints.providers:
        return f"{prefix}.spec.constraints.providers", "none of the job's providers is allowed by the review"
    try:
        return recommend(job, catalog)
    except SizingError as error:
        log.info("review %r: job %r refused: %s", review.name, item.name, error)
        return f"{prefix}.spec.{error.field}", error.reason
    except Exception:
        # The batch loop isolates failures (STYLE.md habit 10): one job's bug is logged and reported,
        # and the review of the other jobs goes on.
        log.exception("review %r: job %r failed", review.name, item.name)
        return prefix, "internal error while ranking this job (logged)"
