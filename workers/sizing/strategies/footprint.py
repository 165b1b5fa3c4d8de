"""One GPU's memory and its host's under a layout: model states per strategy plus activations per checkpointing.

The terms are the sizing core's (memory.py): activations kept for backward, weights, gradients,
optimizer state and the framework's reserve; the strategy changes how the model states split
(parallelism.py) and what the blocks keep (checkpointing.py). Host memory counts what offload
moves there, per GPU (a machine holds `gpus_per_node` of them).
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog.types import GpuSpec
from workers.sizing.memo import IdentityMemo
from workers.sizing.memory import activation_bytes_per_sample as plain_activation_bytes
from workers.sizing.memory import framework_reserve_bytes
from workers.sizing.overheads import ACTIVATION_BYTES, FRAMEWORK_ACTIVATION_FACTOR, TRANSIENT_GRADIENT_BUFFERS
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.spec import Framework, JobSpec, Training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.strategies.adapters import (
    TransformerShape,
    lora_parameters,
    quantized_parameters,
    transformer_shape,
)
from workers.sizing.strategies.checkpointing import activation_bytes_per_sample
from workers.sizing.strategies.parallelism import Layout, ParameterCounts, model_state_bytes
from workers.sizing.strategies.types import AdapterKind, Checkpointing
from workers.sizing.throughput import effective_precision


@dataclass(frozen=True)
class LayoutMemory:
    """Peak memory of one GPU under a layout, by term, and the host bytes offload puts beside it."""

    breakdown: MemoryBreakdown
    host_bytes_per_gpu: int
    trainable_parameters: int
    total_bytes: int  # the breakdown's sum, kept for the search's inner loop
    peak_phase: str = "backward"  # where the step peaks: forward, backward or optimizer_step


def parameter_counts(model: ModelStats, layout: Layout, shape: TransformerShape | None) -> ParameterCounts:
    """Return how the model's parameters split into trained, frozen 16-bit and frozen NF4 under the layout."""
    largest = shape.largest_unit_parameters if shape is not None else max(
        (layer.parameters for layer in model.layers), default=model.parameters)
    adapter = layout.adapter
    if adapter is None or shape is None:
        return ParameterCounts(trainable=model.parameters - model.frozen_parameters,
                               frozen=model.frozen_parameters, largest_unit=largest)
    trainable = lora_parameters(shape, rank=adapter.rank, targets=adapter.targets)
    nf4 = quantized_parameters(shape) if adapter.kind is AdapterKind.QLORA else 0
    return ParameterCounts(trainable=trainable, frozen=model.parameters - nf4, frozen_nf4=nf4, largest_unit=largest)


_WIDEST: IdentityMemo[int] = IdentityMemo()
_CONV: IdentityMemo[bool] = IdentityMemo()


def _widest(model: ModelStats) -> int:
    """Return the largest output of a row outside the attention cores (backward's transient buffers)."""
    return _WIDEST.get(model, None, lambda: max(
        (layer.neurons for layer in model.layers if layer.kind is not LayerKind.ATTENTION), default=0))


def _has_conv(model: ModelStats) -> bool:
    """Return whether cuDNN convolution workspaces apply."""
    return _CONV.get(model, None, lambda: not model.layers
                     or any(layer.kind is LayerKind.CONV for layer in model.layers))


def activation_bytes(model: ModelStats, training: Training, layout: Layout, *, gpu: GpuSpec | None,
                     batch_size: int) -> int:
    """Return the activations one GPU keeps for a micro-batch, with backward's transient buffers."""
    precision = effective_precision(training.precision, gpu)
    factor = FRAMEWORK_ACTIVATION_FACTOR[training.framework] * batch_size
    if transformer_shape(model) is None:
        full = layout.checkpointing is Checkpointing.FULL
        return round(factor * plain_activation_bytes(model, precision, recompute=full))
    t = layout.tensor_parallel
    kept = activation_bytes_per_sample(model, precision, mode=layout.checkpointing, tensor_parallel=t)
    widest = _widest(model)
    transient = TRANSIENT_GRADIENT_BUFFERS * widest * ACTIVATION_BYTES[precision] / t
    return round(factor * (kept + transient))


def layout_memory(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None, batch_size: int) -> LayoutMemory:
    """Return the per-GPU peak of the job under the layout at this micro-batch."""
    model, training = job.model, job.training
    shape = transformer_shape(model)
    counts = parameter_counts(model, layout, shape)
    precision = effective_precision(training.precision, gpu)
    states = model_state_bytes(counts, layout, precision=precision, optimizer=training.optimizer,
                               ddp_bucket=training.framework is Framework.PYTORCH)
    activations = activation_bytes(model, training, layout, gpu=gpu, batch_size=batch_size)
    # Pipeline stages (1F1B): the first stage holds p micro-batches of its 1/p of the layers, one
    # micro-batch's worth of the whole model (Narayanan et al. 2021, §2.2): activations stay as they are.
    tensors = activations + states.parameters + states.gradients + states.optimizer_state
    has_conv = _has_conv(model)
    breakdown = MemoryBreakdown(activations_bytes=activations, parameters_bytes=states.parameters,
                                gradients_bytes=states.gradients, optimizer_state_bytes=states.optimizer_state,
                                framework_reserve_bytes=framework_reserve_bytes(tensors, gpu=gpu, has_conv=has_conv))
    return LayoutMemory(breakdown=breakdown, host_bytes_per_gpu=states.host_bytes,
                        trainable_parameters=counts.trainable, total_bytes=tensors + breakdown.framework_reserve_bytes)
