"""The out-of-memory plan for language models: one row per change, the user's precision family, no convolutions."""

from __future__ import annotations

import json
from pathlib import Path

from catalog.loader import load_catalog
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.memory import usable_memory_bytes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _plan(spec: dict[str, object], gpu: str) -> list[object]:
    _, job = load_job(spec)
    catalog = load_catalog()
    return list(estimate_on_gpus(job, catalog.gpus, slugs=[gpu]).mitigations)


def test_checkpointing_is_one_row_not_recompute_and_checkpointing_again() -> None:
    spec = json.loads((EXAMPLES / "spot-pretrain-2d.json").read_text())
    plan = _plan(spec, "t4")
    kinds = [m.kind for m in plan]
    assert kinds.count("checkpointing") == 1 and "recompute" not in kinds
    assert not any("convolution" in m.description for m in plan)
    assert not any("fp16" in m.description for m in plan)  # a bf16 job keeps its precision family


def test_a_full_fine_tune_of_llama_7b_on_one_80gb_card_gets_sharding_offload_and_adapters_that_fit() -> None:
    spec = {"model": {"preset": "llama-7b"}, "dataset": {"samples": 10000},
            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw"}}
    plan = _plan(spec, "a100-80gb")
    by_kind = {m.kind: m for m in plan}
    assert {"checkpointing", "sharding", "offload", "adapters"} <= set(by_kind)
    usable = usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == "a100-80gb"))
    zero3 = next(m for m in plan if m.kind == "sharding" and m.parallelism is not None)
    assert zero3.gpu_count is not None and 2 <= zero3.gpu_count <= 8 and zero3.gpu_memory_bytes <= usable
    assert by_kind["adapters"].gpu_memory_bytes <= usable and "LoRA" in by_kind["adapters"].description
    # checkpointing alone cannot hold 16 bytes per parameter of a 6.7e9-parameter model
    assert by_kind["checkpointing"].gpu_memory_bytes > usable
