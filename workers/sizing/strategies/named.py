"""The strategy a spec names, sized as given: POST /v1/estimate, `gpugauge estimate` and the requirements.

The ranking searches strategies (search.py); an estimate sizes the one the spec names on the GPUs
asked for, with `auto` fields resolved to their simplest value: plain data parallel, no tensor
parallel or pipeline, no checkpointing (full where the legacy `training.recompute` asks for it).
A spec that names nothing (the default `training.parallelism`) keeps the plain sizing core.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from workers.sizing.efficiency import NVLINK_EFFICIENCY
from workers.sizing.errors import SpecError
from workers.sizing.memory import step_peak
from workers.sizing.multigpu import NVLINK_PAIRS_ONLY
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.collectives import node_links
from workers.sizing.strategies.footprint import LayoutMemory, layout_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.steptime import LayoutTime, layout_time
from workers.sizing.strategies.types import Checkpointing, DataParallel, Parallelism
from workers.sizing.timing import IterationTime

_NOTHING_NAMED = (Parallelism(), Parallelism(allow_adapters=True))


def names_strategy(job: JobSpec) -> bool:
    """Return whether the spec names a strategy (anything but the default `training.parallelism`)."""
    return job.training.parallelism not in _NOTHING_NAMED


def replica_gpus(job: JobSpec) -> int:
    """Return the fewest GPUs the spec's strategy runs on: its tensor-parallel degree x pipeline stages (1 if none)."""
    p = job.training.parallelism
    return (p.tensor_parallel or 1) * (p.pipeline_stages or 1)


def named_layout(job: JobSpec, *, gpu_count: int) -> Layout | None:
    """Return the spec's strategy on `gpu_count` GPUs of one machine, or None when it names none.

    Raises SpecError (field `gpu_count`) when tensor parallel x pipeline stages does not divide the GPUs.
    """
    if not names_strategy(job):
        return None
    p = job.training.parallelism
    t, stages = p.tensor_parallel or 1, p.pipeline_stages or 1
    if gpu_count % (t * stages):
        raise SpecError("gpu_count", f"training.parallelism asks for tensor parallel {t} x {stages} pipeline "
                                     f"stage(s) = {t * stages} GPUs per replica; {gpu_count} GPU(s) are not a "
                                     "multiple of it")
    kind = DataParallel.PLAIN if p.data_parallel is DataParallel.AUTO else p.data_parallel
    if p.checkpointing is not Checkpointing.AUTO:
        mode = p.checkpointing
    else:
        mode = Checkpointing.FULL if job.training.recompute else Checkpointing.NONE
    return Layout(kind, gpu_count=gpu_count, gpus_per_node=gpu_count, tensor_parallel=t, pipeline_stages=stages,
                  offload=p.offload, adapter=p.adapter, checkpointing=mode)


@dataclass(frozen=True)
class NamedEstimate:
    """The named strategy's memory on one GPU, and (given a GPU) its iteration."""

    layout: Layout
    memory: LayoutMemory
    time: LayoutTime | None


def _nvlink(gpu: GpuSpec, gpus_per_node: int) -> float:
    """Return the card's NVLink as a machine of this many wires it (bridged pairs only for some cards)."""
    return 0.0 if gpu.slug in NVLINK_PAIRS_ONLY and gpus_per_node > 2 else gpu.nvlink_gb_per_s


def estimate_named(job: JobSpec, layout: Layout, *, gpu: GpuSpec | None,
                   profile_gpu: GpuSpec | None = None) -> NamedEstimate:
    """Return the layout's per-GPU memory at the spec's batch, and its time on `gpu` (None without one)."""
    memory = layout_memory(job, layout, gpu=gpu, batch_size=job.training.batch_size)
    if gpu is None:
        return NamedEstimate(layout, memory, None)
    return NamedEstimate(layout, memory, named_time(job, layout, memory, gpu=gpu, profile_gpu=profile_gpu))


def named_time(job: JobSpec, layout: Layout, memory: LayoutMemory, *, gpu: GpuSpec,
               profile_gpu: GpuSpec | None = None) -> LayoutTime:
    """Return estimate_named's iteration of the layout on one machine of `gpu`, given its memory there."""
    training = job.training
    links = node_links(nvlink_gb_per_s=_nvlink(gpu, layout.gpus_per_node), pcie_gen=gpu.pcie_gen,
                       network_gbit_per_s=0.0, nvlink_efficiency=NVLINK_EFFICIENCY)
    return layout_time(job, layout, gpu, links=links, batch_size=training.batch_size,
                       update_interval=training.update_interval, trainable_parameters=memory.trainable_parameters,
                       profile_gpu=profile_gpu)


def single_gpu_time(job: JobSpec, layout: Layout, gpu: GpuSpec, *, trainable_parameters: int,
                    profile_gpu: GpuSpec | None = None) -> LayoutTime:
    """Return the same method (adapters, checkpointing, offload) on one GPU: what a speed-up compares with.

    Plain data parallel's one-GPU iteration would not do: an adapter's backward skips the frozen weights'
    gradients, so QLoRA on 8 GPUs read "13x one" against a full fine-tune's single GPU.
    """
    one = replace(layout, data_parallel=DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, tensor_parallel=1,
                  pipeline_stages=1)
    links = node_links(nvlink_gb_per_s=0.0, pcie_gen=gpu.pcie_gen, network_gbit_per_s=0.0,
                       nvlink_efficiency=NVLINK_EFFICIENCY)
    training = job.training
    return layout_time(job, one, gpu, links=links, batch_size=training.batch_size,
                       update_interval=training.update_interval, trainable_parameters=trainable_parameters,
                       profile_gpu=profile_gpu)


def as_iteration_time(time: LayoutTime, plain: IterationTime, *, single: LayoutTime) -> IterationTime:
    """Return the layout's iteration as the sizing core's IterationTime (for the advice and the loader need).

    `plain` is the same job timed as plain data parallel; its layer counts and kernel split are kept.
    `single` is the layout's method on one GPU (`single_gpu_time`), which the speed-up compares with.
    """
    share = time.compute_ms / max(plain.compute_ms + plain.memory_ms, 1e-9)
    speedup = (time.samples_per_iteration / time.iteration_ms) / (single.samples_per_iteration / single.iteration_ms) \
        if single.iteration_ms > 0 and time.iteration_ms > 0 else 1.0
    return replace(plain, compute_ms=plain.compute_ms * share, memory_ms=plain.memory_ms * share,
                   allreduce_ms=time.communication.exposed_ms, total_ms=time.iteration_ms,
                   bottleneck=time.bottleneck, forward_ms=time.forward_ms, calibrated=time.calibrated,
                   speedup_vs_one_gpu=speedup)


def job_peak_bytes(job: JobSpec, *, gpu_count: int) -> int:
    """Return one GPU's peak of the job (no card's reserve: the GPU-independent figure), under the strategy it names if
    any, else the plain step: what the advice's other figures (a fused loss, 8-bit states, bf16) are compared by."""
    layout = named_layout(job, gpu_count=gpu_count)
    if layout is not None:
        return estimate_named(job, layout, gpu=None).memory.total_bytes
    return step_peak(job.model, job.training, gpu=None, gpu_count=gpu_count).breakdown.total_bytes
