"""A review as CSV: a row per job, then per team, then for all; plain numbers for spreadsheets.

The `year_*` columns are the review's yearly comparison (workers/review/yearly.py): a job row carries its
runs priced on demand and on spot and the machine a 1-year commitment would cover; a team row the sums of
its jobs' on-demand and spot years; the total row (last) the three yearly totals; and, before it, one
`committed` row per machine type and region bought on a commitment (machines x rate x 8,760 h, paid whether
used or not).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from service.reports.document import Payload
from workers.review.words import advice_message, job_notes

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
    "year_on_demand_usd", "year_spot_usd", "year_committed_usd",
    "year_committed_provider", "year_committed_instance_type", "year_committed_region",
    "year_committed_usd_per_hour", "year_committed_machine_hours", "year_committed_machines",
    "notes",
    "planned_nodes", "fastest_nodes",  # machines one run takes; gpu_count is per machine (added last)
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
                                               "co2e_kg", "nodes")))
    row.update(_plan("fastest", fast["plan"], ("instance_type", "provider", "region", "pricing", "wall_hours",
                                               "cost_usd", "nodes")))
    c = j.get("sweep_comparison")
    if c:
        row.update(_plan("sequential", c["sequential"], ("instance_type", "wall_hours", "cost_usd")))
        row.update(_plan("parallel", c["parallel"], ("instance_type", "trials_at_once", "wall_hours",
                                                     "cost_usd")))
    if j.get("sweep"):
        row["sweep_kind"], row["sweep_parameters"] = j["sweep"]["kind"], str(j["sweep"]["parameters"])
    notes = job_notes(cheap, fast)
    if c and c.get("advice"):
        notes.append(advice_message(c["advice"]))
    if j.get("error"):
        notes = [f"failed: {j['error']['field']}: {j['error']['reason']}"]
    row["notes"] = _text("; ".join(notes))
    row.update(_job_year(j.get("year")))
    return row


def _job_year(year: Mapping[str, Any] | None) -> dict[str, str]:
    if not year:
        return {}
    row = {"year_on_demand_usd": _number(year.get("on_demand_usd"), 2),
           "year_spot_usd": _number(year.get("spot_usd"), 2)}
    c = year.get("committed")
    if c:
        row.update(year_committed_provider=_text(c["provider"]), year_committed_instance_type=_text(c["instance_type"]),
                   year_committed_region=_text(c["region"]),
                   year_committed_usd_per_hour=_number(c["price_per_hour_usd"]),
                   year_committed_machine_hours=_number(c["machine_hours"], 2))
    return row


def _team_year(jobs: list[Mapping[str, Any]], team: str) -> dict[str, str]:
    years = [j["year"] for j in jobs if j["team"] == team and j.get("year")]
    out: dict[str, str] = {}
    for key in ("on_demand_usd", "spot_usd"):
        values = [y[key] for y in years if y.get(key) is not None]
        if values:
            out[f"year_{key}"] = _number(sum(values), 2)
    return out


def _committed_rows(yearly: Mapping[str, Any] | None) -> list[dict[str, str]]:
    if not yearly:
        return []
    return [{"row": "committed", "year_committed_provider": _text(m["provider"]),
             "year_committed_instance_type": _text(m["instance_type"]), "year_committed_region": _text(m["region"]),
             "year_committed_usd_per_hour": _number(m["price_per_hour_usd"]),
             "year_committed_machine_hours": _number(m["machine_hours_used"], 2),
             "year_committed_machines": str(m["machines"]), "year_committed_usd": _number(m["year_usd"], 2),
             "notes": "1-year commitment, no upfront: each machine paid for 8,760 h, used or not" + (
                 "" if m.get("pays_off", True) else
                 f"; not bought (its jobs cost {m['on_demand_usd']:.2f} on demand): not in year_committed_usd")}
            for m in yearly["committed_machines"]]


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
        writer.writerow({**_total_row("team", t), **_team_year(payload["jobs"], t["team"])})
    total = _total_row("total", payload["total"])
    s = payload["standing"]
    total.update(budget_usd=_number(s["budget_usd"], 2), remaining_usd=_number(s["remaining_usd"], 2))
    y = payload.get("yearly")
    if y:
        total.update(year_on_demand_usd=_number(y["on_demand_usd"], 2), year_spot_usd=_number(y["spot_usd"], 2),
                     year_committed_usd=_number(y["committed_usd"], 2))
        total["notes"] += f"; year: {y['basis']}"
    for row in _committed_rows(y):
        writer.writerow(row)
    writer.writerow(total)
    return buffer.getvalue()
