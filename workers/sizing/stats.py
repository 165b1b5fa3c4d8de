"""A network summarised as its editor's statistics panel shows it: neurons, parameters, multiply-adds."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class LayerKind(StrEnum):
    """How a layer spends time on a GPU; the timing model keeps one efficiency factor per kind."""

    CONV = "conv"  # convolutions and transposed convolutions (cuDNN)
    DENSE = "dense"  # affine / matmul (cuBLAS GEMM)
    ATTENTION = "attention"  # attention score and context matmuls, softmax over s x s
    RECURRENT = "recurrent"  # LSTM / GRU cells
    NORM = "norm"  # batchnorm, layernorm
    ELEMENTWISE = "elementwise"  # activations, dropout, add, concat, reshape, upsample
    POOL = "pool"  # max / avg / global pooling
    EMBEDDING = "embedding"  # table look-ups
    GENERIC = "generic"  # a model given only as totals (`stats`)


@dataclass(frozen=True)
class LayerStats:
    """One layer's statistics for one sample.

    `neurons` is the editor's Output: the activation values the layer produces. The memory model
    uses `saved_values` instead: the values this layer keeps for the backward pass (which differs
    by kind: batchnorm keeps its input, attention keeps its s x s probabilities, in-place ReLU
    keeps nothing extra), and `saved_mask_bytes` for 1-byte masks (dropout).
    `traffic_values` is what the layer reads and writes in one forward pass (inputs, outputs,
    weights), the memory-bound part of the roofline time model.
    `passes` counts the layer's forward-and-backward passes in one training step: 1 for most layers;
    a GAN's discriminator runs 3 (the real batch and the fake batch for its own loss, the fake batch
    again for the generator's). Passes run one after another, so they cost time, not memory.
    `kernel_positions` is k x k of a dense (ungrouped) stride-1 convolution, the shape cuDNN can run
    with Winograd's algorithm (fewer multiplies than multiply-adds); 0 for every other layer.
    `pattern` names the fused op an imported node belongs to ("silu", "gelu", "layernorm",
    "groupnorm", ...) when the exporter wrote that op as several primitive nodes; "" otherwise.
    `fused_saved_values` / `fused_saved_mask_bytes` are what the row keeps when attention runs as
    a fused kernel (memory-efficient or flash: q, k, v, the output and a float32 log-sum-exp per
    row; no probabilities, no dropout mask); -1 means the same as `saved_values` /
    `saved_mask_bytes` (`workers.sizing.layers.attention.kept_for_backward` picks one).
    """

    name: str
    type: str
    output_shape: tuple[int, ...]
    neurons: int
    parameters: int
    multiply_adds: int
    kind: LayerKind
    saved_values: int
    saved_mask_bytes: int = 0
    traffic_values: int = 0
    passes: int = 1
    kernel_positions: int = 0
    pattern: str = ""
    fused_saved_values: int = -1
    fused_saved_mask_bytes: int = -1
    # A causal attention core run by a fused kernel (flash, memory-efficient) skips the masked half of its
    # s x s products: its multiply-adds then; -1 when the same as `multiply_adds` (not causal, or no core).
    fused_multiply_adds: int = -1
    shared_parameters: int = 0  # weights it uses that another row counts (a tied LM head's embedding)
    # A frozen row (a DQN's target network, a frozen backbone) runs forward only, under no_grad: no backward
    # pass, no gradient; its weights, read but not trained, are `frozen_parameters` (its `parameters` is 0).
    frozen: bool = False
    frozen_parameters: int = 0
    # Bytes a sample the row keeps under mixed precision beyond 2 a value of `saved_values`: float32 tensors
    # it keeps (a LayerNorm of the float32 residual stream) and its own casts of a float32 input (separate Q,
    # K and V projections each keep one): layers/autocast.py. 0 in fp32, where every value is 4 bytes.
    autocast_extra_bytes: int = 0


@dataclass(frozen=True)
class BatchInput:
    """The input batch the training loop holds on the device, per sample (targets are the loss row's).

    `bytes` counts every input tensor in its own dtype (float32 images, int64 token ids; a DQN's
    replay batch holds s and s'). `kept_float_values` / `kept_integer_values` are the input values a
    row already counts as kept for backward: a first convolution keeps its input, which in fp32 is
    the batch tensor itself and under autocast a 16-bit cast beside it; integer ids are never cast.
    """

    bytes: int
    kept_float_values: int = 0
    kept_integer_values: int = 0
    shape: tuple[int, ...] = ()  # one sample's input (channels, height, width for an image); () unknown


@dataclass(frozen=True)
class ModelStats:
    """A whole model's statistics per sample, with the per-layer rows when they are known.

    `layers` is empty for a model given as plain totals. `components` names sub-networks that
    train together (e.g. a GAN's generator and discriminator, a DQN's online and target network);
    `parameters` counts the trainable weights only; `frozen_parameters` counts the others, which
    take no gradient and no optimizer state (a DQN's target network). Weights in memory are
    `parameters + frozen_parameters`; gradients and optimizer state follow `parameters`.
    """

    name: str
    neurons: int
    parameters: int
    multiply_adds: int
    layers: tuple[LayerStats, ...] = ()
    sequence_length: int | None = None
    frozen_parameters: int = 0
    unknown_operators: tuple[str, ...] = ()
    import_warnings: tuple[tuple[str, str], ...] = ()  # (code, message): an eval-mode ONNX export, ...
    batch_input: BatchInput | None = None  # None: not known (a model given as totals)
