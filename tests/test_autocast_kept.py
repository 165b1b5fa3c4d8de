"""What mixed precision keeps in float32 (workers/sizing/layers/autocast.py): LayerNorms of the float32
residual stream, and each separate projection's own 16-bit cast of a float32 input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from workers.modelimport.models import resolve_model
from workers.modelimport.onnx_import import onnx_model_stats
from workers.sizing.errors import SpecError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.memory import step_peak
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.stats import ModelStats

SEQ, HIDDEN = 128, 256
TOKENS = SEQ * HIDDEN  # values of one [sequence, hidden] tensor a sample


def _encoder(**block: Any) -> ModelStats:
    layers = [{"type": "embedding", "name": "emb", "vocab": 1000, "dim": HIDDEN},
              {"type": "position_embedding", "name": "pos", "max_positions": SEQ},
              {"type": "layernorm", "name": "emb_ln"},
              {"type": "transformer_block", "name": "b0", "heads": 4, "norm": "post", **block},
              {"type": "transformer_block", "name": "b1", "heads": 4, "norm": "post", **block},
              {"type": "select", "name": "cls", "index": 0},
              {"type": "dense", "name": "head", "out_features": 2}]
    return compute_model_stats(layers, input_shape=None, sequence_length=SEQ, name="enc")


def _extra(model: ModelStats) -> dict[str, int]:
    return {r.name: r.autocast_extra_bytes for r in model.layers if r.autocast_extra_bytes}


def test_a_post_norm_encoder_keeps_its_norms_in_fp32_and_three_casts_for_separate_qkv() -> None:
    extra = _extra(_encoder())
    # each LayerNorm reads the float32 stream (the embeddings' sum, then residual adds): 2 more bytes a value
    for name in ("emb_ln", "b0.ln1", "b0.ln2", "b1.ln1", "b1.ln2"):
        assert extra[name] == 2 * TOKENS
    # Q, K and V as three modules: two more 16-bit casts of the float32 input than the one counted
    assert extra["b0.qkv"] == extra["b1.qkv"] == 2 * 2 * TOKENS
    # one packed projection (GPT-2's c_attn): its one cast is the input already counted
    assert "b0.qkv" not in _extra(_encoder(qkv_projections=1))
    assert "b0.fc1" not in extra  # its one module's cast of ln1's output is what the row counts


def test_a_cnn_keeps_nothing_in_fp32_beyond_its_batch() -> None:
    """Convolutions, batch norms and ReLUs run in 16 bits from the first convolution on."""
    assert _extra(preset_stats("resnet18")) == {}


def test_a_llama_block_casts_its_norms_output_once_per_projection() -> None:
    """Transformers' Llama: the composed RMSNorm returns the float32 stream's dtype, so q, k and v each cast
    it, and gate and up each cast the second norm's output (up reads the input gate already counts)."""
    config = {"model_type": "llama", "num_hidden_layers": 1, "hidden_size": HIDDEN, "num_attention_heads": 4,
              "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000}
    extra = _extra(resolve_model({"hf_config": config}, sequence_length=SEQ))
    assert extra["layers.0.qkv"] == 2 * 2 * TOKENS and extra["layers.0.up"] == 2 * TOKENS
    assert "layers.0.gate" not in extra and "layers.0.down" not in extra  # down reads silu * up: 16-bit


def test_the_extra_counts_under_mixed_precision_only() -> None:
    model = _encoder()
    plain = replace(model, layers=tuple(replace(r, autocast_extra_bytes=0) for r in model.layers))
    for precision, differs in ((Precision.FP32, False), (Precision.BF16_MIXED, True), (Precision.FP16_MIXED, True)):
        training = Training(batch_size=16, sequence_length=SEQ, precision=precision, optimizer=Optimizer.SGD)
        with_extra, without = step_peak(model, training), step_peak(plain, training)
        assert (with_extra.breakdown.activations_bytes != without.breakdown.activations_bytes) is differs


def test_qkv_projections_is_one_or_three() -> None:
    with pytest.raises(SpecError) as caught:
        _encoder(qkv_projections=2)
    assert caught.value.field.endswith("qkv_projections") and "1" in caught.value.reason


FIXTURES = Path(__file__).resolve().parent / "fixtures" / "onnx"


def _onnx_extra(net: str, sequence_length: int | None = None) -> dict[str, int]:
    data = (FIXTURES / f"{net}.train.onnx").read_bytes()
    return _extra(onnx_model_stats(data, name=net, sequence_length=sequence_length))


def test_an_imported_graph_follows_the_same_dtypes() -> None:
    """ONNX imports (workers/modelimport/onnx_autocast.py): a ViT's stream is float32 from its class token and
    position add, so its LayerNorms keep 4 bytes a value; a convolutional net keeps nothing more; a Mixer whose
    stream starts at a convolution stays 16-bit, and a linear layer's bias (an add of a float32 parameter the
    exporter writes apart) does not make its output float32."""
    vit = _onnx_extra("vit-t8-64")
    assert vit and any("LayerNorm" in name for name in vit)
    assert _onnx_extra("resnext50-64") == {} and _onnx_extra("mobilenetv2-64") == {}
    assert _onnx_extra("mixer-64") == {}
