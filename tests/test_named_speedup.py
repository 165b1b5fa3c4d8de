"""A named strategy's speed-up compares the same method on one GPU, never a full fine-tune's."""

from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.requirements import PerGpu


def _rows(parallelism: dict[str, object], *, update_interval: int = 1) -> dict[int, PerGpu]:
    cat = load_catalog()
    spec = {"model": {"preset": "llama-7b"},
            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                         "update_interval": update_interval, "parallelism": parallelism},
            "dataset": {"samples": 10_000}}
    rows = {}
    for n in (1, 8):
        _, job = load_job(spec)
        req = estimate_on_gpus(job, cat.gpus, slugs=["h100-sxm"], gpu_count=n)
        rows[n] = req.per_gpu[0]
    return rows


# ZeRO-3 at an update every 64 micro-batches: the optimizer step, which each of 8 ranks runs on an
# eighth of the weights, is too rare to matter (see the test below for every micro-batch).
@pytest.mark.parametrize(("parallelism", "update_interval"), [
    ({"adapter": {"kind": "qlora", "rank": 16}}, 1),
    ({"adapter": {"kind": "lora", "rank": 16}, "checkpointing": "full"}, 1),
    ({"data_parallel": "zero3"}, 64),
])
def test_speed_up_of_a_named_strategy_is_at_most_its_gpu_count_and_one_on_one_gpu(
        parallelism: dict[str, object], update_interval: int) -> None:
    rows = _rows(parallelism, update_interval=update_interval)
    assert rows[1].speedup_vs_one_gpu == pytest.approx(1.0)
    # QLoRA on 8 GPUs read 13.1x one: the one-GPU time was a full fine-tune's (backward twice the forward)
    assert 1.0 < rows[8].speedup_vs_one_gpu <= 8.0
    # and the speed-up agrees with the rows' own throughputs
    ratio = rows[8].throughput_samples_per_s / rows[1].throughput_samples_per_s
    assert rows[8].speedup_vs_one_gpu == pytest.approx(ratio, rel=1e-6)


def test_zero3_stepping_every_micro_batch_gains_more_than_its_gpus_from_the_sharded_optimizer_step() -> None:
    # Llama-7B at batch 1, an update every micro-batch: one GPU updates all 7B weights (about a third of
    # its step); each of 8 ZeRO-3 ranks updates an eighth, so 8 GPUs beat 8 x one.
    every, rare = _rows({"data_parallel": "zero3"}), _rows({"data_parallel": "zero3"}, update_interval=64)
    assert every[8].speedup_vs_one_gpu > 8.0
    assert every[1].iteration_ms > rare[1].iteration_ms  # the one-GPU step carries the whole update
    assert every[8].iteration_ms - rare[8].iteration_ms < (every[1].iteration_ms - rare[1].iteration_ms) / 4
