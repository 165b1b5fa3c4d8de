"""One iteration's time under a layout: the GPU's share of the compute, and the communication that shows.

The single-GPU roofline (timing.py) gives one micro-batch's forward and backward; the layout then
- adds what checkpointing recomputes (the recomputed share of a forward pass, checkpointing.py);
- with adapters, drops the weight-gradient half of backward for the frozen weights (a frozen dense
  layer still computes the gradient of its input, so backward costs one forward instead of two);
- with QLoRA, adds the dequantisation of every NF4 weight in each pass: read 0.5 bytes, write the
  16-bit weight, memory-bound;
- divides the compute by tensor-parallel x pipeline degree (each GPU runs its share of every layer,
  or its stage), and adds the collectives, bubble and offload of collectives.py.
The exchanges are counted one by one; only parameter-server training is also bounded by the 2017
survey's measured scaling (domain.md §4, multigpu.framework_speedup_cap).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from catalog.types import GpuSpec
from workers.sizing import efficiency
from workers.sizing.efficiency import BACKWARD_TO_FORWARD, DATA_PARALLEL_SYNC_MS
from workers.sizing.memo import IdentityMemo
from workers.sizing.multigpu import framework_speedup_cap
from workers.sizing.preference import reference_forwards
from workers.sizing.requirements import Bottleneck
from workers.sizing.spec import JobSpec, Precision, Training
from workers.sizing.stats import ModelStats
from workers.sizing.strategies.adapters import (
    NF4_BYTES_PER_PARAMETER,
    TransformerShape,
    quantized_parameters,
    transformer_shape,
)
from workers.sizing.strategies.checkpointing import recomputed_forward_share
from workers.sizing.strategies.collectives import Communication, Links, iteration_communication
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.types import AdapterKind, DataParallel, Parallelism
from workers.sizing.timing import IterationTime, estimate_iteration_ms

DEQUANTISED_WEIGHT_BYTES = 2  # NF4 weights are expanded to bf16 for each matmul (bitsandbytes)
_NO_STRATEGY = Parallelism()
_TIMED: IdentityMemo[ModelStats] = IdentityMemo()
_TRAINING: IdentityMemo[Training] = IdentityMemo()


def _timed_model(model: ModelStats, trainable_parameters: int) -> ModelStats:
    """Return the model with only the layout's trainable weights as `parameters` (the optimizer step's
    traffic follows them), one object per (model, count) for the time memos."""
    if trainable_parameters == model.parameters:
        return model
    frozen = model.parameters + model.frozen_parameters - trainable_parameters
    return _TIMED.get(model, trainable_parameters,
                      lambda: replace(model, parameters=trainable_parameters, frozen_parameters=frozen))


@dataclass(frozen=True)
class LayoutTime:
    """One iteration of a micro-batch on every GPU of the layout."""

    iteration_ms: float
    compute_ms: float  # this GPU's forward, backward, recompute and optimizer step
    forward_ms: float  # a forward-only pass (evaluation) on this GPU
    communication: Communication
    samples_per_iteration: int  # micro-batch x data-parallel degree
    calibrated: bool
    bottleneck: Bottleneck
    memory_ms: float = 0.0  # the part of compute_ms in layers bound by memory traffic (the energy estimate's split)


class LayoutCompute(NamedTuple):
    """A layout's own compute on one GPU, before any communication: what layout_time starts from."""

    single: IterationTime  # one micro-batch on one GPU, no strategy
    compute_ms: float  # this GPU's forward, backward, recompute and optimizer step
    split: int  # tensor parallel x pipeline stages
    shape: TransformerShape | None
    memory_ms: float = 0.0  # the part of compute_ms in layers bound by memory traffic (QLoRA's dequantising too)

    def floor_ms(self, layout: Layout) -> float:
        """Return layout_time's iteration with no communication exposed: never above it.

        The iteration adds the exposed communication (never negative) before the sync; IEEE rounding is
        monotone, so leaving it out cannot give more (the parameter server's bound only raises it).
        """
        return self.compute_ms + self.single.overhead_ms + _sync_ms(layout)


def _sync_ms(layout: Layout) -> float:
    return DATA_PARALLEL_SYNC_MS if layout.gpu_count > 1 else 0.0


def layout_time(job: JobSpec, layout: Layout, gpu: GpuSpec, *, links: Links, batch_size: int, update_interval: int,
                trainable_parameters: int, profile_gpu: GpuSpec | None = None) -> LayoutTime:
    """Return one iteration's time of the job under the layout on this GPU model."""
    compute = layout_compute(job, layout, gpu, batch_size=batch_size, update_interval=update_interval,
                             trainable_parameters=trainable_parameters, profile_gpu=profile_gpu)
    return layout_time_from(compute, job, layout, links=links, batch_size=batch_size, update_interval=update_interval,
                            trainable_parameters=trainable_parameters)


