"""One GPU's memory and its host's under a layout: the step walk with the strategy's model states and checkpointing.

The walk (step_walk.py) is the one memory model: the peak is its largest moment. A strategy gives it
- the model states one GPU keeps (parallelism.py: the ZeRO stage's split per term, tensor parallel
  and pipeline stages, offload, adapters' frozen base and trainable adapters) as `HeldStates`;
- what each row keeps and what backward recomputes (retention.py: checkpointing per block,
  tensor parallel's split of the activations) as `Retention`.
Plain data parallel without adapters, offload, model parallelism or checkpointing is exactly the
estimate of the job as given (memory.step_peak, with its allocator simulation), so a strategy
option and the plain estimate agree where they should; other layouts take the 10% allocator rule
(ALLOCATOR_SLACK_FRACTION) on top of the walk's tensors.
Weights count every parameter, frozen ones included; gradients and optimizer state the trainable
ones only (ModelStats.parameters are the trainable weights, frozen_parameters the others).
Host memory counts what offload moves there, per GPU (a machine holds `gpus_per_node` of them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from catalog.types import GpuSpec
from workers.sizing.layers.attention import Attention
from workers.sizing.memo import IdentityMemo
from workers.sizing.memory import attention_kind, framework_reserve_bytes, recompute_share, step_peak
from workers.sizing.overheads import largest_needed, optimizer_temporary_bytes
from workers.sizing.preference import reference_weight_bytes
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.spec import Framework, JobSpec, Precision, Training, step_training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.step_walk import HeldStates, Moment, Phase, Retention, peak_moment, walk_step
from workers.sizing.strategies.adapters import (
    TransformerShape,
    lora_parameters,
    quantized_parameters,
    transformer_shape,
)
from workers.sizing.strategies.parallelism import Layout, ParameterCounts, model_state_bytes
from workers.sizing.strategies.retention import EVERY_LINEAR, layout_retention
from workers.sizing.strategies.types import SHARDED, AdapterKind, Checkpointing, DataParallel
from workers.sizing.throughput import effective_precision, has_bf16


@dataclass(frozen=True)
class LayoutMemory:
    """Peak memory of one GPU under a layout, by term, and the host bytes offload puts beside it."""

    breakdown: MemoryBreakdown
    host_bytes_per_gpu: int
    trainable_parameters: int
    total_bytes: int  # the breakdown's sum, kept for the search's inner loop
    peak_phase: str = "backward"  # where the step peaks: forward, backward or optimizer_step


def parameter_counts(model: ModelStats, layout: Layout, shape: TransformerShape | None) -> ParameterCounts:
    """Return how the model's parameters split into trained, frozen 16-bit and frozen NF4 under the layout.

    `model.parameters` are the trainable weights and `model.frozen_parameters` the others (stats.py):
    without adapters those train and these stay frozen; with adapters every base weight is frozen.
    """
    largest = shape.largest_unit_parameters if shape is not None else max(
        (layer.parameters for layer in model.layers), default=model.parameters)
    adapter = layout.adapter
    if adapter is None or shape is None:
        return ParameterCounts(trainable=model.parameters, frozen=model.frozen_parameters, largest_unit=largest)
    trainable = lora_parameters(shape, rank=adapter.rank, targets=adapter.targets)
    nf4 = quantized_parameters(shape) if adapter.kind is AdapterKind.QLORA else 0
    base = model.parameters + model.frozen_parameters
    return ParameterCounts(trainable=trainable, frozen=base - nf4, frozen_nf4=nf4, largest_unit=largest,
                           largest_trainable_unit=math.ceil(trainable / max(1, shape.blocks)))


def _walks_as_given(layout: Layout) -> bool:
    """Return whether the layout is the job as given: plain data parallel, nothing sharded, split or moved."""
    return (layout.data_parallel in (DataParallel.PLAIN, DataParallel.AUTO) and layout.adapter is None
            and layout.tensor_parallel == 1 and layout.pipeline_stages == 1
            and not (layout.offload.optimizer or layout.offload.parameters))


def _gradients_stay(layout: Layout) -> bool:
    """Return whether the gradients stay on the GPU between accumulated micro-batches (optimizer offload
    sends them to the host after each backward: HeldStates.gradients_stay)."""
    return not layout.offload.optimizer


def _adapted_targets(layout: Layout) -> tuple[str, ...] | None:
    """Return the projections the layout's adapters adapt (its base weights frozen), or None without adapters.

    EVERY_LINEAR where every frozen 4-bit linear keeps its input (QLoRA under bitsandbytes before 0.44.0).
    """
    if layout.adapter is None:
        return None
    if layout.adapter.kind is AdapterKind.QLORA and layout.adapter.quantized_inputs_kept:
        return EVERY_LINEAR
    return tuple(sorted(set(layout.adapter.targets)))


def _temporaries(counts: ParameterCounts, layout: Layout, training: Training, largest: int) -> int:
    """Return the optimizer step's temporaries on one GPU (foreach Adam: one fp32 copy of its shard).

    A per-tensor loop holds copies of its `largest` tensor (split by tensor parallelism) only, at
    most foreach's; a fused kernel none (overheads.optimizer_temporary_bytes).
    """
    if layout.offload.optimizer or layout.data_parallel is DataParallel.PARAMETER_SERVER:
        return 0  # the update runs on the host (or the servers)
    if layout.adapter is not None and layout.adapter.kind is AdapterKind.QLORA:
        return 0  # bitsandbytes' paged AdamW updates each tensor in one fused kernel: no foreach copy
    shard = layout.shard_degree if layout.data_parallel is not DataParallel.PLAIN else 1
    return math.ceil(optimizer_temporary_bytes(
        training.optimizer, training.optimizer_implementation,
        trainable=math.ceil(counts.trainable / (layout.tensor_parallel * layout.pipeline_stages * shard)),
        largest_tensor=math.ceil(largest / layout.tensor_parallel)))


_CONV: IdentityMemo[bool] = IdentityMemo()
_MEMORY: IdentityMemo[LayoutMemory] = IdentityMemo(size=4096)


def _has_conv(model: ModelStats) -> bool:
    """Return whether cuDNN convolution workspaces apply."""
    return _CONV.get(model, None, lambda: not model.layers
                     or any(layer.kind is LayerKind.CONV for layer in model.layers))


def layout_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Return the per-GPU peak of the job under the layout at this micro-batch (the walk's largest moment).

    The estimate's figure: a plain layout is memory.step_peak with its allocator simulation. The
    search's inner loop takes `searched_memory`, the same walk scaled by batch.
    """
    return _exact_memory(job, layout, gpu=gpu, batch_size=batch_size)


