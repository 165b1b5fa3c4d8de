"""The `auto` search: the simplest strategies first, every feasible one on a machine shape, the fastest kept.

For n machines of g GPUs of one model, the strategies are tried in the order of simplicity of
domain.md §5, extended (issue 12): the batch as given, then smaller micro-batches with the update
interval raised so the effective batch stays (learning rate unchanged: the samples per optimizer
step do not change); checkpointing (selective, selective_ops, then full: each keeps less and
recomputes more than the one before; selective is skipped under a fused attention kernel, where it
keeps what none keeps and only costs time); sharding (ZeRO-1, ZeRO-2, ZeRO-3 / FSDP,
hybrid shard across machines); adapters (LoRA, QLoRA) only when the spec allows changing the
method, and only where no full training fits; offload of optimizer state, then of parameters;
tensor parallel inside a machine. What the spec names is kept as given. Every combination that fits
is timed; on one machine shape the price is the same for all, so the fastest wins (ties within
TIE_SHARE go to the simpler one).
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from catalog.types import GpuSpec
from workers.sizing.efficiency import NVLINK_EFFICIENCY
from workers.sizing.layers.attention import Attention
from workers.sizing.memory import attention_kind, fits
from workers.sizing.multigpu import NVLINK_PAIRS_ONLY
from workers.sizing.preference import batch_unit
from workers.sizing.spec import JobSpec, step_training
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.collectives import node_links
from workers.sizing.strategies.footprint import LayoutMemory, searched_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.steptime import LayoutCompute, LayoutTime, layout_compute, layout_time_from
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel, Offload, Parallelism
from workers.sizing.timing import cached_times_version

TIE_SHARE = 0.01  # faster by less than this is no reason to pick the more complex strategy
# Korthikanti et al. 2022 (arXiv 2205.05198) §4-5: selective recomputes the attention core only (a few
# percent of the FLOPs); torchtitan's op-level policy (selective_ops) saves every other matmul's
# output and recomputes the rest of each block; full recomputes every block (one more forward).
CHECKPOINTING_ORDER = (Checkpointing.NONE, Checkpointing.SELECTIVE, Checkpointing.SELECTIVE_OPS, Checkpointing.FULL)
TENSOR_PARALLEL_DEGREES = (2, 4, 8)


@dataclass(frozen=True)
class LayoutChoice:
    """A layout that fits, at the micro-batch and update interval that make it fit, with its figures."""

    layout: Layout
    batch_size: int
    update_interval: int
    memory: LayoutMemory
    time: LayoutTime
    complexity: int  # position in the order of simplicity
    considered: int = 0  # feasible combinations found on this machine shape


def _checkpointing(p: Parallelism, legacy_recompute: bool) -> tuple[Checkpointing, ...]:
    """Return the checkpointing modes to try: the spec's, or every mode in order."""
    if p.checkpointing is not Checkpointing.AUTO:
        return (p.checkpointing,)
    return (Checkpointing.FULL,) if legacy_recompute else CHECKPOINTING_ORDER


def _kinds(p: Parallelism, *, nodes: int, gpus: int) -> tuple[DataParallel, ...]:
    """Return the data-parallel kinds to try, simplest first."""
    if p.data_parallel is not DataParallel.AUTO:
        return (p.data_parallel,)
    if gpus == 1:
        return (DataParallel.PLAIN,)
    kinds = [DataParallel.PLAIN, DataParallel.ZERO1, DataParallel.ZERO2, DataParallel.ZERO3]
    if nodes > 1 and gpus > nodes:  # one GPU per machine: hybrid shard would shard nothing
        kinds.insert(3, DataParallel.HYBRID_SHARD)
    return tuple(kinds)


def _adapters(p: Parallelism, *, transformer: bool) -> tuple[Adapter | None, ...]:
    """Return the adapters to try: the spec's, else full training, then LoRA and QLoRA where allowed."""
    if p.adapter is not None:
        return (p.adapter,)
    if p.allow_adapters and transformer:
        return (None, Adapter(kind=AdapterKind.LORA), Adapter(kind=AdapterKind.QLORA))
    return (None,)


