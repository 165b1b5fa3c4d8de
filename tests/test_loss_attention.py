"""The step's loss (`training.loss`) and attention kernel (`training.attention`)."""

from __future__ import annotations

import base64
import gzip
from pathlib import Path

import pytest
from marshmallow import ValidationError

from workers.schemas.specs import load_job
from workers.sizing.layers.attention import Attention, kept_for_backward, resolve_attention
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.memory import activation_bytes_per_sample
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Precision

CLASSIFIER = [{"type": "dense", "out_features": 64}, {"type": "relu"}, {"type": "dense", "out_features": 10}]
FIXTURES = Path(__file__).parent / "fixtures" / "onnx"


def classifier():  # type: ignore[no-untyped-def]
    return compute_model_stats(CLASSIFIER, input_shape=[32], sequence_length=None)


def test_cross_entropy_keeps_the_output_its_log_softmax_and_the_targets() -> None:
    model = with_loss(classifier(), Loss.CROSS_ENTROPY)
    row = model.layers[-1]
    assert (row.name, row.type, row.saved_values, row.saved_mask_bytes) == ("loss", "cross_entropy", 20, 8)
    assert row.neurons == 10  # the gradient buffers of backward are output-sized
    assert model.neurons == classifier().neurons  # the totals describe the network


def test_mse_keeps_the_output_and_float_targets_and_none_adds_nothing() -> None:
    row = with_loss(classifier(), Loss.MSE).layers[-1]
    assert (row.type, row.saved_values, row.saved_mask_bytes) == ("mse", 20, 0)
    assert with_loss(classifier(), Loss.NONE) == classifier()


def test_a_language_model_preset_ending_in_the_loss_log_softmax_adds_the_logits_held_by_the_loop() -> None:
    gpt2 = preset_stats("gpt2", sequence_length=128)
    assert gpt2.layers[-1].name == "loss"
    row = with_loss(gpt2, Loss.CROSS_ENTROPY).layers[-1]
    logits = 128 * 50257
    assert row.saved_values == logits and row.saved_mask_bytes == 8 * 128  # one int64 target a token


def test_per_position_targets_for_sequences_and_pixels() -> None:
    seq = compute_model_stats([{"type": "dense", "out_features": 100}], input_shape=[16, 8], sequence_length=None)
    assert with_loss(seq, Loss.CROSS_ENTROPY).layers[-1].saved_mask_bytes == 8 * 16
    seg = compute_model_stats([{"type": "conv2d", "out_channels": 3, "kernel": 1}], input_shape=[3, 8, 8],
                              sequence_length=None)
    assert with_loss(seg, Loss.CROSS_ENTROPY).layers[-1].saved_mask_bytes == 8 * 64


@pytest.mark.parametrize(("architecture", "precision", "kernel"), [
    ("ampere", "fp32", Attention.EFFICIENT), ("hopper", "bf16-mixed", Attention.EFFICIENT),
    # PyTorch 2's memory-efficient kernel runs fp32 and fp16 from sm50 on (pytorch/pytorch#97514: V100, fp32)
    ("ampere", "fp16-mixed", Attention.EFFICIENT), ("volta", "fp32", Attention.EFFICIENT),
    ("turing", "fp16-mixed", Attention.EFFICIENT), ("pascal", "fp32", Attention.EFFICIENT),
    ("maxwell", "fp32", Attention.EFFICIENT),
    ("kepler", "fp32", Attention.MATH),  # no fused kernel before sm50
])
def test_auto_attention_is_a_fused_kernel_on_every_card_sdpa_has_one_for(
        architecture: str, precision: str, kernel: Attention) -> None:
    assert resolve_attention(Attention.AUTO, architecture=architecture, precision=precision) is kernel
    assert resolve_attention(Attention.FLASH, architecture=architecture, precision=precision) is Attention.FLASH
    # The fused kernels are PyTorch's SDPA: TensorFlow and JAX attention layers keep the matrix under auto.
    for framework in ("tensorflow", "jax"):
        assert resolve_attention(Attention.AUTO, architecture=architecture, precision=precision,
                                 framework=framework) is Attention.MATH
        assert resolve_attention(Attention.EFFICIENT, architecture=architecture, precision=precision,
                                 framework=framework) is Attention.EFFICIENT


