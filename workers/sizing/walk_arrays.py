"""The peak of a training step's walk (step_walk.py) for models of many rows, as NumPy array arithmetic.

`walk_step` builds one Moment per row and direction: for a 10,000-row model that is 20,000 objects per
walk, and an estimate that does not fit runs a dozen walks (the out-of-memory plan's batches, GPU
counts and precisions). The peak needs only the running sums, so for models of at least ARRAY_ROWS rows
`step_peak_moment` works them out over arrays (the rows' static figures kept once per model) and
returns the same Moment `peak_moment(walk_step(...))` would: the same integer arithmetic, the same
rounding, the first of equal moments. Smaller models take the walk itself (NumPy stays unimported:
the CLI's estimate of a small model does not pay for its import). tests/test_walk_arrays.py holds the
two equal.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workers.sizing.layers.attention import Attention
from workers.sizing.layers.autocast import CAST_KINDS
from workers.sizing.memo import IdentityMemo
from workers.sizing.overheads import (
    ACTIVATION_BYTES,
    FRAMEWORK_ACTIVATION_FACTOR,
    GRADIENT_BYTES,
    WEIGHT_COPY_BYTES,
)
from workers.sizing.row_table import figures, row_table
from workers.sizing.spec import Framework, Precision, Training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.step_walk import (
    COMPUTE_DTYPE_LOSSES,
    FULL_COPY,
    LOSS_ROWS_KEEPING_THE_OUTPUT,
    LOSS_VALUE_BYTES,
    Moment,
    Phase,
    Shards,
    _model_output_index,
    _size,
    _state,
    batch_input_bytes,
    peak_moment,
    walk_step,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]

# Rows from which a step's peak is worked out over arrays. Measured (CPU, median of 58 batches, the
# rows' arrays kept per model): ResNet-50's 174 rows 629 -> 48 us, GPT-2's 150 516 -> 45 us, VGG-16's 40
# 150 -> 40 us, DCGAN's 27 103 -> 40 us. A job new to the process walks each (GPU architecture, count)
# once: 30 walks for ResNet-50's 48 pairs. Below IMPORT_ROWS the arrays are taken only where NumPy is
# loaded already (the service, any ranking): a one-shot CLI estimate of a preset does not pay its import
# (~0.1 s wall, more CPU in its threads) for a few walks. The two ways give equal moments.
ARRAY_ROWS = 64
IMPORT_ROWS = 1000


def _over_arrays(rows: int) -> bool:
    """Return whether a model of this many rows is walked over arrays (see ARRAY_ROWS)."""
    return rows >= IMPORT_ROWS or (rows >= ARRAY_ROWS and "numpy" in sys.modules)


@dataclass(frozen=True)
class _Rows:
    """A model's per-row figures that no training setting changes, as arrays."""

    sizes: Ints  # values of a row's output per sample
    saved: Ints  # values kept for backward, and mask bytes: by the math kernel, then by a fused one
    masks: Ints
    autocast: Ints  # bytes kept under mixed precision beyond 2 a value (LayerStats.autocast_extra_bytes)
    fused_saved: Ints
    fused_masks: Ints
    parameters: Ints
    shared: Ints
    overlap: Ints  # weights of an embedding a later tied row already made the gradient of
    waiting: Ints  # tied weights whose gradient a later row made and an earlier one has yet to add to
    cast: npt.NDArray[np.bool_]
    loss_keeps_output: npt.NDArray[np.bool_]  # a loss row after the held output that keeps it
    fp32_loss: npt.NDArray[np.bool_]  # a loss row after the held output whose values are fp32 (step_walk._width)
    held_index: int


_ROWS: IdentityMemo[_Rows] = IdentityMemo(16)


