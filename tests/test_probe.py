"""`gpugauge probe`: a few measured steps of a user's PyTorch model, and the spec it writes."""

from __future__ import annotations

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
])
def test_probe_reports_bad_input_in_one_line_with_exit_2(args: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    if "--input-shape" not in args:
        args = [*args, "--input-shape", "3,16,16"]
    assert main(["probe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
