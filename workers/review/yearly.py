"""A year of a review's jobs priced three ways: on demand, on spot, and on 1-year commitments.

The review's jobs with their runs are taken as one year of the team's work (the review request says
how often each job runs; it names no period, so a year is this comparison's assumption, said in the
answer). Per job, among its fitting options that finish all its runs by its deadline (as the planned
option must: a machine that takes 200 days is no plan for a job due in a week, however cheap its hour):
- on demand: its cheapest on-demand option, all runs (budget.plan_runs);
- on spot: its cheapest spot option, all runs;
- committed: among its on-demand options on machines the catalog prices under a 1-year
  commitment (catalog/commitments.py) or 1-year AWS EC2 Instance Savings Plan (the lower of the two
  rates where it has both), the one whose committed rate x machine hours is least.
The committed total buys, per machine and region, enough machines to cover the year's machine hours
of the jobs that chose it (ceil(hours / 8,760)) and pays each for the whole year, used or not, where
that costs less than running those jobs on demand (`pays_off`); where it does not (a few hours a year
on an 8-GPU machine), a careful buyer would not commit, and those jobs are counted at their on-demand
cost: the machines stay listed, marked. Jobs with no committed machine are counted at their on-demand
cost and named in `uncommitted_jobs`.
A job with no option of a kind that meets its deadline is left out of that kind's total and counted in
its `missing_*`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from catalog.commitments import HOURS_PER_YEAR, ONE_YEAR
from catalog.types import Catalog, Pricing
from workers.ranking.recommendation import RankedOption

CommittedRates = Mapping[tuple[str, str, str], float]  # (provider, instance type, region) -> USD/h, 1 year


def committed_rates(catalog: Catalog) -> dict[tuple[str, str, str], float]:
    """Return the catalog's least 1-year hourly rate per machine and region: a 1-year commitment (Reserved
    Instance, committed use) or, on AWS, a 1-year EC2 Instance Savings Plan, whichever is lower."""
    rates: dict[tuple[str, str, str], float] = {}
    for o in catalog.offers:
        if o.pricing in ONE_YEAR:
            key = (o.provider.value, o.instance_type, o.region)
            rates[key] = min(rates.get(key, o.price_per_hour_usd), o.price_per_hour_usd)
    return rates


@dataclass(frozen=True)
class CommittedUse:
    """The machine a job would run on under a commitment, and how long its runs would keep it busy."""

    provider: str
    instance_type: str
    region: str
    price_per_hour_usd: float  # the 1-year committed rate, paid for every hour of the year
    machine_hours: float  # all the job's runs


@dataclass(frozen=True)
class JobYear:
    """One job's runs priced on demand and on spot, and the machine a commitment would cover."""

    on_demand_usd: float | None = None
    spot_usd: float | None = None
    committed: CommittedUse | None = None


def _cheapest(options: Iterable[RankedOption], pricing: Pricing, runs: int) -> float | None:
    costs = [runs * o.training_cost_usd for o in options if o.pricing is pricing]
    return min(costs) if costs else None


def job_year(options: Sequence[RankedOption], *, runs: int, rates: CommittedRates,
             deadline_hours: float | None = None, parallel: int = 1) -> JobYear:
    """Return one job's year: cheapest on-demand and spot cost of its runs, and its committed machine, each
    among the fitting options whose runs (`parallel` at a time, as budget.plan_runs) end by the deadline."""
    waves = math.ceil(runs / max(1, min(parallel, runs)))
    options = [o for o in options if o.fits and (deadline_hours is None
                                                 or waves * o.training_hours <= deadline_hours)]
    # The least (committed cost, type, region) wins; only its CommittedUse is made.
    best: tuple[tuple[float, str, str], RankedOption, float, float] | None = None
    for o in options:
        if o.pricing is not Pricing.ON_DEMAND:
            continue
        rate = rates.get((o.provider, o.instance_type, o.region))
        if rate is None:
            continue
        machine_hours = runs * o.training_hours * o.nodes  # each of a run's machines is committed
        key = (rate * machine_hours, o.instance_type, o.region)
        if best is None or key < best[0]:
            best = (key, o, rate, machine_hours)
    committed = None if best is None else CommittedUse(best[1].provider, best[1].instance_type, best[1].region,
                                                        best[2], best[3])
    return JobYear(_cheapest(options, Pricing.ON_DEMAND, runs), _cheapest(options, Pricing.SPOT, runs), committed)


