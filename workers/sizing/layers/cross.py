"""A decoder block's cross-attention over the encoder's output, and T5's additive score bias.

An encoder-decoder (T5, BART, the original Transformer) runs a decoder block over the target's t tokens
whose second sub-layer attends to the encoder's output (its `memory`, s tokens): Q is projected from the
decoder's stream, K and V from the memory, scores are t x s. The memory is one tensor: the K/V projection
of every decoder block keeps it, and the layer builder counts it once, at the first (wiring.py). What each
core keeps follows self-attention's (seq.attention_parts): Q, K, V, the output, and under the math path
the t x s probabilities, the dropped copy and its mask; under a fused kernel a float32 log-sum-exp per head
and query row instead of those.

T5 adds a learned relative-position bias to the scores of every self-attention (its table, `relative_buckets`
x heads weights, lives in each stack's first block) and the padding mask to the scores of every attention.
Transformers (5.x, `sdpa_attention.create_position_bias_mask`) builds per call a float32 [batch, heads, q, k]
additive mask from them, which the fused kernel keeps for its backward: 4 bytes a score, per core
(`score_bias`). The math path adds it to the scores and keeps nothing more for it.
"""

from __future__ import annotations

from dataclasses import replace

from workers.sizing.layers.fields import Fields, Part, Shape, size
from workers.sizing.stats import LayerKind

LSE_BYTES = 4  # a fused attention kernel's log-sum-exp per head and query row is float32
BIAS_BYTES = 4  # T5's additive score bias and mask, float32 (the bias table's dtype)


def cross_attention_parts(f: Fields, x: Shape, memory: Shape, *, heads: int, dropout: float, bias: bool,
                          head_dim: int | None, kv_projections: int = 2, qkv_bias: bool | None = None) -> list[Part]:
    """Return the rows of cross-attention from the stream x [t, h] over the memory [s, h_m]: Q projection, K/V
    projection of the memory (`kv_projections`: 2 separate K and V modules, as T5 and BART, or 1 packed), the
    core, the output projection; `qkv_bias` (default `bias`) for Q, K and V alone (diffusers' to_q, to_k, to_v
    have none, its to_out has one)."""
    f.rank(memory, (2,), "[sequence, features]", hint="memory names an encoder's output, [sequence, features]")
    steps, hidden = x
    source, width = memory
    if head_dim is None:
        if hidden % heads:
            raise f.shape_error(f"{heads} heads must divide the hidden size {hidden}, or give head_dim")
        head_dim = hidden // heads
    inner = heads * head_dim
    b = 1 if bias else 0
    bq = b if qkv_bias is None else int(qkv_bias)
    q, kv, core = (steps, inner), (source, 2 * inner), (steps, inner)
    probs = heads * steps * source
    dropped = probs if dropout > 0 else 0
    return [
        Part("dense", LayerKind.DENSE, q, parameters=inner * (hidden + bq), multiply_adds=steps * hidden * inner,
             keeps_input=True, traffic_values=size(x) + size(q) + inner * (hidden + bq), suffix="cross_q"),
        Part("dense", LayerKind.DENSE, kv, parameters=2 * inner * (width + bq),
             multiply_adds=source * width * 2 * inner, keeps_input=True, reads_memory=True,
             traffic_values=size(memory) + size(kv) + 2 * inner * (width + bq), suffix="cross_kv",
             casts=kv_projections),
        # keeps K and V (its input), Q, and the t x s probabilities, as self-attention does
        Part("attention", LayerKind.ATTENTION, core, multiply_adds=2 * steps * source * inner, keeps_input=True,
             extra_saved_values=size(q) + probs + dropped, saved_mask_bytes=dropped,
             traffic_values=size(q) + size(kv) + size(core) + 4 * probs + 2 * dropped,
             neurons=size(core) + 2 * probs + dropped, suffix="cross_attn", fused_extra_saved_values=size(q),
             fused_mask_bytes=LSE_BYTES * heads * steps),
        Part("dense", LayerKind.DENSE, x, parameters=hidden * (inner + b), multiply_adds=steps * inner * hidden,
             keeps_input=True, traffic_values=size(core) + size(x) + hidden * (inner + b), suffix="cross_proj"),
    ]


def score_bias(parts: list[Part], heads: int, keys: int, *, buckets: int = 0) -> list[Part]:
    """Return attention rows with T5's additive score bias over `keys` positions: each core keeps it (float32, per
    score) under a fused kernel; `buckets` puts the relative-position table (buckets x heads weights) on the core."""
    out = []
    for part in parts:
        if part.kind is LayerKind.ATTENTION:
            lse = max(part.fused_mask_bytes, 0)
            part = replace(part, fused_mask_bytes=lse + BIAS_BYTES * heads * part.output_shape[0] * keys,
                           fused_extra_saved_values=max(part.fused_extra_saved_values, 0),
                           parameters=part.parameters + buckets * heads)
        out.append(part)
    return out
