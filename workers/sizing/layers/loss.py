"""The loss of a training step, which no exported forward graph holds: a row for what it keeps.

An ONNX export (and a layer list) ends at the model's output; the step then computes the loss the
spec names (`training.loss`) over that output. What PyTorch keeps until backward, per sample, with
N the output's values:

- `cross_entropy` (the default): the output itself (the training loop holds it until backward),
  log-softmax's output (its backward reads it) and the int64 targets: 2 N values and 8 bytes a
  target. A model that already ends in the loss's log-softmax (the language-model presets name that
  row "loss") adds only the output it reads, held by the loop, and the targets; one that outputs
  log-probabilities itself (LogSoftmax then NLLLoss) only the targets.
- `mse`: the output and the float targets: 2 N values.
- `none`: the model computes its own loss inside the graph; nothing is added.
- `fused_linear_cross_entropy`: the output projection and the cross-entropy run as one chunked kernel
  that never holds the logits (Liger Kernel's LigerFusedLinearCrossEntropyLoss, which the Hugging Face
  Trainer's `use_liger_kernel=True` puts in place of a decoder's head; linkedin/Liger-Kernel
  src/liger_kernel/ops/fused_linear_cross_entropy.py@00eba634, read 2026-12-06). Its forward walks the
  tokens in chunks of next_power_of_2(ceil(BT / ceil(V / H))): each chunk's logits (about BT x H values,
  up to twice that) become their own gradient in place, which is multiplied into the input's gradient
  (`grad_input`, BT x H, kept until backward) and the weight's; backward only scales them. So the
  projection and its loss become one row (`_fused`): the projection's weights and multiply-adds (the
  time is the same three matrix products), kept `grad_input` (one input-sized tensor) and the targets,
  and as its transient output the chunk's logits (counted at twice BT x H: the power-of-two rounding).

- `fused_cross_entropy`: a cross-entropy kernel that reads the logits in their own dtype and keeps only one
  log-sum-exp per position beside them, writing their gradient in one pass: flash-attn's
  `flash_attn.losses.cross_entropy.CrossEntropyLoss` (MosaicML llm-foundry's default loss_fn "fused_crossentropy",
  llmfoundry/models/mpt/modeling_mpt.py@0085285a ComposerMPTCausalLM, read 2026-12-07), Megatron-LM's
  cross-entropy fusion. One row replaces the log-softmax and the cross-entropy: it keeps nothing beyond the
  logits the loop holds (16-bit under mixed precision), 8 bytes a target and 4 a log-sum-exp, and its backward
  makes one logits-sized gradient in the logits' dtype (not in place: inplace_backward is off by default), where
  `cross_entropy` keeps an fp32 log-softmax and makes two fp32 gradients (step_walk.COMPUTE_DTYPE_LOSSES).

In backward the loss's gradients (of log-softmax's output, then of the logits) are each another N
values: at the peak of a language model's step, about four output-sized tensors in all. The
ordered step walk counts those as the loss row's gradient buffers (its `neurons`).

Targets: one per sample for an output of one axis ([classes]), one per position for [sequence,
classes] (class last, as language models write it) and for [classes, height, width] (class first,
PyTorch's segmentation layout).
"""

from __future__ import annotations

import math
from dataclasses import replace
from enum import StrEnum

from workers.sizing.errors import SpecError
from workers.sizing.memo import IdentityMemo
from workers.sizing.stats import LayerKind, LayerStats, ModelStats

TARGET_ID_BYTES = 8  # int64 class indices, as cross_entropy takes them
LOSS_ROW = "loss"


class Loss(StrEnum):
    """The loss the step computes over the model's output."""

    CROSS_ENTROPY = "cross_entropy"
    MSE = "mse"
    NONE = "none"
    FUSED_LINEAR_CROSS_ENTROPY = "fused_linear_cross_entropy"
    FUSED_CROSS_ENTROPY = "fused_cross_entropy"


FUSED_TYPE = "fused_linear_cross_entropy"
LOG_SUM_EXP_BYTES = 4  # the fused cross-entropy's one fp32 log-sum-exp a position
FUSED_CHUNK_INPUTS = 2  # a chunk's logits, in input-sized tensors: Liger's BT x H budget, up to 2x by rounding


def _targets(shape: tuple[int, ...]) -> int:
    """Return the class targets per sample of a cross-entropy over an output of this shape."""
    if len(shape) <= 1:
        return 1
    if len(shape) == 2:
        return shape[0]
    return math.prod(shape[1:])


