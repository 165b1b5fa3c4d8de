"""`gpugauge report JOBS --format ... [--output FILE]`: the example review end to end, bad input in one line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from service.cli import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "budget-review.json"


def _example() -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    return raw


def _write(tmp_path: Path, review: dict[str, Any], name: str = "review.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(review), encoding="utf-8")
    return path


def test_the_example_review_writes_a_self_contained_html_page(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "review.html"
    assert main(["report", str(EXAMPLE), "--format", "html", "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 2
    assert "http://" not in page and "https://" not in page
    for job in _example()["jobs"]:
        assert job["name"] in page
    assert "wrote" in capsys.readouterr().err


def test_the_json_format_prints_the_review_with_a_plan_per_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(EXAMPLE), "--format", "json"]) == 0
    review = json.loads(capsys.readouterr().out)
    assert [j["name"] for j in review["jobs"]] == [j["name"] for j in _example()["jobs"]]
    assert all(j["status"] == "ok" and j["planned"] for j in review["jobs"])
    assert review["standing"]["budget_usd"] == _example()["budget_usd"]
    assert review["total"]["cost_usd"] == pytest.approx(sum(t["cost_usd"] for t in review["teams"]))
    sweep = next(j for j in review["jobs"] if j.get("sweep") and j["sweep"]["kind"] == "grid")
    assert sweep["sweep_comparison"]["sequential"] and sweep["sweep_comparison"]["advice"]["follows_advice"]


def test_csv_and_md_formats_print_to_standard_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(EXAMPLE), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert sum(r["row"] == "job" for r in rows) == len(_example()["jobs"])
    assert main(["report", str(EXAMPLE), "--format", "md"]) == 0
    page = capsys.readouterr().out
    assert page.startswith("# Budget review: ")
    # The bundled catalog's prices are undated: said once for the review, not once per job.
    assert page.count("undated-prices") == 1 and "Prices (undated-prices), for every job" in page


def test_a_bad_field_is_one_line_naming_it_and_exit_code_2(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    review = _example()
    review["jobs"][3]["spec"]["training"]["batch_size"] = 0
    assert main(["report", str(_write(tmp_path, review)), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "jobs[3].spec.training.batch_size" in lines[0]


def test_a_bad_human_unit_is_named_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    review = _example()
    review["jobs"][0]["deadline_hours"] = "next tuesday"
    assert main(["report", str(_write(tmp_path, review)), "--format", "md"]) == 2
    assert "jobs[0].deadline_hours" in capsys.readouterr().err


def test_human_units_in_a_yaml_review_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    review = _example()
    review["budget_usd"] = "$2.5k"
    review["jobs"][0]["deadline_hours"] = "3d"
    path = tmp_path / "review.yaml"
    path.write_text(yaml.safe_dump(review), encoding="utf-8")
    assert main(["report", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["budget_usd"] == 2500 and out["jobs"][0]["cheapest"]["limit"] == 72


def test_a_missing_or_broken_file_is_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nope.json")]) == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert main(["report", str(broken)]) == 2
    assert main(["report", str(_write(tmp_path, [1, 2], "list.json"))]) == 2  # type: ignore[arg-type]
    assert len(capsys.readouterr().err.strip().splitlines()) == 3


def test_the_progress_bar_counts_the_reviewed_jobs_on_a_terminal() -> None:
    from rich.console import Console

    from service.commands.report import progress_bar

    out = io.StringIO()
    with progress_bar(3, console=Console(file=out, force_terminal=True, width=100)) as on_progress:
        for done in (1, 2, 3):
            on_progress(done, 3)
    assert "reviewing jobs" in out.getvalue() and "3/3" in out.getvalue()


def test_no_progress_bar_is_drawn_when_standard_error_is_not_a_terminal() -> None:
    from rich.console import Console

    from service.commands.report import progress_bar

    out = io.StringIO()
    with progress_bar(2, console=Console(file=out, force_terminal=False)) as on_progress:
        on_progress(2, 2)
    assert out.getvalue() == ""