def _offloads(p: Parallelism, kind: DataParallel) -> tuple[Offload, ...]:
    """Return the offload settings to try: the spec's, or none, then the optimizer, then the parameters."""
    if p.offload.optimizer or p.offload.parameters:
        return (p.offload,)
    if p.data_parallel is not DataParallel.AUTO and kind is DataParallel.PLAIN:
        return (Offload(),)
    offloads = [Offload()]
    if kind in (DataParallel.PLAIN, DataParallel.ZERO2, DataParallel.ZERO3, DataParallel.HYBRID_SHARD):
        offloads.append(Offload(optimizer=True))
    if kind in (DataParallel.ZERO3, DataParallel.HYBRID_SHARD):
        offloads.append(Offload(optimizer=True, parameters=True))
    return tuple(offloads)


def _tensor_degrees(p: Parallelism, *, gpus_per_node: int, heads: int,
                    adapter: Adapter | None = None) -> tuple[int, ...]:
    """Return the tensor-parallel degrees to try: the spec's, or 1, then 2, 4, 8 that divide the heads.

    QLoRA is searched without tensor parallel: the stacks that train it (bitsandbytes' NF4 under Hugging Face
    PEFT, Axolotl, torchtune, QLoRA's own scripts) spread it by data parallel, ZeRO or FSDP only, so a
    tensor-parallel QLoRA option would name a run nobody can start. A spec that names a degree keeps it.
    """
    if p.tensor_parallel:
        return (p.tensor_parallel,)
    if adapter is not None and adapter.kind is AdapterKind.QLORA:
        return (1,)
    return (1, *(t for t in TENSOR_PARALLEL_DEGREES if t <= gpus_per_node and heads and heads % t == 0))


def candidate_layouts(job: JobSpec, *, gpus_per_node: int, nodes: int) -> Iterator[Layout]:
    """Yield the layouts to try on n machines of g GPUs, in the order of simplicity."""
    yield from _search_space(job, gpus_per_node=gpus_per_node, nodes=nodes)[0]


def _search_space(job: JobSpec, *, gpus_per_node: int, nodes: int) -> _Space:
    """Return candidate_layouts' layouts, the one of them that keeps least (_frugal_layout), and each one's marks.

    All depend on the job only through its parallelism, its legacy recompute flag and (for a transformer)
    its attention heads, so each such question is answered once (pure values, remembered: a search of a
    job asks for ~3 machine shapes, and jobs differ mostly in what these do not read).
    """
    shape = transformer_shape(job.model)
    return _layouts(job.training.parallelism, transformer=shape is not None,
                    heads=shape.heads if shape is not None else 0, recompute=job.training.recompute,
                    gpus_per_node=gpus_per_node, nodes=nodes)


class _Marks(NamedTuple):
    """What the search's loop asks of a layout, worked out with the layouts (most of ~130 are skipped)."""

    group: int  # (adapter, tensor parallel, data-parallel kind), numbered
    modes_of: int  # the group and its offload, numbered: the layouts that differ by checkpointing alone
    between: bool  # checkpointing between none and full (_BETWEEN)
    selective: bool  # selective checkpointing
    adapted: bool  # an adapter


_Space = tuple[tuple[Layout, ...], Layout | None, tuple[_Marks, ...]]


