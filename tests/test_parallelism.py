"""Strategies beyond one GPU: model-state bytes per ZeRO stage, adapters, checkpointing, communication."""

from __future__ import annotations

import pytest

from workers.sizing.layers.attention import Attention
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Dataset, JobSpec, Optimizer, Precision, Training
from workers.sizing.step_walk import kept_per_row
from workers.sizing.strategies.adapters import (
    NF4_BITS_PER_PARAMETER,
    lora_parameters,
    quantized_parameters,
    transformer_shape,
)
from workers.sizing.strategies.checkpointing import recomputed_forward_share
from workers.sizing.strategies.collectives import iteration_communication, node_links
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.parallelism import Layout, ParameterCounts, model_state_bytes
from workers.sizing.strategies.retention import layout_retention
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel, Offload

GB = 1e9
BF16 = Precision.BF16_MIXED


def _total(counts: ParameterCounts, layout: Layout) -> int:
    states = model_state_bytes(counts, layout, precision=BF16, optimizer=Optimizer.ADAM, ddp_bucket=False)
    return states.parameters + states.gradients + states.optimizer_state


@pytest.fixture(scope="module")
def llama():
    return preset_stats("llama-7b", sequence_length=2048)


def test_zero_stages_follow_the_zero_paper_split_of_a_7_5b_model_on_64_gpus() -> None:
    # ZeRO paper Fig. 1 (Psi = 7.5B, K = 12, Nd = 64): P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
    counts = ParameterCounts(trainable=7_500_000_000, frozen=0)
    zero1 = _total(counts, Layout(DataParallel.ZERO1, gpu_count=64, gpus_per_node=8)) / GB
    zero2 = _total(counts, Layout(DataParallel.ZERO2, gpu_count=64, gpus_per_node=8)) / GB
    zero3 = _total(counts, Layout(DataParallel.ZERO3, gpu_count=64, gpus_per_node=8)) / GB
    assert zero1 == pytest.approx(31.4, rel=0.02)
    assert zero2 == pytest.approx(16.6, rel=0.05)
    assert zero3 == pytest.approx(1.9, rel=0.15)


def test_each_zero_stage_keeps_less_per_gpu_and_one_gpu_keeps_everything() -> None:
    counts = ParameterCounts(trainable=1_000_000_000, frozen=0, largest_unit=50_000_000)
    totals = [_total(counts, Layout(kind, gpu_count=8, gpus_per_node=8))
              for kind in (DataParallel.PLAIN, DataParallel.ZERO1, DataParallel.ZERO2, DataParallel.ZERO3)]
    assert totals == sorted(totals, reverse=True)
    assert len(set(totals)) == 4
    one = _total(counts, Layout(DataParallel.ZERO2, gpu_count=1, gpus_per_node=8))
    assert one == _total(counts, Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=8))


def test_hybrid_shard_splits_only_within_a_machine() -> None:
    counts = ParameterCounts(trainable=8_000_000_000, frozen=0, largest_unit=200_000_000)
    hybrid = Layout(DataParallel.HYBRID_SHARD, gpu_count=64, gpus_per_node=8)
    assert hybrid.shard_degree == 8 and hybrid.nodes == 8
    in_one_machine = _total(counts, Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8))
    assert _total(counts, hybrid) == in_one_machine
    assert _total(counts, Layout(DataParallel.ZERO3, gpu_count=64, gpus_per_node=8)) < in_one_machine


def test_offloading_the_optimizer_moves_its_state_to_the_host() -> None:
    counts = ParameterCounts(trainable=3_000_000_000, frozen=0, largest_unit=100_000_000)
    layout = Layout(DataParallel.ZERO2, gpu_count=8, gpus_per_node=8)
    on_gpu = model_state_bytes(counts, layout, precision=BF16, optimizer=Optimizer.ADAMW, ddp_bucket=False)
    offloaded = model_state_bytes(counts, Layout(DataParallel.ZERO2, gpu_count=8, gpus_per_node=8,
                                                 offload=Offload(optimizer=True)),
                                  precision=BF16, optimizer=Optimizer.ADAMW, ddp_bucket=False)
    assert on_gpu.host_bytes == 0
    assert offloaded.optimizer_state == 0
    assert offloaded.host_bytes >= on_gpu.optimizer_state
    assert offloaded.parameters + offloaded.gradients < on_gpu.parameters + on_gpu.gradients
    # The 16-bit weights stay on the GPU: 2 bytes per parameter (DeepSpeed: "cpu_offload: 2 * params").
    assert offloaded.parameters == pytest.approx(2 * 3_000_000_000, rel=0.001)


