"""How a run reads: bytes, dollars, hours, percentiles, and a spot run's figures in words.

Shared by the plain ranking's words (reasons.py), the strategy search's (strategy_words.py) and
the advice on wider limits (wider.py).
"""

from __future__ import annotations

from catalog.units import GIB
from workers.ranking.costing import HOURS_PER_YEAR
from workers.ranking.runplan import RunPlan
from workers.sizing.requirements import CodedWarning


def gib_text(n_bytes: float) -> str:
    """Return a byte count in GiB with one decimal, e.g. "16.0 GiB"."""
    return f"{n_bytes / GIB:.1f} GiB"


def usd_text(amount: float) -> str:
    """Return dollars: four decimals below a cent, cents below $100, whole dollars above."""
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}" if amount < 100 else f"${amount:,.0f}"


def hours_text(hours: float) -> str:
    """Return a duration in hours, or in minutes below one hour; from three days on with the days beside it, and from
    a year on with the years ("429428.5 h" alone said nothing a person reads as 49 years)."""
    if hours < 1:
        return f"{hours * 60:.1f} min"
    if hours < 72:
        return f"{hours:.1f} h"
    within = f"{hours / 24:,.1f} d" if hours < HOURS_PER_YEAR else f"{hours / HOURS_PER_YEAR:,.1f} years"
    return f"{hours:,.1f} h ({within})"


def deadline_text(hours: float) -> str:
    """Return a deadline as a person gave it: "2 h", "1.5 h", or minutes below an hour ("20 min", not "0.333333 h")."""
    if hours < 1:
        return f"{hours * 60:.3g} min"
    return f"{hours:g} h" if hours < 72 else f"{hours:g} h ({hours / 24:.3g} d)"  # "2160 h (90 d)"


def percentile_text(share: float) -> str:
    """Return a percentile in words: 0.9 -> "90th percentile", 0.95 -> "95th percentile"."""
    n = round(share * 100, 1)
    whole = int(n) if float(n).is_integer() else n
    suffix = "th" if isinstance(whole, float) or 10 <= whole % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(
        whole % 10, "th")
    return f"{whole}{suffix} percentile"


def spot_warning(plan: RunPlan | None, *, machines: int = 1) -> CodedWarning:
    """Return the spot-interruption warning of a spot option: the run's interruption figures where it has them.

    On `machines` machines any reclaim stops the run, so its figure is one machine's over that many
    (runplan.run_mtbi_hours), and the warning says so.
    """
    if plan is None or plan.spot is None:
        several = " (more so across several machines)" if machines > 1 else ""
        return CodedWarning("spot-interruption", "spot capacity can be reclaimed at short notice; "
                                                 f"checkpoint often and expect restarts{several}")
    run = plan.spot
    across = f" across the {machines} machines (a reclaim of any one stops the run)" if machines > 1 else ""
    return CodedWarning("spot-interruption", (
        f"spot capacity can be reclaimed: about one interruption every {run.mtbi_hours:.0f} h{across} "
        f"({plan.rate.band if plan.rate else ''} band), {run.expected_interruptions:.2f} expected in this run, "
        f"each costing a {hours_text(run.restart_hours)} restart and the work since the last checkpoint "
        f"(every {hours_text(plan.checkpoints.every_hours)}); {hours_text(run.percentile_hours)} at the "
        f"{percentile_text(run.percentile)} against {hours_text(run.expected_hours)} expected"))


def run_breakdown_text(plan: RunPlan | None) -> str:
    """Return " (X training + Y start-up, staging, restarts and checkpoints)" of a run, or ""."""
    if plan is None:
        return ""
    return (f" ({hours_text(plan.training_hours)} training + {hours_text(plan.wall_hours - plan.training_hours)} "
            f"start-up, staging{', restarts' if plan.spot is not None else ''} and checkpoints)")


def percentile_cost_text(plan: RunPlan | None, *, cost_usd: float, budget_scale: float) -> str:
    """Return ", $Z at the 90th percentile, H" of a spot run, or ""."""
    if plan is None or plan.spot is None:
        return ""
    return (f", {usd_text(cost_usd * budget_scale)} at the {percentile_text(plan.spot.percentile)}, "
            f"{hours_text(plan.spot.percentile_hours)}")