def _rows(model: ModelStats) -> _Rows:
    import numpy as np

    layers = model.layers
    held = _model_output_index(layers)
    overlap = [0] * len(layers)
    waiting = [0] * len(layers)
    pending = 0
    grouped = row_table(model)
    tied = any(map(_SHARED_FIGURE, grouped.distinct))  # no row uses another's weights: nothing overlaps
    for i in reversed(range(len(layers)) if tied else ()):  # as walk_step's backward loop, which no setting changes
        row = layers[i]
        pending += row.shared_parameters
        waiting[i] = pending
        if row.kind is LayerKind.EMBEDDING and pending:
            overlap[i] = min(row.parameters, pending)
            pending -= overlap[i]

    # Each distinct row's figures worked out once (a big model repeats a few kinds of row), gathered in C.
    table = np.array([_row_columns(_ROW_FIGURES(f)) for f in grouped.distinct],
                     dtype=np.int64).reshape(len(grouped.distinct), 9).T.copy()
    # one contiguous row per column (9 x rows), as the walk's arithmetic reads them
    columns = table[:, np.fromiter(grouped.index(), dtype=np.intp, count=len(layers))]
    sizes, saved, masks, fused_saved, fused_masks, parameters, shared, cast, autocast = columns
    loss_keeps_output = np.zeros(len(layers), dtype=bool)  # only rows after the held output can be loss rows
    fp32_loss = np.zeros(len(layers), dtype=bool)
    for i in range(held + 1, len(layers)):
        loss_keeps_output[i] = layers[i].type in LOSS_ROWS_KEEPING_THE_OUTPUT
        fp32_loss[i] = layers[i].type not in COMPUTE_DTYPE_LOSSES
    return _Rows(
        sizes=sizes, saved=saved, masks=masks, autocast=autocast, fused_saved=fused_saved, fused_masks=fused_masks,
        parameters=parameters, shared=shared, overlap=np.array(overlap, dtype=np.int64),
        waiting=np.array(waiting, dtype=np.int64), cast=cast.astype(bool),
        loss_keeps_output=loss_keeps_output, fp32_loss=fp32_loss,
        held_index=held,
    )


_SHARED_FIGURE = figures("shared_parameters")
_ROW_FIGURES = figures("output_shape", "neurons", "saved_values", "saved_mask_bytes", "fused_saved_values",
                       "fused_saved_mask_bytes", "parameters", "shared_parameters", "kind", "autocast_extra_bytes")


def _row_columns(f: tuple[Any, ...]) -> tuple[int, ...]:
    """Return one row's array columns: size, math kept values and mask bytes, fused ones, weights, shared, cast,
    and the bytes kept under autocast beyond 2 a value."""
    output_shape, neurons, saved, masks, fused_saved, fused_masks, parameters, shared, kind, autocast = f
    fused = (saved, masks) if fused_saved < 0 else (fused_saved, masks if fused_masks < 0 else fused_masks)
    return (_size(output_shape) if output_shape else neurons, saved, masks, *fused, parameters, shared,
            int(kind in CAST_KINDS), autocast)


