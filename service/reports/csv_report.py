"""A review as CSV: a row per job, then per team, then for all; plain numbers for spreadsheets."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from service.reports.document import Payload
from workers.review.words import advice_message, pick_message

COLUMNS = (
    "row", "team", "job", "status", "runs", "parallel", "planned_basis",
    "planned_provider", "planned_instance_type", "planned_region", "planned_pricing", "planned_gpu",
    "planned_gpu_count", "planned_wall_hours", "planned_gpu_hours", "planned_cost_usd",
    "planned_energy_kwh", "planned_co2e_kg",
    "deadline_hours", "fastest_instance_type", "fastest_provider", "fastest_region", "fastest_pricing",
    "fastest_wall_hours", "fastest_cost_usd", "budget_usd", "remaining_usd",
    "sweep_kind", "sweep_parameters",
    "sequential_instance_type", "sequential_wall_hours", "sequential_cost_usd",
    "parallel_instance_type", "parallel_trials_at_once", "parallel_wall_hours", "parallel_cost_usd",
    "notes",
)

# A cell a spreadsheet would run as a formula (OWASP "CSV Injection"): user text that starts so gets a quote.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: Any) -> str:
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def _number(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return ""
    return str(round(value, digits)) if isinstance(value, float) else str(value)


def _plan(prefix: str, plan: Mapping[str, Any] | None, keys: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key in keys:
        value = plan.get(key) if plan else None
        out[f"{prefix}_{key}"] = _number(value) if isinstance(value, int | float) else _text(value or "")
    return out


def _job_row(j: Mapping[str, Any]) -> dict[str, str]:
    cheap, fast = j["cheapest"], j["fastest"]
    row = {"row": "job", "team": _text(j["team"]), "job": _text(j["name"]), "status": j["status"],
           "runs": str(j["runs"]), "parallel": str(j["parallel"]), "planned_basis": j["planned_basis"],
           "deadline_hours": _number(cheap["limit"]), "budget_usd": _number(fast["limit"], 2)}
    row.update(_plan("planned", j["planned"], ("provider", "instance_type", "region", "pricing", "gpu",
                                               "gpu_count", "wall_hours", "gpu_hours", "cost_usd", "energy_kwh",
                                               "co2e_kg")))
    row.update(_plan("fastest", fast["plan"], ("instance_type", "provider", "region", "pricing", "wall_hours",
                                               "cost_usd")))
    c = j.get("sweep_comparison")
    if c:
        row.update(_plan("sequential", c["sequential"], ("instance_type", "wall_hours", "cost_usd")))
        row.update(_plan("parallel", c["parallel"], ("instance_type", "trials_at_once", "wall_hours",
                                                     "cost_usd")))
    if j.get("sweep"):
        row["sweep_kind"], row["sweep_parameters"] = j["sweep"]["kind"], str(j["sweep"]["parameters"])
    notes = [m for m in (pick_message(cheap), pick_message(fast)) if m]
    if c and c.get("advice"):
        notes.append(advice_message(c["advice"]))
    if j.get("error"):
        notes = [f"failed: {j['error']['field']}: {j['error']['reason']}"]
    row["notes"] = _text("; ".join(notes))
    return row


def _total_row(kind: str, t: Mapping[str, Any]) -> dict[str, str]:
    return {"row": kind, "team": _text(t["team"]), "runs": str(t["runs"]),
            "planned_gpu_hours": _number(t["gpu_hours"]), "planned_cost_usd": _number(t["cost_usd"], 2),
            "fastest_cost_usd": _number(t["fastest_cost_usd"], 2),
            "planned_energy_kwh": _number(t.get("energy_kwh", 0.0), 2),
            "planned_co2e_kg": _number(t.get("co2e_kg", 0.0), 2),
            "notes": f"{t['jobs']} jobs; {t['unplanned_jobs']} without a plan; "
                     f"{t['jobs_missing_deadline']} missing the deadline"}


def render_csv(payload: Payload) -> str:
    """Render a dumped review as CSV (RFC 4180, CRLF line ends)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, restval="", extrasaction="raise")
    writer.writeheader()
    for j in payload["jobs"]:
        writer.writerow(_job_row(j))
    for t in payload["teams"]:
        writer.writerow(_total_row("team", t))
    total = _total_row("total", payload["total"])
    s = payload["standing"]
    total.update(budget_usd=_number(s["budget_usd"], 2), remaining_usd=_number(s["remaining_usd"], 2))
    writer.writerow(total)
    return buffer.getvalue()
