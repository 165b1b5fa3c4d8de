"""A run on spot capacity: interruption rates, the checkpoint interval, expected and percentile time; pure.

The model (first order, Young 1974 / Daly 2006):
- interruptions arrive at random (Poisson) with mean time between them M (the MTBI of the family);
- the checkpoint interval that minimises expected loss is tau = sqrt(2 x delta x M), delta the
  seconds one checkpoint takes to write (Young's formula; Daly's higher-order terms matter only
  when delta is a sizeable part of M);
- each interruption costs a restart R (provisioning, boot, environment and data staging again on the
  new machine: the checkpoint lives in object storage, the local disk does not survive) and the work
  since the last checkpoint, tau / 2 on average;
- expected wall-clock W solves W = W0 + (W / M) x (R + tau / 2), so W = W0 / (1 - (R + tau / 2) / M);
  a run whose restarts cost as much as M makes no progress on spot, and spot is refused for it.
The percentile figure counts the interruptions a Poisson(W / M) draw reaches at that percentile,
each losing a whole interval (the worst case per interruption): deadlines and budgets are checked
on it, and it is shown beside the expected figure.

Interruption rates. AWS publishes, per instance type and region, a band of "frequency of
interruption" (the Spot Instance Advisor: <5 %, 5-10 %, 10-15 %, 15-20 %, >20 %, the share of
instances reclaimed over the trailing month). Google publishes no per-family figure; its preemptible
VM page gave an average of 5-15 % of VMs preempted per day per project (seven-day average). Both are
read here as the chance that a machine is interrupted within a day of running: instances live far
shorter than the month the advisor aggregates over, so a per-month reading would understate the
hourly rate; per day is the conservative reading, and it is stated in every spot option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.types import Provider

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class InterruptionRate:
    """A published interruption figure for a provider (and a family where one is given), with its source."""

    provider: Provider
    family: str  # "" for the provider's default
    share_per_day: float  # chance a running machine is interrupted within a day (see the module's reading)
    band: str
    source: str
    as_of: str

    @property
    def mtbi_hours(self) -> float:
        """Return the mean time between interruptions: 24 h / -ln(1 - share per day)."""
        return HOURS_PER_DAY / -math.log1p(-self.share_per_day)


_ADVISOR = ("aws.amazon.com/ec2/spot/instance-advisor (Spot Instance Advisor); GPU families taken at the "
            "advisor's highest band, >20 % (read as 30 %), since their bands were not read for this table")
_GCP = ("cloud.google.com/compute/docs/instances/preemptible (average preemption 5-15 % per day per project, "
        "seven-day average; the upper figure taken)")
INTERRUPTION_RATES: tuple[InterruptionRate, ...] = (
    InterruptionRate(Provider.AWS, "", 0.30, ">20%", _ADVISOR, "2026-12-01 [recalled, not re-read]"),
    InterruptionRate(Provider.GCP, "", 0.15, "5-15% per day", _GCP, "2026-12-01 [recalled, not re-read]"),
)


def interruption_rate(provider: Provider, family: str,
                      rates: tuple[InterruptionRate, ...] = INTERRUPTION_RATES) -> InterruptionRate | None:
    """Return the figure for this family, else the provider's default, else None (no spot figure)."""
    default = None
    for r in rates:
        if r.provider is provider and r.family == family:
            return r
        if r.provider is provider and not r.family:
            default = r
    return default


def young_daly_interval_hours(*, checkpoint_write_s: float, mtbi_hours: float) -> float:
    """Return the checkpoint interval sqrt(2 x checkpoint time x MTBI) that minimises expected loss."""
    return math.sqrt(2.0 * checkpoint_write_s / 3600.0 * mtbi_hours)


def poisson_quantile(mean: float, percentile: float) -> int:
    """Return the smallest k with P(N <= k) >= percentile for N ~ Poisson(mean)."""
    if mean <= 0:
        return 0
    term = cumulative = math.exp(-mean)
    k = 0
    while cumulative < percentile and k < 10_000:
        k += 1
        term *= mean / k
        cumulative += term
    return k


@dataclass(frozen=True)
class SpotRun:
    """A run with restarts: expected and percentile hours (wall and billed), and how they were found."""

    expected_hours: float
    percentile_hours: float
    expected_billed_hours: float
    percentile_billed_hours: float
    expected_interruptions: float
    percentile_interruptions: int
    mtbi_hours: float
    restart_hours: float
    percentile: float


def spot_run(*, wall_hours: float, billed_hours: float, restart_hours: float, restart_billed_hours: float,
             interval_hours: float, mtbi_hours: float, percentile: float) -> SpotRun | None:
    """Return the run's time and billed hours with restarts; None when restarts outpace progress."""
    loss = restart_hours + interval_hours / 2.0
    if loss >= 0.5 * mtbi_hours:
        return None  # each interruption costs half the time between them or more: no steady progress
    expected_wall = wall_hours / (1.0 - loss / mtbi_hours)
    interruptions = expected_wall / mtbi_hours
    expected_billed = billed_hours + interruptions * (restart_billed_hours + interval_hours / 2.0)
    k = poisson_quantile(interruptions, percentile)
    p_wall = wall_hours + k * (restart_hours + interval_hours)
    p_billed = billed_hours + k * (restart_billed_hours + interval_hours)
    return SpotRun(expected_wall, max(p_wall, expected_wall), expected_billed, max(p_billed, expected_billed),
                   interruptions, k, mtbi_hours, restart_hours, percentile)
