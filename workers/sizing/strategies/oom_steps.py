"""The out-of-memory plan's steps for language models: checkpointing, sharding, offload, adapters.

Each step names its strategy (`Mitigation.parallelism`), the per-GPU peak it leaves on this card and
its training time relative to the job as given (the plain job's time per sample on the same GPUs),
worked out with the strategy core (footprint.py, steptime.py) on one machine of up to 8 cards:
- checkpointing: selective, else full (Korthikanti et al. 2022);
- sharding: ZeRO-3 / FSDP over the fewest GPUs (2, 4, 8) that fit;
- offload: ZeRO-3 with the optimizer state in host memory, over the fewest GPUs that fit;
- adapters: LoRA, else QLoRA, on one GPU; this changes the method (only adapter weights train).
"""

from __future__ import annotations

from collections.abc import Callable

from catalog.types import GpuSpec
from workers.sizing.efficiency import NVLINK_EFFICIENCY
from workers.sizing.memory import fits, usable_memory_bytes
from workers.sizing.requirements import Mitigation, MitigationKind
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.collectives import node_links
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.steptime import layout_time
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel, Offload, Parallelism

GIB = 2**30
GPU_COUNTS = (1, 2, 4, 8)
_WHAT = {Checkpointing.SELECTIVE: "recompute the attention core in backward",
         Checkpointing.FULL: "keep each block's input, recompute the block in backward: one more forward pass"}
_NAMES = {AdapterKind.LORA: "LoRA", AdapterKind.QLORA: "QLoRA"}
# The machine network assumed for the plan's one-machine steps (unused inside one machine).
_NO_NETWORK = 0.0


def _evaluate(job: JobSpec, gpu: GpuSpec, layout: Layout, *, base_ms_per_sample: float,
              profile_gpu: GpuSpec | None) -> tuple[int, float]:
    """Return the layout's per-GPU peak and its time per sample relative to the job as given."""
    memory = layout_memory(job, layout, gpu=gpu, batch_size=job.training.batch_size)
    links = node_links(nvlink_gb_per_s=gpu.nvlink_gb_per_s, pcie_gen=gpu.pcie_gen, network_gbit_per_s=_NO_NETWORK,
                       nvlink_efficiency=NVLINK_EFFICIENCY)
    time = layout_time(job, layout, gpu, links=links, batch_size=job.training.batch_size,
                       update_interval=job.training.update_interval,
                       trainable_parameters=memory.trainable_parameters, profile_gpu=profile_gpu)
    per_sample = time.iteration_ms / time.samples_per_iteration
    return memory.breakdown.total_bytes, per_sample / base_ms_per_sample if base_ms_per_sample > 0 else 1.0


def _first_fit(job: JobSpec, gpu: GpuSpec, make: Callable[[int], Layout | None], *, base_ms_per_sample: float,
               profile_gpu: GpuSpec | None) -> tuple[Layout, int, float] | None:
    """Return the first GPU count whose layout fits, with its peak and time factor."""
    last: tuple[Layout, int, float] | None = None
    for n in GPU_COUNTS:
        layout = make(n)
        if layout is None:
            continue
        peak, factor = _evaluate(job, gpu, layout, base_ms_per_sample=base_ms_per_sample, profile_gpu=profile_gpu)
        last = (layout, peak, factor)
        if fits(peak, gpu):
            return last
    return last


def _line(gpu: GpuSpec, peak: int) -> str:
    """Describe a peak against the card."""
    usable = usable_memory_bytes(gpu)
    verdict = "fits" if peak <= usable else "still exceeds"
    return f"peak {peak / GIB:.1f} GiB per GPU {verdict} the {usable / GIB:.1f} GiB usable on {gpu.slug}"