def test_tensor_and_pipeline_parallel_divide_every_model_state() -> None:
    counts = ParameterCounts(trainable=7_000_000_000, frozen=0)
    plain = _total(counts, Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=8))
    split = _total(counts, Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8, tensor_parallel=4,
                                  pipeline_stages=2))
    assert split == pytest.approx(plain / 8, rel=0.01)


def test_lora_on_llama_7b_q_and_v_at_rank_8_trains_4_2_million_parameters(llama) -> None:
    shape = transformer_shape(llama)
    assert shape is not None
    assert (shape.hidden, shape.heads, shape.blocks) == (4096, 32, 32)
    # 32 blocks x 2 projections x 8 x (4096 + 4096)
    assert lora_parameters(shape, rank=8, targets=("q", "v")) == 32 * 2 * 8 * 8192
    assert lora_parameters(shape, rank=16, targets=("q", "v")) == 2 * lora_parameters(shape, rank=8, targets=("q", "v"))


def test_qlora_base_weights_cost_about_half_a_byte(llama) -> None:
    shape = transformer_shape(llama)
    assert shape is not None
    assert pytest.approx(4.127, abs=0.001) == NF4_BITS_PER_PARAMETER
    quantised = quantized_parameters(shape)
    assert 0.9 * llama.parameters < quantised < llama.parameters  # embeddings and head stay 16-bit
    adapter = Adapter(kind=AdapterKind.QLORA)
    trainable = lora_parameters(shape, rank=adapter.rank, targets=adapter.targets)
    counts = ParameterCounts(trainable=trainable, frozen=llama.parameters - quantised, frozen_nf4=quantised)
    states = model_state_bytes(counts, Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, adapter=adapter),
                               precision=BF16, optimizer=Optimizer.ADAMW, ddp_bucket=True)
    assert 3.5 * GB < states.parameters < 4.5 * GB
    # QLoRA's paged 32-bit AdamW state lives in unified memory, paged out to the host when needed
    assert states.optimizer_state == 0 and states.host_bytes == 8 * trainable
    assert states.gradients == 2 * trainable  # adapters in the compute dtype (QLoRA's --bf16 recipe)


def test_sharded_adapters_leave_one_blocks_adapter_gradients_unsharded_not_a_whole_block(llama) -> None:
    from workers.sizing.strategies.adapters import transformer_shape as shape_of
    from workers.sizing.strategies.footprint import parameter_counts

    adapter = Adapter(kind=AdapterKind.LORA, rank=8, targets=("q", "v"))
    for offload in (Offload(), Offload(optimizer=True)):
        layout = Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8, adapter=adapter, offload=offload)
        counts = parameter_counts(llama, layout, shape_of(llama))
        assert counts.largest_trainable_unit == counts.trainable // 32  # 32 blocks, adapters in each
        states = model_state_bytes(counts, layout, precision=BF16, optimizer=Optimizer.ADAMW, ddp_bucket=False)
        # the unsharded gradient on its way out is the block's adapters (4 bytes each), not its 200M weights
        assert states.gradients <= counts.trainable * 4
        full = model_state_bytes(counts.__class__(trainable=counts.trainable, frozen=counts.frozen,
                                                  largest_unit=counts.largest_unit),
                                 layout, precision=BF16, optimizer=Optimizer.ADAMW, ddp_bucket=False)
        assert full.gradients > 100 * states.gradients


def test_models_without_attention_have_no_transformer_shape() -> None:
    assert transformer_shape(preset_stats("resnet50")) is None


def _kept(model, mode: Checkpointing, *, tensor_parallel: int = 1, attention: Attention = Attention.MATH) -> int:
    """Return what the rows keep through forward (one sample at sequence 2,048) under a mode."""
    training = Training(batch_size=1, precision=BF16)
    retention = layout_retention(model, training, precision=BF16, attention=attention, mode=mode,
                                 tensor_parallel=tensor_parallel)
    rows = retention.kept if retention is not None else kept_per_row(model, training, precision=BF16,
                                                                     attention=attention)
    return sum(rows)


