"""Whether the data set is held in host memory (dataset.in_memory): the CLI's flags and what a rejection says."""

from __future__ import annotations

import json

import pytest

from service.cli import main

# ViT-B/16 over ImageNet's 147 GB: held in memory it needs more host memory than a g5 has
ARGS = ["vit-b16", "--batch", "256", "--precision", "bf16-mixed", "--optimizer", "adamw", "--samples", "1.28M",
        "--data-size", "147GB", "--epochs", "300", "--max-gpus", "8", "--json", "--limit", "3"]


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["recommend", *ARGS, *extra]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def _g5_reason(result: dict[str, object]) -> str | None:
    rejected = result.get("rejected") or []
    assert isinstance(rejected, list)
    return next((r["reason"] for r in rejected if "g5.xlarge" in r["instance_type"].split(", ")), None)


def test_held_in_memory_the_data_set_counts_and_the_rejection_names_the_way_out(
        capsys: pytest.CaptureFixture[str]) -> None:
    held = _run(capsys)
    same = _run(capsys, "--in-memory")
    streamed = _run(capsys, "--streamed")
    need = held["requirements"]["host_memory_bytes"]  # type: ignore[index]
    assert same["requirements"]["host_memory_bytes"] == need  # type: ignore[index]
    # streamed: the 147 GB (136.9 GiB) no longer counts
    assert need - streamed["requirements"]["host_memory_bytes"] == 147_000_000_000  # type: ignore[index]
    reason = _g5_reason(held)
    assert reason is not None and "data set loaded into memory" in reason
    assert "dataset.in_memory: false, CLI --streamed" in reason
    assert _g5_reason(streamed) is None  # a g5 is short of nothing once the data set streams


def test_the_two_flags_cannot_both_be_given(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["recommend", *ARGS, "--in-memory", "--streamed"])
    assert exit_.value.code == 2 and "--streamed" in capsys.readouterr().err
