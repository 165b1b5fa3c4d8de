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
from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from workers.sizing.memo import IdentityMemo
from workers.sizing.memory import attention_kind, framework_reserve_bytes, recompute_share, step_peak
from workers.sizing.overheads import OPTIMIZER_TEMPORARY_BYTES
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.spec import Framework, JobSpec, Optimizer
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.step_walk import HeldStates, peak_moment, walk_step
from workers.sizing.strategies.adapters import (
    TransformerShape,
    lora_parameters,
    quantized_parameters,
    transformer_shape,
)
from workers.sizing.strategies.parallelism import Layout, ModelStateBytes, ParameterCounts, model_state_bytes
from workers.sizing.strategies.retention import layout_retention
from workers.sizing.strategies.types import AdapterKind, Checkpointing, DataParallel
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
    return ParameterCounts(trainable=trainable, frozen=base - nf4, frozen_nf4=nf4, largest_unit=largest)


def _walks_as_given(layout: Layout) -> bool:
    """Return whether the layout is the job as given: plain data parallel, nothing sharded, split or moved."""
    return (layout.data_parallel in (DataParallel.PLAIN, DataParallel.AUTO) and layout.adapter is None
            and layout.tensor_parallel == 1 and layout.pipeline_stages == 1
            and not (layout.offload.optimizer or layout.offload.parameters))


def _temporaries(counts: ParameterCounts, layout: Layout, optimizer: Optimizer) -> int:
    """Return the optimizer step's temporaries on one GPU (foreach Adam: one fp32 copy of its shard)."""
    if layout.offload.optimizer or layout.data_parallel is DataParallel.PARAMETER_SERVER:
        return 0  # the update runs on the host (or the servers)
    if layout.adapter is not None and layout.adapter.kind is AdapterKind.QLORA:
        return 0  # bitsandbytes' paged AdamW updates each tensor in one fused kernel: no foreach copy
    shard = layout.shard_degree if layout.data_parallel is not DataParallel.PLAIN else 1
    return math.ceil(counts.trainable * OPTIMIZER_TEMPORARY_BYTES[optimizer]
                     / (layout.tensor_parallel * layout.pipeline_stages * shard))


_CONV: IdentityMemo[bool] = IdentityMemo()
_MEMORY: IdentityMemo[LayoutMemory] = IdentityMemo(size=4096)


def _has_conv(model: ModelStats) -> bool:
    """Return whether cuDNN convolution workspaces apply."""
    return _CONV.get(model, None, lambda: not model.layers
                     or any(layer.kind is LayerKind.CONV for layer in model.layers))


def layout_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Return the per-GPU peak of the job under the layout at this micro-batch (the walk's largest moment)."""
    arch = None if gpu is None else gpu.architecture
    bf16 = None if gpu is None else has_bf16(gpu)
    key = (job.training, layout, arch, bf16, batch_size)
    return _MEMORY.get(job.model, key, lambda: _layout_memory(job, layout, gpu=gpu, batch_size=batch_size))


def _layout_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Compute layout_memory."""
    model = job.model
    training = replace(job.training, batch_size=batch_size)
    shape = transformer_shape(model)
    counts = parameter_counts(model, layout, shape)
    precision = effective_precision(training.precision, gpu)
    attention = attention_kind(training, gpu)
    retention = layout_retention(model, training, precision=precision, attention=attention,
                                 mode=layout.checkpointing, tensor_parallel=layout.tensor_parallel)
    share = recompute_share(model) if layout.checkpointing is Checkpointing.FULL and retention is None else 1.0
    if _walks_as_given(layout) and retention is None and share == 1.0:  # the estimate's own walk and reserve
        peak_as_given = step_peak(model, replace(training, recompute=False), gpu=gpu, gpu_count=layout.gpu_count)
        return LayoutMemory(breakdown=peak_as_given.breakdown, host_bytes_per_gpu=0,
                            trainable_parameters=counts.trainable, total_bytes=peak_as_given.breakdown.total_bytes,
                            peak_phase=peak_as_given.phase.value)
    host = 0
    held: HeldStates | None = None
    if not _walks_as_given(layout):
        states: ModelStateBytes = model_state_bytes(counts, layout, precision=precision, optimizer=training.optimizer,
                                                    ddp_bucket=training.framework is Framework.PYTORCH)
        held = HeldStates(weights=states.parameters, gradients=states.gradients,
                          optimizer_state=states.optimizer_state,
                          temporaries=_temporaries(counts, layout, training.optimizer))
        host = states.host_bytes
    peak = peak_moment(walk_step(model, training, precision=precision, gpu_count=layout.gpu_count, kept_share=share,
                                 attention=attention, states=held, retention=retention))
    tensors = peak.total_bytes
    breakdown = MemoryBreakdown(activations_bytes=peak.activations, parameters_bytes=peak.parameters,
                                gradients_bytes=peak.gradients, optimizer_state_bytes=peak.optimizer_state,
                                framework_reserve_bytes=framework_reserve_bytes(tensors, gpu=gpu,
                                                                                has_conv=_has_conv(model)))
    return LayoutMemory(breakdown=breakdown, host_bytes_per_gpu=host, trainable_parameters=counts.trainable,
                        total_bytes=breakdown.total_bytes, peak_phase=peak.phase.value)