def test_fused_attention_in_a_preset_drops_the_sequence_by_sequence_terms() -> None:
    seq, heads, blocks = 256, 12, 12
    gpt2 = preset_stats("gpt2", sequence_length=seq)
    math = activation_bytes_per_sample(gpt2, Precision.FP32, recompute=False, attention=Attention.MATH)
    fused = activation_bytes_per_sample(gpt2, Precision.FP32, recompute=False, attention=Attention.EFFICIENT)
    scores = heads * seq * seq
    # math: softmax output and dropped probabilities (fp32) and a 1-byte mask; fused: a float32
    # log-sum-exp per head and row
    assert math - fused == blocks * (scores * (2 * 4 + 1) - 4 * heads * seq)
    rows = [r for r in gpt2.layers if r.type == "attention"]
    assert all(kept_for_backward(r, Attention.FLASH)[1] == 4 * heads * seq for r in rows)


def test_the_spec_takes_loss_and_attention_and_names_a_bad_value() -> None:
    _, job = load_job({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, "loss": "mse",
                                                                   "attention": "math"}})
    assert job.training.loss is Loss.MSE and job.training.attention is Attention.MATH
    assert job.model.layers[-1].type == "mse"
    _, default = load_job({"model": {"preset": "resnet18"}, "training": {"batch_size": 8}})
    assert default.training.loss is Loss.CROSS_ENTROPY and default.training.attention is Attention.AUTO
    for key in ("loss", "attention"):
        with pytest.raises(ValidationError) as error:
            load_job({"model": {"preset": "resnet18"}, "training": {"batch_size": 8, key: "bogus"}})
        assert f"training.{key}" in error.value.messages


def test_a_dynamic_onnx_export_in_a_job_matches_the_fixed_one() -> None:
    def job(kind: str):  # type: ignore[no-untyped-def]
        data = gzip.decompress((FIXTURES / f"transformer-encoder.train.{kind}.onnx.gz").read_bytes())
        return load_job({"model": {"onnx": base64.b64encode(data).decode()},
                         "training": {"batch_size": 8, "sequence_length": 32}})[1]
    fixed, dynamic = job("fixed"), job("dynamic")
    assert [r.saved_values for r in fixed.model.layers] == [r.saved_values for r in dynamic.model.layers]
    assert fixed.model.layers[-1].type == "cross_entropy"


def test_the_fused_kernel_auto_assumes_is_said_where_it_changes_the_peak() -> None:
    from catalog.loader import load_catalog
    from workers.schemas.specs import load_job
    from workers.sizing.estimate import estimate_requirements

    known = {g.slug: g for g in load_catalog().gpus}

    def warned(spec: dict[str, object]) -> list[str]:
        req = estimate_requirements(load_job(spec)[1], known_gpus=known)
        return [w.message for w in req.warnings if w.code == "attention-kernel-assumed"]

    gpt2 = {"model": {"preset": "gpt2-xl"},
            "training": {"batch_size": 8, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 1000}}
    (message,) = warned(gpt2)
    assert "training.attention: math" in message
    fused = estimate_requirements(load_job(gpt2)[1], known_gpus=known).gpu_memory_bytes
    math_path = estimate_requirements(load_job({**gpt2, "training": {**gpt2["training"], "attention": "math"}})[1],
                                      known_gpus=known).gpu_memory_bytes
    assert math_path > 1.5 * fused  # the s x s matrices of 48 blocks at 1024 tokens
    assert f"{math_path / 2**30:.1f} GiB" in message and f"{fused / 2**30:.1f} GiB" in message
    # fp16 is fused under auto too (flash on Ampere and later, memory-efficient before): said the same way
    assert warned({**gpt2, "training": {**gpt2["training"], "precision": "fp16-mixed"}})
    # Named kernels, other frameworks and models without attention say nothing.
    for training in ({"attention": "math"}, {"attention": "flash"}, {"framework": "tensorflow"}):
        assert not warned({**gpt2, "training": {**gpt2["training"], **training}})
    assert not warned({"model": {"preset": "resnet50"}, "training": {"batch_size": 64, "precision": "bf16-mixed"},
                       "dataset": {"samples": 1000}})