def test_checkpointing_keeps_less_and_recomputes_more(llama) -> None:
    none, selective, ops, full = (_kept(llama, mode) for mode in (
        Checkpointing.NONE, Checkpointing.SELECTIVE, Checkpointing.SELECTIVE_OPS, Checkpointing.FULL))
    assert none > selective > ops > full
    # Korthikanti et al.: full recompute keeps each layer's input, 2 s h bytes per layer (plus the head).
    s, h, layers = 2048, 4096, 32
    assert full > 2 * s * h * layers
    assert full < 3 * 2 * s * h * layers
    # torchtitan's op policy keeps per block its input, q, v, gate, down and the attention output:
    # 4 h + kv + ffn values per token (llama-7b: no grouped K/V, kv = h; ffn 11008)
    head = _kept(llama, Checkpointing.FULL) - 2 * s * h * layers
    assert ops - head == pytest.approx(2 * s * layers * (5 * h + 11008), rel=0.01)
    # with a fused attention kernel selective has nothing left to drop
    assert _kept(llama, Checkpointing.SELECTIVE, attention=Attention.FLASH) == _kept(
        llama, Checkpointing.NONE, attention=Attention.FLASH)
    assert 0 < recomputed_forward_share(llama, Checkpointing.SELECTIVE) < 0.2
    assert 0.2 < recomputed_forward_share(llama, Checkpointing.SELECTIVE_OPS) < 0.5
    assert recomputed_forward_share(llama, Checkpointing.FULL) > 0.9
    assert recomputed_forward_share(llama, Checkpointing.NONE) == 0.0


def test_full_checkpointing_peaks_with_one_block_recomputed_in_backward(llama) -> None:
    job = JobSpec(llama, Training(batch_size=4, precision=BF16, optimizer=Optimizer.SGD), Dataset(samples=1))
    none = layout_memory(job, Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1), gpu=None, batch_size=4)
    full = layout_memory(job, Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1,
                                     checkpointing=Checkpointing.FULL), gpu=None, batch_size=4)
    kept = _kept(llama, Checkpointing.FULL) * 4
    block = (_kept(llama, Checkpointing.NONE) - _kept(llama, Checkpointing.SELECTIVE_OPS)) * 4 / 32
    assert full.breakdown.activations_bytes < none.breakdown.activations_bytes / 3
    # at its peak some block is brought back for its backward, beside the inputs still kept
    assert block < full.breakdown.activations_bytes < kept + 2 * block


def test_tensor_parallel_with_sequence_parallel_divides_block_activations(llama) -> None:
    one = _kept(llama, Checkpointing.SELECTIVE)
    eight = _kept(llama, Checkpointing.SELECTIVE, tensor_parallel=8)
    embedding = 0  # the token embedding keeps only its ids (no float values)
    assert eight == pytest.approx((one - embedding) / 8, rel=0.01)


def _links(network_gbit: float):
    return node_links(nvlink_gb_per_s=600.0, pcie_gen=4, network_gbit_per_s=network_gbit,
                      nvlink_efficiency=0.8)


def test_full_sharding_sends_one_and_a_half_times_the_all_reduce() -> None:
    links = _links(400.0)
    kwargs = {"compute_ms": 0.0, "trainable": 7_000_000_000, "parameters": 7_000_000_000,
              "activation_values_per_block": 0, "blocks": 32, "micro_batches": 1, "precision": Precision.FP32}
    plain = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8), links, **kwargs)
    full = iteration_communication(Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8), links, **kwargs)
    assert full.data_parallel_ms == pytest.approx(1.5 * plain.data_parallel_ms)  # the same dtype: ZeRO's 1.5x
    # under mixed precision plain DDP reduces the fp32 master weights' gradients, FSDP 16-bit ones
    mixed = {**kwargs, "precision": Precision.BF16_MIXED}
    plain16 = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8), links, **mixed)
    full16 = iteration_communication(Layout(DataParallel.ZERO3, gpu_count=8, gpus_per_node=8), links, **mixed)
    assert plain16.data_parallel_ms == pytest.approx(plain.data_parallel_ms)
    assert full16.data_parallel_ms == pytest.approx(full.data_parallel_ms / 2)


def test_a_tensor_parallel_group_wider_than_the_machine_all_reduces_across_the_network() -> None:
    # tensor parallel 8 on two 4-GPU machines was timed at NVLink speed, as on one 8-GPU machine: a named degree
    # ranked 8 single-GPU machines beside an 8-GPU one at the same iteration time
    links = _links(200.0)
    kwargs = {"compute_ms": 100.0, "trainable": 7_000_000_000, "parameters": 7_000_000_000,
              "activation_values_per_block": 2 * 2048 * 4096, "blocks": 32, "micro_batches": 1,
              "precision": Precision.BF16_MIXED}
    inside = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8, tensor_parallel=8),
                                     links, **kwargs)
    across = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=4, tensor_parallel=8),
                                     links, **kwargs)
    print(f"\ntensor parallel 8: one machine {inside.tensor_parallel_ms:.1f} ms, two machines "
          f"{across.tensor_parallel_ms:.1f} ms")
    assert inside.bound != "network" and across.bound == "network"
    # the machine's 200 Gbit/s shared by its 4 GPUs against NVLink: over ten times the time
    assert across.tensor_parallel_ms > 10 * inside.tensor_parallel_ms


