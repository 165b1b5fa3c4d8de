"""The review's charts as inline SVG drawn by matplotlib: every job's options by cost and time, team spend.

Figures are drawn on matplotlib's object API (no pyplot, so no global state and no GUI backend),
with text kept as SVG text and no link to anything outside the page.
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workers.render import fmt_hours, fmt_usd

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# matplotlib is imported where a chart is drawn, not here: importing it costs ~0.4 s, which every CLI
# command and API process paid before drawing anything (issue 17).

# Ten colours that stay apart for colour-blind readers: matplotlib's "tab10" cycle.
MAX_SERIES = 10
LABEL_CHARS = 40
_RC: Any = {"svg.fonttype": "none", "svg.hashsalt": "gpugauge", "font.family": ["DejaVu Sans", "sans-serif"],
            "font.size": 9}
# rc_context swaps matplotlib's global settings; reports drawn on two threads at once (the embedded
# mode's task pool, gunicorn threads) take turns so that neither draws with the other's settings.
_DRAW_LOCK = threading.Lock()
# What an inline <svg> in HTML does not need and a self-contained page must not carry: the XML
# prolog, the DTD reference and the namespace URLs (the HTML parser supplies the SVG namespace).
_PROLOG = re.compile(r"<\?xml[^>]*>\s*|<!DOCTYPE[^>]*>\s*", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def chart_label(text: str) -> str:
    """Return a name as a legend label: one line, shortened, `$` shown as itself rather than starting math."""
    flat = " ".join(str(text).split())
    if len(flat) > LABEL_CHARS:
        flat = flat[: LABEL_CHARS - 1] + "…"
    return flat.replace("\\", "\\\\").replace("$", r"\$")


def _svg(fig: Figure, *, title: str) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight",
                metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    svg = _NAMESPACES.sub("", _PROLOG.sub("", buffer.getvalue()))
    svg = svg.replace("xlink:href=", "href=")
    label = title.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
    return svg.replace("<svg ", f'<svg role="img" aria-label="{label}" ', 1).strip()


# Tick candidates people read at a glance: round durations (in hours) and a 1-2-5 ladder of dollars.
HOUR_TICKS = (1 / 60, 5 / 60, 15 / 60, 1.0, 3.0, 12.0, 24.0, 72.0, 168.0, 672.0, 2016.0, 8760.0)
USD_TICKS = tuple(m * 10.0**e for e in range(-2, 8) for m in (1.0, 2.0, 5.0))
MAX_TICKS = 8


def _ticks(candidates: Sequence[float], low: float, high: float) -> list[float]:
    """Return the candidates between low and high (one either side), thinned to MAX_TICKS."""
    inside = [c for c in candidates if low / 1.5 <= c <= high * 1.5] or [low]
    step = math.ceil(len(inside) / MAX_TICKS)
    return inside[::step]


def _log_axis(axis: Any, values: Sequence[float], candidates: Sequence[float], formatter: Any) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    axis.set_major_locator(FixedLocator(_ticks(candidates, min(values), max(values))))
    axis.set_major_formatter(FuncFormatter(lambda v, _: formatter(v)))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def _series(jobs: Sequence[Mapping[str, Any]]) -> tuple[list[str], dict[str, int]]:
    """Return the series names and each job's series: one per job when few, else one per team."""
    names = [j["name"] for j in jobs]
    if len(names) <= MAX_SERIES:
        return names, {j["name"]: i for i, j in enumerate(jobs)}
    teams = list(dict.fromkeys(j["team"] for j in jobs))[:MAX_SERIES]
    return teams, {j["name"]: teams.index(j["team"]) if j["team"] in teams else len(teams) - 1 for j in jobs}


def _points(plans: Sequence[Mapping[str, Any]]) -> list[tuple[float, float]]:
    return sorted((p["wall_hours"], p["cost_usd"]) for p in plans
                  if p["wall_hours"] > 0 and p["cost_usd"] > 0)


