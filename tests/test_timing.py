"""Iteration time: per-layer roofline across GPUs, precision, recompute, profiles, multi-GPU, schedule."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from sizing_fixtures import gpu, mlp, resnet50, stats_only, tiny_layers, totals, training, transformer

from workers.sizing.efficiency import (
    BANDWIDTH_EFFICIENCY,
    DATA_PARALLEL_SYNC_MS,
    NVLINK_EFFICIENCY,
    PCIE_EFFICIENCY,
    PCIE_GB_PER_S,
)
from workers.sizing.multigpu import allreduce_ms, framework_speedup_cap, multi_gpu_time, ring_link
from workers.sizing.schedule import (
    evaluation_ms,
    iterations_per_epoch,
    iterations_total,
    startup_ms,
    training_hours,
)
from workers.sizing.spec import Dataset, Framework, Precision, Profile
from workers.sizing.stats import LayerKind, LayerStats
from workers.sizing.timing import (
    BOTTLENECK_MEMORY,
    BOTTLENECK_OVERHEAD,
    estimate_iteration_ms,
    training_flops,
)


def _ms(model_slug_pairs: list[str], **changes: object) -> list[float]:
    job = training(**changes)
    return [estimate_iteration_ms(resnet50(), job, gpu(slug)).total_ms for slug in model_slug_pairs]


def test_a100_trains_resnet50_faster_than_a_1080_ti_in_both_precisions() -> None:
    for precision in (Precision.FP32, Precision.FP16_MIXED):
        a100, gtx = _ms(["a100-80gb", "gtx-1080-ti"], precision=precision)
        assert a100 < gtx / 2


def test_newer_generations_train_resnet50_faster_in_mixed_precision() -> None:
    times = _ms(["gtx-1080-ti", "v100-16gb", "a100-80gb", "h100-sxm"], precision=Precision.FP16_MIXED)
    assert times == sorted(times, reverse=True)


def test_flops_are_multiply_adds_times_2_times_3_and_recompute_adds_a_forward() -> None:
    model = resnet50()
    assert training_flops(model, training(batch_size=10)) == model.multiply_adds * 2 * 3 * 10
    assert training_flops(model, training(batch_size=10, recompute=True)) == model.multiply_adds * 2 * 4 * 10


def test_recompute_raises_time_by_about_a_third_of_the_layers() -> None:
    plain = estimate_iteration_ms(resnet50(), training(), gpu("v100-16gb"))
    again = estimate_iteration_ms(resnet50(), training(recompute=True), gpu("v100-16gb"))
    assert 1.2 < again.total_ms / plain.total_ms <= 4 / 3


def test_layer_kind_matters_not_only_multiply_adds() -> None:
    # Same multiply-adds and parameters: a convolution and a dense layer run at different efficiencies,
    # and a network with bandwidth-bound layers in between runs slower still.
    macs, params = 10**9, 10**6
    conv = totals("conv", [LayerStats("c", "conv2d", (64, 56, 56), 200_704, params, macs, LayerKind.CONV,
                                      saved_values=200_704, traffic_values=401_408 + params)])
    dense = totals("dense", [LayerStats("d", "dense", (64, 56, 56), 200_704, params, macs, LayerKind.DENSE,
                                        saved_values=200_704, traffic_values=401_408 + params)])
    heavy = totals("heavy", [*conv.layers, *(LayerStats(f"bn{i}", "batchnorm", (64, 56, 56), 200_704, 0, 0,
                                                        LayerKind.NORM, saved_values=200_704,
                                                        traffic_values=401_408) for i in range(20))])
    card, job = gpu("v100-16gb"), training()
    times = [estimate_iteration_ms(m, job, card).total_ms for m in (conv, dense, heavy)]
    assert times[0] != pytest.approx(times[1], rel=0.05)
    assert times[2] > times[0] * 1.1


def test_mixed_precision_pays_on_tensor_cores_and_little_without_them() -> None:
    model = resnet50()
    for slug, low, high in (("v100-16gb", 0.0, 0.5), ("gtx-1080-ti", 0.6, 1.0)):
        fp32 = estimate_iteration_ms(model, training(), gpu(slug)).total_ms
        mixed = estimate_iteration_ms(model, training(precision=Precision.FP16_MIXED), gpu(slug)).total_ms
        assert low < mixed / fp32 <= high, slug


def test_bf16_without_bf16_hardware_runs_as_fp32() -> None:
    model = mlp()
    bf16 = estimate_iteration_ms(model, training(precision=Precision.BF16_MIXED), gpu("t4")).total_ms
    fp32 = estimate_iteration_ms(model, training(), gpu("t4")).total_ms
    assert bf16 == fp32


def test_fp32_runs_on_tf32_tensor_cores_from_ampere_on() -> None:
    model, job = mlp(), training(batch_size=1024, tf32_matmul=True)
    flops = training_flops(model, job)
    a100, v100 = gpu("a100-40gb"), gpu("v100-16gb")
    # faster than the A100's fp32 CUDA-core peak allows: TF32 tensor cores
    assert estimate_iteration_ms(model, job, a100).compute_ms < flops / (a100.fp32_tflops * 1e9)
    # a V100 has no TF32: its fp32 runs at most at the CUDA-core peak
    assert estimate_iteration_ms(model, job, v100).compute_ms > flops / (v100.fp32_tflops * 1e9)
    torch_ms = estimate_iteration_ms(model, job, a100).compute_ms
    tf_ms = estimate_iteration_ms(model, replace(job, framework=Framework.TENSORFLOW), a100).compute_ms
    assert tf_ms == pytest.approx(torch_ms)


def test_tf32_matmul_follows_the_framework_unless_the_job_says() -> None:
    a100, model = gpu("a100-40gb"), mlp()
    unsaid = training(batch_size=1024)
    assert unsaid.tf32_matmul is None

    def ms(**changes: object) -> float:
        return estimate_iteration_ms(model, replace(unsaid, **changes), a100).compute_ms
    # PyTorch >= 1.12 keeps matmul TF32 off; TensorFlow (2.4 on) and JAX turn it on
    assert ms() == pytest.approx(ms(tf32_matmul=False))
    assert ms() > ms(tf32_matmul=True)
    for framework in (Framework.TENSORFLOW, Framework.JAX):
        assert ms(framework=framework) == pytest.approx(ms(framework=framework, tf32_matmul=True))
        assert ms(framework=framework, tf32_matmul=False) > ms(framework=framework)


def test_bandwidth_bound_job_scales_with_memory_bandwidth() -> None:
    rows = [LayerStats(f"relu{i}", "relu", (10**6,), 10**6, 0, 0, LayerKind.ELEMENTWISE, saved_values=10**6,
                       traffic_values=2 * 10**6) for i in range(10)]
    model = totals("elementwise", rows)
    a100_40, a100_80 = gpu("a100-40gb"), gpu("a100-80gb")
    slow = estimate_iteration_ms(model, training(), a100_40)
    fast = estimate_iteration_ms(model, training(), a100_80)
    assert slow.bottleneck == BOTTLENECK_MEMORY
    expected = a100_80.memory_bandwidth_gb_per_s / a100_40.memory_bandwidth_gb_per_s
    assert slow.memory_ms / fast.memory_ms == pytest.approx(expected)
    one_pass_ms = 2 * 10**6 * 64 * 4 / (a100_40.memory_bandwidth_gb_per_s * 1e6 * BANDWIDTH_EFFICIENCY)
    # forward + 2x backward for each of 10 layers; no weights, so no optimizer step
    assert slow.memory_ms == pytest.approx(10 * 3 * one_pass_ms)


def test_profile_calibrates_its_own_gpu_exactly_and_scales_the_others() -> None:
    model, v100, a100 = resnet50(), gpu("v100-16gb"), gpu("a100-80gb")
    plain = training()
    measured = replace(plain, profile=Profile(gpu="v100-16gb", iteration_ms=300.0))
    on_v100 = estimate_iteration_ms(model, measured, v100)
    assert on_v100.calibrated and on_v100.total_ms == pytest.approx(300.0)
    on_a100 = estimate_iteration_ms(model, measured, a100, profile_gpu=v100)
    ratio = (estimate_iteration_ms(model, plain, a100).total_ms
             / estimate_iteration_ms(model, plain, v100).total_ms)
    assert on_a100.calibrated and on_a100.total_ms == pytest.approx(300.0 * ratio)
    assert not estimate_iteration_ms(model, plain, a100).calibrated


def test_launch_overhead_bounds_a_model_of_many_tiny_layers() -> None:
    time = estimate_iteration_ms(tiny_layers(200), training(batch_size=8), gpu("h100-sxm"))
    assert time.bottleneck == BOTTLENECK_OVERHEAD
    assert time.layer_count == 200 and time.tiny_layer_count == 200


def test_ring_allreduce_sends_2_n_minus_1_over_n_of_the_gradients() -> None:
    gigabyte = 10**9
    two = allreduce_ms(gigabyte, gpu_count=2, link_gb_per_s=10.0)
    eight = allreduce_ms(gigabyte, gpu_count=8, link_gb_per_s=10.0)
    assert two == pytest.approx(100.0, rel=0.05)  # 2 x 1/2 x 1 GB at 10 GB/s
    assert eight == pytest.approx(175.0, rel=0.05)  # 2 x 7/8 x 1 GB
    assert allreduce_ms(gigabyte, gpu_count=1, link_gb_per_s=10.0) == 0.0


def test_links_nvlink_pcie_pairs_and_network() -> None:
    assert ring_link(gpu("v100-16gb"), 8) == ("nvlink", pytest.approx(150 * NVLINK_EFFICIENCY))
    assert ring_link(gpu("t4"), 4) == ("pcie", pytest.approx(PCIE_GB_PER_S[3] * PCIE_EFFICIENCY))
    assert ring_link(gpu("rtx-3090"), 2)[0] == "nvlink"
    assert ring_link(gpu("rtx-3090"), 4)[0] == "pcie"  # the bridge joins two cards only
    assert ring_link(gpu("a100-80gb"), 16, inter_node_gbit_per_s=100.0)[0] == "network"


def test_sixteen_gpus_of_one_nvswitch_machine_exchange_over_nvlink_not_the_network() -> None:
    # Machine unknown: more than 8 GPUs span two machines. Known (a2-megagpu-16g, DGX-2): one fabric.
    card = gpu("a100-40gb")
    assert ring_link(card, 16)[0] == "network"
    nvlink = pytest.approx(card.nvlink_gb_per_s / 2 * NVLINK_EFFICIENCY)
    assert ring_link(card, 16, gpus_per_node=16) == ("nvlink", nvlink)
    assert ring_link(card, 32, gpus_per_node=16)[0] == "network"
    apart = estimate_iteration_ms(resnet50(), training(), card, gpu_count=16)
    together = estimate_iteration_ms(resnet50(), training(), card, gpu_count=16, gpus_per_node=16)
    assert together.allreduce_ms < apart.allreduce_ms
    assert together.speedup_vs_one_gpu > apart.speedup_vs_one_gpu


@pytest.mark.parametrize("framework", [Framework.PYTORCH, Framework.TENSORFLOW])
def test_all_reduce_scales_a_compute_heavy_job_close_to_linearly_in_any_framework(framework: Framework) -> None:
    # NVIDIA DeepLearningExamples ResNet-50: 7.3-7.7x on 8 GPUs in TensorFlow and PyTorch (domain.md §4)
    time = estimate_iteration_ms(resnet50(), training(framework=framework), gpu("a100-80gb"), gpu_count=8)
    assert 6.8 <= time.speedup_vs_one_gpu <= 8.0


@pytest.mark.parametrize(("framework", "cap"), [(Framework.PYTORCH, 3.7), (Framework.TENSORFLOW, 2.5),
                                                 (Framework.CNTK, 3.9), (Framework.JAX, 3.7)])
def test_parameter_server_training_is_capped_by_the_2017_survey(framework: Framework, cap: float) -> None:
    assert framework_speedup_cap(framework, 4) == pytest.approx(cap)
    card = gpu("a100-80gb")
    kwargs = {"backward_ms": 60.0, "gradient_bytes": 100 * 2**20, "gpu": card, "gpu_count": 4,
              "framework": framework}
    server = multi_gpu_time(100.0, parameter_server=True, **kwargs)  # type: ignore[arg-type]
    all_reduce = multi_gpu_time(100.0, **kwargs)  # type: ignore[arg-type]
    assert server.speedup == pytest.approx(cap) and server.scaling_loss_ms > 0
    assert all_reduce.speedup > 3.9 and all_reduce.scaling_loss_ms == 0


def test_gradient_accumulation_spreads_an_unhidden_exchange_over_its_micro_steps() -> None:
    card = gpu("t4")
    kwargs = {"backward_ms": 60.0, "gradient_bytes": 400 * 2**20, "gpu": card, "gpu_count": 4,
              "framework": Framework.PYTORCH}
    each = multi_gpu_time(100.0, **kwargs)  # type: ignore[arg-type]
    accumulated = multi_gpu_time(100.0, update_interval=4, **kwargs)  # type: ignore[arg-type]
    # the exchange no longer hides behind backward, but runs once per 4 micro-steps
    assert accumulated.exposed_ms == pytest.approx((accumulated.allreduce_full_ms + DATA_PARALLEL_SYNC_MS) / 4)
    assert accumulated.exposed_ms < each.allreduce_full_ms
    assert accumulated.exposed_ms >= accumulated.allreduce_full_ms / 4


def test_parameter_heavy_model_gains_little_from_gpus_on_pcie() -> None:
    model = mlp(width=8192, depth=4)  # multiply-adds = parameters
    time = estimate_iteration_ms(model, training(batch_size=16), gpu("t4"), gpu_count=4)
    assert time.speedup_vs_one_gpu < 2.0
    assert time.allreduce_ms > 0


def test_a_slow_network_between_machines_slows_the_exchange() -> None:
    model, card = mlp(), gpu("a100-80gb")
    local = estimate_iteration_ms(model, training(), card, gpu_count=8)
    spread = estimate_iteration_ms(model, training(), card, gpu_count=8, inter_node_gbit_per_s=10.0)
    assert spread.total_ms > local.total_ms and spread.speedup_vs_one_gpu < local.speedup_vs_one_gpu


def test_iterations_per_epoch_round_up_over_all_gpus() -> None:
    assert iterations_per_epoch(1000, batch_size=64) == 16
    assert iterations_per_epoch(1000, batch_size=64, gpu_count=4) == 4
    assert iterations_per_epoch(0, batch_size=64) == 0
    assert iterations_total(1000, training(batch_size=64, epochs=2.5)) == 40


def test_training_hours_are_iterations_times_iteration_time_plus_evaluation() -> None:
    data = Dataset(samples=64_000)
    job = training(batch_size=64, epochs=10)
    hours = training_hours(data, job, iteration_ms=100.0, forward_ms=30.0)
    assert hours == pytest.approx((startup_ms(gpu_count=1) + 1000 * 10 * 100.0) / 3_600_000)
    evaluated = replace(job, eval_every_epochs=2)
    eval_ms = evaluation_ms(data, evaluated, forward_ms=30.0)
    assert eval_ms == 5 * math.ceil(6400 / 64) * 30.0
    assert training_hours(data, evaluated, iteration_ms=100.0, forward_ms=30.0) == pytest.approx(
        hours + eval_ms / 3_600_000)


def test_start_up_counts_once_per_run_and_more_on_several_gpus() -> None:
    data = Dataset(samples=64)
    short = training_hours(data, training(batch_size=64, epochs=1), iteration_ms=1.0, forward_ms=0.3)
    assert short * 3_600_000 == pytest.approx(startup_ms(gpu_count=1) + 1.0)
    assert startup_ms(gpu_count=8) > startup_ms(gpu_count=2) > startup_ms(gpu_count=1) > 0
    assert training_hours(Dataset(samples=0), training(), iteration_ms=1.0, forward_ms=0.3) == 0.0


def test_stats_only_model_times_as_one_generic_layer() -> None:
    model = stats_only(neurons=10**7, parameters=25 * 10**6, multiply_adds=4 * 10**9)
    time = estimate_iteration_ms(model, training(), gpu("v100-16gb"))
    assert time.layer_count == 0 and time.total_ms > 0
    assert estimate_iteration_ms(transformer(), training(batch_size=8), gpu("a100-80gb")).total_ms > 0


def test_the_multi_gpu_iteration_is_the_single_one_replaced() -> None:
    from workers.sizing.requirements import Bottleneck
    from workers.sizing.timing import IterationTime, _with

    single = IterationTime(compute_ms=1.0, memory_ms=2.0, allreduce_ms=0.0, overhead_ms=0.5, total_ms=3.5,
                           bottleneck=Bottleneck.COMPUTE, single_gpu_ms=3.5, forward_ms=1.2, calibrated=True,
                           layer_count=7, tiny_layer_count=2)
    changes = {"allreduce_ms": 0.7, "overhead_ms": 0.9, "total_ms": 4.1, "bottleneck": Bottleneck.ALL_REDUCE,
               "speedup_vs_one_gpu": 1.7}
    made = _with(single, **changes)
    assert made == replace(single, **changes) and vars(made) == vars(replace(single, **changes))
    assert single.total_ms == 3.5  # the original is left as it was
    with pytest.raises(TypeError):
        _with(single, total=1.0)


def test_a_fused_attention_kernel_moves_no_sequence_by_sequence_matrix_through_memory() -> None:
    # The memory side keeps no s x s matrix under a fused kernel (layers/attention.py); the time side must
    # not move one either: GPT-2 XL at 1024 tokens in bf16 on an H100 ran 556 ms an iteration with the
    # math path's traffic under `auto` (fused there), 3x slower than llm.c-class runs.
    from workers.sizing.layers.attention import Attention
    from workers.sizing.presets.registry import preset_stats
    from workers.sizing.timing import layer_work

    model = preset_stats("gpt2-xl")
    bf16 = training(batch_size=8, sequence_length=1024, precision=Precision.BF16_MIXED)
    h100, v100 = gpu("h100-sxm"), gpu("v100-16gb")
    fused = estimate_iteration_ms(model, bf16, h100).total_ms
    math_path = estimate_iteration_ms(model, replace(bf16, attention=Attention.MATH), h100).total_ms
    assert fused < 0.8 * math_path
    assert estimate_iteration_ms(model, replace(bf16, attention=Attention.FLASH), h100).total_ms == fused
    # A card without a fused kernel under `auto` (Kepler) times the math path; Volta runs the memory-efficient one.
    k80 = gpu("k80")
    assert estimate_iteration_ms(model, bf16, k80).total_ms == \
        estimate_iteration_ms(model, replace(bf16, attention=Attention.MATH), k80).total_ms
    assert estimate_iteration_ms(model, bf16, v100).total_ms < \
        estimate_iteration_ms(model, replace(bf16, attention=Attention.MATH), v100).total_ms
    # Only attention cores change: q, k, v in (3 x hidden values per token) and the output out (hidden),
    # not heads x s x s probabilities.
    by_kind: dict[LayerKind, float] = {}
    for kind, _, traffic, _, _, count, _, _, _ in layer_work(model, 8, Precision.BF16_MIXED, True):
        by_kind[kind] = by_kind.get(kind, 0.0) + traffic * count
    math_kind: dict[LayerKind, float] = {}
    for kind, _, traffic, _, _, count, _, _, _ in layer_work(model, 8, Precision.BF16_MIXED, False):
        math_kind[kind] = math_kind.get(kind, 0.0) + traffic * count
    assert {k: v for k, v in by_kind.items() if k is not LayerKind.ATTENTION} == \
        {k: v for k, v in math_kind.items() if k is not LayerKind.ATTENTION}
    blocks, hidden, seq, heads = 48, 1600, 1024, 25
    per_block = by_kind[LayerKind.ATTENTION] / blocks / 8 / 2  # per sample, in values (2 bytes in bf16)
    assert per_block == pytest.approx(4 * hidden * seq, rel=0.01)  # qkv (3h) + output (h) per token
    assert math_kind[LayerKind.ATTENTION] / blocks / 8 / 2 - per_block == pytest.approx(
        4 * heads * seq * seq + 2 * heads * seq * seq, rel=0.01)  # scores/probs 4 passes, dropped copy 2


def test_a_frozen_network_runs_its_forward_only_and_reads_its_weights_once_per_pass() -> None:
    # A DQN's target network (frozen: evaluated under no_grad) costs about one forward of the online network,
    # not a training step; its 1.6M-weight dense layer read its weights once per sample (206 MB a batch of 32)
    # until 2026-12-06, which made the Nature DQN's update 6.2 ms on a T4.
    from workers.sizing.efficiency import ITERATION_OVERHEAD_MS
    from workers.sizing.layers.build import compute_model_stats
    from workers.sizing.presets.small import _dqn_network
    from workers.sizing.timing import layer_work

    online = compute_model_stats(_dqn_network("online", frozen=False, actions=18), input_shape=[4, 84, 84],
                                 sequence_length=None)
    both = compute_model_stats(_dqn_network("online", frozen=False, actions=18)
                               + _dqn_network("target", frozen=True, actions=18), input_shape=[4, 84, 84],
                               sequence_length=None)
    job = training(batch_size=32, precision=Precision.FP32)
    for slug in ("t4", "gtx-1080-ti", "a100-80gb"):
        alone = estimate_iteration_ms(online, job, gpu(slug))
        with_target = estimate_iteration_ms(both, job, gpu(slug))
        forward_ms = alone.forward_ms - ITERATION_OVERHEAD_MS  # the layers' forward, launches included
        assert with_target.total_ms - alone.total_ms == pytest.approx(forward_ms, rel=0.2), slug
    assert training_flops(both, job) == pytest.approx(training_flops(online, job) * 4 / 3)
    # what a frozen row moves grows with the batch by its activations only (its weights are read once)
    frozen_fc = next(r for r in both.layers if r.name == "target.fc")
    assert frozen_fc.frozen and frozen_fc.parameters == 0 and frozen_fc.frozen_parameters == 3136 * 512 + 512

    def fc_bytes(batch: int) -> float:
        return next(w[2] for w in layer_work(both, batch, Precision.FP32, False)
                    if w[0] is LayerKind.DENSE and w[7] and w[1] == 2.0 * frozen_fc.multiply_adds * batch)

    assert fc_bytes(64) - fc_bytes(32) == pytest.approx((3136 + 512) * 32 * 4)


def test_a_t4s_tensor_cores_never_beat_its_measured_power_capped_gemm() -> None:
    # An NVIDIA forum measurement (thread 264462): a repeated cuBLAS fp16 GEMM of 4096^3 sustains about 24 TFLOPS on
    # a T4 under its 70 W cap. The 0.7 rule for 70-75 W cards put a typical dense layer at 28.2, above that best case.
    from catalog.gpus import load_gpus
    from workers.sizing.spec import Precision
    from workers.sizing.stats import LayerKind
    from workers.sizing.throughput import achieved_flops_per_ms
    gpus = {gpu.slug: gpu for gpu in load_gpus()}
    for kind in (LayerKind.DENSE, LayerKind.CONV):
        assert achieved_flops_per_ms(kind, Precision.FP16_MIXED, gpus["t4"]) / 1e9 < 24.0
    # the same card's CUDA cores, and the L4 (not measured), keep the rule's 0.7 of what an uncapped card reaches
    t4_fp32 = achieved_flops_per_ms(LayerKind.DENSE, Precision.FP32, gpus["t4"]) / 1e9
    assert 0.6 * gpus["t4"].fp32_tflops * 0.7 < t4_fp32 < gpus["t4"].fp32_tflops * 0.7
    l4 = achieved_flops_per_ms(LayerKind.DENSE, Precision.BF16_MIXED, gpus["l4"]) / 1e9
    a10g = achieved_flops_per_ms(LayerKind.DENSE, Precision.BF16_MIXED, gpus["a10g"]) / 1e9
    assert l4 / gpus["l4"].fp16_tflops == pytest.approx(0.7 * a10g / gpus["a10g"].fp16_tflops)