@dataclass(frozen=True)
class CommittedMachines:
    """Machines of one type and region bought on a 1-year commitment to cover some jobs' hours."""

    provider: str
    instance_type: str
    region: str
    machines: int
    price_per_hour_usd: float
    machine_hours_used: float
    year_usd: float  # machines x rate x 8,760 h
    on_demand_usd: float = 0.0  # the same jobs' year on demand (each job's cheapest on-demand option)
    pays_off: bool = True  # year_usd < on_demand_usd: only then is the commitment in the committed total


@dataclass(frozen=True)
class YearlyComparison:
    """The review's jobs as a year of work: on demand, on spot, and committed for the year."""

    on_demand_usd: float
    spot_usd: float
    committed_usd: float  # commitments for the whole year + the uncommitted jobs at on-demand
    committed_machines: tuple[CommittedMachines, ...]
    uncommitted_jobs: tuple[str, ...]  # no machine with a commitment rate: counted at on-demand
    missing_on_demand_jobs: int
    missing_spot_jobs: int
    basis: str


BASIS = ("the review's jobs and runs taken as one year of work, each on its cheapest option of each kind that "
         "meets its deadline; committed = 1-year commitments, no upfront, "
         "enough machines to cover the year's machine hours, each paid for all 8,760 hours, bought only where "
         "that costs less than the same jobs on demand (the rest counted on demand)")


def yearly_comparison(jobs: Iterable[tuple[str, JobYear | None]]) -> YearlyComparison:
    """Return the three yearly totals over the jobs' years (name, year); a failed job has None."""
    on_demand = spot = uncommitted_usd = 0.0
    missing_od = missing_spot = 0
    uncommitted: list[str] = []
    groups: dict[tuple[str, str, str], list[tuple[CommittedUse, float]]] = {}
    for name, year in jobs:
        if year is None or year.on_demand_usd is None:
            missing_od += 1
        else:
            on_demand += year.on_demand_usd
        if year is None or year.spot_usd is None:
            missing_spot += 1
        else:
            spot += year.spot_usd
        if year is not None and year.committed is not None:
            c = year.committed
            groups.setdefault((c.provider, c.instance_type, c.region), []).append((c, year.on_demand_usd or 0.0))
        elif year is not None and year.on_demand_usd is not None:
            uncommitted.append(name)
            uncommitted_usd += year.on_demand_usd
    bought: list[CommittedMachines] = []
    for (provider, instance_type, region), uses in sorted(groups.items()):
        hours = sum(u.machine_hours for u, _ in uses)
        machines = max(1, math.ceil(hours / HOURS_PER_YEAR))
        rate = uses[0][0].price_per_hour_usd
        year_usd, instead = machines * rate * HOURS_PER_YEAR, sum(od for _, od in uses)
        bought.append(CommittedMachines(provider, instance_type, region, machines, rate, hours, year_usd,
                                        instead, year_usd < instead))
    return YearlyComparison(
        on_demand_usd=on_demand, spot_usd=spot,
        committed_usd=sum(b.year_usd if b.pays_off else b.on_demand_usd for b in bought) + uncommitted_usd,
        committed_machines=tuple(bought), uncommitted_jobs=tuple(uncommitted),
        missing_on_demand_jobs=missing_od, missing_spot_jobs=missing_spot, basis=BASIS,
    )
