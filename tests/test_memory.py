"""GPU memory: the baseline formula exactly, and a realistic peak that moves the way memory does."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sizing_fixtures import GIB, gpu, mlp, resnet50, stats_only, training, transformer

from workers.sizing.memory import (
    activation_bytes_by_layer,
    baseline_formula_bytes,
    estimate_memory,
    fits,
    recompute_share,
    sharded_memory,
    usable_memory_bytes,
)
from workers.sizing.overheads import CUDA_CONTEXT_BYTES
from workers.sizing.spec import Framework, Optimizer, Precision


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
    kept = estimate_memory(model, training(batch_size=1, precision=Precision.FP16_MIXED)).activations_bytes
    transient = 2 * max(layer.neurons for layer in model.layers) * 2
    assert kept - transient == blocks * s * h * (34 + 5 * a * s // h)


@pytest.mark.parametrize(("optimizer", "bytes_per_parameter"), [
    (Optimizer.SGD, 0), (Optimizer.MOMENTUM, 4), (Optimizer.ADAM, 8), (Optimizer.ADAMW, 8)])
def test_optimizer_state_per_optimizer(optimizer: Optimizer, bytes_per_parameter: int) -> None:
    model = stats_only(neurons=1000, parameters=10**6, multiply_adds=10**8)
    memory = estimate_memory(model, training(optimizer=optimizer))
    assert memory.optimizer_state_bytes == bytes_per_parameter * 10**6
    assert memory.parameters_bytes == 4 * 10**6 and memory.gradients_bytes == 4 * 10**6


def test_frozen_parameters_take_weights_but_no_gradients_or_state() -> None:
    model = stats_only(neurons=1000, parameters=10**6, multiply_adds=10**8)
    model = replace(model, frozen_parameters=400_000)
    memory = estimate_memory(model, training(optimizer=Optimizer.ADAM))
    assert memory.parameters_bytes == 4 * 10**6
    assert memory.gradients_bytes == 4 * 600_000
    assert memory.optimizer_state_bytes == 8 * 600_000


def test_mixed_precision_halves_activations_and_keeps_fp32_master_weights() -> None:
    model = mlp()
    fp32 = estimate_memory(model, training(precision=Precision.FP32))
    mixed = estimate_memory(model, training(precision=Precision.FP16_MIXED))
    assert abs(fp32.activations_bytes - 2 * mixed.activations_bytes) <= 1
    assert mixed.parameters_bytes == 6 * model.parameters  # fp32 master + fp16 copy
    assert mixed.gradients_bytes == fp32.gradients_bytes == 4 * model.parameters
    assert mixed.optimizer_state_bytes == fp32.optimizer_state_bytes


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
