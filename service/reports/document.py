"""A review laid out for people: sections of plain-text tables that the Markdown and HTML renderers share.

Everything here is unescaped text; each renderer escapes it for its own format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog.freshness import PRICE_WARNING_CODES, prices_dated_words
from workers.render import fmt_bytes, fmt_hours, fmt_usd
from workers.review.sweeps import SINGLE_GPU_DOMINATED
from workers.review.words import advice_message, job_notes, limit_text

Payload = Mapping[str, Any]

BASIS = {"cheapest-meeting-deadline": "cheapest meeting the deadline",
         "cheapest-missing-deadline": "cheapest; misses the deadline",
         "owned-fastest-meeting-deadline": "own cards, fastest meeting the deadline"}


@dataclass(frozen=True)
class Table:
    """A table of text cells; `numeric` marks the right-aligned columns."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Section:
    """A titled part of the report: sentences, then an optional table, then notes."""

    key: str
    title: str
    lines: tuple[str, ...] = ()
    table: Table | None = None
    notes: tuple[str, ...] = ()
    alert: bool = False  # the first line deserves attention (over budget, failed jobs)


@dataclass(frozen=True)
class Document:
    """The whole report."""

    title: str
    subtitle: str
    sections: tuple[Section, ...] = field(default_factory=tuple)


def _where(plan: Mapping[str, Any] | None) -> str:
    if not plan:
        return "-"
    nodes = int(plan.get("nodes") or 1)
    gpus = f"{plan['gpu_count'] * nodes}x {plan['gpu']}"
    where = plan["provider"] if plan["region"] == plan["provider"] else f"{plan['provider']} {plan['region']}"
    machines = f"{nodes} x {plan['instance_type']}" if nodes > 1 else plan["instance_type"]
    return f"{machines} ({where}, {plan['pricing']}; {gpus})"


def _hours(plan: Mapping[str, Any] | None, key: str = "wall_hours") -> str:
    return fmt_hours(plan[key]) if plan else "-"


def _usd(plan: Mapping[str, Any] | None, key: str = "cost_usd") -> str:
    return fmt_usd(plan[key]) if plan else "-"


def _kwh(plan: Mapping[str, Any] | None) -> str:
    return f"{plan.get('energy_kwh', 0.0):,.1f}" if plan else "-"


def _co2e(plan: Mapping[str, Any] | None) -> str:
    return f"{plan.get('co2e_kg', 0.0):,.1f}" if plan else "-"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def summary_section(p: Payload) -> Section:
    """Return the overall standing against the budget."""
    s, total = p["standing"], p["total"]
    lines = []
    if s["budget_usd"] is None:
        lines.append(f"Planned cost {fmt_usd(s['cost_usd'])}; the review sets no budget.")
    elif s["over_budget"]:
        lines.append(f"Over budget by {fmt_usd(-s['remaining_usd'])}: planned {fmt_usd(s['cost_usd'])} "
                     f"against {fmt_usd(s['budget_usd'])} ({_share(s['used_share'])} of it).")
    else:
        lines.append(f"Under budget by {fmt_usd(s['remaining_usd'])}: planned {fmt_usd(s['cost_usd'])} "
                     f"against {fmt_usd(s['budget_usd'])} ({_share(s['used_share'])} of it).")
    lines.append(f"Rental spending {fmt_usd(total.get('rental_cost_usd', total['cost_usd']))}; the team's own cards "
                 f"(power only) {fmt_usd(total.get('owned_power_usd', 0.0))}. Capital spending is not in these "
                 "totals: what buying cards would cost is under \"Buy or rent\".")
    lines.append(f"{total['jobs']:,} jobs, {total['runs']:,} runs, {total['gpu_hours']:,.0f} GPU-hours; "
                 f"taking each job's fastest option within its budget instead would cost "
                 f"{fmt_usd(total['fastest_cost_usd'])}.")
    lines.append(f"The planned options draw {total.get('energy_kwh', 0.0):,.0f} kWh and emit "
                 f"{total.get('co2e_kg', 0.0):,.0f} kg CO2e (location-based: board power under each job's load, "
                 "the host, the data centre's PUE and the region's grid intensity; sources in each option's "
                 "carbon block).")
    if total["unplanned_jobs"]:
        lines.append(f"{total['unplanned_jobs']} job(s) have no plan and are not in the totals (see below).")
    if total["jobs_missing_deadline"]:
        lines.append(f"{total['jobs_missing_deadline']} job(s) cannot meet their deadline; the totals count "
                     "their cheapest option.")
    alert = bool(s["over_budget"] or total["unplanned_jobs"])
    return Section("summary", "Summary", tuple(lines), alert=alert)