def _exact_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Return layout_memory, remembered per (training, layout, architecture, bf16, batch)."""
    arch = None if gpu is None else gpu.architecture
    bf16 = None if gpu is None else has_bf16(gpu)
    key = (step_training(job.training), layout, arch, bf16, batch_size)
    return _MEMORY.get(job.model, key, lambda: _layout_memory(job, layout, gpu=gpu, batch_size=batch_size))


def _layout_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Compute layout_memory."""
    model = job.model
    training = replace(job.training, batch_size=batch_size)
    shape = transformer_shape(model)
    counts = parameter_counts(model, layout, shape)
    precision, attention, retention, share = _walk_settings(job, layout, training, gpu=gpu)
    if _walks_as_given(layout) and retention is None and share == 1.0:  # the estimate's own walk and reserve
        peak_as_given = step_peak(model, replace(training, recompute=False), gpu=gpu, gpu_count=layout.gpu_count)
        return LayoutMemory(breakdown=peak_as_given.breakdown, host_bytes_per_gpu=0,
                            trainable_parameters=counts.trainable, total_bytes=peak_as_given.breakdown.total_bytes,
                            peak_phase=peak_as_given.phase.value)
    held, host = _held_states(job, layout, counts, precision=precision)
    peak = peak_moment(walk_step(model, training, precision=precision, gpu_count=layout.gpu_count, kept_share=share,
                                 attention=attention, states=held, retention=retention))
    tensors = peak.total_bytes
    breakdown = MemoryBreakdown(activations_bytes=peak.activations, parameters_bytes=peak.parameters,
                                gradients_bytes=peak.gradients, optimizer_state_bytes=peak.optimizer_state,
                                framework_reserve_bytes=framework_reserve_bytes(tensors, gpu=gpu,
                                                                                has_conv=_has_conv(model)))
    return LayoutMemory(breakdown=breakdown, host_bytes_per_gpu=host, trainable_parameters=counts.trainable,
                        total_bytes=breakdown.total_bytes, peak_phase=peak.phase.value)


