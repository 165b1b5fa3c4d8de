"""The out-of-memory plan for language models: one row per change, the user's precision family, no convolutions."""

from __future__ import annotations

import json
import re
from pathlib import Path

from catalog.loader import load_catalog
from workers.ranking.owned_fit import same_cards_row
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.memory import usable_memory_bytes
from workers.sizing.requirements import Mitigation

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


def _llama7b(parallelism: dict[str, object] | None = None, *, batch_size: int = 4) -> dict[str, object]:
    training: dict[str, object] = {"batch_size": batch_size, "sequence_length": 2048, "precision": "bf16-mixed",
                                   "optimizer": "adamw"}
    if parallelism is not None:
        training["parallelism"] = parallelism
    return {"model": {"preset": "llama-7b"}, "dataset": {"samples": 10000}, "training": training}


def _plan_on(spec: dict[str, object], gpu: str, gpu_count: int) -> list[Mitigation]:
    _, job = load_job(spec)
    return list(estimate_on_gpus(job, load_catalog().gpus, slugs=[gpu], gpu_count=gpu_count).mitigations)


def test_a_named_zero2_that_does_not_fit_is_planned_from_zero2_on_its_own_gpus() -> None:
    spec = _llama7b({"data_parallel": "zero2", "checkpointing": "none"})
    plan = _plan_on(spec, "a100-40gb", 4)
    plain = _plan_on(_llama7b(), "a100-40gb", 4)
    by_kind = {m.kind: m for m in plan}
    assert {"smaller-batch", "checkpointing", "sharding", "offload", "adapters"} <= set(by_kind)
    # Every strategy row names the whole strategy: ZeRO-2 or stronger, never plain data parallel.
    for m in plan:
        if m.parallelism is not None:
            assert m.parallelism.data_parallel in ("zero2", "zero3"), m
            assert m.gpu_count is not None and m.gpu_count >= 4
            assert m.description.startswith("From ZeRO-2 over 4 x a100-40gb")
    assert by_kind["checkpointing"].parallelism is not None
    assert by_kind["checkpointing"].parallelism.data_parallel == "zero2"  # one change at a time
    assert by_kind["sharding"].parallelism is not None and by_kind["sharding"].parallelism.data_parallel == "zero3"
    assert by_kind["offload"].parallelism is not None and by_kind["offload"].parallelism.offload.optimizer
    # The smaller batch is worked out on the job's 4 GPUs in ZeRO-2: well under plain data parallel's.
    smaller = by_kind["smaller-batch"]
    plain_smaller = next(m for m in plain if m.kind == "smaller-batch")
    assert smaller.gpu_count == 4 and "ZeRO-2" in smaller.description
    assert smaller.gpu_memory_bytes < plain_smaller.gpu_memory_bytes / 2
    usable = usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == "a100-40gb"))
    assert any(m.gpu_memory_bytes <= usable for m in plan if m.kind in ("sharding", "offload"))
    assert not any("fp16" in m.description or "convolution" in m.description for m in plan)


def test_a_named_strategy_that_already_shards_and_checkpoints_is_not_told_to_do_it_again() -> None:
    spec = _llama7b({"data_parallel": "zero3", "checkpointing": "full"}, batch_size=8)
    plan = _plan_on(spec, "t4", 2)
    kinds = [m.kind for m in plan]
    assert "checkpointing" not in kinds and "recompute" not in kinds
    assert not any(m.kind == "sharding" and m.gpu_count == 2 for m in plan)  # nothing stronger on 2 GPUs
    assert all(m.parallelism.data_parallel == "zero3" for m in plan if m.parallelism is not None)


def test_a_plain_job_on_several_gpus_gets_the_strategy_steps_on_those_gpus() -> None:
    plan = _plan_on(_llama7b(), "a100-80gb", 4)
    sharding = [m for m in plan if m.kind == "sharding" and m.parallelism is not None]
    assert sharding and all(m.gpu_count is not None and m.gpu_count >= 4 for m in sharding)
    assert any(m.kind == "offload" for m in plan)


