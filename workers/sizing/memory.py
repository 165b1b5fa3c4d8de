"""GPU memory of one training step, per GPU: the baseline formula of domain.md §2 and a realistic peak.

The realistic peak is the largest moment of an ordered walk over the step (step_walk.py): forward
accumulates what each layer keeps, backward frees it layer by layer while it creates the gradients,
and the optimizer step holds the state and its temporaries. It covers what the baseline leaves out
(domain.md §2): what each layer really keeps at the chosen precision, optimizer state, fp32 master
weights in mixed precision, recomputation; the framework's reserve on the card is added on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from workers.sizing.allocator import replay
from workers.sizing.layers.attention import Attention, kept_for_backward, resolve_attention
from workers.sizing.memo import IdentityMemo
from workers.sizing.overheads import (
    ACTIVATION_BYTES,
    ALLOCATOR_SLACK_FRACTION,
    CUDA_CONTEXT_BYTES,
    DEFAULT_CUDA_CONTEXT_BYTES,
    RECOMPUTE_SEGMENT_FACTOR,
    RECOMPUTE_SHARE_STATS_ONLY,
    STATS_ONLY_SAVED_PER_NEURON,
    TRANSIENT_GRADIENT_BUFFERS,
    USABLE_MEMORY_FRACTION,
    WORKSPACE_BYTES_WITH_CONV,
    WORKSPACE_BYTES_WITHOUT_CONV,
)
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.row_table import figures, row_table
from workers.sizing.rules import BASELINE_BYTES_PER_VALUE, BASELINE_COPIES
from workers.sizing.spec import Precision, Training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.step_trace import Trace
from workers.sizing.step_walk import FULL_COPY, Phase, Shards, walk_step
from workers.sizing.throughput import effective_precision
from workers.sizing.walk_arrays import step_peak_moment

_ACTIVATIONS: IdentityMemo[float] = IdentityMemo()
_HAS_CONV: IdentityMemo[bool] = IdentityMemo()


def baseline_formula_bytes(model: ModelStats, batch_size: int) -> int:
    """Return domain.md §2's formula: neurons x batch x 2 x 4 + parameters x 2 x 4."""
    per_value = BASELINE_COPIES * BASELINE_BYTES_PER_VALUE
    return model.neurons * batch_size * per_value + model.parameters * per_value


def recompute_share(model: ModelStats) -> float:
    """Return the share of activation memory that checkpointing keeps (about 2 / sqrt(layers))."""
    if not model.layers:
        return RECOMPUTE_SHARE_STATS_ONLY
    return min(1.0, RECOMPUTE_SEGMENT_FACTOR / math.sqrt(len(model.layers)))


def _has_saved_values(model: ModelStats) -> bool:
    """Return whether the per-layer rows say what they keep for backward."""
    return any(layer.saved_values or layer.saved_mask_bytes for layer in model.layers)


def activation_bytes_per_sample(model: ModelStats, precision: Precision, *, recompute: bool,
                                attention: Attention = Attention.MATH) -> float:
    """Return activation bytes kept for backward for one sample, with two transient buffers added.

    A sum-of-terms figure (the peak of a step, plain or under a strategy, comes from the walk:
    step_peak, strategies/footprint.py).

    `attention` is the kernel the step runs (resolved for the GPU: `attention_kind`).
    """
    return _ACTIVATIONS.get(model, (precision, recompute, attention),
                            lambda: _activation_bytes_per_sample(model, precision, recompute=recompute,
                                                                 attention=attention))


def attention_kind(training: Training, gpu: GpuSpec | None) -> Attention:
    """Return the attention kernel the step runs on this GPU (`training.attention`, auto resolved)."""
    return resolve_attention(training.attention, architecture=None if gpu is None else gpu.architecture,
                             precision=training.precision.value, framework=training.framework.value)


def _activation_bytes_per_sample(model: ModelStats, precision: Precision, *, recompute: bool,
                                 attention: Attention) -> float:
    """Compute activation_bytes_per_sample."""
    value_bytes = ACTIVATION_BYTES[precision]
    saved: float
    transient: float
    if _has_saved_values(model):
        saved = 0
        for layer in model.layers:
            values, mask_bytes = kept_for_backward(layer, attention)
            saved += values * value_bytes + mask_bytes
        transient = TRANSIENT_GRADIENT_BUFFERS * max(layer.neurons for layer in model.layers) * value_bytes
    else:
        saved = model.neurons * STATS_ONLY_SAVED_PER_NEURON * value_bytes
        transient = 0
    if recompute:
        saved *= recompute_share(model)
    return saved + transient


