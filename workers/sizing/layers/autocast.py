"""What mixed precision (autocast) keeps in float32: the bytes a row keeps beyond 2 a value.

Under torch.autocast the activations are not all 16-bit. Matrix products and convolutions run in 16
bits; LayerNorm, softmax and the embeddings give float32 (autocast's fp32 list, fp32 weights), and an
add of a 16-bit tensor to a float32 one is float32 (type promotion), so a transformer's residual stream
stays float32 from the embeddings on. Two consequences, measured here on Hugging Face's own
BertForSequenceClassification (transformers 5.25.0, torch 2.13.0 CPU bf16 autocast, batch 32 x 128,
per-module kept bytes; 2026-12-06):

- a row that keeps a float32 tensor keeps 4 bytes a value: each LayerNorm of the stream kept 12.0 MiB
  where 2 bytes a value gives 6.0;
- a matrix product keeps its own 16-bit cast of a float32 input, one per module: separate query, key
  and value projections keep three casts of the LayerNorm's output (7.12 MiB each: 6.0 the cast, 1.12
  the weight's), where one shared 16-bit input was counted; a gated feed-forward's gate and up two.

`Part.casts` says how many separate modules a projection row stands for (3 for separate Q, K and V);
the layer builder propagates each tensor's dtype under autocast (`output_is_fp32`) and sets each row's
`LayerStats.autocast_extra_bytes` (`extra_bytes`), which the memory walk adds under mixed precision only
(in fp32 every value is 4 bytes and the modules share one input). The loss rows are left out: the walk
keeps them in fp32 itself (step_walk.LOSS_VALUE_BYTES).
"""

from __future__ import annotations

from workers.sizing.layers.fields import Part
from workers.sizing.stats import LayerKind

# Rows that run in 16 bits under autocast: their output is 16-bit, and what they keep of a float32 input
# is their own cast of it.
CAST_KINDS = frozenset({LayerKind.DENSE, LayerKind.CONV, LayerKind.RECURRENT})
SIXTEEN_BIT_KINDS = CAST_KINDS | {LayerKind.ATTENTION}
# Rows whose output is float32 under autocast: autocast's fp32 list (layer_norm, group_norm, softmax,
# log_softmax), and the embeddings (a lookup in fp32 weights; a learned position or class token added or
# concatenated in fp32 promotes the sum).
FP32_OUTPUT_TYPES = frozenset({"layernorm", "groupnorm", "softmax", "log_softmax", "embedding",
                               "position_embedding", "class_token"})
# Rows that combine two tensors: float32 when either is (type promotion); the second operand of a block's
# residual add is the block's stream, whose dtype the layer's input gives.
PROMOTING_TYPES = frozenset({"add", "concat"})
# The loss rows: the walk holds them in fp32 whatever the precision (step_walk.LOSS_VALUE_BYTES).
LOSS_TYPES = frozenset({"log_softmax", "softmax", "cross_entropy", "mse", "fused_linear_cross_entropy",
                        "fused_cross_entropy"})
SIXTEEN_BIT_BYTES, FP32_BYTES = 2, 4


def output_is_fp32(part: Part, *, input_fp32: bool, layer_input_fp32: bool) -> bool:
    """Return whether the part's output is float32 under autocast, given its input's and its layer's input's."""
    if part.kind in SIXTEEN_BIT_KINDS:
        return False
    if part.type in FP32_OUTPUT_TYPES:
        return True
    if part.type in PROMOTING_TYPES:
        return input_fp32 or layer_input_fp32
    return input_fp32  # elementwise, pooling, views, batchnorm, RMSNorm: the input's dtype


def extra_bytes(part: Part, *, input_fp32: bool, output_fp32: bool, input_values: int, input_counted: bool,
                output_counted: int) -> int:
    """Return the bytes per sample the part keeps under autocast beyond 2 a value of what it counts.

    `input_values`: the size of its input; `input_counted`: whether its kept values include the input
    (not kept by an earlier row already); `output_counted`: the output values its kept values include.
    """
    if part.type in LOSS_TYPES or part.kind is LayerKind.ATTENTION:
        return 0
    if part.kind in CAST_KINDS:
        if not (part.keeps_input and input_fp32):
            return 0
        return SIXTEEN_BIT_BYTES * input_values * (part.casts - (1 if input_counted else 0))
    wider = FP32_BYTES - SIXTEEN_BIT_BYTES
    kept_input = (input_values if input_counted else 0) + part.extra_saved_values
    return wider * ((kept_input if input_fp32 else 0) + (output_counted if output_fp32 else 0))