def jobs_section(p: Payload) -> Section:
    """Return one row per job: the plan the totals count, its two picks, and what is in the way."""
    rows = []
    for j in p["jobs"]:
        cheap, fast = j["cheapest"], j["fastest"]
        notes = job_notes(cheap, fast)
        if j["status"] == "failed" and j.get("error"):
            notes = [f"failed: {j['error']['field']}: {j['error']['reason']}"]
        runs = f"{j['runs']}" + (f" ({j['parallel']} at once)" if j["parallel"] > 1 else "")
        rows.append((
            j["team"], j["name"], runs,
            _where(j["planned"]), BASIS.get(j["planned_basis"], "-"), _hours(j["planned"]),
            _usd(j["planned"]), _kwh(j["planned"]), _co2e(j["planned"]),
            limit_text(cheap["limit"], cheap["limit_source"], money=False),
            _where(fast["plan"]), _hours(fast["plan"]), _usd(fast["plan"]),
            limit_text(fast["limit"], fast["limit_source"], money=True),
            "; ".join(notes) or "-",
        ))
    table = Table(("Team", "Job", "Runs", "Planned option", "Basis", "Wall-clock", "Cost", "kWh", "kg CO2e",
                   "Deadline", "Fastest within budget", "Wall-clock", "Cost", "Budget", "Notes"),
                  tuple(rows), numeric=frozenset({5, 6, 7, 8, 11, 12}))
    return Section("jobs", "Jobs", ("Cost and hours cover all of a job's runs. The planned option is the "
                                    "cheapest that meets the job's deadline.",), table)


def teams_section(p: Payload) -> Section:
    """Return the totals per team and overall."""
    rows = [(t["team"], str(t["jobs"]), str(t["runs"]), fmt_usd(t["cost_usd"]), _share(t["share_of_cost"]),
             f"{t['gpu_hours']:,.1f}", _kwh(t), _co2e(t), fmt_usd(t["fastest_cost_usd"]), str(t["unplanned_jobs"]),
             str(t["jobs_missing_deadline"])) for t in p["teams"]]
    t = p["total"]
    rows.append(("All teams", str(t["jobs"]), str(t["runs"]), fmt_usd(t["cost_usd"]), "100%",
                 f"{t['gpu_hours']:,.1f}", _kwh(t), _co2e(t), fmt_usd(t["fastest_cost_usd"]),
                 str(t["unplanned_jobs"]), str(t["jobs_missing_deadline"])))
    table = Table(("Team", "Jobs", "Runs", "Planned cost", "Share", "GPU-hours", "kWh", "kg CO2e",
                   "If fastest within budget", "No plan", "Miss deadline"), tuple(rows),
                  numeric=frozenset(range(1, 11)))
    return Section("teams", "Teams", (), table)


def sweeps_section(p: Payload) -> Section | None:
    """Return, per job of several runs, the trials at once on small GPUs against in turn on a large one."""
    rows, notes = [], []
    for j in p["jobs"]:
        c = j.get("sweep_comparison")
        if not c:
            continue
        seq, par = c["sequential"], c["parallel"]
        search = f"{j['sweep']['kind']} x {j['sweep']['parameters']}" if j.get("sweep") else "repeated runs"
        par_where = f"{par['instance_type']} ({par['trials_at_once']} x {par['gpu']})" if par else "none"
        seq_where = f"{seq['instance_type']} (1 x {seq['gpu']})" if seq else "none"
        rows.append((j["name"], str(c["trials"]), search, seq_where, _hours(seq), _usd(seq),
                     par_where, _hours(par), _usd(par),
                     f"{c['speedup']:.1f}x" if c["speedup"] else "-"))
        if c.get("advice"):
            notes.append(f"{j['name']}: {advice_message(c['advice'])}.")
        if c.get("sequential_reason") == SINGLE_GPU_DOMINATED:  # its runs need a machine of several GPUs
            notes.append(f"{j['name']}: a run on one GPU is slower and dearer than on a machine of several, so its "
                         "runs go on its planned machine, in turn or at once on as many machines (Jobs above).")
    if not rows:
        return None
    table = Table(("Job", "Trials", "Search", "In turn on one large GPU", "Wall-clock", "Cost",
                   "At once on small GPUs", "Wall-clock", "Cost", "Speed-up"), tuple(rows),
                  numeric=frozenset({1, 4, 5, 7, 8, 9}))
    lines = ("A grid suits at most about 3 parameters, with values on a log scale; random search suits more. "
             "Trials run one per GPU on the small-GPU machine, in waves; either way one machine is started "
             "once and held for every trial.",)
    return Section("sweeps", "Sweeps", lines, table, tuple(notes))


