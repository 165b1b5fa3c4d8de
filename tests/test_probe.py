"""`gpugauge probe`: a few measured steps of a user's PyTorch model, and the spec it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from catalog.gpus import gpus_by_slug
from service.cli import main
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements

torch = pytest.importorskip("torch", reason="the probe/measure extra (torch==2.13.0) is not installed")

MODELS = str(Path(__file__).with_name("probe_models.py"))


def test_probe_prints_phases_peak_and_kept_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--batch-size", "4",
                 "--optimizer", "sgd"])
    out = capsys.readouterr().out
    assert code == 0
    for phase in ("data", "forward", "loss", "backward", "update", "intrinsic peak of live tensors"):
        assert phase in out
    assert "kept for backward" in out


def test_probe_sees_the_adam_step_peak_of_a_weight_heavy_model() -> None:
    from service.probe.run import load_callable, probe

    result = probe(load_callable(f"{MODELS}:wide_mlp"), input_shape=(256,), batch_size=2, optimizer="adam")
    weights = (256 * 1024 + 1024 + 1024 * 8 + 8) * 4
    assert result.peak_phase == "optimizer_step"
    assert result.peak_bytes == pytest.approx(5 * weights, rel=0.03)  # w, grads, 2 states, foreach temp
    assert result.parameters == 256 * 1024 + 1024 + 1024 * 8 + 8
    assert result.multiply_adds == 256 * 1024 + 1024 * 8
    assert set(result.phase_ms) == {"data", "forward", "loss", "backward", "update"}


def test_probe_measures_the_fused_update_the_users_code_runs_and_the_spec_says_so(tmp_path: Path) -> None:
    from service.probe.run import load_callable, probe

    weights = (256 * 1024 + 1024 + 1024 * 8 + 8) * 4
    fused = probe(load_callable(f"{MODELS}:wide_mlp"), input_shape=(256,), batch_size=2, optimizer="adam",
                  optimizer_implementation="fused")
    assert fused.peak_bytes == pytest.approx(4 * weights, rel=0.03)  # w, grads, 2 states: no foreach copy
    spec_path = tmp_path / "fused.json"
    assert main(["probe", f"{MODELS}:wide_mlp", "--input-shape", "256", "--batch-size", "2", "--optimizer", "adamw",
                 "--optimizer-impl", "fused", "--spec", str(spec_path)]) == 0
    spec = json.loads(spec_path.read_text())
    assert spec["training"]["optimizer_implementation"] == "fused"
    load_job(spec)  # the schema takes it


def test_probe_spec_calibrates_the_estimate_to_the_measured_memory(tmp_path: Path) -> None:
    spec_path = tmp_path / "probed.yaml"
    code = main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--batch-size", "4",
                 "--spec", str(spec_path)])
    assert code == 0
    spec = yaml.safe_load(spec_path.read_text())
    measured = spec["training"]["measured_memory"]["tensor_memory_bytes"]
    assert "profile" not in spec["training"]  # a CPU run's time is no GPU's profile
    _, job = load_job(spec)
    gpus = gpus_by_slug()
    req = estimate_requirements(job, gpus=[gpus["t4"]], known_gpus=gpus)
    assert req.memory_calibrated
    memory = req.gpu_memory_breakdown
    assert memory.total_bytes - memory.framework_reserve_bytes == pytest.approx(measured, abs=4)


@pytest.mark.parametrize(("args", "message"), [
    (["nowhere.py:build"], "nowhere.py: no such file"),
    ([f"{MODELS}:missing"], "is not a callable"),
    ([f"{MODELS}:not_a_model"], "must return a torch.nn.Module"),
    ([f"{MODELS}:small_cnn", "--input-shape", "5,16,16"], "the training step failed"),
    ([f"{MODELS}:small_cnn", "--optimizer", "rmsprop", "--optimizer-impl", "fused"], "no fused RMSprop"),
])
def test_probe_reports_bad_input_in_one_line_with_exit_2(args: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    if "--input-shape" not in args:
        args = [*args, "--input-shape", "3,16,16"]
    assert main(["probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_probe_times_the_users_own_sample_loading_into_the_spec(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    from service.probe.loader_time import on_reference_core

    spec_path = tmp_path / "probed.json"
    code = main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--batch-size", "4",
                 "--sample", f"{MODELS}:one_sample", "--sample-count", "8", "--spec", str(spec_path)])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "pre-processing:" in out and "ms a sample here (median of 8;" in out
    written = json.loads(spec_path.read_text())["dataset"]["preprocess_ms_per_sample"]
    assert written > 0
    _, job = load_job(written_spec := json.loads(spec_path.read_text()))
    assert job.dataset.preprocess_ms_per_sample == written and written_spec["model"]["stats"]
    # on a CPU the score table knows, the time is scaled to the reference core (2,000); else kept as measured
    assert on_reference_core(2.0, "Intel(R) Xeon(R) Platinum 8175M CPU @ 2.50GHz") == (2.0 * 1950 / 2000, 1950)
    assert on_reference_core(2.0, "Some Unknown CPU") == (2.0, 0.0)


def test_a_failing_sample_function_is_one_line_naming_the_index(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--sample",
                 f"{MODELS}:failing_sample"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "failed on index 3: OSError: image file is truncated" in err
    assert main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--sample", f"{MODELS}:one_sample",
                 "--sample-count", "0"]) == 2


def test_probe_runs_rmsprop_and_writes_it_into_the_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec_path = tmp_path / "rmsprop.json"
    code = main(["probe", f"{MODELS}:small_cnn", "--input-shape", "3,16,16", "--batch-size", "4",
                 "--optimizer", "rmsprop", "--spec", str(spec_path)])
    capsys.readouterr()
    assert code == 0
    _, job = load_job(json.loads(spec_path.read_text()))
    assert job.training.optimizer.value == "rmsprop"
