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

from workers.sizing.memo import IdentityMemo
from workers.sizing.stats import LayerKind, LayerStats, ModelStats

TARGET_ID_BYTES = 8  # int64 class indices, as cross_entropy takes them
LOSS_ROW = "loss"


class Loss(StrEnum):
    """The loss the step computes over the model's output."""

    CROSS_ENTROPY = "cross_entropy"
    MSE = "mse"
    NONE = "none"


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
    row = loss_row(model.layers[-1], loss)
    return model if row is None else replace(model, layers=(*model.layers, row))
