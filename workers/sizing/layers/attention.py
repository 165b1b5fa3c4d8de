"""Which attention kernel a step runs (`training.attention`), and what each row keeps under it.

PyTorch's `scaled_dot_product_attention` picks a kernel per call. The fused ones (memory-efficient,
flash) keep q, k, v, the output and a float32 log-sum-exp per query row; no sequence x sequence
matrix and no dropout mask (they regenerate it from the RNG state). The math path keeps the
softmax output, the dropped probabilities and their 1-byte mask (Korthikanti et al. 2022).

`auto` (the default) is a fused kernel (`efficient`) on every card PyTorch 2's SDPA has one for, in any
precision: flash needs fp16/bf16 on sm80+, and the memory-efficient kernel (xformers' CUTLASS kernel) runs
fp32 and fp16 from sm50 (Maxwell) on: on a V100 in fp32 with PyTorch 2.0 it ran and "the memory footprint is
drastically reduced compared to the normal math mode" (pytorch/pytorch#97514, 2023-03-24; xformers#362 added
V100 and P100). Before 2026-12-06 `auto` was `math` before Ampere and in fp16-mixed on any card, which sized a
BERT or GPT-2 job in fp16 on a T4, V100 or A100, or in fp32 on a GTX 1080 Ti, as eager attention code runs it
(Hugging Face BERT before transformers 4.41, timm before 0.9): 27.1 GiB against 17.7 GiB for GPT-2 at batch 8
on a GTX 1060. Current stacks call SDPA (transformers' default `attn_implementation="sdpa"`, timm's fused_attn,
torch.nn.MultiheadAttention with need_weights=False); eager code says `math`, as the validation records of
that era do. Kepler (sm35/37) has no fused kernel: `math`.
"""

from __future__ import annotations

from enum import StrEnum

from workers.sizing.stats import LayerStats

FUSED_ARCHITECTURES = frozenset({"maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell"})


class Attention(StrEnum):
    """The attention kernel of the step."""

    AUTO = "auto"
    EFFICIENT = "efficient"
    FLASH = "flash"
    MATH = "math"


def resolve_attention(requested: Attention, *, architecture: str | None, precision: str,
                      framework: str = "pytorch") -> Attention:
    """Return the kernel a step runs: the requested one, or `auto`'s choice for this GPU.

    `precision` no longer changes `auto` (a fused kernel runs every precision from sm50 on); it stays for the
    callers, which pass it. Without a GPU (`architecture` None) `auto` assumes a current card. The fused
    kernels are PyTorch's (`scaled_dot_product_attention`); TensorFlow's and JAX's stock attention layers
    compute the softmax of the full score matrix in memory (tf.keras `MultiHeadAttention`, flax.linen's
    `dot_product_attention`), so `auto` is `math` for them.
    """
    if requested is not Attention.AUTO:
        return requested
    if framework != "pytorch":
        return Attention.MATH
    return Attention.EFFICIENT if architecture is None or architecture in FUSED_ARCHITECTURES else Attention.MATH


def kept_for_backward(layer: LayerStats, attention: Attention) -> tuple[int, int]:
    """Return a row's kept values and mask bytes under this attention kernel."""
    if attention is Attention.MATH or layer.fused_saved_values < 0:
        return layer.saved_values, layer.saved_mask_bytes
    mask = layer.saved_mask_bytes if layer.fused_saved_mask_bytes < 0 else layer.fused_saved_mask_bytes
    return layer.fused_saved_values, mask


def matrix_traffic_values(layer_kind_is_attention: bool, saved_values: int, fused_saved_values: int,
                          saved_mask_bytes: int) -> int:
    """Return the values per sample an attention core's math path moves through memory for its s x s matrix.

    The math path writes the scores, reads them into the softmax, writes the probabilities and reads them
    into the AV matmul (4 passes), and with dropout writes and reads the dropped copy (2 more); a fused
    kernel (flash, memory-efficient) keeps those tiles on chip and moves only q, k, v and the output
    (FlashAttention's defining property: Dao et al. 2022, estimation-methods.md §2). What the math path keeps
    beyond the fused kernel is the probabilities and the dropped copy (attention_parts in seq.py), so the
    matrix traffic is 4 x that difference less 2 x the dropped copy (one value per mask byte). Rows that are
    not one attention core (ONNX imports split attention into its ops) give 0: they are timed as they are.
    """
    if not layer_kind_is_attention or fused_saved_values < 0:
        return 0
    beyond = saved_values - fused_saved_values
    return max(0, 4 * beyond - 2 * saved_mask_bytes)