def strategy_steps(job: JobSpec, gpu: GpuSpec, *, base_ms_per_sample: float,
                   profile_gpu: GpuSpec | None = None) -> list[Mitigation]:
    """Return the language-model steps of the plan for this card (none for a model without attention)."""
    if transformer_shape(job.model) is None:
        return []
    steps: list[Mitigation] = []
    base, ref = base_ms_per_sample, profile_gpu
    for mode in (Checkpointing.SELECTIVE, Checkpointing.FULL):
        layout = Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, checkpointing=mode)
        peak, factor = _evaluate(job, gpu, layout, base_ms_per_sample=base, profile_gpu=ref)
        if fits(peak, gpu) or mode is Checkpointing.FULL:
            steps.append(Mitigation(
                kind=MitigationKind.CHECKPOINTING, gpu_memory_bytes=peak, time_factor=factor, gpu=gpu.slug,
                description=f"Checkpoint activations ({mode.value}: {_WHAT[mode]}): {_line(gpu, peak)}.",
                parallelism=Parallelism(data_parallel=DataParallel.PLAIN, checkpointing=mode)))
            break
    def zero3(n: int) -> Layout | None:
        return Layout(DataParallel.ZERO3, gpu_count=n, gpus_per_node=n, checkpointing=Checkpointing.FULL) \
            if n > 1 else None

    def offload(n: int) -> Layout:
        return Layout(DataParallel.ZERO3 if n > 1 else DataParallel.PLAIN, gpu_count=n, gpus_per_node=n,
                      offload=Offload(optimizer=True), checkpointing=Checkpointing.FULL)

    sharded = _first_fit(job, gpu, zero3, base_ms_per_sample=base, profile_gpu=ref)
    if sharded is not None:
        layout, peak, factor = sharded
        steps.append(Mitigation(
            kind=MitigationKind.SHARDING, gpu_memory_bytes=peak, time_factor=factor, gpu=gpu.slug,
            gpu_count=layout.gpu_count,
            description=f"Shard parameters, gradients and optimizer state over {layout.gpu_count} x {gpu.slug} "
                        f"(ZeRO-3 / FSDP, full checkpointing): {_line(gpu, peak)}.",
            parallelism=Parallelism(data_parallel=DataParallel.ZERO3, checkpointing=Checkpointing.FULL)))
    offloaded = _first_fit(job, gpu, offload, base_ms_per_sample=base, profile_gpu=ref)
    if offloaded is not None:
        layout, peak, factor = offloaded
        steps.append(Mitigation(
            kind=MitigationKind.OFFLOAD, gpu_memory_bytes=peak, time_factor=factor, gpu=gpu.slug,
            gpu_count=layout.gpu_count,
            description=f"Offload the optimizer state to host memory (ZeRO-Offload, 16 bytes per parameter on the "
                        f"host) on {layout.gpu_count} x {gpu.slug}: {_line(gpu, peak)}.",
            parallelism=Parallelism(data_parallel=layout.data_parallel, offload=Offload(optimizer=True),
                                    checkpointing=Checkpointing.FULL)))
    for kind in (AdapterKind.LORA, AdapterKind.QLORA):
        layout = Layout(DataParallel.PLAIN, gpu_count=1, gpus_per_node=1, adapter=Adapter(kind=kind),
                        checkpointing=Checkpointing.FULL)
        peak, factor = _evaluate(job, gpu, layout, base_ms_per_sample=base, profile_gpu=ref)
        if fits(peak, gpu) or kind is AdapterKind.QLORA:
            steps.append(Mitigation(
                kind=MitigationKind.ADAPTERS, gpu_memory_bytes=peak, time_factor=factor, gpu=gpu.slug,
                description=f"Train {_NAMES[kind]} adapters (rank 8 on q and v; frozen base"
                            f"{' in 4-bit NF4' if kind is AdapterKind.QLORA else ''}) with full checkpointing: "
                            f"{_line(gpu, peak)}. This changes the method: only the adapters train.",
                parallelism=Parallelism(data_parallel=DataParallel.PLAIN, adapter=Adapter(kind=kind),
                                        checkpointing=Checkpointing.FULL)))
            break
    return steps