@dataclass(frozen=True)
class _Envelope:
    """A layout's walk reduced to the moments that can peak at some micro-batch.

    Every moment is affine in the micro-batch b: its activations are b x what scales (kept tensors,
    outputs, the input batch) plus what does not (a layer's 16-bit weight gradient, a tied
    embedding's dense one), its model states are constant. Two walks, at b = 1 and b = 2, give each
    moment's slope and constant; moments another beats at every b >= 1 are dropped.
    """

    # per moment: activations per sample, activations at b = 0, parameters, gradients, state, phase
    moments: tuple[tuple[int, int, int, int, int, str], ...]
    host_bytes_per_gpu: int
    trainable_parameters: int
    # searched_memory's answers per (micro-batch, GPU): the search asks the same few again and again (the
    # envelope is one model's, so the reserve's convolution test is the same for each); the GPU is kept
    # beside its answer and checked, so a recycled id is never a hit
    answers: dict[tuple[int, int], tuple[GpuSpec | None, LayoutMemory]] = field(
        default_factory=dict, compare=False, hash=False, repr=False)


ANSWERS_KEPT = 256  # per envelope: micro-batches (halvings of one batch) x GPU models in a catalog
_ENVELOPES: IdentityMemo[_Envelope] = IdentityMemo(size=4096)
_CANONICAL: dict[tuple[Layout, Attention], Layout] = {}  # layouts are few: machine shapes x strategies


def searched_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int,
                    update_interval: int | None = None) -> LayoutMemory:
    """Return the layout's per-GPU peak for the search: two walks per layout and architecture, then arithmetic.

    The same walk as layout_memory (tensors equal up to per-row rounding); the reserve takes the 10%
    allocator rule for every layout (the estimate's allocator simulation costs a replay per batch).
    `update_interval` is the micro-batches per update the search tries (default: the job's); above 1
    the earlier micro-batches' gradients are alive through the step (step_walk.walk_step).
    """
    # The tensors depend on the GPU only through the precision it runs and its attention kernel, and
    # on the machine shape only through the shard degree (and, in plain data parallel, DDP's bucket).
    training = job.training  # the walk reads its framework and optimizer (the batch is the envelope's)
    accumulating = training.update_interval > 1 if update_interval is None else update_interval > 1
    precision = effective_precision(training.precision, gpu)
    attention = attention_kind(training, gpu)
    canonical = _CANONICAL.get((layout, attention)) or _CANONICAL.setdefault((layout, attention),
                                                                            _canonical(layout, attention))
    key = (training.framework, training.optimizer, training.optimizer_implementation, canonical, precision, attention,
           accumulating)
    envelope = _ENVELOPES.get(job.model, key, lambda: _envelope(_accumulating(job, accumulating), canonical, gpu=gpu))
    known = envelope.answers.get((batch_size, id(gpu)))
    if known is not None and known[0] is gpu:
        return known[1]
    best = max(envelope.moments, key=lambda m: m[0] * batch_size + m[1] + m[2] + m[3] + m[4])
    activations = best[0] * batch_size + best[1]
    tensors = activations + best[2] + best[3] + best[4]
    breakdown = MemoryBreakdown(activations_bytes=activations, parameters_bytes=best[2], gradients_bytes=best[3],
                                optimizer_state_bytes=best[4],
                                framework_reserve_bytes=framework_reserve_bytes(tensors, gpu=gpu,
                                                                                has_conv=_has_conv(job.model)))
    memory = LayoutMemory(breakdown=breakdown, host_bytes_per_gpu=envelope.host_bytes_per_gpu,
                          trainable_parameters=envelope.trainable_parameters, total_bytes=breakdown.total_bytes,
                          peak_phase=best[5])
    if len(envelope.answers) < ANSWERS_KEPT:
        envelope.answers[(batch_size, id(gpu))] = (gpu, memory)
    return memory