def test_a_plan_rows_strategy_loads_as_the_specs_parallelism_and_fits_as_the_row_says() -> None:
    from workers.schemas.results import MitigationSchema

    spec = _llama7b({"data_parallel": "zero2", "checkpointing": "none"})
    plan = _plan_on(spec, "a100-40gb", 4)
    rows = MitigationSchema(many=True).dump(plan)
    assert all(row["parallelism"] is None for row in rows if row["kind"] in ("smaller-batch", "change-network"))
    usable = usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == "a100-40gb"))
    checked = 0
    for row in rows:
        if row["parallelism"] is None:
            continue
        again = {**spec, "training": {**spec["training"], "parallelism": row["parallelism"]}}  # type: ignore[dict-item]
        _, job = load_job(again)
        per_gpu = estimate_on_gpus(job, load_catalog().gpus, slugs=["a100-40gb"], gpu_count=row["gpu_count"]).per_gpu[0]
        assert per_gpu.fits == (row["gpu_memory_bytes"] <= usable), row["kind"]
        checked += 1
    assert checked >= 3


def test_a_step_times_only_the_layout_it_keeps_and_finds_what_timing_every_layout_found() -> None:
    # The plain path: every layout sized and timed with estimate_named in turn, the first that fits kept.
    from itertools import tee

    from workers.sizing.memory import fits
    from workers.sizing.strategies import oom_steps
    from workers.sizing.strategies.named import estimate_named

    catalog = load_catalog()
    specs = [(json.loads((EXAMPLES / "gpt2-pretrain.json").read_text()), "t4"),
             ({"model": {"preset": "llama-7b"}, "dataset": {"samples": 10000},
               "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                            "optimizer": "adamw"}}, "a100-80gb")]
    for spec, slug in specs:
        _, job = load_job(spec)
        gpu = catalog.gpu(slug)
        start = oom_steps.plain_start(job, gpu_count=1)
        base = oom_steps.layout_per_sample_ms(job, start, gpu, profile_gpu=None)
        steps = oom_steps._Steps(job, gpu, start, base_ms_per_sample=base, profile_gpu=None)
        for layouts in (oom_steps._sharding_layouts(start), oom_steps._offload_layouts(start), iter(())):
            ours, plain = tee(layouts)
            last = None
            for layout in plain:
                named = estimate_named(job, layout, gpu=gpu)
                assert named.time is not None
                factor = named.time.iteration_ms / max(named.time.samples_per_iteration, 1) / base
                last = (layout, named.memory.total_bytes, factor)
                if fits(named.memory.total_bytes, gpu):
                    break
            assert steps.first_fit(ours) == last


def test_a_transformers_spread_out_memory_is_said_to_be_spread_over_its_blocks() -> None:
    # Llama 7B's largest three layers (embedding, head, one qkv) hold 5% of its parameters: naming them alone
    # read as if they were the problem; the step says the rest is spread over the 32 blocks, 3.0% each
    state = _plan({"model": {"preset": "llama-7b"}, "dataset": {"samples": 10000},
                   "training": {"batch_size": 1, "sequence_length": 512, "precision": "bf16-mixed",
                                "optimizer": "adamw"}}, "a100-80gb")
    [by_state] = [m.description for m in state if m.kind == "change-network"]
    assert "of the parameters only; the rest is spread over its 32 blocks, 3.0% each" in by_state
    activations = _plan({"model": {"preset": "bert-base"}, "dataset": {"samples": 10000},
                         "training": {"batch_size": 32, "sequence_length": 128}}, "gtx-1050-ti")
    [by_activations] = [m.description for m in activations if m.kind == "change-network"]
    assert "of the activation memory only, the rest spread over its 12 blocks alike" in by_activations
    # where the named layers hold a quarter or more, nothing is said to be spread: GPT-2's 50,257 x 768 embedding
    gpt2 = _plan({"model": {"preset": "gpt2"}, "training": {"batch_size": 1, "sequence_length": 64,
                                                             "optimizer": "adam"}}, "gtx-1060-3gb")
    [named] = [m.description for m in gpt2 if m.kind == "change-network"]
    assert "Layers wte," in named and "hold 35% of the parameters (" in named and "spread" not in named


def test_a_qlora_job_is_not_told_to_shard_or_offload_its_few_megabytes_of_adapter_state() -> None:
    # QLoRA Llama 3 70B on one A100 80GB: ZeRO-1 over 2 GPUs or optimizer offload "fit" only through the full
    # checkpointing they also bring (48.5 GiB, as full checkpointing alone); the rows left are the ones whose own
    # change lowers the peak: ZeRO-3 shards the 4-bit base.
    spec = {"model": {"preset": "llama3-70b"}, "dataset": {"samples": 10000},
            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                         "parallelism": {"adapter": {"kind": "qlora"}}}}
    plan = _plan(spec, "a100-80gb")
    kinds = [m.kind for m in plan]
    assert "offload" not in kinds
    [sharding] = [m for m in plan if m.kind == "sharding"]
    assert sharding.parallelism is not None and sharding.parallelism.data_parallel.value == "zero3"
    full = {**spec, "training": {**spec["training"],
                                 "parallelism": {"adapter": {"kind": "qlora"}, "checkpointing": "full"}}}
    _, job = load_job(full)
    alone = estimate_on_gpus(job, load_catalog().gpus, slugs=["a100-80gb"]).gpu_memory_bytes
    assert sharding.gpu_memory_bytes < 0.98 * alone  # its own saving, beyond the checkpointing it brings


def test_a_70b_full_fine_tune_on_8_x_80gb_is_offered_zero3_with_the_optimizer_offloaded() -> None:
    # ZeRO-3 alone leaves 16 bytes a parameter / 8 (about 200 GiB) per A100; ZeRO-2 with the optimizer offloaded
    # keeps a whole 16-bit copy of the weights (140 GB) on each. DeepSpeed's ZeRO-3 + optimizer offload fits: the
    # offload row was ZeRO-2's until 2026-12-06 (150.6 GiB, "still exceeds").
    spec = {"model": {"preset": "llama2-70b"}, "dataset": {"samples": 10000},
            "training": {"batch_size": 1, "sequence_length": 4096, "precision": "bf16-mixed"}}
    by_kind = {m.kind: m for m in _plan_on(spec, "a100-80gb", 8)}
    offload, sharding = by_kind["offload"], by_kind["sharding"]
    assert offload.parallelism is not None and offload.parallelism.data_parallel.value == "zero3"
    assert offload.parallelism.offload.optimizer and offload.gpu_count == 8
    assert offload.gpu_memory_bytes < 72 * 2**30 < sharding.gpu_memory_bytes  # fits the 72 GiB usable; ZeRO-3 not
    assert "fits the 72.0 GiB usable" in offload.description and offload.time_factor > 1.5  # the host's Adam is slow
    # the host memory the offload needs is said: 16 bytes a parameter of 69B, about 1 TiB on the machine of 8
    held = float(re.search(r"on the host: ([0-9,.]+) GiB on the host of its 8 GPUs", offload.description)
                 .group(1).replace(",", ""))  # type: ignore[union-attr]
    assert 0.95 < held * 2**30 / (16 * 69e9) < 1.1


def test_a_lora_job_whose_16_bit_base_does_not_fit_is_offered_the_same_adapters_on_a_4_bit_base() -> None:
    # "does llama 2 13b with lora fit on a 4090": the bf16 base alone is 24.3 GiB; QLoRA holds it in NF4
    spec = {"model": {"preset": "llama2-13b"}, "dataset": {"samples": 10000},
            "training": {"batch_size": 8, "sequence_length": 1024, "precision": "bf16-mixed",
                         "parallelism": {"adapter": {"kind": "lora", "rank": 16}, "checkpointing": "full"}}}
    plan = _plan(spec, "rtx-4090")
    usable = usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == "rtx-4090"))
    [quantized] = [m for m in plan if m.kind == "adapters"]
    assert quantized.parallelism is not None and quantized.parallelism.adapter is not None
    assert quantized.parallelism.adapter.kind.value == "qlora" and quantized.parallelism.adapter.rank == 16
    assert quantized.gpu_count == 1 and quantized.gpu_memory_bytes <= usable
    assert "keep the LoRA adapters (rank 16" in quantized.description
    # it keeps the method, so "does it fit on my 4090" and an owned card's warning name it (a full fine-tune's
    # adapters row does not: that changes what trains)
    assert same_cards_row(plan, gpu="rtx-4090", count=1, usable=usable) == quantized
    full = {**spec, "training": {k: v for k, v in spec["training"].items() if k != "parallelism"}}
    full_plan = _plan(full, "rtx-4090")
    assert any(m.kind == "adapters" for m in full_plan)
    assert all(m.kind != "adapters" for m in filter(None, [same_cards_row(full_plan, gpu="rtx-4090", count=1,
                                                                          usable=usable)]))
    # a QLoRA job, and a LoRA job that fits as given, get no such row
    qlora = {**spec, "training": {**spec["training"], "parallelism": {"adapter": {"kind": "qlora"}}}}
    assert not [m for m in _plan(qlora, "rtx-4090") if m.kind == "adapters"]
    assert not _plan(spec, "h100-sxm")