def ownership_section(p: Payload) -> Section | None:
    """Return buy-vs-rent for the cards the review's jobs run on."""
    a = p["onprem"]
    rows = []
    for r in p["buy_vs_rent"]:
        cloud = r["cloud"]
        if cloud:
            like = "same GPU" if r["same_gpu"] else f"as {cloud['gpu']}"
            ratio = r.get("cloud_hours_per_card_hour", 1.0)
            rent = f"{fmt_usd(cloud['price_per_gpu_hour_usd'])}/h ({cloud['instance_type']}, {like})"
            if abs(ratio - 1.0) > 1e-9:  # the same work takes the cloud GPU `ratio` hours per card-hour
                rent = (f"{fmt_usd(r['rent_per_card_hour_usd'])} per card-hour: {cloud['gpu']} at "
                        f"{fmt_usd(cloud['price_per_gpu_hour_usd'])}/h x {ratio:.2f} h ({cloud['instance_type']})")
        else:
            rent = "no comparable cloud GPU"
        even = fmt_hours(r["break_even_hours"]) if r["break_even_hours"] is not None else "never"
        years = f"{r['break_even_years']:.1f} y" if r["break_even_years"] is not None else "-"
        pays = ("yes" if r["pays_off_for_review"]
                else "in its lifetime" if r["pays_off_within_lifetime"] else "no")
        rows.append((r["gpu"], fmt_usd(r["purchase_usd"]), f"{fmt_usd(r['power_usd_per_hour'])}/h", rent,
                     even, years, fmt_hours(r["review_hours"]) if r["review_hours"] else "-", pays))
    if not rows:
        return None
    table = Table(("Card", "Card + host", "Power", "Renting instead", "Break-even", "At assumed use",
                   "Review's use", "Owning pays off"), tuple(rows), numeric=frozenset({1, 2, 4, 5, 6}))
    lines = (f"Owning: card + host ({fmt_usd(a['host_price_usd'])}) up front, plus power at "
             f"{fmt_usd(a['electricity_usd_per_kwh'])}/kWh; renting: the cheapest on-demand GPU-hour of the "
             f"same GPU, else the cheapest on-demand price of the same work (these jobs) on a cloud GPU that "
             f"holds them all: its GPU-hour price x its hours per card-hour. Break-even in years assumes "
             f"{a['utilisation']:.0%} use over a {a['lifetime_years']:g}-year life.",)
    return Section("ownership", "Buy or rent (capital spending, apart from the rental totals)", lines, table)


def _jobs(n: int) -> str:
    return f"{n} job" if n == 1 else f"{n} jobs"


def yearly_section(p: Payload) -> Section | None:
    """Return a year of the review's jobs on demand, on spot and on 1-year commitments."""
    y = p.get("yearly")
    if not y:
        return None
    missing = "without an option that meets its deadline"
    rows = [("On demand", fmt_usd(y["on_demand_usd"]), f"{_jobs(y['missing_on_demand_jobs'])} {missing}"),
            ("Spot", fmt_usd(y["spot_usd"]), f"{_jobs(y['missing_spot_jobs'])} {missing}"),
            ("Committed (1 year)", fmt_usd(y["committed_usd"]),
             f"{_jobs(len(y['uncommitted_jobs']))} at on-demand (no commitment rate)")]
    notes = tuple(f"{m['machines']} x {m['instance_type']} in {m['region']} at {fmt_usd(m['price_per_hour_usd'])}/h "
                  f"for 8,760 h: {fmt_usd(m['year_usd'])} (used {fmt_hours(m['machine_hours_used'])})"
                  + ("" if m.get("pays_off", True) else
                     f"; not bought: those jobs cost {fmt_usd(m['on_demand_usd'])} on demand")
                  for m in y["committed_machines"])
    table = Table(("Pricing", "A year of these jobs", "Not counted"), tuple(rows), numeric=frozenset({1}))
    return Section("yearly", "A year on demand, on spot and committed", (y["basis"] + ".",), table, notes)


def failures_section(p: Payload) -> Section | None:
    """Return the jobs that could not be reviewed and the field at fault."""
    rows = tuple((j["team"], j["name"], j["error"]["field"], j["error"]["reason"])
                 for j in p["jobs"] if j["status"] == "failed" and j.get("error"))
    if not rows:
        return None
    return Section("failures", "Jobs not reviewed", ("These jobs are left out of the totals.",),
                   Table(("Team", "Job", "Field", "Reason"), rows), alert=True)


def warnings_section(p: Payload) -> Section | None:
    """Return each job's memory need and the warnings its sizing raised; a warning about the catalog's prices
    (every job on the catalog carries it) once, above the table."""
    rows = []
    prices: dict[str, None] = {}  # each price warning once, in the order first met
    for j in p["jobs"]:
        for w in j.get("warnings", []):
            if w["code"] in PRICE_WARNING_CODES:
                prices[f"Prices ({w['code']}), for every job: {w['message']}."] = None
            else:
                rows.append((j["name"], fmt_bytes(j["gpu_memory_bytes"]), w["code"], w["message"]))
    if not rows and not prices:
        return None
    table = Table(("Job", "GPU memory", "Warning", "Detail"), tuple(rows)) if rows else None
    return Section("warnings", "Sizing warnings", tuple(prices), table)


def build_document(p: Payload) -> Document:
    """Lay a dumped review out as a document of sections."""
    catalog = p["catalog"]
    subtitle = f"Catalog {catalog['version']}, {prices_dated_words(catalog['prices_as_of'])}; providers: " + \
        ", ".join(p["providers"])
    parts: Sequence[Section | None] = (
        summary_section(p), jobs_section(p), teams_section(p), sweeps_section(p), ownership_section(p),
        yearly_section(p), failures_section(p), warnings_section(p))
    return Document(f"Budget review: {p['name']}", subtitle, tuple(s for s in parts if s is not None))