def activation_bytes_by_layer(model: ModelStats, precision: Precision) -> list[tuple[str, int]]:
    """Return each layer's saved bytes per sample, largest first (where the memory goes)."""
    value_bytes = ACTIVATION_BYTES[precision]
    saved = any(layer.saved_values or layer.saved_mask_bytes for layer in model.layers)
    extra = precision is not Precision.FP32  # float32 kept under autocast (layers/autocast.py)
    rows = [(layer.name, (layer.saved_values if saved else layer.neurons) * value_bytes
             + layer.saved_mask_bytes + (layer.autocast_extra_bytes if extra else 0)) for layer in model.layers]
    return sorted(rows, key=lambda row: row[1], reverse=True)


def framework_reserve_bytes(tensor_bytes: int, *, gpu: GpuSpec | None, has_conv: bool,
                            allocator_slack: int | None = None) -> int:
    """Return CUDA context + library workspace + allocator slack on one GPU.

    `allocator_slack` is what the caching allocator reserves beyond the tensors (allocator.py,
    simulated over the walk's allocations); None, for a model given as totals, takes the rule
    ALLOCATOR_SLACK_FRACTION of the tensors.
    """
    context = DEFAULT_CUDA_CONTEXT_BYTES if gpu is None else CUDA_CONTEXT_BYTES[gpu.architecture]
    workspace = WORKSPACE_BYTES_WITH_CONV if has_conv else WORKSPACE_BYTES_WITHOUT_CONV
    slack = round(ALLOCATOR_SLACK_FRACTION * tensor_bytes) if allocator_slack is None else allocator_slack
    return context + workspace + slack


_KIND = figures("kind")


def _has_conv(model: ModelStats) -> bool:
    """Return whether cuDNN convolution workspaces apply (conv layers, or a model given as totals)."""
    return _HAS_CONV.get(model, None, lambda: not model.layers
                         or LayerKind.CONV in map(_KIND, row_table(model).distinct))


@dataclass(frozen=True)
class StepPeak:
    """The peak of one training step: its terms and the phase that sets it."""

    breakdown: MemoryBreakdown
    phase: Phase
    calibrated: bool = False  # scaled to training.profile.tensor_memory_bytes


_PEAKS: IdentityMemo[StepPeak] = IdentityMemo(256)
_SLACK: IdentityMemo[float] = IdentityMemo(256)


def _memory_key(training: Training) -> tuple[object, ...]:
    """Return the training fields a step's memory can depend on: the memos' key.

    Epochs, learning rate, evaluation passes and the checkpoint interval are left out (no memory
    figure reads them), so that jobs differing only in how long they train share their walks and
    allocator replays.
    """
    t = training
    return (t.batch_size, t.sequence_length, t.precision, t.optimizer, t.optimizer_implementation, t.update_interval,
            t.recompute, t.framework, t.profile, t.parallelism, t.loss, t.attention, t.ema, t.preference)


# Rows up to which the allocator is replayed for its slack (allocator_slack_share); a bigger model takes
# ALLOCATOR_SLACK_FRACTION. (The bound the arrays' walk had before it took models from 64 rows.)
SLACK_REPLAY_ROWS = 1000


def allocator_slack_share(model: ModelStats, training: Training, *, precision: Precision, kept_share: float,
                          attention: Attention) -> float:
    """Return what the caching allocator reserves beyond the tensors at its peak, as a share of them.

    The step is replayed on one GPU with the whole model (allocator.py); data-parallel and sharded
    layouts of the same step take the same share of their own tensors (one replay per step, not one
    per layout: the strategy search asks for dozens). Models of SLACK_REPLAY_ROWS rows or more keep the
    rule ALLOCATOR_SLACK_FRACTION: replaying their allocations would cost more than the rest of the
    estimate.
    """
    trace = Trace()
    walk_step(model, training, precision=precision, kept_share=kept_share, attention=attention, trace=trace)
    cache = replay(trace.events, persistent=trace.persistent, state=trace.state)
    return (cache.peak_reserved - cache.peak_requested) / max(1, cache.peak_requested)

