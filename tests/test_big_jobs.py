"""Jobs bigger than one GPU, as a user brings them: each gets a sensible ranked answer (issue 12 scenarios).

Each scenario asserts properties of the top answer (it fits, its strategy family, GPU class, machine
count), not exact figures, on the shipped catalog.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from workers.ranking.recommendation import Recommendation
from workers.schemas.specs import load_job
from workers.sizing.errors import SpecError
from workers.sizing.machine import HOST_BASE_BYTES, HOST_PER_GPU_PROCESS_BYTES, loader_host_bytes
from workers.sizing.memory import fits, usable_memory_bytes
from workers.sizing.overheads import USABLE_MEMORY_FRACTION
from workers.sizing.strategies.checkpointing import recomputed_forward_share
from workers.sizing.strategies.footprint import searched_memory
from workers.sizing.strategies.search import best_layout, candidate_layouts
from workers.sizing.strategies.types import Checkpointing

GIB = 2**30
SHARDED = {"zero1", "zero2", "zero3", "hybrid_shard"}
CLOUD_ON_DEMAND = {"providers": ["aws", "gcp"], "pricing": ["on_demand"]}
LLAMA_7B = {"preset": "llama-7b"}
BF16_ADAMW = {"precision": "bf16-mixed", "optimizer": "adamw"}




def _fits_its_cards(rec: Recommendation, cat: Catalog) -> None:
    for o in rec.options:
        assert o.fits and o.parallelism is not None
        assert o.parallelism.gpu_memory_per_gpu_bytes <= usable_memory_bytes(cat.gpu(o.gpu))
        assert o.training_hours > 0 and o.training_cost_usd > 0


def test_full_fine_tune_of_llama_7b_gets_several_data_centre_gpus_sharded_with_a_time_and_a_price(
        shipped: Catalog) -> None:
    spec = {"model": LLAMA_7B, "training": {"batch_size": 4, "sequence_length": 2048, **BF16_ADAMW},
            "dataset": {"samples": 50_000}, "constraints": CLOUD_ON_DEMAND}
    rec = recommend_spec(spec, shipped)
    assert rec.options, "a full fine-tune of Llama-7B gets a ranked answer"
    _fits_its_cards(rec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None
    assert top.gpu_count * top.nodes >= 2
    # 8 x A100 40GB with ZeRO-3 since the 8-GPU B200 boards pay the NVSwitch boot as p4d's do (2026-12-03);
    # 8 x B200 before: a 40 or 80 GB card, never a consumer one
    assert top.gpu_memory_bytes >= 40 * GIB
    assert top.parallelism.data_parallel in SHARDED or top.parallelism.offload_optimizer
    assert top.parallelism.adapter == "none"  # the method is not changed behind the user's back
    assert "ZeRO" in top.why or "offload" in top.why
    # The plain-data-parallel figure stays the requirement as given: far above any card.
    assert rec.requirements.gpu_memory_bytes > USABLE_MEMORY_FRACTION * 141 * GIB  # no H200 holds it with headroom


def test_lora_on_llama_7b_fits_a_single_24_to_48gb_card_at_about_the_cheapest_cost(shipped: Catalog) -> None:
    spec = {"model": LLAMA_7B, "training": {"batch_size": 4, "sequence_length": 2048, **BF16_ADAMW,
                                            "parallelism": {"adapter": {"kind": "lora", "rank": 16}}},
            "dataset": {"samples": 20_000}, "constraints": CLOUD_ON_DEMAND, "objective": "cost", "limit": 100}
    rec = recommend_spec(spec, shipped)
    _fits_its_cards(rec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None and top.parallelism.adapter == "lora"
    assert top.parallelism.data_parallel == "plain"  # a 16 GB base needs no sharding
    # The cheapest option is one 24-48 GB card: an 8 x B200 machine finishes 40 times sooner at 36
    # times the hourly price, but its boot, environment and staging are billed too (runplan.py).
    assert top.gpu_count * top.nodes == 1
    assert 24 * GIB <= top.gpu_memory_bytes <= 48 * GIB
    assert top.start_up is not None and top.billed_hours > 0


def test_qlora_on_llama_7b_needs_a_single_16_to_24gb_card(shipped: Catalog) -> None:
    spec = {"model": LLAMA_7B, "training": {"batch_size": 2, "sequence_length": 1024, **BF16_ADAMW,
                                            "parallelism": {"adapter": {"kind": "qlora", "rank": 16}}},
            "dataset": {"samples": 10_000}, "constraints": CLOUD_ON_DEMAND, "objective": "cost", "limit": 200}
    rec = recommend_spec(spec, shipped)
    _fits_its_cards(rec, shipped)
    # What the job needs, sized as the QLoRA it names (not plain data parallel): one 16-24 GB card.
    l4 = next(g for g in shipped.gpus if g.slug == "l4")
    need = rec.requirements.gpu_memory_bytes
    assert need <= usable_memory_bytes(l4), need / GIB  # fits a 24 GB card with the headroom
    assert need > 4 * GIB  # 4-bit weights of 6.7e9 parameters and the activations are counted
    top = rec.options[0]
    assert top.parallelism is not None and top.parallelism.adapter == "qlora"
    assert top.gpu_count * top.nodes == 1
    # Every single 16-24 GB card in scope holds it and ranks; the cheapest run is an L40S (48 GB) only
    # because it is 3.6x an L4's speed for 2.3x its price (both billed the same start-up).
    small = [o for o in rec.options if o.gpu_count * o.nodes == 1 and 16 * GIB <= o.gpu_memory_bytes <= 24 * GIB]
    assert {o.gpu for o in small} >= {"l4", "a10g"}
    assert all(o.parallelism is not None and o.parallelism.gpu_memory_per_gpu_bytes <= usable_memory_bytes(l4)
               for o in small)


def test_lora_on_a_70b_model_gets_several_80gb_class_gpus(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama2-70b"},
            "training": {"batch_size": 1, "sequence_length": 4096, **BF16_ADAMW,
                         "parallelism": {"adapter": {"kind": "lora", "rank": 16}}},
            "dataset": {"samples": 10_000}, "constraints": CLOUD_ON_DEMAND}
    rec = recommend_spec(spec, shipped)
    _fits_its_cards(rec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None and top.parallelism.adapter == "lora"
    assert top.gpu_count * top.nodes >= 2
    assert top.gpu_memory_bytes >= 80 * GIB
    # 138 GB of frozen bf16 weights alone: split over the GPUs, by sharding or tensor parallel.
    assert top.parallelism.data_parallel in SHARDED or top.parallelism.tensor_parallel > 1


def test_gpt2_pre_training_from_scratch_fits_in_plain_data_parallel(shipped: Catalog) -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 16, "sequence_length": 1024, **BF16_ADAMW},
            "dataset": {"samples": 8_000_000}, "constraints": CLOUD_ON_DEMAND}
    rec = recommend_spec(spec, shipped)
    assert rec.options and rec.plan == ()
    top = rec.options[0]
    assert top.fits and top.nodes == 1
    assert top.parallelism is None  # one machine holds it as given: the plain ranking answers
    assert top.training_hours > 0


def test_an_8b_model_pre_trained_on_64_gpus_spans_machines_and_slow_networks_bind(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama3-8b"}, "training": {"batch_size": 2, "sequence_length": 8192, **BF16_ADAMW},
            "dataset": {"samples": 2_000_000}, "constraints": {**CLOUD_ON_DEMAND, "max_gpus": 64},
            "objective": "time", "limit": 400}
    rec = recommend_spec(spec, shipped)
    _fits_its_cards(rec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None
    assert top.nodes == 8 and top.parallelism.total_gpus == 64
    assert top.parallelism.data_parallel in SHARDED
    # Where the network is slow for the exchange, the option says so: some 64-GPU layout is
    # network-bound, or the search chose hybrid sharding / tensor parallel to keep off the network,
    # or the option states the network time it cannot hide behind compute. (Since the loss runs in
    # fp32, ZeRO-1 with tensor parallel 2 no longer fits a p4de at 2 x 8,192 tokens; its ZeRO-3
    # option computes for longer than its exchange takes and shows about 12 ms of it unhidden.)
    slow = [o for o in rec.options if o.nodes == 8 and o.instance_type.startswith(("p4d", "p4de", "a2-"))]
    assert slow
    assert all(o.parallelism is not None and (o.parallelism.bottleneck == "network"
                                              or o.parallelism.data_parallel == "hybrid_shard"
                                              or o.parallelism.tensor_parallel > 1
                                              or o.parallelism.communication_ms > 0) for o in slow)
    # Scaling of the top option: more machines, shorter time, and the points say how well it pays.
    nodes = [p.nodes for p in rec.scaling]
    assert nodes == sorted(nodes) and nodes[-1] == 8
    hours = [p.training_hours for p in rec.scaling]
    assert hours == sorted(hours, reverse=True)


def test_several_machines_multiply_the_price_and_stay_within_max_gpus(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama3-8b"}, "training": {"batch_size": 2, "sequence_length": 8192, **BF16_ADAMW},
            "dataset": {"samples": 200_000}, "constraints": {**CLOUD_ON_DEMAND, "max_gpus": 32},
            "objective": "time", "limit": 50}
    rec = recommend_spec(spec, shipped)
    for o in rec.options:
        assert o.parallelism is not None
        assert o.gpu_count * o.nodes <= 32
        # Each machine bills the whole run (start-up, staging, checkpoints included), as a plain option does.
        assert o.training_cost_usd == pytest.approx(o.price_per_hour_usd * o.nodes * o.billed_hours
                                                    + o.storage_cost_usd, rel=1e-6)
        assert o.start_up is not None and o.billed_hours > o.compute_hours
    assert any(o.nodes > 1 for o in rec.options)


def test_a_named_strategy_that_fits_nowhere_is_planned_from_that_strategy_on_several_gpus(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama2-70b"},
            "training": {"batch_size": 1, "sequence_length": 4096, **BF16_ADAMW,
                         "parallelism": {"data_parallel": "zero2", "checkpointing": "none"}},
            "dataset": {"samples": 10_000}, "constraints": CLOUD_ON_DEMAND}
    rec = recommend_spec(spec, shipped)
    rows = [m for m in rec.plan if m.parallelism is not None]
    assert {m.kind for m in rows} >= {"checkpointing", "sharding", "offload"}
    for m in rows:  # each says what changes from ZeRO-2 on one machine's GPUs, never from plain data parallel
        assert m.parallelism is not None and m.parallelism.data_parallel in ("zero2", "zero3")
        assert m.gpu_count is not None and m.gpu_count > 1
        assert m.description.startswith("From ZeRO-2 over")
    assert not any("fp16" in m.description for m in rec.plan)


def test_the_search_tries_selective_ops_between_none_and_full_and_keeps_it_where_it_is_fastest(
        shipped: Catalog) -> None:
    # Llama-3-8B at 8,192 tokens on one machine of 4 x 96 GB: no checkpointing does not fit at micro-batch 1
    # in any sharded kind; the op-level policy fits and recomputes less than full checkpointing.
    _, job = load_job({"model": {"preset": "llama3-8b"},
                       "training": {"batch_size": 1, "sequence_length": 8192, **BF16_ADAMW}})
    gpu = shipped.gpu("rtx-pro-6000")
    choice = best_layout(job, gpu, gpus_per_node=4, nodes=1, network_gbit_per_s=0.0, host_memory_bytes=1 << 62,
                         host_need_bytes=0)
    assert choice is not None and choice.layout.checkpointing == "selective_ops"
    layout = choice.layout
    assert not fits(searched_memory(job, replace(layout, checkpointing=Checkpointing.NONE), gpu=gpu,
                                    batch_size=1).total_bytes, gpu)
    full = replace(layout, checkpointing=Checkpointing.FULL)
    assert searched_memory(job, full, gpu=gpu, batch_size=1).total_bytes < choice.memory.total_bytes
    assert recomputed_forward_share(job.model, Checkpointing.SELECTIVE_OPS) \
        < recomputed_forward_share(job.model, Checkpointing.FULL)
    names = {lay.checkpointing for lay in candidate_layouts(job, gpus_per_node=4, nodes=1)}
    assert names == {"none", "selective", "selective_ops", "full"}


def test_a_16_gpu_nvswitch_machine_is_one_machine_to_the_strategy_search(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama3-8b"}, "training": {"batch_size": 2, "sequence_length": 8192, **BF16_ADAMW},
            "dataset": {"samples": 200_000}, "constraints": {"providers": ["gcp"], "pricing": ["on_demand"],
                                                              "max_gpus": 16},
            "objective": "time", "limit": 400}
    rec = recommend_spec(spec, shipped)
    mega = [o for o in rec.options if o.instance_type == "a2-megagpu-16g"]
    assert mega, "a2-megagpu-16g (16 x A100 on one NVSwitch fabric) is ranked"
    for o in mega:  # one machine: its 16 GPUs exchange over NVLink, not the machine network
        assert o.parallelism is not None and o.nodes == 1 and o.parallelism.total_gpus == 16
        assert o.parallelism.bottleneck != "network" and o.parallelism.data_parallel != "hybrid_shard"
    two = [o for o in rec.options if o.instance_type == "a2-highgpu-8g" and o.nodes == 2]
    assert two and min(o.training_hours for o in mega) <= min(o.training_hours for o in two) * 1.01


@pytest.mark.parametrize(("parallelism", "model", "field"), [
    ({"tensor_parallel": 3}, LLAMA_7B, "training.parallelism.tensor_parallel"),
    ({"adapter": {"kind": "lora"}}, {"preset": "resnet50"}, "training.parallelism.adapter"),
    ({"tensor_parallel": 2}, {"preset": "resnet50"}, "training.parallelism.tensor_parallel"),
    ({"data_parallel": "zero2", "offload": {"parameters": True}}, LLAMA_7B,
     "training.parallelism.offload.parameters"),
])
def test_a_strategy_the_model_cannot_use_is_refused_naming_the_field(
        shipped: Catalog, parallelism: dict[str, Any], model: dict[str, Any], field: str) -> None:
    spec = {"model": model, "training": {"batch_size": 1, "sequence_length": 512, "parallelism": parallelism},
            "constraints": CLOUD_ON_DEMAND}
    with pytest.raises(SpecError) as raised:
        recommend_spec(spec, shipped)
    assert raised.value.field == field


def test_offload_without_host_memory_for_it_is_refused(shipped: Catalog) -> None:
    # 400 B parameters x 16 bytes of offloaded states = 6.4 TB, more than any cloud machine holds.
    spec = {"model": {"stats": {"neurons": 1_000_000, "parameters": 400_000_000_000, "multiply_adds": 10**12}},
            "training": {"batch_size": 1, "parallelism": {"data_parallel": "zero3", "offload": {"optimizer": True}}},
            "constraints": CLOUD_ON_DEMAND}
    with pytest.raises(SpecError) as raised:
        recommend_spec(spec, shipped)
    assert raised.value.field == "training.parallelism.offload"
    assert "host memory" in raised.value.reason


def test_a_search_over_many_gpus_counts_the_loader_workers_as_the_plain_ranking_does(shipped: Catalog) -> None:
    # A max_gpus above one machine's sends the job through the strategy search; its options must still
    # be slowed by pre-processing their vCPUs cannot keep up with (it ranked 4-vCPU g5.xlarge first at
    # 18.5 h for 25 ms of augmentation per image, against 137 h of loader work on its cores).
    plain_spec = changed_example("preprocess-heavy", constraints={"pricing": ["on_demand"], "providers": ["aws"],
                                                                   "deadline_hours": 1000}, limit=200)
    wide_spec = changed_example("preprocess-heavy", constraints={"pricing": ["on_demand"], "providers": ["aws"],
                                                                  "deadline_hours": 1000, "max_gpus": 16}, limit=200)
    plain, wide = recommend_spec(plain_spec, shipped), recommend_spec(wide_spec, shipped)
    one = {(o.instance_type, o.region): o for o in plain.options}
    searched = {(o.instance_type, o.region): o for o in wide.options if o.nodes == 1}
    both = [k for k in searched if k in one and searched[k].parallelism is not None
            and searched[k].parallelism.update_interval == 1]
    assert both, "single machines ranked by both paths"
    bound = [k for k in both if any(w.code == "cpu-bound" for w in one[k].warnings)]
    assert bound, "the plain ranking finds CPU-bound machines for this job"
    for k in bound:
        s, p = searched[k], one[k]
        assert s.compute_hours == pytest.approx(p.compute_hours, rel=0.02), k
        assert any(w.code == "cpu-bound" for w in s.warnings), k
        assert s.parallelism is not None and s.parallelism.bottleneck == "cpu-preprocessing"
        assert "CPU-bound" in s.why
        assert (s.loader_workers, s.threads_per_core) == (p.loader_workers, p.threads_per_core)
    graviton = [o for o in wide.options if o.instance_type.startswith("g5g.")]
    assert graviton and all(any(w.code == "arm-host" for w in o.warnings) for o in graviton)


def test_the_scaling_rows_name_the_strategy_each_machine_count_runs(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama2-70b"},
            "training": {"batch_size": 1, "sequence_length": 4096, "update_interval": 16, **BF16_ADAMW},
            "dataset": {"samples": 10_000},
            "constraints": {"providers": ["aws"], "pricing": ["on_demand"], "max_gpus": 64}}
    rec = recommend_spec(spec, shipped)
    assert len(rec.scaling) > 1
    assert all(p.strategy for p in rec.scaling)
    top = rec.options[0]
    assert top.parallelism is not None
    mine = [p for p in rec.scaling if p.nodes == top.nodes]
    assert mine and mine[0].strategy in top.why
    # Where one machine needs offload to hold 70B, its row says so: that is why 2 machines gain more than 2x.
    for p in rec.scaling:
        if p.efficiency > 1.01:  # more than linear only where fewer machines run a slower strategy
            assert rec.scaling[0].strategy != p.strategy
    assert any(p.efficiency > 1.01 for p in rec.scaling), "one machine of 8 needs offload for 70B: the case under test"


def test_a_searched_machine_too_small_in_host_memory_is_rejected_for_that_not_for_gpu_memory(
        shipped: Catalog) -> None:
    # GCP's n1-highcpu hosts with T4s (1.8-7.2 GiB) cannot hold the training processes; the strategy
    # search had said "no strategy fits t4 ... exceeds its memory" of a job that fits a T4 at a smaller batch.
    spec = changed_example("preprocess-heavy", constraints={"pricing": ["on_demand"], "providers": ["gcp"],
                                                             "deadline_hours": 1000, "max_gpus": 16})
    rec = recommend_spec(spec, shipped)
    t4 = [r for r in rec.rejected if r.gpu == "t4" and "n1-highcpu-8+4xnvidia-tesla-t4" in r.instance_type]
    assert t4, "the n1-highcpu T4 family is rejected"
    assert "host memory" in t4[0].reason and "no strategy fits" not in t4[0].reason
    # the roomiest host of the group (n1-highcpu-16, 4 T4s), with what it would need: the system, 4 training
    # processes and each GPU's 4 loader workers (the spec's), each with its prefetched batches of 256 images
    batch = 256 * 3 * 224 * 224 * 4
    need = HOST_BASE_BYTES + 4 * (HOST_PER_GPU_PROCESS_BYTES + loader_host_bytes(workers=4, batch_bytes=batch))
    assert f"the roomiest has 14.4 GiB against {need / 2**30:.1f} GiB needed" in t4[0].reason
    assert "loader workers" in t4[0].reason
    assert any(o.gpu == "t4" for o in rec.options), "T4 machines with room for the processes are ranked"


def test_an_offloading_option_says_how_much_host_memory_it_takes(shipped: Catalog) -> None:
    # The requirements' host memory is the job as given; an option that offloads the optimizer holds 16
    # bytes per trainable parameter on its host, and its line says so.
    spec = {"model": LLAMA_7B, "training": {"batch_size": 4, "sequence_length": 1024, **BF16_ADAMW},
            "dataset": {"samples": 20_000}, "constraints": {"max_gpus": 1, "pricing": ["on_demand"]}}
    rec = recommend_spec(spec, shipped)
    offloading = [o for o in rec.options if o.parallelism is not None and o.parallelism.offload_optimizer]
    assert offloading, "one GPU of 24-48 GB holds a 7B full fine-tune only with the optimizer offloaded"
    for o in offloading:
        assert o.parallelism is not None
        held = o.parallelism.host_offload_bytes_per_node
        assert held >= 16 * 6_000_000_000 and held <= o.host_memory_bytes
        assert f"offloaded to host memory ({held / GIB:.1f} GiB per machine)" in o.why


def test_a_host_smaller_than_the_pretrained_weights_is_warned_about_loading_them(shipped: Catalog) -> None:
    # LoRA on a 7B model fits one 24 GB card, whose smallest hosts have 16 GiB: a from_pretrained load holds the
    # 12.6 GiB of 16-bit weights in host memory beside the run's own. A warning (a streaming load fits), not a
    # rejection; hosts that hold them are not warned.
    spec = {"model": LLAMA_7B,
            "training": {"batch_size": 1, "sequence_length": 2048, "update_interval": 16, **BF16_ADAMW,
                         "from_pretrained": True,
                         "parallelism": {"adapter": {"kind": "lora", "rank": 16}, "checkpointing": "full"}},
            "dataset": {"samples": 10_000}, "constraints": {"max_gpus": 1, "pricing": ["on_demand"]}, "limit": 40}
    rec = recommend_spec(spec, shipped)
    small = [o for o in rec.options if o.host_memory_bytes <= 16 * GIB]
    large = [o for o in rec.options if o.host_memory_bytes >= 32 * GIB]
    assert small and large
    for o in small:
        loading = [w for w in o.warnings if w.code == "host-memory-loading"]
        assert loading and "12.6 GiB at 2 bytes a parameter" in loading[0].message
        assert "device_map" in loading[0].message
    assert not any(w.code == "host-memory-loading" for o in large for w in o.warnings)
    # Pre-training from scratch reads no pre-trained weights: nothing to warn about.
    scratch = {**spec, "training": {**spec["training"], "from_pretrained": False, "parallelism": {},
                                    "sequence_length": 1024}}
    scratch["model"] = {"preset": "gpt2-xl"}
    assert not any(w.code == "host-memory-loading" for o in recommend_spec(scratch, shipped).options
                   for w in o.warnings)


def test_a_qlora_load_is_warned_about_one_shard_not_the_whole_model(shipped: Catalog) -> None:
    # QLoRA on a 70B model fits one 48 GB L40S, whose g6e.xlarge host has 32 GiB: bitsandbytes' loader puts the
    # model on the GPU and quantizes each weight as it reads it, so the host holds one Hub shard (5 GB), not the
    # 128.5 GiB of 16-bit weights; the 32 GiB host is not warned. It was, with "load shard by shard onto the GPU",
    # which is what that load does.
    spec = {"model": {"preset": "llama2-70b"},
            "training": {"batch_size": 1, "sequence_length": 2048, "update_interval": 16, **BF16_ADAMW,
                         "from_pretrained": True,
                         "parallelism": {"adapter": {"kind": "qlora", "rank": 16}, "checkpointing": "full"}},
            "dataset": {"samples": 10_000}, "constraints": {"max_gpus": 1, "pricing": ["on_demand"]}, "limit": 40}
    rec = recommend_spec(spec, shipped)
    assert any(o.host_memory_bytes < 128 * GIB for o in rec.options)
    for o in rec.options:
        loading = [w for w in o.warnings if w.code == "host-memory-loading"]
        assert bool(loading) == (o.host_memory_bytes < rec.requirements.host_memory_bytes + 5 * 10**9)
        assert all("one shard at a time (4.7 GiB" in w.message for w in loading)


def test_the_short_run_advice_of_a_strategy_option_is_the_options_own_run(shipped: Catalog) -> None:
    # No card holds a 7B full fine-tune in plain data parallel, so the plain step's minutes on the top
    # option's GPUs (8.9 min on 8 x B200, a layout that does not fit) are no figure of the run advised.
    spec = {"model": LLAMA_7B, "training": {"batch_size": 4, "sequence_length": 512, "update_interval": 8,
                                            "epochs": 3, **BF16_ADAMW, "from_pretrained": True},
            "dataset": {"samples": 52_000}, "constraints": {"providers": ["aws"], "pricing": ["spot"]}}
    rec = recommend_spec(spec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None and top.parallelism.data_parallel != "plain"
    minutes = top.compute_hours * 60
    assert minutes < 10, "the case under test: a sharded run of a few minutes on 8 large GPUs"
    (short,) = [w for w in rec.requirements.warnings if w.code == "short-run"]
    assert f"{minutes:.1f} minutes on {top.instance_type}" in short.message
    # Ten times the data: no longer short, and no plain-step figure says otherwise.
    longer = recommend_spec({**spec, "dataset": {"samples": 520_000}}, shipped)
    assert not [w for w in longer.requirements.warnings if w.code == "short-run"]


@pytest.mark.parametrize(("adapter", "degrees"), [("lora", {1, 2, 4, 8}), ("qlora", {1})])
def test_qlora_is_searched_without_tensor_parallel_as_its_stacks_run_it(adapter: str, degrees: set[int]) -> None:
    # bitsandbytes' NF4 under PEFT, Axolotl or torchtune spreads over data parallel, ZeRO or FSDP only
    spec = {"model": LLAMA_7B, "training": {"batch_size": 4, "sequence_length": 2048, **BF16_ADAMW,
                                            "parallelism": {"adapter": {"kind": adapter}}}}
    _, job = load_job(spec)
    assert {lay.tensor_parallel for lay in candidate_layouts(job, gpus_per_node=8, nodes=1)} == degrees
    named = {**spec["training"], "parallelism": {"adapter": {"kind": adapter}, "tensor_parallel": 2}}
    _, job = load_job({**spec, "training": named})
    assert {lay.tensor_parallel for lay in candidate_layouts(job, gpus_per_node=8, nodes=1)} == {2}