def step_peak_moment(model: ModelStats, training: Training, *, precision: Precision, gpu_count: int = 1,
                     shards: Shards = FULL_COPY, kept_share: float = 1.0,
                     attention: Attention = Attention.MATH) -> Moment:
    """Return `peak_moment(walk_step(...))` for the same arguments, over arrays for models of many rows."""
    if not _over_arrays(len(model.layers)):
        return peak_moment(walk_step(model, training, precision=precision, gpu_count=gpu_count, shards=shards,
                                     kept_share=kept_share, attention=attention))
    import numpy as np

    rows = _ROWS.get(model, (), lambda: _rows(model))
    weights, state, temporaries, buckets = _state(model, training, shards, gpu_count)
    grad_total = math.ceil(model.parameters * GRADIENT_BYTES / shards.gradients)
    batch, value_bytes = training.batch_size, ACTIVATION_BYTES[precision]
    factor = FRAMEWORK_ACTIVATION_FACTOR[training.framework] * kept_share
    mixed = precision is not Precision.FP32
    saved, masks = (rows.saved, rows.masks) if attention is Attention.MATH else (rows.fused_saved, rows.fused_masks)
    # the loss rows after the model's output hold fp32 values (step_walk.LOSS_VALUE_BYTES), a fused kernel's not
    widths = np.where(rows.fp32_loss, LOSS_VALUE_BYTES, value_bytes)
    outputs = rows.sizes * widths * batch
    output = int(outputs[rows.held_index])  # the model's output, held by the loop to the end of the step
    inputs = batch_input_bytes(model, precision) * batch  # the batch the loop holds, all step
    if mixed and training.framework is Framework.PYTORCH:  # float32 kept under autocast (step_walk.walk_step)
        masks = masks + np.where(np.arange(len(rows.sizes)) > rows.held_index, 0, rows.autocast)
    row_bytes = ((saved * widths + masks) * batch) * factor
    held_at_width = rows.sizes[rows.held_index] * widths * batch
    row_bytes = np.where(rows.loss_keeps_output, row_bytes - held_at_width, row_bytes)
    kept = np.maximum(0, np.rint(row_bytes)).astype(np.int64)
    copy_bytes = WEIGHT_COPY_BYTES[precision]
    copies = (np.ceil((rows.parameters + rows.shared) * copy_bytes / shards.parameters).astype(np.int64) * rows.cast
              if mixed
              else np.zeros_like(kept))
    alive, copied = inputs + np.cumsum(kept), np.cumsum(copies)
    increments = np.ceil((rows.parameters + rows.shared - rows.overlap) * GRADIENT_BYTES
                         / shards.gradients).astype(np.int64)
    grads = np.minimum(grad_total, np.cumsum(increments[::-1])[::-1])
    before = np.concatenate([[0], outputs[:-1]])
    transient = outputs + before + (1 if mixed else 2) * rows.overlap * GRADIENT_BYTES
    if mixed:
        transient = transient + (rows.parameters + rows.shared) * copy_bytes * rows.cast
    carried = grad_total if training.update_interval > 1 else 0  # gradient accumulation (step_walk.walk_step)
    if carried:  # each row's new gradient until it is added in place, a tied weight's while its sum waits
        transient = (transient + np.ceil(rows.waiting * GRADIENT_BYTES / shards.gradients).astype(np.int64)
                     + np.ceil((rows.parameters - rows.overlap) * GRADIENT_BYTES / shards.gradients).astype(np.int64))
        grads = np.maximum(grads, carried)
    # Each moment's total (whole bytes: the order of the sums changes nothing), forward, backward walked
    # from the last row, then the optimizer step; only the peak's four terms are taken apart.
    held = weights + copied
    forward = alive + outputs + held + (buckets + carried + state)
    backward = (alive + output + transient + held + grads + (buckets + state))[::-1]
    step = output + inputs + weights + buckets + grad_total + state + temporaries
    at = int(np.argmax(np.concatenate([forward, backward, np.array([step], dtype=np.int64)])))  # first of equals
    n = len(model.layers)
    if at < n:
        phase, terms = Phase.FORWARD, (alive[at] + outputs[at], held[at], buckets + carried, state)
    elif at < 2 * n:
        i = 2 * n - 1 - at
        phase, terms = Phase.BACKWARD, (alive[i] + output + transient[i], held[i], buckets + grads[i], state)
    else:
        phase, terms = Phase.OPTIMIZER_STEP, (output + inputs, weights, buckets + grad_total, state + temporaries)
    activations, parameters, gradients, optimizer_state = (int(v) for v in terms)
    return Moment(phase, activations, parameters, gradients, optimizer_state)


def heaviest_rows(model: ModelStats, count: int) -> list[int] | None:
    """Return the positions of the `count` rows holding most parameters, in the order of
    `sorted(rows, key=parameters, reverse=True)[:count]` (ties by position); None where the model is walked
    row by row (_over_arrays)."""
    if not _over_arrays(len(model.layers)):
        return None
    import numpy as np

    rows = _ROWS.get(model, (), lambda: _rows(model))
    return [int(i) for i in np.argsort(-rows.parameters, kind="stable")[:count]]
