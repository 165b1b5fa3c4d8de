"""Review reports: the JSON dump, CSV, Markdown and a self-contained, escaped HTML page with its charts."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from catalog.types import Provider
from service.reports import render_review
from service.reports.chart import chart_label, cost_time_svg
from service.reports.markdown import escape_markdown
from tests.review_builders import (
    FakeRanking,
    card,
    catalog,
    gpu_spec,
    instance,
    item,
    offer,
    option,
    per_gpu,
    recommendation,
)
from workers.review.budget import Review, Sweep, SweepKind
from workers.review.review import run_review
from workers.review.words import advice_message, pick_message
from workers.schemas.review_result import ReviewResultSchema

HOSTILE = '<script>alert("x")</script> & $5 | `tick` *'
FORMULA_TEAM = "=SUM(A1:A9)"
JOB_NAMES = ("resnet <b>50</b>", HOSTILE, "sweep $lr$ x wd", "broken")


def _payload(*, budget_usd: float = 100.0) -> dict[str, Any]:
    cheap = option("g4dn.xlarge", hours=10.0, price=0.5, gpu="t4")
    fast = option("p4d.1", hours=2.0, price=8.0, gpu="a100-40gb")
    mid = option("g5.xlarge", hours=5.0, price=1.0, gpu="a10g")
    four = option("g4dn.12xlarge", hours=3.0, price=3.0, gpu="t4", gpu_count=4)
    rows = (per_gpu("t4", hours=10.0), per_gpu("a100-40gb", hours=2.0))
    ranking = FakeRanking({
        JOB_NAMES[0]: recommendation([cheap, fast, mid], per_gpu_rows=rows),
        JOB_NAMES[1]: recommendation([cheap, mid], per_gpu_rows=rows),
        JOB_NAMES[2]: recommendation([cheap, fast, four], per_gpu_rows=rows),
        JOB_NAMES[3]: ZeroDivisionError("boom"),
    })
    review = Review(name="Q3 <plan>", budget_usd=budget_usd, items=(
        item(JOB_NAMES[0], team="vision", deadline_hours=12.0),
        item(JOB_NAMES[1], team=FORMULA_TEAM, budget_usd=1.0),
        item(JOB_NAMES[2], team="nlp | search", runs=12, parallel=4, sweep=Sweep(SweepKind.GRID, 2)),
        item(JOB_NAMES[3], team="nlp | search"),
    ))
    cat = catalog(gpus=[gpu_spec("t4", memory_gib=16, bandwidth_gb_per_s=320)],
                  instances=[instance(Provider.AWS, "g4dn.xlarge", "t4")],
                  offers=[offer(Provider.AWS, "g4dn.xlarge", 0.5)], cards=[card("t4", 2000.0, 70)])
    payload: dict[str, Any] = ReviewResultSchema().dump(run_review(review, cat, recommend_fn=ranking))
    return payload


@pytest.fixture(scope="module")
def payload() -> dict[str, Any]:
    return _payload()


@pytest.fixture(scope="module")
def page(payload: dict[str, Any]) -> str:
    return render_review(payload, "html")


def test_the_json_report_is_the_schema_dump_and_strict_json(payload: dict[str, Any]) -> None:
    text = render_review(payload, "json")
    assert json.loads(text) == payload
    assert "NaN" not in text and "Infinity" not in text
    assert [j["name"] for j in payload["jobs"]] == list(JOB_NAMES)


def test_the_json_report_explains_a_missing_pick_in_words(payload: dict[str, Any]) -> None:
    hostile = payload["jobs"][1]
    assert hostile["fastest"]["plan"] is None and hostile["fastest"]["reason"] == "budget"
    closest = hostile["fastest"]["closest"]
    assert closest["cost_usd"] > 1.0
    message = hostile["fastest"]["message"]
    assert "$1.00" in message and closest["instance_type"] in message
    broken = payload["jobs"][3]
    assert broken["status"] == "failed" and broken["error"]["field"] == "jobs[3]"
    assert "boom" not in json.dumps(broken)


def test_the_csv_report_has_a_row_per_job_per_team_and_the_total(payload: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(render_review(payload, "csv"))))
    kinds = [r["row"] for r in rows]
    assert kinds.count("job") == len(JOB_NAMES)
    assert kinds.count("team") == len(payload["teams"]) and kinds[-1] == "total"
    total = rows[-1]
    assert float(total["planned_cost_usd"]) == pytest.approx(payload["total"]["cost_usd"], abs=0.01)
    assert float(total["remaining_usd"]) == pytest.approx(payload["standing"]["remaining_usd"], abs=0.01)
    sweep = next(r for r in rows if r["job"] == JOB_NAMES[2])
    assert sweep["sweep_kind"] == "grid" and float(sweep["parallel_wall_hours"]) > 0


def test_csv_cells_a_spreadsheet_would_run_as_formulas_are_quoted(payload: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO(render_review(payload, "csv"))))
    teams = {r["team"] for r in rows}
    assert "'" + FORMULA_TEAM in teams and FORMULA_TEAM not in teams


def test_markdown_tables_keep_their_columns_whatever_the_names(payload: dict[str, Any]) -> None:
    text = render_review(payload, "markdown")
    jobs_table = text.split("## Jobs")[1].split("## ")[0]
    lines = [ln for ln in jobs_table.splitlines() if ln.startswith("|")]
    cells = [len(re.split(r"(?<!\\)\|", ln)) for ln in lines]
    assert len(lines) == 2 + len(JOB_NAMES) and len(set(cells)) == 1
    assert "<script>" not in text and "\\<script\\>" in text


def test_markdown_escaping_leaves_no_markup_or_html() -> None:
    escaped = escape_markdown("a|b *c* <i>d</i> $x$\nnext")
    assert "\n" not in escaped
    assert re.search(r"(?<!\\)[|*<>$]", escaped) is None


def test_the_html_page_is_self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    for fetching in ("<script", "<link", "<img", "<iframe", "src=", "@import", "url(http"):
        assert fetching not in page.lower()
    assert page.count("<svg") == 2
    assert page.count("<tr>") >= len(JOB_NAMES) + 1


def test_the_html_page_escapes_every_user_string(page: str) -> None:
    assert "<script>" not in page and "<b>50</b>" not in page and "Q3 <plan>" not in page
    assert "&lt;script&gt;" in page and "resnet &lt;b&gt;50&lt;/b&gt;" in page
    assert "Q3 &lt;plan&gt;" in page


def test_the_html_page_has_a_table_row_per_job(page: str) -> None:
    jobs = page.split('<section id="jobs">')[1].split("</section>")[0]
    body = jobs.split("<tbody>")[1].split("</tbody>")[0]
    assert body.count("<tr>") == len(JOB_NAMES)


def test_the_chart_draws_each_job_with_a_legend_entry(payload: dict[str, Any]) -> None:
    svg = cost_time_svg(payload)
    assert svg is not None and svg.startswith("<svg")
    assert "resnet &lt;b&gt;50&lt;/b&gt;" in svg  # legend text, escaped by matplotlib's SVG writer
    assert "sweep $lr$ x wd" in svg  # dollars shown as written, not as math


def test_a_review_with_no_costed_job_has_no_chart() -> None:
    assert cost_time_svg({"jobs": [{"name": "a", "team": "t", "front": []}]}) is None


def test_chart_labels_are_one_short_line_with_literal_dollars() -> None:
    label = chart_label("a $b$\nc" + "x" * 100)
    assert "\n" not in label and r"\$b\$" in label
    assert len(label.replace("\\$", "$")) <= 40


def test_a_pick_message_names_the_limit_and_what_comes_closest() -> None:
    closest = {"instance_type": "p4d", "provider": "aws", "region": "us-east-1", "pricing": "spot",
               "wall_hours": 30.0, "cost_usd": 900.0}
    deadline = pick_message({"plan": None, "reason": "deadline", "limit": 24.0, "limit_source": "job",
                             "closest": closest})
    assert "24.0 h" in deadline and "30.0 h" in deadline and "p4d" in deadline
    assert pick_message({"plan": {"x": 1}, "reason": ""}) == ""


def test_the_sweep_advice_follows_the_parameter_count() -> None:
    base = {"values_per_parameter": 3.0, "log_scale": True, "follows_advice": True}
    assert "log scale" in advice_message({**base, "parameters": 2, "kind": "grid", "advised": "grid"})
    assert "random" in advice_message({**base, "parameters": 5, "kind": "grid", "advised": "random"})


def test_an_over_budget_review_says_by_how_much() -> None:
    over = _payload(budget_usd=10.0)
    assert over["standing"]["over_budget"]
    gap = -over["standing"]["remaining_usd"]
    text = render_review(over, "markdown")
    assert "Over budget by" in text and f"{gap:,.2f}" in text


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no headless browser here (apt-get install chromium)")
def test_a_headless_browser_renders_the_table_and_the_chart(page: str, tmp_path: Path) -> None:
    path = tmp_path / "review.html"
    path.write_text(page, encoding="utf-8")
    shot = tmp_path / "review.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([str(CHROMIUM), *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    subprocess.run([str(CHROMIUM), *flags, "--window-size=1400,2000", f"--screenshot={shot}", path.as_uri()],
                   capture_output=True, timeout=60, check=True)
    assert dom.count("<svg") == 2 and "<path" in dom
    jobs_table = dom.split('<section id="jobs">')[1].split("</section>")[0]
    assert jobs_table.count("<tr>") == 1 + len(JOB_NAMES)
    assert all(html.escape(name, quote=False) in jobs_table for name in JOB_NAMES)
    assert "<script>" not in dom
    assert shot.stat().st_size > 20_000  # a blank page is a few kB


def test_the_csv_report_carries_the_yearly_comparison_per_job_team_machine_and_total() -> None:
    from catalog.types import Pricing

    od = option("g4dn.xlarge", hours=10.0, price=0.5, gpu="t4", pricing=Pricing.ON_DEMAND)
    spot = option("g4dn.xlarge", hours=11.0, price=0.2, gpu="t4", pricing=Pricing.SPOT)
    ranking = FakeRanking({"nightly": recommendation([od, spot]), "weekly": recommendation([od, spot])})
    review = Review(name="year", items=(item("nightly", team="vision", runs=365),
                                        item("weekly", team="nlp", runs=52)))
    cat = catalog(gpus=[gpu_spec("t4", memory_gib=16, bandwidth_gb_per_s=320)],
                  instances=[instance(Provider.AWS, "g4dn.xlarge", "t4")],
                  offers=[offer(Provider.AWS, "g4dn.xlarge", 0.5),
                          offer(Provider.AWS, "g4dn.xlarge", 0.2, pricing=Pricing.COMMITTED_1Y)])
    payload = ReviewResultSchema().dump(run_review(review, cat, recommend_fn=ranking))
    rows = list(csv.DictReader(io.StringIO(render_review(payload, "csv"))))
    jobs = {r["job"]: r for r in rows if r["row"] == "job"}
    assert float(jobs["nightly"]["year_on_demand_usd"]) == pytest.approx(365 * 5.0)
    assert float(jobs["nightly"]["year_spot_usd"]) == pytest.approx(365 * 2.2)
    assert jobs["nightly"]["year_committed_instance_type"] == "g4dn.xlarge"
    assert float(jobs["weekly"]["year_committed_machine_hours"]) == pytest.approx(520.0)
    teams = {r["team"]: r for r in rows if r["row"] == "team"}
    assert float(teams["nlp"]["year_on_demand_usd"]) == pytest.approx(52 * 5.0)
    (machine,) = [r for r in rows if r["row"] == "committed"]
    # 4,170 machine hours fit in one machine's year: one machine at $0.20/h for all 8,760 h ($1,752 against
    # $2,085 on demand: it pays off, so it is bought)
    assert (machine["year_committed_machines"], machine["year_committed_region"]) == ("1", "us-east-1")
    assert float(machine["year_committed_usd"]) == pytest.approx(0.2 * 8760)
    total = rows[-1]
    assert total["row"] == "total"
    y = payload["yearly"]
    assert float(total["year_on_demand_usd"]) == pytest.approx(417 * 5.0) == pytest.approx(y["on_demand_usd"])
    assert float(total["year_spot_usd"]) == pytest.approx(y["spot_usd"])
    assert float(total["year_committed_usd"]) == pytest.approx(0.2 * 8760) == pytest.approx(y["committed_usd"])