def cost_time_svg(payload: Mapping[str, Any]) -> str | None:
    """Draw every job's options by cost and time (all runs on each), its front, and its two picks."""
    jobs = [j for j in payload["jobs"] if j.get("front")]
    if not jobs:
        return None
    names, series_of = _series(jobs)
    import matplotlib
    from matplotlib.figure import Figure

    with _DRAW_LOCK, matplotlib.rc_context(_RC):
        fig = Figure(figsize=(9.0, 5.2), layout="constrained")
        ax = fig.add_subplot()
        colours = [f"C{i}" for i in range(MAX_SERIES)]
        labelled: set[int] = set()
        xs: list[float] = []
        ys: list[float] = []
        for j in jobs:
            s = series_of[j["name"]]
            front = _points(j["front"])
            if not front:
                continue
            others = _points(j.get("sample", []))
            if others:
                ax.scatter([x for x, _ in others], [y for _, y in others], s=9, color=colours[s], alpha=0.3,
                           linewidths=0)
            label = chart_label(names[s]) if s not in labelled else None
            labelled.add(s)
            ax.plot([x for x, _ in front], [y for _, y in front], "o-", color=colours[s], markersize=4,
                    linewidth=1.2, alpha=0.9, label=label)
            xs += [x for x, _ in front + others]
            ys += [y for _, y in front + others]
            for pick, marker in ((j.get("planned"), "*"), (j["fastest"].get("plan"), "^")):
                if pick and pick["wall_hours"] > 0 and pick["cost_usd"] > 0:
                    ax.plot([pick["wall_hours"]], [pick["cost_usd"]], marker, color=colours[s], markersize=12,
                            markeredgecolor="black", markeredgewidth=0.6)
        if not xs:
            return None
        ax.set_xscale("log")
        ax.set_yscale("log")
        _log_axis(ax.xaxis, xs, HOUR_TICKS, fmt_hours)
        _log_axis(ax.yaxis, ys, USD_TICKS, fmt_usd)
        ax.set_xlabel("wall-clock for all runs")
        ax.set_ylabel("cost of all runs (USD)")
        ax.set_title("Each job's options: cost against time (line: best trade-offs, ★ planned, "
                     "▲ fastest within budget)")
        ax.grid(True, which="major", linewidth=0.4, alpha=0.5)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
        return _svg(fig, title="Cost against wall-clock of each job's options")


def team_spend_svg(payload: Mapping[str, Any]) -> str | None:
    """Draw each team's planned cost as a bar, with the review's budget as a line where it has one."""
    teams = [t for t in payload["teams"] if t["cost_usd"] > 0]
    if not teams:
        return None
    budget = payload["standing"]["budget_usd"]
    total = payload["total"]["cost_usd"]
    import matplotlib
    from matplotlib.figure import Figure

    with _DRAW_LOCK, matplotlib.rc_context(_RC):
        fig = Figure(figsize=(9.0, 0.5 + 0.45 * (len(teams) + 1)), layout="constrained")
        ax = fig.add_subplot()
        labels = [chart_label(t["team"]) for t in teams] + ["all teams"]
        values = [t["cost_usd"] for t in teams] + [total]
        colours = ["C0"] * len(teams) + ["C3" if budget is not None and total > budget else "C2"]
        ax.barh(range(len(values)), values, color=colours)
        ax.set_yticks(range(len(values)), labels)
        ax.invert_yaxis()
        if budget is not None and math.isfinite(budget):
            ax.axvline(budget, color="black", linestyle="--", linewidth=1.0,
                       label=f"budget {fmt_usd(budget)}")
            ax.legend(loc="lower right", frameon=False)
        from matplotlib.ticker import FuncFormatter

        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_usd(v)))
        ax.set_title("Planned cost per team")
        ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
        return _svg(fig, title="Planned cost per team against the budget")