def step_peak(model: ModelStats, training: Training, *, gpu: GpuSpec | None = None, gpu_count: int = 1,
              shards: Shards = FULL_COPY) -> StepPeak:
    """Walk one training step on one GPU (step_walk.py) and return its peak, by term, with its phase.

    Data parallel on n GPUs keeps a full copy of parameters, gradients and optimizer state on each
    GPU, with `training.batch_size` samples per GPU; PyTorch's DDP adds one gradient-sized bucket copy.
    `shards` splits the model state n ways instead (ZeRO, FSDP).
    """
    return _PEAKS.get(model, (_memory_key(training), None if gpu is None else gpu.architecture, gpu_count, shards),
                      lambda: _step_peak(model, training, gpu=gpu, gpu_count=gpu_count, shards=shards))


def _step_peak(model: ModelStats, training: Training, *, gpu: GpuSpec | None, gpu_count: int,
               shards: Shards) -> StepPeak:
    """Compute step_peak."""
    precision = effective_precision(training.precision, gpu)
    share = recompute_share(model) if training.recompute else 1.0
    attention = attention_kind(training, gpu)
    peak = step_peak_moment(model, training, precision=precision, gpu_count=gpu_count, shards=shards,
                            kept_share=share, attention=attention)
    slack_share: float | None = None
    if 0 < len(model.layers) < SLACK_REPLAY_ROWS:  # another GPU of its precision caches the same way
        slack_share = _SLACK.get(model, (_memory_key(training), precision, share, attention),
                                 lambda: allocator_slack_share(model, training, precision=precision,
                                                               kept_share=share, attention=attention))
    terms = [peak.activations, peak.parameters, peak.gradients, peak.optimizer_state]
    profile = training.profile
    calibrated = profile is not None and profile.tensor_memory_bytes > 0
    if profile is not None and calibrated:
        # A measured step (gpugauge probe) at the profile's batch: scale every term of the walk by
        # measured / predicted there, so other batches and GPUs keep the walk's shape.
        at = replace(training, batch_size=profile.batch_size or training.batch_size, profile=None)
        reference = step_peak_moment(model, at, precision=precision, gpu_count=gpu_count, shards=shards,
                                     kept_share=share, attention=attention)
        ratio = profile.tensor_memory_bytes / max(1, reference.total_bytes)
        terms = [round(t * ratio) for t in terms]
    tensors = sum(terms)
    breakdown = MemoryBreakdown(
        activations_bytes=terms[0],
        parameters_bytes=terms[1],
        gradients_bytes=terms[2],
        optimizer_state_bytes=terms[3],
        framework_reserve_bytes=framework_reserve_bytes(
            tensors, gpu=gpu, has_conv=_has_conv(model),
            allocator_slack=None if slack_share is None else round(slack_share * tensors)),
    )
    return StepPeak(breakdown, peak.phase, calibrated)


def estimate_memory(model: ModelStats, training: Training, *, gpu: GpuSpec | None = None,
                    gpu_count: int = 1) -> MemoryBreakdown:
    """Return the predicted peak memory of one training step on one GPU, by term (see step_peak)."""
    return step_peak(model, training, gpu=gpu, gpu_count=gpu_count).breakdown


def sharded_memory(model: ModelStats, training: Training, *, gpu: GpuSpec | None = None,
                   gpu_count: int, shard_parameters: bool = False) -> MemoryBreakdown:
    """Return the per-GPU memory with optimizer state and gradients split n ways (ZeRO-2 style).

    With `shard_parameters` the weights are split too (ZeRO-3, FSDP full shard). The same walk runs
    with the split terms, so the phase that peaks may change.
    """
    shards = Shards(parameters=gpu_count if shard_parameters else 1, gradients=gpu_count,
                    optimizer_state=gpu_count)
    return step_peak(model, training, gpu=gpu, gpu_count=gpu_count, shards=shards).breakdown


def usable_memory_bytes(gpu: GpuSpec) -> int:
    """Return the memory a job may plan to use on the card, keeping the headroom domain.md §2 asks for."""
    return int(gpu.memory_bytes * USABLE_MEMORY_FRACTION)


def fits(gpu_memory_bytes: int, gpu: GpuSpec) -> bool:
    """Return whether a predicted peak fits the card with headroom."""
    return gpu_memory_bytes <= usable_memory_bytes(gpu)
