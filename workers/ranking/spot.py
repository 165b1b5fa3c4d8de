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

Interruption rates (`interruption_rate`). AWS publishes, per region and instance type, a band of
"frequency of interruption" (the Spot Instance Advisor: <5 %, 5-10 %, 10-15 %, 15-20 %, >20 %, the
rate at which Spot reclaimed capacity over the trailing month): data/aws_spot_bands.json holds the
bands of every catalog spot offer the advisor lists (derive_spot_bands.py, with the source and the
date they were true). A type the advisor does not list in a region takes the worst band of its
family there; a family not listed there takes the worst band, >20 %; each option says which. A band
is read at its upper edge (>20 % as 30 %). Google publishes no per-family or per-region rate: its
preemptible VM page says the chance of preemption is "generally low, but might vary from day to day
and from zone to zone"; an average of 5-15 % of VMs preempted per day per project (seven-day
average) is recalled from an earlier version of that page, not re-read, and the upper figure is
the default for every GCP family. Both are read as the chance that a machine is interrupted within
a day of running: instances live far shorter than the month the advisor aggregates over, so a
per-month reading would understate the hourly rate; per day is the conservative reading, and it is
stated in every spot option.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path

from catalog.types import Provider

HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class InterruptionRate:
    """An interruption figure for a provider's spot offers, where it came from and the date it was true.

    Equal for every (type, region) with the same band and basis, so offers group by it.
    """

    provider: Provider
    share_per_day: float  # chance a running machine is interrupted within a day (see the module's reading)
    band: str
    source: str
    as_of: str
    basis: str  # listed / family / default: what the figure was read for

    @property
    def mtbi_hours(self) -> float:
        """Return the mean time between interruptions: 24 h / -ln(1 - share per day)."""
        return HOURS_PER_DAY / -math.log1p(-self.share_per_day)

    @property
    def described(self) -> str:
        """Return the figure's source, date and basis in one line, for an option."""
        return f"{self.band} band ({self.basis}); {self.source}, as of {self.as_of}"


BANDS_PATH = Path(__file__).resolve().parent / "data" / "aws_spot_bands.json"
BAND_SHARE = (0.05, 0.10, 0.15, 0.20, 0.30)  # each band's upper edge; >20 % read as 30 %
LISTED = "listed by the advisor for this type and region"
FAMILY = "type not listed in this region: its family's worst band there"
DEFAULT = "neither the type nor its family listed in this region: the worst band assumed"
_GCP = InterruptionRate(
    Provider.GCP, 0.15, "5-15% per day",
    "cloud.google.com/compute/docs/instances/preemptible (no per-family or per-region rate published; "
    "an average of 5-15 % per day per project, seven-day average, recalled from an earlier version of the page, "
    "not re-read; the upper figure taken)", "unknown (recalled)",
    "Google's one published figure, for every GCP family and region")


@dataclass(frozen=True)
class _AwsBands:
    labels: tuple[str, ...]
    source: str
    as_of: str
    by_offer: dict[tuple[str, str], int]  # (region, instance type) -> band index
    worst_by_family: dict[tuple[str, str], int]  # (region, family) -> worst band index


@functools.cache
def _aws_bands(path: Path = BANDS_PATH) -> _AwsBands:
    data = json.loads(path.read_text(encoding="utf-8"))
    src = data["source"]
    by_offer: dict[tuple[str, str], int] = {}
    worst: dict[tuple[str, str], int] = {}
    for region, types in data["bands"].items():
        for instance_type, band in types.items():
            by_offer[(region, instance_type)] = band
            key = (region, instance_type.split(".")[0])
            worst[key] = max(band, worst.get(key, 0))
    source = f"{src['feed']}, read from {src['copy']}@{src['commit'][:12]}"
    return _AwsBands(tuple(data["labels"]), source, src["as_of"], by_offer, worst)


@functools.cache
def _aws_rate(band: int, basis: str) -> InterruptionRate:
    bands = _aws_bands()
    return InterruptionRate(Provider.AWS, BAND_SHARE[band], bands.labels[band], bands.source, bands.as_of, basis)


def interruption_rate(provider: Provider, instance_type: str, region: str) -> InterruptionRate | None:
    """Return an offer's spot interruption figure: its advisor band, its family's, a default; None off the clouds."""
    if provider is Provider.GCP:
        return _GCP
    if provider is not Provider.AWS:
        return None
    bands = _aws_bands()
    band = bands.by_offer.get((region, instance_type))
    if band is not None:
        return _aws_rate(band, LISTED)
    band = bands.worst_by_family.get((region, instance_type.split(".")[0]))
    if band is not None:
        return _aws_rate(band, FAMILY)
    return _aws_rate(len(BAND_SHARE) - 1, DEFAULT)


def young_daly_interval_hours(*, checkpoint_write_s: float, mtbi_hours: float) -> float:
    """Return the checkpoint interval sqrt(2 x checkpoint time x MTBI) that minimises expected loss."""
    return math.sqrt(2.0 * checkpoint_write_s / 3600.0 * mtbi_hours)


POISSON_MAX_K = 10_000  # where the sum stops short of the percentile (a mean far past any spot run's)


def poisson_quantile(mean: float, percentile: float) -> int:
    """Return the smallest k with P(N <= k) >= percentile for N ~ Poisson(mean)."""
    if mean <= 0:
        return 0
    term = cumulative = math.exp(-mean)
    k = 0
    while cumulative < percentile and k < POISSON_MAX_K:
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
    found = spot_figures(wall_hours, billed_hours, restart_hours, restart_billed_hours, interval_hours, mtbi_hours,
                         percentile)
    if found is None:
        return None
    expected_wall, p_wall, expected_billed, p_billed, interruptions, k = found
    return SpotRun(expected_wall, p_wall, expected_billed, p_billed, interruptions, k, mtbi_hours, restart_hours,
                   percentile)


SpotFigures = tuple[float, float, float, float, float, int]


def spot_figures(wall_hours: float, billed_hours: float, restart_hours: float, restart_billed_hours: float,
                 interval_hours: float, mtbi_hours: float, percentile: float) -> SpotFigures | None:
    """Return spot_run's figures as a tuple (expected and percentile wall and billed hours, expected and
    percentile interruptions), or None: the ranking's hot path, which builds no SpotRun."""
    expected = spot_expected(wall_hours, billed_hours, restart_hours, restart_billed_hours, interval_hours,
                             mtbi_hours)
    if expected is None:
        return None
    expected_wall, interruptions, expected_billed = expected
    k = poisson_quantile(interruptions, percentile)
    p_wall = wall_hours + k * (restart_hours + interval_hours)
    p_billed = billed_hours + k * (restart_billed_hours + interval_hours)
    return expected_wall, max(p_wall, expected_wall), expected_billed, max(p_billed, expected_billed), interruptions, k


def spot_expected(wall_hours: float, billed_hours: float, restart_hours: float, restart_billed_hours: float,
                  interval_hours: float, mtbi_hours: float) -> tuple[float, float, float] | None:
    """Return a spot run's expected (wall hours, interruptions, billed hours), or None when restarts outpace
    progress; the percentile (a Poisson quantile, a loop as long as the run is in interruptions) apart."""
    loss = restart_hours + interval_hours / 2.0
    if loss >= 0.5 * mtbi_hours:
        return None  # each interruption costs half the time between them or more: no steady progress
    expected_wall = wall_hours / (1.0 - loss / mtbi_hours)
    interruptions = expected_wall / mtbi_hours
    return expected_wall, interruptions, billed_hours + interruptions * (restart_billed_hours + interval_hours / 2.0)
