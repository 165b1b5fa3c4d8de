"""Attention heads wider than hidden / heads (`head_dim`, Qwen3) and a causal core under a fused kernel.

The fused kernel (flash, memory-efficient: PyTorch's scaled_dot_product_attention with is_causal) skips the
tiles above the diagonal, so a causal core costs s (s + 1) / 2 of each s x s product there; the math path
multiplies the whole matrices and masks them.
"""

from __future__ import annotations

from typing import Any

from catalog.gpus import gpus_by_slug
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.presets.registry import preset_stats
from workers.sizing.stats import LayerKind
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.timing import layer_work, single_gpu_time

KNOWN = gpus_by_slug()
H, HEADS, KV, HEAD_DIM, S = 256, 8, 2, 64, 128  # Q is 8 x 64 = 512 wide, twice the hidden size


def _job(*, causal: bool = True, attention: str = "auto", **block: Any) -> Any:
    layers = [{"type": "embedding", "vocab": 1000, "dim": H},
              {"type": "transformer_block", "heads": HEADS, "kv_heads": KV, "ffn": 512, "norm_type": "rmsnorm",
               "activation": "swiglu", "dropout": 0.0, "bias": False, "causal": causal, **block},
              {"type": "dense", "out_features": 1000, "bias": False}]
    _, job = load_job({"model": {"layers": layers},
                       "training": {"batch_size": 4, "sequence_length": S, "precision": "bf16-mixed",
                                    "attention": attention}})
    return job


def _row(model: Any, suffix: str) -> Any:
    return next(r for r in model.layers if r.name.endswith(f".{suffix}"))


def test_head_dim_widens_q_k_v_and_the_attention_and_the_output_projection_maps_back() -> None:
    model = _job(head_dim=HEAD_DIM).model
    inner, kv_width = HEADS * HEAD_DIM, KV * HEAD_DIM
    qkv, core, proj = _row(model, "qkv"), _row(model, "attn"), _row(model, "proj")
    assert qkv.output_shape == (S, inner + 2 * kv_width) and qkv.parameters == H * (inner + 2 * kv_width)
    assert core.output_shape == (S, inner) and core.multiply_adds == 2 * S * S * inner
    assert proj.output_shape == (S, H) and proj.parameters == inner * H and proj.multiply_adds == S * inner * H
    # without head_dim a head is hidden / heads wide: the same block is narrower
    plain = _job().model
    assert _row(plain, "qkv").parameters == H * (H + 2 * KV * H // HEADS)
    # adapters: Q maps the hidden size to heads x head_dim; O maps it back; the model's width stays H
    shape = transformer_shape(model)
    assert shape is not None and shape.hidden == H and shape.heads == HEADS
    assert shape.lora_sizes["q"] == H + inner and shape.lora_sizes["k"] == H + kv_width
    assert shape.lora_sizes["o"] == inner + H


def test_qwen3_30b_a3b_has_its_published_size() -> None:
    model = preset_stats("qwen3-30b-a3b")
    print(f"Qwen3-30B-A3B: {model.parameters:,} parameters (model card: 30.5B, recalled)")
    assert abs(model.parameters / 30.5e9 - 1) < 0.005
    assert _row(model, "qkv").output_shape[-1] == 32 * 128 + 2 * 4 * 128  # Q 4096 wide at hidden 2048


def test_a_causal_core_under_a_fused_kernel_does_half_the_products() -> None:
    model = _job().model
    core = _row(model, "attn")
    assert core.kind is LayerKind.ATTENTION and core.fused_multiply_adds == S * (S + 1) * H
    assert _row(_job(causal=False).model, "attn").fused_multiply_adds == -1  # an encoder: every product
    precision = _job().training.precision

    def attention_flops(fused: bool) -> float:
        return sum(flops * n for kind, flops, _, _, _, n, _, _, _ in layer_work(model, 4, precision, fused)
                   if kind is LayerKind.ATTENTION)

    assert attention_flops(True) == 2.0 * core.fused_multiply_adds * 4
    assert attention_flops(False) == 2.0 * core.multiply_adds * 4
    # Llama 3 8B at 8,192 tokens on an A100: the fused kernel's step is the shorter by the skipped half
    _, llama = load_job({"model": {"preset": "llama3-8b"},
                         "training": {"batch_size": 1, "sequence_length": 8192, "precision": "bf16-mixed"}})
    _, eager = load_job({"model": {"preset": "llama3-8b"},
                         "training": {"batch_size": 1, "sequence_length": 8192, "precision": "bf16-mixed",
                                      "attention": "math"}})
    a100 = KNOWN["a100-80gb"]
    fused_ms = single_gpu_time(llama.model, llama.training, a100).total_ms
    math_ms = single_gpu_time(eager.model, eager.training, a100).total_ms
    print(f"Llama 3 8B, 8,192 tokens, A100: step {fused_ms:,.0f} ms fused, {math_ms:,.0f} ms on the math path")
    assert fused_ms < 0.95 * math_ms


def test_qwen3_moe_against_nemo_automodels_h100_run() -> None:
    # NVIDIA-NeMo/Automodel@01926a5c443b:docs/performance-summary.md (DGX-H100, BF16, last updated 2025-10-02):
    # Qwen3 MoE 30B, 8 GPUs, local batch 4, sequence 4096, EP 8, FSDP 8, TE + DeepEP, "Fake balanced gate":
    # 12,040 tokens/s per GPU.
    _, job = load_job({"model": {"preset": "qwen3-30b-a3b"},
                       "training": {"batch_size": 4, "sequence_length": 4096, "precision": "bf16-mixed",
                                    "optimizer": "adamw"}, "dataset": {"samples": 100000}})
    req = estimate_requirements(job, gpus=(KNOWN["h100-sxm"],), gpu_count=8, known_gpus=KNOWN)
    predicted = 4 * 4096 * 1000.0 / req.per_gpu[0].iteration_ms
    error = predicted / 12040 - 1
    print(f"Qwen3-30B-A3B on 8 H100: predicted {predicted:,.0f} tokens/s per GPU, measured 12,040 ({error:+.1%})")
    assert abs(error) < 0.35  # no expert parallelism or all-to-all is modelled; the experts' time is the active work
