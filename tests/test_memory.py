"""GPU memory: the baseline formula exactly, and a realistic peak that moves the way memory does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sizing_fixtures import GIB, gpu, mlp, resnet50, stats_only, training, transformer

from workers.sizing.layers.build import compute_model_stats
from workers.sizing.memory import (
    activation_bytes_by_layer,
    baseline_formula_bytes,
    estimate_memory,
    fits,
    recompute_share,
    sharded_memory,
    step_peak,
    usable_memory_bytes,
)
from workers.sizing.overheads import CUDA_CONTEXT_BYTES
from workers.sizing.presets.registry import preset_layers, preset_stats
from workers.sizing.spec import Framework, Optimizer, Precision
from workers.sizing.step_walk import Phase, walk_step


def test_baseline_formula_is_neurons_batch_2_4_plus_parameters_2_4() -> None:
    model = stats_only(neurons=1000, parameters=500, multiply_adds=10)
    assert baseline_formula_bytes(model, 3) == 1000 * 3 * 2 * 4 + 500 * 2 * 4 == 28_000


def test_halving_the_batch_halves_activation_memory() -> None:
    for model in (resnet50(), stats_only(neurons=10**7, parameters=10**6, multiply_adds=10**9)):
        full = estimate_memory(model, training(batch_size=64)).activations_bytes
        half = estimate_memory(model, training(batch_size=32)).activations_bytes
        assert abs(full - 2 * half) <= 1


def test_memory_rises_with_batch_parameters_and_sequence_length() -> None:
    model = resnet50()
    peaks = [estimate_memory(model, training(batch_size=b)).total_bytes for b in (1, 8, 64, 256)]
    assert peaks == sorted(peaks) and len(set(peaks)) == 4
    small = estimate_memory(mlp(width=1024), training()).total_bytes
    large = estimate_memory(mlp(width=2048), training()).total_bytes
    assert large > small
    by_seq = [estimate_memory(transformer(seq=s), training(batch_size=8)).activations_bytes
              for s in (128, 256, 512)]
    assert by_seq == sorted(by_seq)
    # attention keeps s x s probabilities: doubling the sequence more than doubles the activations
    assert by_seq[2] > 2 * by_seq[1]


def test_transformer_block_keeps_korthikanti_bytes_at_16_bits() -> None:
    s, h, a, blocks = 512, 768, 12, 12
    model = transformer(seq=s, hidden=h, heads=a, blocks=blocks)
    kept = sum(b for _, b in activation_bytes_by_layer(model, Precision.FP16_MIXED))
    assert kept == blocks * s * h * (34 + 5 * a * s // h)
    # the walk's backward peak holds at most what forward kept, the loop's output and two gradients
    peak = step_peak(model, training(batch_size=1, precision=Precision.FP16_MIXED, optimizer=Optimizer.SGD))
    assert peak.phase is Phase.BACKWARD
    assert kept < peak.breakdown.activations_bytes <= kept + 3 * max(layer.neurons for layer in model.layers) * 2


@pytest.mark.parametrize(("optimizer", "state", "temporary"), [
    (Optimizer.SGD, 0, 0), (Optimizer.MOMENTUM, 4, 0), (Optimizer.ADAM, 8, 4), (Optimizer.ADAMW, 8, 4)])
def test_a_parameter_heavy_step_peaks_at_the_update_with_state_and_temporaries(
        optimizer: Optimizer, state: int, temporary: int) -> None:
    model = stats_only(neurons=1000, parameters=10**6, multiply_adds=10**8)
    peak = step_peak(model, training(optimizer=optimizer))
    assert peak.phase is Phase.OPTIMIZER_STEP
    memory = peak.breakdown
    assert memory.optimizer_state_bytes == (state + temporary) * 10**6  # foreach Adam's sqrt(v) copy
    assert memory.parameters_bytes == 4 * 10**6 and memory.gradients_bytes == 4 * 10**6
    assert memory.activations_bytes == 0


def test_frozen_parameters_take_weights_but_no_gradients_or_state() -> None:
    # ModelStats.parameters counts the trainable weights; frozen ones come on top, weights only
    model = replace(stats_only(neurons=1000, parameters=600_000, multiply_adds=10**8), frozen_parameters=400_000)
    memory = estimate_memory(model, training(optimizer=Optimizer.MOMENTUM))
    assert memory.parameters_bytes == 4 * 10**6
    assert memory.gradients_bytes == 4 * 600_000
    assert memory.optimizer_state_bytes == 4 * 600_000


def test_a_dqn_trains_its_online_network_with_a_full_optimizer_state() -> None:
    dqn = preset_stats("dqn-atari")
    memory = estimate_memory(dqn, training(batch_size=32, optimizer=Optimizer.ADAM))
    assert dqn.parameters == dqn.frozen_parameters == 1_693_362
    assert memory.parameters_bytes >= 8 * 1_693_362  # online and target weights
    assert memory.optimizer_state_bytes >= 8 * 1_693_362


def test_gradients_appear_during_backward_so_a_transformer_peaks_with_few_of_them() -> None:
    model = transformer(seq=512)
    peak = step_peak(model, training(batch_size=16))
    assert peak.phase is Phase.BACKWARD
    assert peak.breakdown.gradients_bytes <= 4 * model.parameters / len(model.layers) * 2


def test_vgg_reaches_its_backward_peak_with_nearly_every_gradient() -> None:
    vgg = preset_stats("vgg16")
    peak = step_peak(vgg, training(batch_size=32, optimizer=Optimizer.SGD))
    assert peak.phase is Phase.BACKWARD
    assert peak.breakdown.gradients_bytes >= 0.85 * 4 * vgg.parameters  # the classifier's come first


def test_the_breakdown_at_the_peak_adds_up_to_the_peak() -> None:
    for model in (resnet50(), mlp(), transformer(seq=128), stats_only(neurons=10**7, parameters=10**6,
                                                                        multiply_adds=10**9)):
        for precision in Precision:
            memory = estimate_memory(model, training(precision=precision), gpu=gpu("a100-40gb"))
            assert memory.total_bytes == sum(memory.by_term().values())
            moments = walk_step(model, training(precision=precision), precision=precision)
            tensors = memory.total_bytes - memory.framework_reserve_bytes
            assert tensors == max(m.total_bytes for m in moments)


def test_a_model_given_as_totals_peaks_at_the_end_of_forward_or_at_the_update() -> None:
    wide = stats_only(neurons=10**8, parameters=10**6, multiply_adds=10**9)
    assert step_peak(wide, training()).phase is Phase.FORWARD
    lean = stats_only(neurons=10, parameters=10**8, multiply_adds=10**9)
    assert step_peak(lean, training()).phase is Phase.OPTIMIZER_STEP


def test_mixed_precision_halves_activations_and_keeps_fp32_master_weights() -> None:
    model = resnet50()
    fp32 = step_peak(model, training(precision=Precision.FP32))
    mixed = step_peak(model, training(precision=Precision.FP16_MIXED))
    assert fp32.phase is mixed.phase is Phase.BACKWARD
    assert fp32.breakdown.activations_bytes / mixed.breakdown.activations_bytes == pytest.approx(2, rel=0.05)
    # fp32 master weights, and the 16-bit copies of the layers whose backward has not yet run
    assert 4 * model.parameters < mixed.breakdown.parameters_bytes <= 6 * model.parameters
    assert fp32.breakdown.parameters_bytes == 4 * model.parameters


def test_bf16_on_a_card_without_bf16_is_sized_as_fp32() -> None:
    model = mlp()
    bf16 = estimate_memory(model, training(precision=Precision.BF16_MIXED), gpu=gpu("v100-16gb"))
    fp32 = estimate_memory(model, training(precision=Precision.FP32), gpu=gpu("v100-16gb"))
    assert bf16 == fp32
    on_ampere = estimate_memory(model, training(precision=Precision.BF16_MIXED), gpu=gpu("a100-40gb"))
    assert on_ampere.activations_bytes < fp32.activations_bytes


def test_recompute_keeps_about_two_over_root_n_of_the_activations() -> None:
    model = resnet50()
    plain = estimate_memory(model, training()).activations_bytes
    checkpointed = estimate_memory(model, training(recompute=True)).activations_bytes
    assert checkpointed < plain / 3
    assert recompute_share(model) == pytest.approx(2 / len(model.layers) ** 0.5)
    given_only = stats_only(neurons=10**7, parameters=10**6, multiply_adds=10**9)
    assert estimate_memory(given_only, training(recompute=True)).activations_bytes < estimate_memory(
        given_only, training()).activations_bytes


def test_framework_reserve_depends_on_generation_and_grows_with_the_tensors() -> None:
    model = resnet50()
    old = estimate_memory(model, training(), gpu=gpu("k80")).framework_reserve_bytes
    new = estimate_memory(model, training(), gpu=gpu("a100-40gb")).framework_reserve_bytes
    assert new - old == CUDA_CONTEXT_BYTES["ampere"] - CUDA_CONTEXT_BYTES["kepler"]
    small = estimate_memory(model, training(batch_size=8), gpu=gpu("a100-40gb")).framework_reserve_bytes
    assert small < new


def test_data_parallel_keeps_a_full_copy_and_pytorch_adds_gradient_buckets() -> None:
    model = mlp()
    one = estimate_memory(model, training())
    four = estimate_memory(model, training(), gpu_count=4)
    assert four.parameters_bytes == one.parameters_bytes and four.optimizer_state_bytes == one.optimizer_state_bytes
    assert four.activations_bytes == one.activations_bytes
    assert four.gradients_bytes == 2 * one.gradients_bytes
    tf_four = estimate_memory(model, training(framework=Framework.TENSORFLOW), gpu_count=4)
    assert tf_four.gradients_bytes == one.gradients_bytes


def test_graph_mode_tensorflow_keeps_more_activations_than_pytorch() -> None:
    model = resnet50()
    torch = estimate_memory(model, training()).activations_bytes
    tensorflow = estimate_memory(model, training(framework=Framework.TENSORFLOW)).activations_bytes
    assert tensorflow > torch


def test_sharding_splits_optimizer_state_and_gradients_n_ways() -> None:
    model = mlp()
    full = estimate_memory(model, training())
    sharded = sharded_memory(model, training(), gpu_count=4)
    assert sharded.optimizer_state_bytes == full.optimizer_state_bytes // 4
    assert sharded.gradients_bytes == full.gradients_bytes // 4
    assert sharded.parameters_bytes == full.parameters_bytes and sharded.total_bytes < full.total_bytes


def test_fitting_keeps_ten_percent_headroom() -> None:
    card = gpu("gtx-1080")
    assert usable_memory_bytes(card) == int(0.9 * 8 * GIB)
    assert fits(usable_memory_bytes(card), card)
    assert not fits(usable_memory_bytes(card) + 1, card)


def test_layers_holding_most_activation_memory_come_first() -> None:
    rows = activation_bytes_by_layer(resnet50(), Precision.FP32)
    sizes = [size for _, size in rows]
    assert sizes == sorted(sizes, reverse=True)
    assert rows[0][0].startswith("stem")  # the full-resolution stem keeps the most


@given(neurons=st.integers(1, 10**9), parameters=st.integers(0, 10**10), batch=st.integers(1, 4096),
       optimizer=st.sampled_from(list(Optimizer)), precision=st.sampled_from(list(Precision)))
def test_memory_is_monotone_in_batch_and_never_below_its_parts(neurons: int, parameters: int, batch: int,
                                                               optimizer: Optimizer,
                                                               precision: Precision) -> None:
    model = stats_only(neurons=neurons, parameters=parameters, multiply_adds=neurons)
    job = training(batch_size=batch, optimizer=optimizer, precision=precision)
    memory = estimate_memory(model, job)
    bigger = estimate_memory(model, replace(job, batch_size=batch + 1))
    assert bigger.total_bytes >= memory.total_bytes
    assert memory.total_bytes >= memory.activations_bytes + memory.parameters_bytes > 0


def test_gpt2s_primitive_gelu_keeps_three_more_inner_sized_tensors_per_block() -> None:
    layers = preset_layers("gpt2")
    fused = [{**layer, "activation": "gelu"} if layer.get("type") == "transformer_block" else layer for layer in layers]
    seq = 128
    primitive = compute_model_stats(layers, input_shape=None, sequence_length=seq)
    plain = compute_model_stats(fused, input_shape=None, sequence_length=seq)
    extra = sum(r.saved_values for r in primitive.layers) - sum(r.saved_values for r in plain.layers)
    assert extra == 12 * 3 * (4 * 768) * seq  # x, tanh's output and both factors of the product, less x


def test_a_tied_embedding_adds_its_dense_gradient_and_the_sum_at_the_end_of_backward() -> None:
    gpt2 = preset_stats("gpt2", sequence_length=128)
    job = training(batch_size=2, optimizer=Optimizer.SGD)
    moments = walk_step(gpt2, job, precision=Precision.FP32)
    last_backward = [m for m in moments if m.phase is Phase.BACKWARD][-1]
    wte_bytes = 50257 * 768 * 4
    assert last_backward.gradients == 4 * gpt2.parameters  # every gradient, the tied one counted once
    assert last_backward.activations >= 2 * wte_bytes
