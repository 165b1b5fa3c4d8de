"""A named strategy's speed-up compares the same method on one GPU, never a full fine-tune's."""

from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus


@pytest.mark.parametrize("parallelism", [
    {"adapter": {"kind": "qlora", "rank": 16}},
    {"adapter": {"kind": "lora", "rank": 16}, "checkpointing": "full"},
    {"data_parallel": "zero3"},
])
def test_speed_up_of_a_named_strategy_is_at_most_its_gpu_count_and_one_on_one_gpu(
        parallelism: dict[str, object]) -> None:
    cat = load_catalog()
    spec = {"model": {"preset": "llama-7b"},
            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                         "parallelism": parallelism},
            "dataset": {"samples": 10_000}}
    rows = {}
    for n in (1, 8):
        _, job = load_job(spec)
        req = estimate_on_gpus(job, cat.gpus, slugs=["h100-sxm"], gpu_count=n)
        rows[n] = req.per_gpu[0]
    assert rows[1].speedup_vs_one_gpu == pytest.approx(1.0)
    # QLoRA on 8 GPUs read 13.1x one: the one-GPU time was a full fine-tune's (backward twice the forward)
    assert 1.0 < rows[8].speedup_vs_one_gpu <= 8.0
    # and the speed-up agrees with the rows' own throughputs
    ratio = rows[8].throughput_samples_per_s / rows[1].throughput_samples_per_s
    assert rows[8].speedup_vs_one_gpu == pytest.approx(ratio, rel=1e-6)