def test_across_a_slow_network_hybrid_shard_sends_less_than_full_shard() -> None:
    links = _links(400.0)
    kwargs = {"compute_ms": 1000.0, "trainable": 8_000_000_000, "parameters": 8_000_000_000,
              "activation_values_per_block": 0, "blocks": 32, "micro_batches": 1,
              "precision": Precision.BF16_MIXED}
    full = iteration_communication(Layout(DataParallel.ZERO3, gpu_count=64, gpus_per_node=8), links, **kwargs)
    hybrid = iteration_communication(Layout(DataParallel.HYBRID_SHARD, gpu_count=64, gpus_per_node=8), links,
                                     **kwargs)
    assert hybrid.exposed_ms < full.exposed_ms
    assert full.bound == "network"
    faster = iteration_communication(Layout(DataParallel.ZERO3, gpu_count=64, gpus_per_node=8), _links(3200.0),
                                     **kwargs)
    assert faster.exposed_ms < full.exposed_ms


def test_tensor_parallel_all_reduces_grow_with_the_activations() -> None:
    links = _links(400.0)
    small = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8, tensor_parallel=8),
                                    links, compute_ms=100.0, trainable=10, parameters=10,
                                    activation_values_per_block=2048 * 4096, blocks=32, micro_batches=1,
                                    precision=Precision.BF16_MIXED)
    large = iteration_communication(Layout(DataParallel.PLAIN, gpu_count=8, gpus_per_node=8, tensor_parallel=8),
                                    links, compute_ms=100.0, trainable=10, parameters=10,
                                    activation_values_per_block=4 * 2048 * 4096, blocks=32, micro_batches=1,
                                    precision=Precision.BF16_MIXED)
    assert large.tensor_parallel_ms == pytest.approx(4 * small.tensor_parallel_ms)
    assert small.data_parallel_ms == 0.0  # one replica: nothing to exchange


def test_pipeline_bubble_shrinks_with_more_micro_batches() -> None:
    links = _links(400.0)
    layout = Layout(DataParallel.PLAIN, gpu_count=4, gpus_per_node=8, pipeline_stages=4)
    few, many = (iteration_communication(layout, links, compute_ms=100.0, trainable=0, parameters=1,
                                         activation_values_per_block=0, blocks=32, micro_batches=m,
                                         precision=Precision.BF16_MIXED)
                 for m in (4, 32))
    assert few.pipeline_bubble_ms == pytest.approx(75.0)
    assert many.pipeline_bubble_ms < few.pipeline_bubble_ms


@pytest.mark.parametrize(("preset", "gpu", "count", "batch", "precision", "accumulation"), [
    ("bert-base", "t4", 2, 32, Precision.FP16_MIXED, 1),  # PCIe: the fp32 gradients' exchange shows
    ("bert-base", "t4", 2, 32, Precision.FP16_MIXED, 4),  # once per update, after the last backward
    ("resnet50", "t4", 4, 64, Precision.FP16_MIXED, 1),  # the last 25 MB bucket shows
    ("resnet50", "a100-80gb", 8, 256, Precision.FP32, 1),
    ("gpt2", "a100-40gb", 8, 8, Precision.BF16_MIXED, 5),
])
def test_plain_data_parallel_is_timed_alike_by_the_estimate_and_the_strategy_path(
        preset: str, gpu: str, count: int, batch: int, precision: Precision, accumulation: int) -> None:
    """A plain layout in the strategy search is the same run as the plain estimate: the same gradient dtype
    (fp32 under AMP), the same last-bucket floor, one exchange per update under accumulation."""
    from catalog.gpus import gpus_by_slug
    from workers.sizing.efficiency import NVLINK_EFFICIENCY
    from workers.sizing.strategies.steptime import layout_time
    from workers.sizing.timing import estimate_iteration_ms

    card = gpus_by_slug()[gpu]
    model = preset_stats(preset) if preset != "gpt2" else preset_stats(preset, sequence_length=1024)
    training = Training(batch_size=batch, precision=precision, optimizer=Optimizer.ADAMW, update_interval=accumulation)
    job = JobSpec(model=model, training=training)
    plain = estimate_iteration_ms(job.time_model, training, card, gpu_count=count)
    links = node_links(nvlink_gb_per_s=card.nvlink_gb_per_s, pcie_gen=card.pcie_gen, network_gbit_per_s=100.0,
                       nvlink_efficiency=NVLINK_EFFICIENCY)
    searched = layout_time(job, Layout(DataParallel.PLAIN, gpu_count=count, gpus_per_node=count), card, links=links,
                           batch_size=batch, update_interval=accumulation, trainable_parameters=model.parameters)
    print(preset, gpu, count, accumulation, round(plain.total_ms, 1), round(searched.iteration_ms, 1))
    assert searched.iteration_ms == pytest.approx(plain.total_ms, rel=0.02)
