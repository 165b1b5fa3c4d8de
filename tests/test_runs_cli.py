"""`gpugauge runs add|list|remove`: the same store and checks as /v1/runs, bad input exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from service.cli import main


@pytest.fixture()
def spec_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUGAUGE_RUNS_FILE", str(tmp_path / "runs.json"))
    monkeypatch.delenv("REDIS_URL", raising=False)
    path = tmp_path / "job.json"
    path.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}))
    return path


def test_add_list_estimate_remove(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "add", str(spec_file), "--gpu", "v100-16gb", "--iteration-ms", "260",
                 "--peak-memory", "9GiB", "--source", "profiler", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert run["peak_memory_bytes"] == 9 * 2**30 and run["source"] == "profiler"
    assert main(["runs", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed["runs"]] == [run["id"]] and listed["corrections"][0]["runs"] == 1
    assert main(["estimate", str(spec_file), "--gpu", "v100-16gb", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["calibrated_by"] == {"runs": 1, "gpus": ["v100-16gb"]}
    assert abs(estimate["per_gpu"][0]["iteration_ms"] - 260) < 1e-6
    assert main(["runs", "remove", run["id"]]) == 0
    capsys.readouterr()
    assert main(["runs", "remove", run["id"]]) == 2
    assert "no run" in capsys.readouterr().err


def test_an_absurd_run_is_one_line_and_exit_2(spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "add", str(spec_file), "--gpu", "v100-16gb", "--iteration-ms", "250000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpugauge: iteration_ms:") and err.count("\n") == 1
    assert main(["runs", "add", str(spec_file), "--gpu", "v100-16gb", "--iteration-ms", "250",
                 "--peak-memory", "lots"]) == 2
    assert capsys.readouterr().err.startswith("gpugauge: --peak-memory:")
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"] == []


def test_a_run_beyond_the_correction_bounds_is_said_at_once_and_in_the_estimate(
        spec_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "add", str(spec_file), "--gpu", "v100-16gb", "--iteration-ms", "2000"]) == 0
    said = capsys.readouterr().out
    ratio = float(said.split("(")[1].split("x)")[0])
    assert ratio > 2 and "scaled at most 2x" in said and "calibration-bounded" in said
    assert main(["estimate", str(spec_file), "--gpu", "v100-16gb", "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert [w["code"] for w in estimate["warnings"]].count("calibration-bounded") == 1
    assert main(["runs", "list", "--json"]) == 0
    [correction] = json.loads(capsys.readouterr().out)["corrections"]
    assert correction["factor"] == 2.0 and abs(correction["measured"] - ratio) < 0.01  # what the bounds held back
    assert main(["runs", "add", str(spec_file), "--gpu", "a100-80gb", "--iteration-ms", "100"]) == 0
    out = capsys.readouterr().out
    near = float(out.split("(")[1].split("x)")[0])
    assert ("beyond" in out) == (not 0.5 <= near <= 2.0)  # within the bounds: no such line