def layout_compute(job: JobSpec, layout: Layout, gpu: GpuSpec, *, batch_size: int, update_interval: int,
                   trainable_parameters: int, profile_gpu: GpuSpec | None = None) -> LayoutCompute:
    """Return the layout's compute on one GPU of this model (layout_time's first half)."""
    model = job.model
    # The optimizer step updates this GPU's share of the trainable weights (ZeRO and FSDP shard the
    # states, so each rank steps 1/shard of them), once per update interval (optimizer_time.py).
    timed_model = _timed_model(job.time_model, max(1, trainable_parameters // layout.shard_degree))
    precision = job.training.precision
    if precision is Precision.FP8_MIXED and layout.adapter is not None and layout.adapter.kind is AdapterKind.QLORA:
        precision = Precision.BF16_MIXED  # bitsandbytes expands NF4 weights to bf16 for each product: no FP8 GEMM
    training = _TRAINING.get(job.training, (batch_size, update_interval, precision), lambda: replace(
        job.training, batch_size=batch_size, recompute=False, update_interval=update_interval,
        parallelism=_NO_STRATEGY, precision=precision))  # one object per (training, micro-batch), built once
    single = estimate_iteration_ms(timed_model, training, gpu, gpu_count=1, profile_gpu=profile_gpu)
    reference = reference_forwards(training)  # a preference job's reference model: one forward more (single's too)
    passes = 1.0 + BACKWARD_TO_FORWARD + reference
    recomputed = recomputed_forward_share(model, layout.checkpointing)
    backward = 1.0 if layout.adapter is not None else BACKWARD_TO_FORWARD
    layers_ms = single.compute_ms + single.memory_ms
    compute_ms = layers_ms * (1.0 + backward + recomputed + reference) / passes
    memory_ms = single.memory_ms * (1.0 + backward + recomputed + reference) / passes
    shape = transformer_shape(model)
    if layout.adapter is not None and layout.adapter.kind is AdapterKind.QLORA and shape is not None:
        traffic = quantized_parameters(shape) * (NF4_BYTES_PER_PARAMETER + DEQUANTISED_WEIGHT_BYTES)
        per_pass_ms = traffic / (gpu.memory_bandwidth_gb_per_s * 1e6 * efficiency.BANDWIDTH_EFFICIENCY)
        compute_ms += per_pass_ms * (1.0 + backward + recomputed + reference)
        memory_ms += per_pass_ms * (1.0 + backward + recomputed + reference)
    split = layout.tensor_parallel * layout.pipeline_stages
    return LayoutCompute(single=single, compute_ms=compute_ms / split, split=split, shape=shape,
                         memory_ms=memory_ms / split)


def layout_time_from(compute: LayoutCompute, job: JobSpec, layout: Layout, *, links: Links, batch_size: int,
                     update_interval: int, trainable_parameters: int) -> LayoutTime:
    """Return layout_time from the layout's compute: the communication that shows added (its second half)."""
    model = job.model
    single, compute_ms, split, shape = compute.single, compute.compute_ms, compute.split, compute.shape
    blocks = shape.blocks if shape is not None else 0
    hidden = shape.hidden if shape is not None else 0
    steps = shape.sequence_length if shape is not None else 0
    comm = iteration_communication(layout, links, compute_ms=compute_ms, trainable=trainable_parameters,
                                   parameters=model.parameters + model.frozen_parameters,
                                   activation_values_per_block=batch_size * steps * hidden,
                                   blocks=blocks, micro_batches=update_interval,
                                   precision=job.training.precision)
    total = compute_ms + single.overhead_ms + comm.exposed_ms + _sync_ms(layout)
    n = layout.data_parallel_degree
    if layout.data_parallel is DataParallel.PARAMETER_SERVER and n > 1:
        # the 2017 survey's parameter-server scaling (domain.md §4) bounds the speed-up (multigpu.py)
        total = max(total, n * (compute_ms + single.overhead_ms) / framework_speedup_cap(job.training.framework, n))
    return LayoutTime(
        iteration_ms=total, compute_ms=compute_ms, forward_ms=single.forward_ms / split, communication=comm,
        samples_per_iteration=batch_size * layout.data_parallel_degree, calibrated=single.calibrated,
        bottleneck=Bottleneck(comm.bound) if comm.bound != "compute" else single.bottleneck,
        memory_ms=compute.memory_ms,
    )