def test_the_4_bit_base_row_runs_micro_batches_where_the_batch_as_given_does_not_fit() -> None:
    # Llama 3 8B with LoRA on an RTX 3080 (9.0 GiB usable): QLoRA at batch 8 x 1,024 is 11.5 GiB; in micro-batches
    # of 2 with 4 accumulation steps it fits, and the team's card can run it (owned-cards-need-changes said no way)
    spec = {"model": {"preset": "llama3-8b"}, "dataset": {"samples": 20000},
            "training": {"batch_size": 8, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw",
                         "loss": "fused_linear_cross_entropy",  # TRL's chunked loss, as Slack sizes the fine-tune
                         "parallelism": {"adapter": {"kind": "lora"}, "checkpointing": "full"}}}
    plan = _plan(spec, "rtx-3080")
    usable = usable_memory_bytes(next(g for g in load_catalog().gpus if g.slug == "rtx-3080"))
    [row] = [m for m in plan if m.kind == "adapters"]
    assert row.gpu_memory_bytes <= usable and row.batch_size is not None and row.batch_size < 8
    assert row.update_interval == 8 // row.batch_size
    assert "accumulation steps (the effective batch kept)" in row.description
    assert same_cards_row(plan, gpu="rtx-3080", count=1, usable=usable) == row