def _accumulating(job: JobSpec, accumulating: bool) -> JobSpec:
    """Return the job with an update interval above 1 when `accumulating` (2: the walk reads only whether
    earlier micro-batches' gradients are carried), else as given when it already agrees."""
    if (job.training.update_interval > 1) == accumulating:
        return job
    return replace(job, training=replace(job.training, update_interval=2 if accumulating else 1))


def _canonical(layout: Layout, attention: Attention) -> Layout:
    """Return the layout on the fewest GPUs that keep the same per-GPU memory (one machine, same shard degree).

    Under a fused attention kernel selective checkpointing keeps what no checkpointing keeps.
    """
    if layout.checkpointing is Checkpointing.SELECTIVE and attention is not Attention.MATH:
        layout = replace(layout, checkpointing=Checkpointing.NONE)
    split = layout.tensor_parallel * layout.pipeline_stages
    if layout.data_parallel in SHARDED:
        count = split * layout.shard_degree
    else:
        count = split * min(2, layout.data_parallel_degree)  # more than one replica: DDP's bucket
    if count == layout.gpu_count and count == layout.gpus_per_node:
        return layout
    return replace(layout, gpu_count=count, gpus_per_node=count)



def _walk_settings(job: JobSpec, layout: Layout, training: Training, *, gpu: GpuSpec | None,
                   ) -> tuple[Precision, Attention, Retention | None, float]:
    """Return what the walk of this layout takes: precision, attention kernel, retention and recompute share."""
    precision = effective_precision(training.precision, gpu)
    attention = attention_kind(training, gpu)
    retention = layout_retention(job.model, training, precision=precision, attention=attention,
                                 mode=layout.checkpointing, tensor_parallel=layout.tensor_parallel,
                                 adapted=_adapted_targets(layout))
    share = recompute_share(job.model) if layout.checkpointing is Checkpointing.FULL and retention is None else 1.0
    return precision, attention, retention, share

def _walk(job: JobSpec, layout: Layout, counts: ParameterCounts, *, gpu: GpuSpec | None, batch_size: int,
          ) -> tuple[list[Moment], int]:
    """Walk the layout at this micro-batch; return its moments and the host bytes offload keeps."""
    model = job.model
    training = replace(job.training, batch_size=batch_size, recompute=False)
    precision, attention, retention, share = _walk_settings(job, layout, training, gpu=gpu)
    held, host = _held_states(job, layout, counts, precision=precision)
    return walk_step(model, training, precision=precision, gpu_count=layout.gpu_count, kept_share=share,
                     attention=attention, states=held, retention=retention), host


def _envelope(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None) -> _Envelope:
    """Walk the layout at b = 1 and b = 2 and keep the moments on the upper envelope for b >= 1."""
    counts = parameter_counts(job.model, layout, transformer_shape(job.model))
    if not _walks_as_given(layout):
        return _strategy_envelope(job, layout, counts, gpu=gpu)
    one, host = _walk(job, layout, counts, gpu=gpu, batch_size=1)
    two = [m.activations for m in _walk(job, layout, counts, gpu=gpu, batch_size=2)[0]]
    lines = []
    for i, (a, b) in enumerate(zip(one, two, strict=True)):
        slope = b - a.activations
        fixed = a.activations - slope
        lines.append((slope, fixed + a.parameters + a.gradients + a.optimizer_state, i))
    chosen = tuple((lines[i][0], one[i].activations - lines[i][0], one[i].parameters, one[i].gradients,
                    one[i].optimizer_state, one[i].phase.value) for i in _upper(lines))
    return _Envelope(moments=chosen, host_bytes_per_gpu=host, trainable_parameters=counts.trainable)


def _upper(lines: list[tuple[int, int, int]]) -> list[int]:
    """Return, in walk order, the moments (slope, value at b = 0, index) no other beats at every b >= 1."""
    kept: list[int] = []
    best_at_one: int | None = None
    for slope, rest, i in sorted(lines, key=lambda r: (-r[0], -(r[0] + r[1]), r[2])):
        if best_at_one is None or slope + rest > best_at_one:
            kept.append(i)
            best_at_one = slope + rest
    return sorted(kept)


_UNIT_GRADIENTS = 1 << 50  # a gradient total large enough that the walk's shares of it are exact to 1e-12
_UNIT_WALKS: IdentityMemo[tuple[tuple[int, float, bool, str], ...]] = IdentityMemo(size=512)