def loss_row(last: LayerStats, loss: Loss) -> LayerStats | None:
    """Return the row of the loss over the output of `last`, or None for `none`."""
    if loss is Loss.NONE:
        return None
    values = math.prod(last.output_shape) if last.output_shape else last.neurons
    if loss is Loss.MSE:
        kept, id_bytes, name = 2 * values, 0, "mse"
    else:
        name = "cross_entropy"
        ends_in_log_softmax = last.type.lower() in ("log_softmax", "logsoftmax")
        if ends_in_log_softmax and last.name == LOSS_ROW:
            kept = values  # the logits it read, held by the loop; log-softmax keeps its own output
        elif ends_in_log_softmax:
            kept = 0
        else:
            kept = 2 * values
        id_bytes = TARGET_ID_BYTES * _targets(last.output_shape)
    return LayerStats(
        name=f"{LOSS_ROW}.{name}" if last.name == LOSS_ROW else LOSS_ROW,
        type=name,
        output_shape=(),
        neurons=values,
        parameters=0,
        multiply_adds=0,
        kind=LayerKind.ELEMENTWISE,
        saved_values=kept,
        saved_mask_bytes=id_bytes,
        traffic_values=3 * values,
    )


# The same model and loss give the same object: the sizing core remembers per-model work by identity
# (memo.py), and a new copy per request made every one of those caches miss (a preset's checks, layer
# work and single-GPU times were recomputed on each estimate and each recommendation).
_WITH_LOSS: IdentityMemo[ModelStats] = IdentityMemo(size=256)


def with_loss(model: ModelStats, loss: Loss) -> ModelStats:
    """Return the model with its loss row appended (totals unchanged: they describe the network)."""
    if not model.layers:
        return model
    return _WITH_LOSS.get(model, loss, lambda: _with_loss(model, loss))


def _with_loss(model: ModelStats, loss: Loss) -> ModelStats:
    if loss is Loss.FUSED_LINEAR_CROSS_ENTROPY:
        return _fused(model)
    if loss is Loss.FUSED_CROSS_ENTROPY:
        return _fused_cross_entropy(model)
    row = loss_row(model.layers[-1], loss)
    return model if row is None else replace(model, layers=(*model.layers, row))


def _fused(model: ModelStats) -> ModelStats:
    """Return the model with its output projection and loss as one fused row (module docstring)."""
    layers = model.layers
    end = len(layers)
    if end > 1 and layers[-1].name == LOSS_ROW and layers[-1].type.lower() in ("log_softmax", "logsoftmax"):
        end -= 1  # a language-model preset's own log-softmax row: the fused kernel computes it
    head = layers[end - 1]
    if head.kind is not LayerKind.DENSE or end < 2:
        raise SpecError("training.loss", f"fused_linear_cross_entropy fuses the model's output projection into "
                                         f"its loss; the model ends in {head.type!r} ({head.name}), not a dense layer")
    hidden = _size(layers[end - 2])  # the projection's input: the final norm's output
    tokens = math.prod(head.output_shape[:-1]) if len(head.output_shape) > 1 else 1
    # The logits still pass through memory chunk by chunk: the projection writes them, the loss kernel reads them
    # and writes their gradient in place (two passes beyond the projection's own traffic)
    row = replace(
        head, name=f"{LOSS_ROW}.{FUSED_TYPE}", type=FUSED_TYPE, output_shape=(FUSED_CHUNK_INPUTS * hidden,),
        neurons=FUSED_CHUNK_INPUTS * hidden, saved_values=hidden,
        saved_mask_bytes=TARGET_ID_BYTES * tokens, traffic_values=head.traffic_values + 2 * _size(head),
    )
    return replace(model, layers=(*layers[:end - 1], row))


def _fused_cross_entropy(model: ModelStats) -> ModelStats:
    """Return the model with its log-softmax (a language-model preset's "loss" row) and cross-entropy as one fused
    row that keeps only targets and a log-sum-exp a position (module docstring)."""
    layers = model.layers
    end = len(layers)
    if end > 1 and layers[-1].name == LOSS_ROW and layers[-1].type.lower() in ("log_softmax", "logsoftmax"):
        end -= 1  # the kernel computes the log-softmax itself
    last = layers[end - 1]
    values = _size(last)
    row = LayerStats(
        name=f"{LOSS_ROW}.{Loss.FUSED_CROSS_ENTROPY.value}", type=Loss.FUSED_CROSS_ENTROPY.value, output_shape=(),
        neurons=values, parameters=0, multiply_adds=0, kind=LayerKind.ELEMENTWISE, saved_values=0,
        saved_mask_bytes=(TARGET_ID_BYTES + LOG_SUM_EXP_BYTES) * _targets(last.output_shape),
        traffic_values=3 * values)  # the logits read forward and backward, their gradient written
    return replace(model, layers=(*layers[:end], row))


def _size(row: LayerStats) -> int:
    return math.prod(row.output_shape) if row.output_shape else row.neurons


def as_fused(model: ModelStats, loss: Loss = Loss.FUSED_LINEAR_CROSS_ENTROPY) -> ModelStats | None:
    """Return the model with its appended cross-entropy row swapped for the fused row of `loss` (the linear one, or the
    fused cross-entropy alone), None where it cannot be."""
    layers = model.layers
    if not layers or layers[-1].type != Loss.CROSS_ENTROPY.value or not layers[-1].name.startswith(LOSS_ROW):
        return None
    plain = replace(model, layers=layers[:-1])
    if loss is Loss.FUSED_CROSS_ENTROPY:
        return _fused_cross_entropy(plain)
    try:
        return _fused(plain)
    except SpecError:
        return None
