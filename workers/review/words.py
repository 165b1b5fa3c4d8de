"""The sentences of a review: why a pick is missing, what a sweep should be, where a limit came from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workers.render import fmt_hours, fmt_usd

SOURCES = {"job": "the job's", "spec": "the spec's", "review": "the review's", "none": "no"}


def _where(plan: Mapping[str, Any] | None) -> str:
    if not plan:
        return ""
    where = plan["provider"] if plan["region"] == plan["provider"] else f"{plan['provider']} {plan['region']}"
    nodes = int(plan.get("nodes") or 1)
    machines = f"{nodes} x {plan['instance_type']}" if nodes > 1 else plan["instance_type"]
    return f"{machines}, {where}, {plan['pricing']}"


def pick_message(pick: Mapping[str, Any]) -> str:
    """Say why a pick has no plan, with the figure that comes closest; "" when it has one."""
    if pick.get("plan"):
        return ""
    reason, limit, closest = pick.get("reason", ""), pick.get("limit"), pick.get("closest")
    source = SOURCES.get(pick.get("limit_source", "none"), "the")
    if reason == "deadline" and closest:
        return (f"no option finishes by {source} {fmt_hours(limit or 0.0)} deadline; the fastest takes "
                f"{fmt_hours(closest['wall_hours'])} ({_where(closest)})")
    if reason == "budget" and closest:
        return (f"no option fits {source} {fmt_usd(limit or 0.0)} budget; the cheapest costs "
                f"{fmt_usd(closest['cost_usd'])} ({_where(closest)})")
    if reason == "no-option":
        return "no machine in scope can run this job (its sizing warnings say what it needs and what would hold it)"
    if reason == "duration-unknown":
        return "dataset.samples is not given, so the hours and the cost are unknown"
    if reason == "failed":
        return "the job could not be reviewed"
    return str(reason)


def job_notes(cheapest: Mapping[str, Any], fastest: Mapping[str, Any]) -> list[str]:
    """Return why a job's picks have no plan, each reason once (both picks say "no machine in scope" alike)."""
    return list(dict.fromkeys(m for m in (pick_message(cheapest), pick_message(fastest)) if m))


def advice_message(advice: Mapping[str, Any] | None) -> str:
    """Say whether the sweep's search suits its parameter count (grid up to about 3, random beyond)."""
    if not advice:
        return ""
    n, kind, advised = advice["parameters"], advice["kind"], advice["advised"]
    noun = "parameter" if n == 1 else "parameters"
    if kind == "grid" and advised == "grid":
        return (f"grid over {n} {noun}, about {advice['values_per_parameter']:.1f} values each: fine; "
                "space the values on a log scale")
    if kind == "grid":
        return (f"a grid over {n} {noun} grows as values^{n}; beyond about 3 parameters use random "
                "search with the same trial budget")
    if advised == "random":
        return f"random search over {n} {noun}: the right choice beyond about 3 parameters"
    return (f"random search over {n} {noun} works; a grid on a log scale is the usual choice up to about "
            "3 parameters")


def limit_text(value: float | None, source: str, *, money: bool) -> str:
    """Render a limit and where it came from, e.g. "$500.00 (job)" or "none"."""
    if value is None:
        return "none"
    shown = fmt_usd(value) if money else fmt_hours(value)
    return f"{shown} ({source})"
