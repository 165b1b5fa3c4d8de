"""Rules added with the calibration: multi-GPU latency floor, GAN passes, Winograd 3x3 convolutions."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sizing_fixtures import gpu, resnet50, training

from catalog.gpus import gpus_by_slug
from workers.sizing.efficiency import (
    ALLREDUCE_BASE_LATENCY_MS,
    ALLREDUCE_STEP_LATENCY_MS,
    DATA_PARALLEL_SYNC_MS,
    WINOGRAD_MAC_SHARE,
)
from workers.sizing.errors import SpecError
from workers.sizing.estimate import estimate_requirements
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.multigpu import allreduce_latency_ms, allreduce_ms, ring_link
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Dataset, JobSpec, Optimizer, Precision
from workers.sizing.stats import ModelStats
from workers.sizing.timing import estimate_iteration_ms, training_flops

KNOWN = gpus_by_slug()


def test_allreduce_latency_is_nccls_per_call_and_per_ring_step_cost() -> None:
    two = allreduce_latency_ms(gpu_count=2, buckets=1, link="pcie")  # a ring: 2 x (2 - 1) steps
    assert two == pytest.approx(ALLREDUCE_BASE_LATENCY_MS + 2 * ALLREDUCE_STEP_LATENCY_MS["pcie"])
    eight = allreduce_latency_ms(gpu_count=8, buckets=1, link="pcie")  # a tree: 2 x log2(8) steps
    assert eight == pytest.approx(ALLREDUCE_BASE_LATENCY_MS + 2 * 3 * ALLREDUCE_STEP_LATENCY_MS["pcie"])
    assert allreduce_latency_ms(gpu_count=128, buckets=1, link="network") == pytest.approx(
        ALLREDUCE_BASE_LATENCY_MS + 2 * 7 * ALLREDUCE_STEP_LATENCY_MS["network"])
    assert allreduce_latency_ms(gpu_count=8, buckets=3, link="pcie") == pytest.approx(3 * eight)
    assert allreduce_latency_ms(gpu_count=8, buckets=1, link="nvlink") < eight
    assert allreduce_latency_ms(gpu_count=8, buckets=1, link="network") > eight
    assert allreduce_latency_ms(gpu_count=1, buckets=1, link="pcie") == 0.0
    # a tiny exchange costs its latency, not nothing
    assert allreduce_ms(1000, gpu_count=8, link_gb_per_s=10.0, link="pcie") >= eight


def test_a_tiny_model_gains_little_from_eight_cheap_gpus_and_the_warning_says_so() -> None:
    job = JobSpec(preset_stats("vae-mnist"), training(batch_size=128, optimizer=Optimizer.ADAM),
                  Dataset(samples=60_000, size_bytes=47_040_000))
    card = gpu("gtx-1050-ti")
    one = estimate_iteration_ms(job.model, job.training, card)
    eight = estimate_iteration_ms(job.model, job.training, card, gpu_count=8)
    assert one.total_ms < 10.0  # a very short iteration
    assert eight.speedup_vs_one_gpu < 0.75 * 8
    assert eight.total_ms >= one.total_ms + DATA_PARALLEL_SYNC_MS
    codes = {w.code for w in estimate_requirements(job, gpus=[card], gpu_count=8, known_gpus=KNOWN).warnings}
    assert {"run-trials-in-parallel", "parameter-exchange-bound", "short-iteration"} <= codes


def test_a_compute_heavy_model_still_scales_on_nvlink() -> None:
    time = estimate_iteration_ms(resnet50(), training(batch_size=256), gpu("a100-80gb"), gpu_count=8)
    assert time.speedup_vs_one_gpu > 0.75 * 8


def test_machines_of_a_generation_talk_over_that_generations_cloud_network() -> None:
    assert ring_link(gpu("h100-sxm"), 16)[1] > ring_link(gpu("a100-80gb"), 16)[1] > ring_link(gpu("v100-16gb"), 16)[1]
    assert ring_link(gpu("a100-80gb"), 16, inter_node_gbit_per_s=100.0)[1] == pytest.approx(100 / 8 * 0.8)


def test_a_gan_step_runs_the_discriminator_three_times_and_the_generator_once() -> None:
    gan = preset_stats("dcgan")
    discriminator = [layer for layer in gan.layers if layer.name.startswith("D.")]
    generator = [layer for layer in gan.layers if layer.name.startswith("G.")]
    assert {layer.passes for layer in discriminator} == {3} and {layer.passes for layer in generator} == {1}
    d_macs, g_macs = (sum(layer.multiply_adds for layer in part) for part in (discriminator, generator))
    job = training(batch_size=64)
    assert training_flops(gan, job) == pytest.approx(2 * 64 * 3 * (3 * d_macs + g_macs))
    once = replace(gan, layers=tuple(replace(layer, passes=1) for layer in gan.layers))
    slow, fast = (estimate_iteration_ms(m, job, gpu("v100-16gb")).total_ms for m in (gan, once))
    assert 1.5 < slow / fast < 3.0  # D is half the work and runs three times


def test_passes_cost_time_not_memory() -> None:
    from workers.sizing.memory import estimate_memory

    gan = preset_stats("dcgan")
    once = replace(gan, layers=tuple(replace(layer, passes=1) for layer in gan.layers))
    job = training(batch_size=64)
    assert estimate_memory(gan, job).total_bytes == estimate_memory(once, job).total_bytes


def test_passes_must_be_a_positive_whole_number() -> None:
    layers: list[dict[str, object]] = [{"type": "dense", "out_features": 4, "passes": 0}]
    with pytest.raises(SpecError) as error:
        compute_model_stats(layers, input_shape=(8,), sequence_length=None)
    assert error.value.field == "model.layers[0].passes"


def _conv(stride: int, groups: int = 1) -> ModelStats:
    return compute_model_stats(
        [{"type": "conv2d", "out_channels": 256, "kernel": 3, "padding": 1, "stride": stride, "groups": groups}],
        input_shape=(256, 56, 56), sequence_length=None)


def test_only_dense_stride_1_convolutions_count_kernel_positions() -> None:
    assert _conv(1).layers[0].kernel_positions == 9
    assert _conv(2).layers[0].kernel_positions == 0
    assert _conv(1, groups=256).layers[0].kernel_positions == 0


def test_winograd_cuts_3x3_convolutions_on_cuda_cores_only() -> None:
    winograd = _conv(1)
    plain = replace(winograd, layers=tuple(replace(layer, kernel_positions=0) for layer in winograd.layers))
    job = training(batch_size=64, optimizer=Optimizer.SGD)
    pascal = [estimate_iteration_ms(m, job, gpu("gtx-1080")).compute_ms for m in (winograd, plain)]
    assert pascal[0] == pytest.approx(WINOGRAD_MAC_SHARE * pascal[1])
    mixed = replace(job, precision=Precision.FP16_MIXED)
    volta = [estimate_iteration_ms(m, mixed, gpu("v100-16gb")).compute_ms for m in (winograd, plain)]
    assert volta[0] == pytest.approx(volta[1])  # tensor cores: implicit GEMM


def test_the_calibration_fits_within_bounds_lowers_its_loss_and_leaves_the_core_as_shipped() -> None:
    from workers.accuracy.accuracy import load_measurements
    from workers.accuracy.calibration import FITTED, fit_efficiency, shipped_values

    records = [r for r in load_measurements() if r["id"].startswith(("jcj-", "timm-3090-resnet"))]
    before = shipped_values()
    result = fit_efficiency(records, KNOWN, rounds=1)
    assert result.loss_after <= result.loss_before
    assert all(p.low <= result.values[p.name] <= p.high for p in FITTED)
    assert shipped_values() == before


def test_applied_values_change_predictions_only_inside_the_block() -> None:
    from workers.accuracy.calibration import applied

    model, job, card = resnet50(), training(batch_size=64), gpu("gtx-1080")
    shipped = estimate_iteration_ms(model, job, card).total_ms
    with applied({"conv.simt": 0.1}):
        assert estimate_iteration_ms(model, job, card).total_ms > 2 * shipped
    assert estimate_iteration_ms(model, job, card).total_ms == pytest.approx(shipped)
