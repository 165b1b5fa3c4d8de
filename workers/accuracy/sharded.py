"""FSDP records (MosaicML llm-foundry, torchtitan) predicted as the product sizes a ZeRO-3 / FSDP layout.

A user who names `parallelism.data_parallel: zero3` gets strategies/footprint.py's walk for memory and
strategies/steptime.py for time (all-gathers, reduce-scatters, their overlap); the records of
measurements.json that ran FSDP FULL_SHARD are compared on that same path, with the checkpointing the
run used (jobs.record_checkpointing: torchtitan's op-level selective policy is `selective_ops`, which
the plain spec's `recompute` cannot say). Machines hold 8 GPUs (DGX / HGX A100 and H100; validation
README sources 7, 8); the network between them is the record's where it says, else the instance
rows' figure below.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from workers.accuracy.jobs import MeasuredJob
from workers.sizing.efficiency import NVLINK_EFFICIENCY
from workers.sizing.requirements import MemoryBreakdown
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.collectives import node_links
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.steptime import layout_time
from workers.sizing.strategies.types import Checkpointing, DataParallel

SHARDED_GPUS_PER_NODE = 8
# A network the record does not state: the instance rows of its machines (p4d 400 Gbit/s for A100,
# p5 3200 Gbit/s for H100; catalog/data/instances) as the closest public figure.
DEFAULT_NETWORK_GBIT_PER_S = {"a100-40gb": 400.0, "a100-80gb": 400.0, "h100-sxm": 3200.0}
OTHER_NETWORK_GBIT_PER_S = 100.0


@dataclass(frozen=True)
class ShardedRun:
    """A fully sharded record's job and layout, as the strategy core takes them."""

    job: JobSpec  # recompute off: the layout says what is recomputed
    layout: Layout


def sharded_run(case: MeasuredJob) -> ShardedRun | None:
    """Return the record's ZeRO-3 layout, or None when the run is not sharded over several GPUs."""
    if not case.fully_sharded or case.gpu_count == 1:
        return None
    layout = Layout(DataParallel.ZERO3, gpu_count=case.gpu_count,
                    gpus_per_node=min(SHARDED_GPUS_PER_NODE, case.gpu_count),
                    checkpointing=Checkpointing(case.checkpointing))
    return ShardedRun(job=replace(case.job, training=replace(case.job.training, recompute=False)), layout=layout)


def sharded_memory_breakdown(run: ShardedRun, gpu: GpuSpec, *, batch_size: int) -> MemoryBreakdown:
    """Return the per-GPU peak the strategy core predicts for the sharded run at this micro-batch."""
    return layout_memory(run.job, run.layout, gpu=gpu, batch_size=batch_size).breakdown


def network_gbit_per_s(gpu: GpuSpec, stated: float | None = None) -> float:
    """Return the network between machines: the record's figure, else the instance rows' for the GPU."""
    return float(stated) if stated else DEFAULT_NETWORK_GBIT_PER_S.get(gpu.slug, OTHER_NETWORK_GBIT_PER_S)


def sharded_samples_per_s(run: ShardedRun, gpu: GpuSpec) -> float:
    """Return the samples/s of the whole sharded job, as the strategy core predicts it."""
    training = run.job.training
    links = node_links(nvlink_gb_per_s=gpu.nvlink_gb_per_s, pcie_gen=gpu.pcie_gen,
                       network_gbit_per_s=network_gbit_per_s(gpu), nvlink_efficiency=NVLINK_EFFICIENCY)
    memory = layout_memory(run.job, run.layout, gpu=gpu, batch_size=training.batch_size)
    time = layout_time(run.job, run.layout, gpu, links=links, batch_size=training.batch_size,
                       update_interval=training.update_interval, trainable_parameters=memory.trainable_parameters)
    return time.samples_per_iteration * 1000.0 / time.iteration_ms
