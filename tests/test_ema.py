"""`training.ema`: an exponential moving average of the trained weights (diffusers' --use_ema, timm's --model-ema,
Composer's EMA), one fp32 copy of each kept on the GPU, updated after every step, saved in every checkpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.checkpoint import checkpoint_bytes
from workers.sizing.estimate import estimate_on_gpus

SPEC: dict[str, Any] = {"model": {"preset": "resnet50"}, "dataset": {"samples": 100_000},
                        "training": {"batch_size": 64, "precision": "fp16-mixed", "optimizer": "momentum"}}


def _row(spec: dict[str, Any], gpu: str = "a10g", gpu_count: int = 1) -> Any:
    _, job = load_job(spec)
    return job, estimate_on_gpus(job, load_catalog().gpus, slugs=[gpu], gpu_count=gpu_count)


def test_the_average_is_one_fp32_copy_of_the_trained_weights_and_its_update_takes_time() -> None:
    job, plain = _row(SPEC)
    _, ema = _row({**SPEC, "training": {**SPEC["training"], "ema": True}})
    grown = ema.gpu_memory_breakdown.optimizer_state_bytes - plain.gpu_memory_breakdown.optimizer_state_bytes
    assert grown == job.model.parameters * 4
    assert ema.per_gpu[0].iteration_ms > plain.per_gpu[0].iteration_ms


def test_a_sharded_layout_shards_the_average_with_the_optimizer_state() -> None:
    spec = {"model": {"preset": "llama2-7b"}, "dataset": {"samples": 10_000},
            "training": {"batch_size": 1, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw",
                         "recompute": True, "parallelism": {"data_parallel": "zero3"}}}
    job, plain = _row(spec, "h100-sxm", 8)
    _, ema = _row({**spec, "training": {**spec["training"], "ema": True}}, "h100-sxm", 8)
    grown = ema.gpu_memory_breakdown.optimizer_state_bytes - plain.gpu_memory_breakdown.optimizer_state_bytes
    assert grown == pytest.approx(job.model.parameters * 4 / 8, rel=0.01)


def test_each_checkpoint_saves_the_average_too() -> None:
    assert checkpoint_bytes(parameters=1000, optimizer="adamw", ema=True) == \
        checkpoint_bytes(parameters=1000, optimizer="adamw") + 4000


def test_the_cli_takes_ema_and_the_api_refuses_a_non_boolean(capsys: pytest.CaptureFixture[str],
                                                              embedded_client: Any) -> None:
    from service.cli import main

    assert main(["estimate", "resnet50", "--batch", "64", "--ema", "--gpu", "l4", "--json"]) == 0
    with_ema = json.loads(capsys.readouterr().out)
    assert main(["estimate", "resnet50", "--batch", "64", "--gpu", "l4", "--json"]) == 0
    assert with_ema["gpu_memory_bytes"] > json.loads(capsys.readouterr().out)["gpu_memory_bytes"]
    bad = embedded_client.post("/v1/estimate", json={**SPEC, "training": {**SPEC["training"], "ema": "sometimes"},
                                                     "gpus": ["l4"]})
    assert bad.status_code == 422 and "training.ema" in bad.get_json()["errors"]
