"""The cards to buy in a purchase answer, one line each, and how often a recurring job runs.

"Pays off after 206 runs against renting" reads as a yes to "is it cheaper to buy or rent for training resnet50 on
imagenet monthly", yet at one run a month 206 runs take 17 years, beyond the cards' 3-year life. Where the command
says how often the job runs ("every week", "nightly", "monthly": the words typed.py tells back), each line says in
years what its break-even means and whether the cards live that long.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from workers.render import fmt_hours, fmt_usd
from workers.slack.joined import RUNS_PER_YEAR, joined

PURCHASE_SHOWN = 3  # the first card sets to buy shown, where the command asks to buy
_WORD = re.compile(r"[a-z0-9]+")


def runs_per_year(text: str) -> tuple[int, str] | None:
    """Return how many runs a year the command's words say, and the word said ("weekly"), or None where it names no
    frequency ("recurring", "regularly" say none)."""
    for word in joined(_WORD.findall(html.unescape(text).lower())):
        if word in RUNS_PER_YEAR:
            return RUNS_PER_YEAR[word], word
    return None


def purchase_lines(rows: Sequence[Mapping[str, Any]], *, per_year: tuple[int, str] | None = None) -> list[str]:
    """One line per card set to buy (the first PURCHASE_SHOWN, and the least to spend where it is not among them):
    what it costs with its host, a run's hours and power, whether it pays off, or a run's cost over its life;
    `per_year` (runs_per_year): the break-even in years at that frequency, against the cards' life, and the cards
    that pay off in the fewest runs first (the result orders them by hours of use, a measure of a busy machine)."""
    if per_year:
        rows = sorted(rows, key=lambda p: (p.get("break_even_runs") is None, float(p.get("break_even_runs") or 0)))
    shown = list(rows[:PURCHASE_SHOWN])
    least = min(rows, key=lambda p: float(p.get("purchase_usd", 0)), default=None)
    if least is not None and least not in shown:
        shown.append(least)
    lines = []
    for p in shown:
        if float(p.get("job_hours", 0)) <= 0:  # no data set size: the cards that hold it, at their throughput
            run = f"{float(p.get('samples_per_second', 0)):,.1f} samples/s (add samples= for a run's time and cost)"
        else:
            run = (f"{fmt_hours(float(p.get('job_hours', 0)))} a run, "
                   f"{fmt_usd(float(p.get('power_cost_usd', 0)))} of power{_pays(p, per_year)}")
        how = f"; {p['strategy']}" if p.get("strategy") else ""
        lead = "the least to spend: " if p is least and len(shown) > PURCHASE_SHOWN else ""
        lines.append(f"{lead}*{p.get('gpu_count', 1)} × {p.get('gpu', '?')}*: "
                     f"{fmt_usd(float(p.get('purchase_usd', 0)))} "
                     f"with its host (cards at their launch price, {p.get('as_of') or 'undated'}), {run}{how}")
    return lines


def _pays(p: Mapping[str, Any], per_year: tuple[int, str] | None) -> str:
    runs, life = p.get("break_even_runs"), float(p.get("lifetime_years", 0))
    if runs and per_year:  # the frequency said: the break-even in years, against the cards' life
        years = float(runs) / per_year[0]
        verdict = (f"within its {life:g}-year life" if years <= life else
                   f"beyond its {life:g}-year life: renting costs less")
        return (f"; pays off after {float(runs):,.0f} runs against renting, {years:,.1f} years run {per_year[1]}, "
                f"{verdict}")
    if runs and p.get("pays_off"):
        return f"; pays off after {float(runs):,.0f} runs against renting"
    return (f"; {fmt_usd(float(p.get('run_cost_usd', 0)))} a run with its price spread over {life:g} years at "
            f"{float(p.get('utilisation', 0)):.0%} use")
