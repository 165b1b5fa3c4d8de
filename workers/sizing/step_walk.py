"""GPU memory of one training step as an ordered walk: forward, backward in reverse, the optimizer step.

What is alive changes over a step, so the peak is the largest of these moments, not a sum of terms:

- always: the weights (every parameter, frozen ones included, in fp32), the optimizer's state (after
  the first step it persists) and, under PyTorch DDP, its gradient buckets;
- forward, layer by layer: what each layer keeps for backward accumulates, with the 16-bit copies of
  the weights that mixed precision casts for convolutions and matrix products; the layer's output
  exists while the next layer reads it; the model's output stays in the loop's local variable until
  the step ends (pytorch/examples imagenet/main.py: `output = model(images)`);
- backward, in reverse: gradients are created layer by layer (zero_grad(set_to_none=True), the
  default since PyTorch 2.0, leaves none at the start); at each layer the gradient of its output
  and of its input exist besides what is still kept, then the layer's kept tensors are freed;
- gradient accumulation (`update_interval` > 1): the walk is a later micro-batch's, whose forward and
  backward run beside every gradient the earlier micro-batches made (backward adds into them in
  place, each row's new gradient a transient, and a tied weight's gradient waits for its other use's
  before the sum is added); measured on torch 2.13.0 CPU, two micro-batches against one: GPT-2 at
  128 tokens, batch 1, fp32 SGD, 1,268 -> 1,416 MiB; VGG-16 at 32x32, batch 2, 1,058 -> 1,451 MiB;
- optimizer step: weights, gradients, state and the update's temporaries (foreach Adam and AdamW,
  the CUDA default, make one trainable-sized fp32 copy; a per-tensor loop copies of its largest
  tensor only; a fused kernel none; SGD updates in place); no activation is left but the model's output;
- all step: the input batch the loop holds (`batch_input_bytes`), beside what rows keep of it;
- the loss rows after the model's output run in fp32 under mixed precision (autocast's fp32 list has log_softmax,
  nll_loss and mse_loss; torchtitan upcasts `pred.float()` itself): what they keep (log-softmax's output) and the
  gradients their backward makes are 4 bytes a value, while the 16-bit logits the loop holds stay 16-bit (measured
  on torch 2.13.0 CPU autocast: a 16-bit head's cross-entropy keeps its log-softmax output in fp32).

Checked against workers/accuracy/data/step_measurements.json (validation/measure/: profiler timeline, storage tracker).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from workers.sizing.layers.attention import Attention, kept_for_backward
from workers.sizing.layers.autocast import CAST_KINDS, LOSS_TYPES
from workers.sizing.overheads import (
    ACTIVATION_BYTES,
    DDP_BUCKET_COPIES_PYTORCH,
    FRAMEWORK_ACTIVATION_FACTOR,
    GRADIENT_BYTES,
    MASTER_WEIGHT_BYTES,
    STATS_ONLY_SAVED_PER_NEURON,
    WEIGHT_COPY_BYTES,
    largest_needed,
    optimizer_temporary_bytes,
    state_bytes_per_parameter,
)
from workers.sizing.preference import reference_weight_bytes
from workers.sizing.spec import Framework, Precision, Training
from workers.sizing.stats import LayerKind, LayerStats, ModelStats
from workers.sizing.step_trace import Trace, optimizer_step_events, persistent_tensors

# Layers whose weights autocast casts to 16 bits and keeps for backward (matmul and convolution): layers/autocast.py
# Rows that end a layer list with the loss (LOSS_TYPES, autocast.py's: layers/loss.py appends cross_entropy or mse;
# the LM presets end in their log_softmax "loss" row): the model's output in the loop is the row before them.
LOSS_ROWS_KEEPING_THE_OUTPUT = frozenset({"cross_entropy", "mse"})
LOSS_VALUE_BYTES = 4  # the loss rows' values: fp32 in every precision (autocast's fp32 list)
# Loss rows whose gradient is in the logits' own dtype (a fused kernel that never upcasts: layers/loss.py)
COMPUTE_DTYPE_LOSSES = frozenset({"fused_cross_entropy"})


def _width(row: LayerStats, after_output: bool, value_bytes: int) -> int:
    """Return the bytes a value of a row: a loss row's fp32, unless its kernel keeps the logits' dtype."""
    return LOSS_VALUE_BYTES if after_output and row.type not in COMPUTE_DTYPE_LOSSES else value_bytes


class Phase(StrEnum):
    """The part of a training step where memory peaks."""

    FORWARD = "forward"
    BACKWARD = "backward"
    OPTIMIZER_STEP = "optimizer_step"


@dataclass(frozen=True)
class Shards:
    """How many ways each model-state term is split across GPUs (1: a full copy on each)."""

    parameters: int = 1
    gradients: int = 1
    optimizer_state: int = 1


FULL_COPY = Shards()


@dataclass(frozen=True)
class Moment:
    """What is alive at one moment of the step, in bytes, by term."""

    phase: Phase
    activations: int
    parameters: int
    gradients: int
    optimizer_state: int

    @property
    def total_bytes(self) -> int:
        """Return the bytes alive at this moment."""
        return self.activations + self.parameters + self.gradients + self.optimizer_state


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


def _model_output_index(layers: tuple[LayerStats, ...]) -> int:
    """Return the row whose output the loop holds: the last before the closing loss rows."""
    index = len(layers) - 1
    while index > 0 and layers[index].type in LOSS_TYPES and layers[index].name.startswith("loss"):
        index -= 1
    return index


def _state(model: ModelStats, training: Training, shards: Shards, gpu_count: int) -> tuple[int, int, int, int]:
    """Return (weights, optimizer state, optimizer temporaries, DDP buckets) bytes, alive through the step."""
    trainable = model.parameters
    reference = reference_weight_bytes(training, adapted=training.parallelism.adapter is not None)  # a DPO's copy
    weights = math.ceil((model.parameters + model.frozen_parameters) * (MASTER_WEIGHT_BYTES + reference)
                        / shards.parameters)
    state = math.ceil(trainable * state_bytes_per_parameter(training.optimizer, ema=training.ema)
                      / shards.optimizer_state)
    largest = largest_needed(model, training)
    temporaries = math.ceil(optimizer_temporary_bytes(training.optimizer, training.optimizer_implementation,
                                                      trainable=trainable, largest_tensor=largest)
                            / shards.optimizer_state)
    buckets = 0
    if gpu_count > 1 and training.framework is Framework.PYTORCH and shards.gradients == 1:
        buckets = round(trainable * GRADIENT_BYTES * DDP_BUCKET_COPIES_PYTORCH)
    return weights, state, temporaries, buckets


@dataclass(frozen=True)
class HeldStates:
    """Model states a strategy keeps on one GPU through the step (strategies/footprint.py), in bytes.

    Given to walk_step instead of its own plain-data-parallel states: `weights` (shards, gathered
    units, frozen base, 16-bit and master copies) and `optimizer_state` are alive all step,
    `gradients` grow through backward in proportion to each row's parameters and are all alive at
    the optimizer step, with its `temporaries`. No per-layer autocast copy is made: the strategy's
    weights already hold their 16-bit form.
    """

    weights: int
    gradients: int
    optimizer_state: int
    temporaries: int
    # whether the gradients stay on the GPU between the micro-batches of gradient accumulation (under
    # optimizer offload they go to the host's fp32 buffer after each backward, and add up there)
    gradients_stay: bool = True


@dataclass(frozen=True)
class Retention:
    """Checkpointing as the walk sees it, per row: what forward keeps, and what backward recomputes.

    When backward reaches the last row of a segment (`segment_end[i] == i`), the segment's
    `recomputed` bytes come back; each row frees its `kept` and `recomputed` bytes after its backward.
    """

    kept: tuple[int, ...]
    recomputed: tuple[int, ...]
    segment_end: tuple[int, ...]


def kept_per_row(model: ModelStats, training: Training, *, precision: Precision, kept_share: float = 1.0,
                 attention: Attention = Attention.MATH) -> list[int]:
    """Return the bytes each row keeps for backward at the training batch (what walk_step accumulates for a
    strategy: its 16-bit weights run the model in 16 bits, no float32 kept under autocast)."""
    batch = training.batch_size
    value_bytes = ACTIVATION_BYTES[precision]
    factor = FRAMEWORK_ACTIVATION_FACTOR[training.framework] * kept_share
    layers = model.layers
    if not layers:
        return []
    return _kept(layers, batch, value_bytes, factor, attention, autocast=False)


def _value_sizes(layers: tuple[LayerStats, ...]) -> list[int]:
    return [_size(row.output_shape) if row.output_shape else row.neurons for row in layers]


def _kept(layers: tuple[LayerStats, ...], batch: int, value_bytes: int, factor: float,
          attention: Attention, *, autocast: bool) -> list[int]:
    """Return each row's kept bytes: the loss rows after the model's output keep fp32 values; under
    mixed precision (`autocast`) the float32 tensors and per-module casts the rows keep (layers/autocast.py)."""
    held_index = _model_output_index(layers)
    held_values = _value_sizes(layers)[held_index]
    kept = []
    for i, row in enumerate(layers):
        values, mask_bytes = kept_for_backward(row, attention)
        width = _width(row, i > held_index, value_bytes)
        if autocast and i <= held_index:
            mask_bytes += row.autocast_extra_bytes
        row_bytes = (values * width + mask_bytes) * batch * factor
        if i > held_index and row.type in LOSS_ROWS_KEEPING_THE_OUTPUT:
            # the logits it read are the loop's (held, 16-bit); the fp32 values it kept beside them
            row_bytes -= held_values * width * batch
        kept.append(max(0, round(row_bytes)))
    return kept


def walk_step(model: ModelStats, training: Training, *, precision: Precision, gpu_count: int = 1,
              shards: Shards = FULL_COPY, kept_share: float = 1.0,
              attention: Attention = Attention.MATH, trace: Trace | None = None,
              states: HeldStates | None = None, retention: Retention | None = None) -> list[Moment]:
    """Return the moments of one step in order (forward per layer, backward per layer, the step).

    `kept_share` scales what layers keep (recomputation keeps a share of it); `attention` is the
    kernel the step runs, which sets what attention rows keep (layers/attention.py). With `trace`,
    the walk also records its allocations tensor by tensor (one per row and term).
    walk_arrays.step_peak_moment repeats this arithmetic over arrays for models of many rows:
    a change here is a change there (tests/test_walk_arrays.py holds the two equal).
    A strategy (strategies/footprint.py) passes the model states it keeps (`states`) and its
    checkpointing per row (`retention`); without them the walk is plain data parallel as given.
    """
    weights, state, temporaries, buckets = _state(model, training, shards, gpu_count)
    grad_total = math.ceil(model.parameters * GRADIENT_BYTES / shards.gradients)
    if states is not None:
        weights, state, temporaries, buckets = states.weights, states.optimizer_state, states.temporaries, 0
        grad_total = states.gradients
    if not model.layers:
        return _stats_only_moments(model, training, precision, weights=weights, state=state,
                                   temporaries=temporaries, buckets=buckets, grad_total=grad_total,
                                   kept_share=kept_share)
    batch = training.batch_size
    value_bytes = ACTIVATION_BYTES[precision]
    factor = FRAMEWORK_ACTIVATION_FACTOR[training.framework] * kept_share
    mixed = precision is not Precision.FP32 and states is None
    layers = model.layers
    # a row's output; a loss row's "output" is a scalar, its backward makes output-sized gradients (fp32 but a fused
    # kernel's, in the logits' dtype: _width)
    held_index = _model_output_index(layers)
    outputs = [values * _width(layers[i], i > held_index, value_bytes) * batch
               for i, values in enumerate(_value_sizes(layers))]
    # Float32 kept under torch.autocast (layers/autocast.py): PyTorch with fp32 weights, as given; a strategy's
    # `states` are 16-bit weights (FSDP's param_dtype, DeepSpeed, a 16-bit adapter base) that run the model in 16 bits.
    autocast = precision is not Precision.FP32 and states is None and training.framework is Framework.PYTORCH
    kept = _kept(layers, batch, value_bytes, factor, attention, autocast=autocast)
    recomputed: tuple[int, ...] = (0,) * len(layers)
    comes_back: dict[int, int] = {}
    if retention is not None:
        kept, recomputed = list(retention.kept), retention.recomputed
        for i, end in enumerate(retention.segment_end):
            comes_back[end] = comes_back.get(end, 0) + recomputed[i]
    row_parameters = sum(row.parameters + row.shared_parameters for row in layers) or 1
    copies = [math.ceil((row.parameters + row.shared_parameters) * WEIGHT_COPY_BYTES[precision] / shards.parameters)
              if mixed and row.kind in CAST_KINDS else 0 for row in layers]  # a tied head's shared weight too
    inputs = batch_input_bytes(model, precision) * batch  # the batch the loop holds, all step
    held = outputs[held_index] + inputs
    moments: list[Moment] = []
    t = trace  # None: no allocation record (the walk alone is what most callers need)
    if t is not None:
        persistent_tensors(t, model, training, shards, buckets)
        t.alloc("batch", inputs)
    # gradient accumulation: the earlier micro-batches' gradients are alive through this one
    carried = grad_total if training.update_interval > 1 and (states is None or states.gradients_stay) else 0
    if t is not None and carried:
        for i, row in enumerate(layers):
            t.alloc(("grad", i), math.ceil((row.parameters + row.shared_parameters) * grad_total / row_parameters))
    alive, copied = inputs, 0
    for i in range(len(layers)):
        alive += kept[i]
        copied += copies[i]
        moments.append(Moment(Phase.FORWARD, alive + outputs[i], weights + copied, buckets + carried, state))
        if t is not None:
            t.alloc(("kept", i), kept[i])
            t.alloc(("copy", i), copies[i])
            t.alloc(("out", i), outputs[i])
            t.free(("out", i - 1))
    if t is not None:
        t.free(("out", len(layers) - 1))
        t.alloc("held", outputs[held_index])
        t.alloc(("grad_in", len(layers)), outputs[-1])
    alive += outputs[held_index]
    grads = 0
    shared_pending = 0  # weights a later row (a tied head) already made the gradient of
    for i in reversed(range(len(layers))):
        row = layers[i]
        alive += comes_back.get(i, 0)  # checkpointing: the segment is recomputed before its backward
        if states is not None:  # a strategy's gradients, made in proportion to each row's weights
            share = min(grad_total - grads, math.ceil(grad_total * (row.parameters + row.shared_parameters)
                                                      / row_parameters))
            grads += share
            new = share if carried else 0  # accumulating: the row's new gradient, added in place
            moments.append(Moment(Phase.BACKWARD, alive + outputs[i] + (outputs[i - 1] if i else 0), weights,
                                  max(grads, carried) + new, state))
            alive -= kept[i] + recomputed[i]
            continue
        shared_pending += row.shared_parameters
        # accumulating, a tied weight's gradient from a later row waits in autograd's input buffer for
        # this row's before the sum is added in place (stolen as .grad when there is none: counted in grads)
        waiting = math.ceil(shared_pending * GRADIENT_BYTES / shards.gradients) if carried else 0
        overlap = min(row.parameters, shared_pending) if row.kind is LayerKind.EMBEDDING else 0
        shared_pending -= overlap
        made = min(grad_total - grads, math.ceil((row.parameters + row.shared_parameters - overlap)
                                                 * GRADIENT_BYTES / shards.gradients))
        grads += made
        # the gradient of this layer's output and of its input; in mixed precision the weights'
        # gradient is made in 16 bits before it is cast to the fp32 gradient
        transient = outputs[i] + (outputs[i - 1] if i else 0)
        # an embedding whose weight a tied head already has a gradient for: its dense gradient, and
        # in fp32 the out-of-place sum AccumulateGrad makes (measured: 2 and 1 weight-sized tensors
        # at the end of GPT-2's backward in fp32 and bf16)
        transient += (1 if mixed else 2) * overlap * GRADIENT_BYTES
        if mixed and row.kind in CAST_KINDS:  # the whole layer's, before any reduce-scatter
            transient += (row.parameters + row.shared_parameters) * WEIGHT_COPY_BYTES[precision]
        if carried:  # accumulating: the row's own new gradient exists until AccumulateGrad adds it in place
            transient += waiting + math.ceil((row.parameters - overlap) * GRADIENT_BYTES / shards.gradients)
        moments.append(Moment(Phase.BACKWARD, alive + transient, weights + copied, buckets + max(grads, carried),
                              state))
        alive -= kept[i] + recomputed[i]
        copied -= copies[i]
        if t is not None:
            t.alloc(("grad_in", i), outputs[i - 1] if i else 0)
            if not carried:
                t.alloc(("grad", i), made)
            t.alloc(("grad16", i), transient - outputs[i] - (outputs[i - 1] if i else 0))
            t.free(("grad16", i))
            t.free(("grad_in", i + 1))
            t.free(("kept", i))
            t.free(("copy", i))
    moments.append(Moment(Phase.OPTIMIZER_STEP, held, weights, buckets + grad_total, state + temporaries))
    if t is not None:
        optimizer_step_events(t, model, training, temporaries)
    return moments


def batch_input_bytes(model: ModelStats, precision: Precision) -> int:
    """Return the bytes per sample the input batch adds to what the rows already count as kept.

    The loop's local holds the batch through the step (pytorch/examples: `images, target` until the
    next iteration). A row that keeps the input counted it at the activations' width: in fp32 that is
    the batch tensor itself; under autocast the row keeps a 16-bit cast and the fp32 batch is extra;
    integer ids are never cast. A model given as totals says nothing of its input: 0.
    """
    given = model.batch_input
    if given is None:
        return 0
    value_bytes = ACTIVATION_BYTES[precision]
    counted = given.kept_integer_values * value_bytes
    if precision is Precision.FP32:
        counted += given.kept_float_values * value_bytes
    return max(0, given.bytes - counted)


def _stats_only_moments(model: ModelStats, training: Training, precision: Precision, *, weights: int,
                        state: int, temporaries: int, buckets: int, grad_total: int,
                        kept_share: float) -> list[Moment]:
    """Return the two moments a model given as totals can tell apart.

    [rule] At the end of forward every kept activation is alive and no gradient exists yet (each
    neuron's output kept once, STATS_ONLY_SAVED_PER_NEURON; under gradient accumulation the earlier
    micro-batches' gradients too); at the optimizer step every gradient,
    the state and the update's temporaries are alive and no activation is. Backward lies between.
    """
    activations = round(model.neurons * STATS_ONLY_SAVED_PER_NEURON * ACTIVATION_BYTES[precision]
                        * training.batch_size * FRAMEWORK_ACTIVATION_FACTOR[training.framework] * kept_share)
    carried = grad_total if training.update_interval > 1 else 0  # gradient accumulation
    return [
        Moment(Phase.FORWARD, activations, weights, buckets + carried, state),
        Moment(Phase.OPTIMIZER_STEP, 0, weights, buckets + grad_total, state + temporaries),
    ]


def peak_moment(moments: list[Moment]) -> Moment:
    """Return the moment with the most bytes alive (the first of equals)."""
    return max(moments, key=lambda m: m.total_bytes)