@functools.lru_cache(maxsize=256)
def _layouts(p: Parallelism, *, transformer: bool, heads: int, recompute: bool, gpus_per_node: int,
             nodes: int) -> _Space:
    total = gpus_per_node * nodes
    stages = p.pipeline_stages or 1
    layouts = tuple(Layout(kind, gpu_count=total, gpus_per_node=gpus_per_node, tensor_parallel=t,
                           pipeline_stages=stages, offload=offload, adapter=adapter, checkpointing=mode)
                    for adapter in _adapters(p, transformer=transformer)
                    for t in _tensor_degrees(p, gpus_per_node=gpus_per_node, heads=heads, adapter=adapter)
                    if not total % (t * stages)
                    for kind in _kinds(p, nodes=nodes, gpus=total // (t * stages))
                    for offload in _offloads(p, kind)
                    for mode in _checkpointing(p, recompute))
    groups: dict[tuple[object, ...], int] = {}
    modes: dict[tuple[object, ...], int] = {}
    marks = []
    for layout in layouts:
        group = (layout.adapter, layout.tensor_parallel, layout.data_parallel)
        marks.append(_Marks(group=groups.setdefault(group, len(groups)),
                            modes_of=modes.setdefault((*group, layout.offload), len(modes)),
                            between=layout.checkpointing in _BETWEEN,
                            selective=layout.checkpointing is Checkpointing.SELECTIVE,
                            adapted=layout.adapter is not None))
    return layouts, _frugal_layout(p, layouts), tuple(marks)


def _micro_batches(batch_size: int, update_interval: int, unit: int = 1) -> Iterator[tuple[int, int]]:
    """Yield the batch as given, then halvings with the update interval doubled (the effective batch kept), in
    whole `unit`s (a preference pair's two sequences, which one forward takes together: preference.py)."""
    batch, interval = batch_size, update_interval
    yield batch, interval
    while batch > unit:
        batch, interval = max(unit, batch // unit // 2 * unit), interval * 2
        yield batch, interval


def _smallest(job: JobSpec) -> tuple[int, int]:
    """Return the last (micro-batch, update interval) _micro_batches yields: micro-batch 1 (a pair's 2)."""
    *_, last = _micro_batches(job.training.batch_size, job.training.update_interval, batch_unit(job.training))
    return last


def _nvlink_of(gpu: GpuSpec, gpus_per_node: int) -> float:
    """Return the GPU's NVLink bandwidth as the machine wires it (bridged pairs only for some cards)."""
    if gpu.slug in NVLINK_PAIRS_ONLY and gpus_per_node > 2:
        return 0.0
    return gpu.nvlink_gb_per_s


# A search reads the job only through its model, timed model and training (never its data set, constraints or
# objective), so its answer is remembered per (model, timed model, training, GPU, machine shape, host memory):
# a wider check (wider.py), a relaxed re-ranking and a later job on the same model and training ask the same
# searches again. Models and GPUs are keyed by identity (a model's value hash costs more than the search) and
# checked on a hit; the times' version drops every answer when the calibration tool changes the factors.
# The models are held weakly (a model dies with its job; a strong hold kept up to 1,024 of them alive,
# 10,000-layer ones among them: workers/sizing/memo.py); a dead one's answer is never a hit and ages out.
_Searched = tuple[Callable[[], object], Callable[[], object], GpuSpec, GpuSpec | None, LayoutChoice | None]
_SEARCHES: OrderedDict[tuple[object, ...], _Searched] = OrderedDict()
SEARCHES_KEPT = 1024


def best_layout(job: JobSpec, gpu: GpuSpec, *, gpus_per_node: int, nodes: int, network_gbit_per_s: float,
                host_memory_bytes: int, host_need_bytes: int, profile_gpu: GpuSpec | None = None,
                host_share: float = 1.0) -> LayoutChoice | None:
    """Return the fastest layout that fits n machines of g GPUs (with its host memory), or None.

    `host_memory_bytes` is one machine's; `host_need_bytes` what the job needs there besides offload; `host_share`
    its share of a whole host's CPU-Adam rate (collectives.host_share).
    Remembered (see _SEARCHES): the same question gives the same (immutable) answer without a search.
    """
    model, timed = job.model, job.time_model
    key = (id(model), id(timed), step_training(job.training), id(gpu), id(profile_gpu), gpus_per_node, nodes,
           network_gbit_per_s, host_memory_bytes, host_need_bytes, host_share, cached_times_version())
    hit = _SEARCHES.get(key)
    if hit is not None and hit[0]() is model and hit[1]() is timed and hit[2] is gpu and hit[3] is profile_gpu:
        return hit[4]
    choice = search_layouts(job, gpu, gpus_per_node=gpus_per_node, nodes=nodes, network_gbit_per_s=network_gbit_per_s,
                            host_memory_bytes=host_memory_bytes, host_need_bytes=host_need_bytes,
                            profile_gpu=profile_gpu, host_share=host_share)
    _SEARCHES[key] = (weakref.ref(model), weakref.ref(timed), gpu, profile_gpu, choice)
    while len(_SEARCHES) > SEARCHES_KEPT:
        _SEARCHES.popitem(last=False)
    return choice


def search_layouts(job: JobSpec, gpu: GpuSpec, *, gpus_per_node: int, nodes: int, network_gbit_per_s: float,
                   host_memory_bytes: int, host_need_bytes: int, profile_gpu: GpuSpec | None = None,
                   host_share: float = 1.0) -> LayoutChoice | None:
    """Return best_layout's answer by searching, every time (best_layout remembers it)."""
    links = node_links(nvlink_gb_per_s=_nvlink_of(gpu, gpus_per_node), pcie_gen=gpu.pcie_gen,
                       network_gbit_per_s=network_gbit_per_s,
                       nvlink_efficiency=NVLINK_EFFICIENCY, host_share=host_share)
    layouts, frugal, marks = _search_space(job, gpus_per_node=gpus_per_node, nodes=nodes)
    if frugal is not None and not fits(searched_memory(job, frugal, gpu=gpu, batch_size=_smallest(job)[0],
                                                       update_interval=_smallest(job)[1]).total_bytes, gpu):
        return None  # not even the layout that keeps least fits: no need to try the others
    best: LayoutChoice | None = None
    found = 0
    asked_adapter = job.training.parallelism.adapter is not None
    auto_checkpointing = job.training.parallelism.checkpointing is Checkpointing.AUTO
    # A kind that fits at the batch as given, without checkpointing or offload beyond what it tried
    # first, is only slowed down by more of them: its later combinations are skipped.
    settled: set[int] = set()  # _Marks.group
    # Under a fused attention kernel the attention core keeps nothing for backward: selective
    # checkpointing keeps what none keeps (footprint._canonical) and only adds its recompute.
    no_selective = auto_checkpointing and attention_kind(job.training, gpu) is not Attention.MATH
    # Each checkpointing mode keeps less and recomputes more than the one before it (CHECKPOINTING_ORDER):
    # where an earlier mode of the same layout fits micro-batch b, a later one fits b too, and at b or
    # below it is slower; only a larger micro-batch can make it pay, so only those are sized.
    fitted: dict[int, int] = {}  # _Marks.modes_of: the largest micro-batch that fits
    full_fits: dict[Layout, bool] = {}
    for complexity, (layout, mark) in enumerate(zip(layouts, marks, strict=True)):
        if mark.adapted and not asked_adapter and best is not None:
            break  # adapters change the method: only where no full training fits
        if no_selective and mark.selective:
            continue
        if mark.group in settled:
            continue
        modes_of = mark.modes_of
        if mark.between and auto_checkpointing and not _full_fits(job, layout, gpu, known=full_fits):
            continue  # full checkpointing keeps least: where it does not fit micro-batch 1, no mode between does
        for batch, interval in _micro_batches(job.training.batch_size, job.training.update_interval,
                                              batch_unit(job.training)):
            if batch <= fitted.get(modes_of, 0):
                found += 1  # it fits here, as the earlier mode did, and is no faster
                break
            memory = searched_memory(job, layout, gpu=gpu, batch_size=batch, update_interval=interval)
            if not fits(memory.total_bytes, gpu):
                continue
            if host_need_bytes + memory.host_bytes_per_gpu * gpus_per_node > host_memory_bytes:
                break  # a smaller batch does not shrink what offload puts on the host
            found += 1
            fitted[modes_of] = max(batch, fitted.get(modes_of, 0))
            trainable = memory.trainable_parameters
            compute = layout_compute(job, layout, gpu, batch_size=batch, update_interval=interval,
                                     trainable_parameters=trainable, profile_gpu=profile_gpu)
            if best is None or not cannot_be_faster(compute, layout, batch_size=batch, than=best):
                time = layout_time_from(compute, job, layout, links=links, batch_size=batch, update_interval=interval,
                                        trainable_parameters=trainable)
                choice = LayoutChoice(layout=layout, batch_size=batch, update_interval=interval, memory=memory,
                                      time=time, complexity=complexity)
                if best is None or _faster(choice, best):
                    best = choice
            if batch == job.training.batch_size:
                settled.add(mark.group)
            break  # the largest micro-batch that fits is the fastest of this layout
    return None if best is None else replace(best, considered=found)


_BETWEEN = frozenset({Checkpointing.SELECTIVE, Checkpointing.SELECTIVE_OPS})


def _full_fits(job: JobSpec, layout: Layout, gpu: GpuSpec, *, known: dict[Layout, bool]) -> bool:
    """Return whether the layout with full checkpointing fits micro-batch 1 (remembered per layout)."""
    full = replace(layout, checkpointing=Checkpointing.FULL)
    if full not in known:
        known[full] = fits(searched_memory(job, full, gpu=gpu, batch_size=_smallest(job)[0],
                                           update_interval=_smallest(job)[1]).total_bytes, gpu)
    return known[full]


def _frugal_layout(p: Parallelism, layouts: Sequence[Layout]) -> Layout | None:
    """Return the candidate (of the search's `layouts` under parallelism `p`) that keeps the least on a GPU: every
    model state sharded and offloaded, full checkpointing, the widest tensor parallel, the smallest adapter; None
    when there is none."""
    if not layouts:
        return None
    widest = max(layout.tensor_parallel for layout in layouts)
    adapters = [layout.adapter for layout in layouts]
    adapter = next((a for a in adapters if a is not None and a.kind is AdapterKind.QLORA),
                   next((a for a in adapters if a is not None), None)) if p.adapter is None else p.adapter
    pool = [layout for layout in layouts if layout.tensor_parallel == widest and layout.adapter == adapter]
    rank = {DataParallel.ZERO3: 0, DataParallel.HYBRID_SHARD: 1, DataParallel.ZERO2: 2, DataParallel.ZERO1: 3}
    return min(pool, key=lambda layout: (rank.get(layout.data_parallel, 4), -layout.offload.parameters,
                                         -layout.offload.optimizer,
                                         -CHECKPOINTING_ORDER.index(layout.checkpointing)
                                         if layout.checkpointing in CHECKPOINTING_ORDER else 0))


def _samples_per_ms(choice: LayoutChoice) -> float:
    """Return the layout's training samples per millisecond over all its GPUs."""
    return choice.time.samples_per_iteration / choice.time.iteration_ms


def _faster(new: LayoutChoice, old: LayoutChoice) -> bool:
    """Return whether the new choice is faster by more than TIE_SHARE (the old one is simpler)."""
    return _samples_per_ms(new) > _samples_per_ms(old) * (1.0 + TIE_SHARE)


def cannot_be_faster(compute: LayoutCompute, layout: Layout, *, batch_size: int, than: LayoutChoice) -> bool:
    """Return whether the layout, even with no communication showing, would not be _faster than `than`.

    Its samples over its least iteration (LayoutCompute.floor_ms, never above layout_time's) are at least
    its samples per ms, so when even they do not beat `than` by TIE_SHARE the layout is not timed: the
    search keeps what it would have kept (tests/test_search_memo.py holds it to timing every layout).
    """
    floor_ms = compute.floor_ms(layout)
    return floor_ms > 0 and batch_size * layout.data_parallel_degree / floor_ms <= _samples_per_ms(than) * (
        1.0 + TIE_SHARE)