def _strategy_envelope(job: JobSpec, layout: Layout, counts: ParameterCounts, *, gpu: GpuSpec | None) -> _Envelope:
    """Return a strategy layout's envelope from one walk per checkpointing and tensor-parallel degree.

    With a strategy's states the walk's moments are b x activations plus constant weights and state,
    the gradients' share made so far times their total, and the step's temporaries: one walk at b = 1
    with a unit gradient total gives every layout of that retention by arithmetic.
    """
    model, training = job.model, job.training
    precision = effective_precision(training.precision, gpu)
    attention = attention_kind(training, gpu)
    key = (training.framework, precision, attention, layout.checkpointing, layout.tensor_parallel,
           _adapted_targets(layout), training.update_interval > 1 and _gradients_stay(layout))
    unit = _UNIT_WALKS.get(model, key, lambda: _unit_walk(job, layout, gpu=gpu))
    held, host = _held_states(job, layout, counts, precision=precision)
    assert held is not None  # a strategy's own states
    lines = []
    for i, (activations, share, step, _) in enumerate(unit):
        gradients = math.ceil(held.gradients * share)
        state = held.optimizer_state + (held.temporaries if step else 0)
        lines.append((activations, held.weights + gradients + state, i))
    chosen = tuple((unit[i][0], 0, held.weights, math.ceil(held.gradients * unit[i][1]),
                    held.optimizer_state + (held.temporaries if unit[i][2] else 0), unit[i][3])
                   for i in _upper(lines))
    return _Envelope(moments=chosen, host_bytes_per_gpu=host, trainable_parameters=counts.trainable)


def _unit_walk(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None) -> tuple[tuple[int, float, bool, str], ...]:
    """Walk one sample with a unit gradient total: each moment's activations, gradient share, step flag, phase."""
    model = job.model
    training = replace(job.training, batch_size=1, recompute=False)
    precision = effective_precision(training.precision, gpu)
    attention = attention_kind(training, gpu)
    retention = layout_retention(model, training, precision=precision, attention=attention,
                                 mode=layout.checkpointing, tensor_parallel=layout.tensor_parallel,
                                 adapted=_adapted_targets(layout))
    share = recompute_share(model) if layout.checkpointing is Checkpointing.FULL and retention is None else 1.0
    unit = HeldStates(weights=0, gradients=_UNIT_GRADIENTS, optimizer_state=0, temporaries=0,
                      gradients_stay=_gradients_stay(layout))
    moments = walk_step(model, training, precision=precision, gpu_count=layout.gpu_count, kept_share=share,
                        attention=attention, states=unit, retention=retention)
    rows = [(m.activations, m.gradients / _UNIT_GRADIENTS, m.phase is Phase.OPTIMIZER_STEP, m.phase.value)
            for m in moments]
    # b x activations + gradients x share (+ the step's temporaries) with b, gradients >= 0: a moment
    # that another passes on activations and share (outside the step) can never be the peak
    keep = {i for i, row in enumerate(rows) if row[2]}
    best_share = -1.0
    for i in sorted((i for i, row in enumerate(rows) if not row[2]), key=lambda i: (-rows[i][0], -rows[i][1], i)):
        if rows[i][1] > best_share:
            keep.add(i)
            best_share = rows[i][1]
    return tuple(rows[i] for i in sorted(keep))


def _held_states(job: JobSpec, layout: Layout, counts: ParameterCounts, *,
                 precision: Precision) -> tuple[HeldStates | None, int]:
    """Return the model states the layout keeps on one GPU (None: the walk's own), and its offloaded host bytes."""
    if _walks_as_given(layout):
        return None, 0
    training = job.training
    states = model_state_bytes(counts, layout, precision=precision, optimizer=training.optimizer,
                               ddp_bucket=training.framework is Framework.PYTORCH, ema=training.ema,
                               reference_bytes=reference_weight_bytes(training, adapted=layout.adapter is not None))
    temporaries = _temporaries(counts, layout, training, largest_needed(job.model, training))
    return HeldStates(weights=states.parameters, gradients=states.gradients, optimizer_state=states.optimizer_state,
                      temporaries=temporaries, gradients_stay=_gradients_stay(layout)), states.host_bytes
