"""RMSprop (torch.optim.RMSprop's defaults): one fp32 state, one fp32 copy in the foreach update.

The rows were written from torch's source (torch/optim/rmsprop.py) and then checked against three steps the
harness measured (validation/measure/, workers/accuracy/data/step_measurements.json).
"""

from __future__ import annotations

from typing import Any

import pytest

from service.cli import main
from validation.step_compare import compare_step_record, load_step_records
from workers.schemas.specs import load_job
from workers.sizing.memory import step_peak
from workers.sizing.spec import Optimizer
from workers.slack.grammar import parse_command


def _mlp(optimizer: str, **training: Any) -> Any:
    _, job = load_job({"model": {"preset": "mlp-mnist"}, "dataset": {"samples": 60000},
                       "training": {"batch_size": 64, "optimizer": optimizer, **training}})
    return job


@pytest.mark.parametrize("case", ["here-mlp-784-b64-fp32-rmsprop", "here-vgg16-64-b4-fp32-rmsprop"])
def test_measured_rmsprop_steps_peak_in_the_update_as_predicted(case: str) -> None:
    record = next(r for r in load_step_records() if r["id"] == case)
    row = compare_step_record(record)
    print(f"\n{case}: measured {row.measured_bytes / 2**20:.1f} MiB, predicted {row.predicted_bytes / 2**20:.1f} MiB, "
          f"{row.error:+.1%}")
    assert record["measured"]["peak_phase"] == row.predicted_phase == "optimizer_step"
    assert abs(row.error) < 0.02  # the state and the copy are the whole difference from SGD at this moment


def test_rmsprop_keeps_one_state_and_one_copy_between_momentum_and_adam() -> None:
    trainable = step_peak(_mlp("sgd").model, _mlp("sgd").training).breakdown.parameters_bytes // 4
    states = {}
    for name in ("momentum", "rmsprop", "adam"):
        job = _mlp(name)
        peak = step_peak(job.model, job.training)
        assert peak.phase.value == ("backward" if name == "momentum" else "optimizer_step")
        states[name] = peak.breakdown.optimizer_state_bytes
    assert states["momentum"] == 4 * trainable  # updates in place: the buffer alone, held all step
    assert states["rmsprop"] == 8 * trainable  # square_avg and the foreach sqrt copy
    assert states["adam"] == 12 * trainable  # two moments and the copy
    per_tensor = _mlp("rmsprop", optimizer_implementation="per_tensor")
    loop = step_peak(per_tensor.model, per_tensor.training).breakdown.optimizer_state_bytes
    assert 4 * trainable < loop < 8 * trainable  # one copy of the largest tensor only
    assert job.training.optimizer is Optimizer.ADAM and _mlp("rmsprop").training.optimizer is Optimizer.RMSPROP


def test_rmsprop_is_said_in_the_cli_and_slack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "mlp", "--batch", "64", "--optimizer", "rmsprop", "--gpu", "t4", "--json"]) == 0
    assert '"optimizer_state"' in capsys.readouterr().out
    command = parse_command("mlp mnist optimizer=rmsprop", presets={"mlp", "mlp-mnist"}, gpus=("t4",))
    assert command.spec["training"]["optimizer"] == "rmsprop"
    with pytest.raises(SystemExit) as exit_:
        main(["estimate", "mlp", "--batch", "64", "--optimizer", "adagrad"])
    assert exit_.value.code == 2