def test_qlora_70b_on_two_24gb_cards_is_told_fsdps_cpu_offload_as_answer_ais_fsdp_qlora_runs_it() -> None:
    # AnswerDotAI/fsdp_qlora README ("Finetune Llama-2 70B on Dual 24GB GPUs"): batch 2, context 2048, qlora,
    # gradient checkpointing, --use_cpu_offload true; its 4 x A100 40GB example (batch 2 x 512) runs without offload.
    # The plan said "4 x rtx-4090" only: the offload step moved the optimizer state, never the weights.
    def spec(seq: int, offload: bool = False) -> dict[str, object]:
        parallelism: dict[str, object] = {"data_parallel": "fsdp", "adapter": {"kind": "qlora"},
                                          "checkpointing": "full"}
        if offload:
            parallelism["offload"] = {"optimizer": True, "parameters": True}
        return {"model": {"preset": "llama2-70b"}, "dataset": {"samples": 10000},
                "training": {"from_pretrained": True, "batch_size": 2, "sequence_length": seq,
                             "precision": "bf16-mixed", "parallelism": parallelism}}

    def row(body: dict[str, object], gpu: str, count: int) -> object:
        _, job = load_job(body)
        return estimate_on_gpus(job, load_catalog().gpus, slugs=[gpu], gpu_count=count).per_gpu[0]

    assert not row(spec(2048), "rtx-4090", 2).fits and row(spec(2048, offload=True), "rtx-4090", 2).fits
    assert row(spec(512), "a100-40gb", 4).fits
    [offload] = [m for m in _plan_on(spec(2048), "rtx-4090", 2) if m.kind == "offload"]
    assert offload.gpu_count == 2 and offload.parallelism is not None  # the user's own two cards
    assert offload.parallelism.offload.parameters and "offload_params=True" in offload.description
    # where sharding with checkpointing holds the job on the same cards, the weights' trips over PCIe are no row
    qlora = {"model": {"preset": "llama3-70b"}, "dataset": {"samples": 10000},
             "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                          "parallelism": {"adapter": {"kind": "qlora"}}}}
    assert "offload" not in [m.kind for m in _plan(qlora, "a100-80gb")]
