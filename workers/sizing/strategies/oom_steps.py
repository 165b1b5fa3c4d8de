"""The out-of-memory plan's steps for language models: checkpointing, sharding, offload, adapters.

Each step starts from the job's own layout (`start`: the strategy the spec names on the job's GPUs,
or plain data parallel on them) and changes one thing; it names its whole strategy
(`Mitigation.parallelism`: what the user named, with the change), the per-GPU peak it leaves on
this card and its training time relative to the job as given (the start layout's time per sample
on the same GPUs), worked out with the strategy core (footprint.py, steptime.py) on one machine:
- checkpointing: the next mode after the start's in the search's order (selective, selective_ops,
  full; Korthikanti et al. 2022 and torchtitan's op-level policy), the first that fits, else full;
- sharding: the next stronger data-parallel kind (ZeRO-1, ZeRO-2, ZeRO-3 / FSDP) on the job's GPUs,
  with its checkpointing, then with full checkpointing, then over 2x, 4x ... the GPUs (up to a machine
  of 8, or the job's count when larger): the first that fits;
- offload: the optimizer state to host memory (ZeRO-Offload runs on ZeRO-2 and -3; plain data parallel
  on one GPU), on the job's GPUs first, then more, on ZeRO-2 then ZeRO-3, where the offload itself saves;
- adapters: LoRA, else QLoRA, in the start's layout; this changes the method (only adapter weights train). A LoRA
  job is offered the same adapters on a 4-bit base (QLoRA).
A step the start already takes (full checkpointing, ZeRO-3, offload, adapters) is not offered again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from catalog.types import GpuSpec
from workers.sizing.memory import fits, usable_memory_bytes
from workers.sizing.multigpu import MAX_GPUS_PER_NODE
from workers.sizing.requirements import Mitigation, MitigationKind
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.footprint import LayoutMemory, layout_memory
from workers.sizing.strategies.named import estimate_named, named_layout, named_time, replica_gpus
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.types import (
    PARAMETERS_SHARDED,
    Adapter,
    AdapterKind,
    Checkpointing,
    DataParallel,
    Offload,
)

GIB = 2**30
# The order of simplicity the automatic search tries (search.CHECKPOINTING_ORDER) past none.
CHECKPOINTING_STEPS = (Checkpointing.SELECTIVE, Checkpointing.SELECTIVE_OPS, Checkpointing.FULL)
SHARDING_ORDER = (DataParallel.ZERO1, DataParallel.ZERO2, DataParallel.ZERO3)
_WHAT = {Checkpointing.SELECTIVE: "recompute the attention core in backward",
         Checkpointing.SELECTIVE_OPS: "keep each block's input, the attention output and every other matmul's "
                                      "output, recompute the rest in backward (torchtitan's op-level policy)",
         Checkpointing.FULL: "keep each block's input, recompute the block in backward: one more forward pass"}
_NAMES = {AdapterKind.LORA: "LoRA", AdapterKind.QLORA: "QLoRA"}
_KIND_NAMES = {DataParallel.PLAIN: "plain data parallel", DataParallel.ZERO1: "ZeRO-1", DataParallel.ZERO2: "ZeRO-2",
               DataParallel.ZERO3: "ZeRO-3 / FSDP", DataParallel.HYBRID_SHARD: "hybrid shard",
               DataParallel.PARAMETER_SERVER: "parameter server"}


def layout_name(layout: Layout, gpu: GpuSpec) -> str:
    """Return a layout in words: kind, GPUs, tensor parallel, adapter, offload, checkpointing."""
    return _layout_words(layout, over=f" over {layout.gpu_count} x {gpu.slug}")


def given_layout_words(job: JobSpec) -> str:
    """Return the layout a spec runs as given, in words without its GPUs ("plain data parallel, LoRA rank 8, full
    checkpointing"): the one it names, else the plain core's (checkpointing as `training.recompute` says)."""
    layout = named_layout(job, gpu_count=replica_gpus(job))
    if layout is None:
        return f"plain data parallel, {'full' if job.training.recompute else 'no'} checkpointing"
    return _layout_words(layout)


def _layout_words(layout: Layout, *, over: str = "") -> str:
    parts = [f"{_KIND_NAMES.get(layout.data_parallel, layout.data_parallel.value)}{over}"]
    if layout.tensor_parallel > 1:
        parts.append(f"tensor parallel {layout.tensor_parallel}")
    if layout.pipeline_stages > 1:
        parts.append(f"{layout.pipeline_stages} pipeline stages")
    if layout.adapter is not None:
        parts.append(f"{_NAMES.get(layout.adapter.kind, layout.adapter.kind.value)} rank {layout.adapter.rank}")
    if layout.offload.parameters:
        parts.append("optimizer and parameters offloaded")
    elif layout.offload.optimizer:
        parts.append("optimizer offloaded")
    parts.append("no checkpointing" if layout.checkpointing is Checkpointing.NONE
                 else f"{layout.checkpointing.value} checkpointing")
    return ", ".join(parts)


def layout_per_sample_ms(job: JobSpec, layout: Layout, gpu: GpuSpec, *, profile_gpu: GpuSpec | None) -> float:
    """Return the layout's wall time per training sample over all its GPUs."""
    time = estimate_named(job, layout, gpu=gpu, profile_gpu=profile_gpu).time
    assert time is not None  # timed on this GPU
    return time.iteration_ms / max(time.samples_per_iteration, 1)


class _Steps:
    """Price layouts of one job on one card against its start layout."""

    def __init__(self, job: JobSpec, gpu: GpuSpec, start: Layout, *, base_ms_per_sample: float,
                 profile_gpu: GpuSpec | None) -> None:
        self.job, self.gpu, self.start, self.profile_gpu = job, gpu, start, profile_gpu
        self.base = base_ms_per_sample
        self.usable = usable_memory_bytes(gpu)

    def _factor(self, layout: Layout, memory: LayoutMemory) -> float:
        """Return the layout's time per sample relative to the job as given (estimate_named's time)."""
        time = named_time(self.job, layout, memory, gpu=self.gpu, profile_gpu=self.profile_gpu)
        per_sample = time.iteration_ms / max(time.samples_per_iteration, 1)
        return per_sample / self.base if self.base > 0 else 1.0

    def first_fit(self, layouts: Iterable[Layout]) -> tuple[Layout, int, float] | None:
        """Return the first layout that fits, else the last one tried (None when there is none).

        Only the layout returned is timed: the memory decides which one that is.
        """
        last: tuple[Layout, LayoutMemory] | None = None
        for layout in layouts:
            memory = layout_memory(self.job, layout, gpu=self.gpu, batch_size=self.job.training.batch_size)
            last = (layout, memory)
            if fits(memory.total_bytes, self.gpu):
                break
        if last is None:
            return None
        layout, memory = last
        return layout, memory.total_bytes, self._factor(layout, memory)

    def line(self, peak: int) -> str:
        """Describe a peak against the card."""
        verdict = "fits" if peak <= self.usable else "still exceeds"
        return f"peak {peak / GIB:.1f} GiB per GPU {verdict} the {self.usable / GIB:.1f} GiB usable on {self.gpu.slug}"

    def mitigation(self, kind: MitigationKind, found: tuple[Layout, int, float], change: str) -> Mitigation:
        """Return the step for a layout: what changes from the start, its peak, time and whole strategy."""
        layout, peak, factor = found
        p = replace(self.job.training.parallelism, data_parallel=layout.data_parallel, offload=layout.offload,
                    adapter=layout.adapter, checkpointing=layout.checkpointing)
        return Mitigation(
            kind=kind, gpu_memory_bytes=peak, time_factor=factor, gpu=self.gpu.slug, gpu_count=layout.gpu_count,
            description=f"From {layout_name(self.start, self.gpu)}: {change} ({layout_name(layout, self.gpu)}): "
                        f"{self.line(peak)}.",
            parallelism=p)


def _counts(start: Layout) -> list[int]:
    """Return the GPU counts a step may use: the job's, then doublings up to one machine of 8 (or the job's)."""
    n, top = start.gpu_count, max(MAX_GPUS_PER_NODE, start.gpu_count)
    counts = []
    while n <= top:
        counts.append(n)
        n *= 2
    return counts


def _on(layout: Layout, count: int) -> Layout:
    """Return the layout on `count` GPUs of one machine."""
    return replace(layout, gpu_count=count, gpus_per_node=count)


def _stronger_kinds(kind: DataParallel) -> tuple[DataParallel, ...]:
    """Return the sharded kinds that keep less than `kind` on a GPU, the least change first."""
    if kind in PARAMETERS_SHARDED:
        return ()
    if kind in SHARDING_ORDER:
        return SHARDING_ORDER[SHARDING_ORDER.index(kind) + 1:]
    return SHARDING_ORDER


def _checkpointing_step(s: _Steps) -> Mitigation | None:
    """Recompute more in backward: the modes after the start's, the first that fits, else full."""
    start = s.start
    modes = CHECKPOINTING_STEPS[CHECKPOINTING_STEPS.index(start.checkpointing) + 1:] \
        if start.checkpointing in CHECKPOINTING_STEPS else CHECKPOINTING_STEPS
    found = s.first_fit(replace(start, checkpointing=mode) for mode in modes)
    if found is None:
        return None
    mode = found[0].checkpointing
    return s.mitigation(MitigationKind.CHECKPOINTING, found, f"checkpoint activations ({mode.value}: {_WHAT[mode]})")


def _sharding_layouts(start: Layout) -> Iterator[Layout]:
    """Yield the stronger kinds on the job's GPUs (its checkpointing, then full), then on more GPUs."""
    modes = tuple(dict.fromkeys((start.checkpointing, Checkpointing.FULL)))
    for count in _counts(start):
        if count == 1:
            continue
        for mode in modes:
            for kind in _stronger_kinds(start.data_parallel):
                yield replace(_on(start, count), data_parallel=kind, checkpointing=mode)


# A sharding or offload layout is tried only where its own change takes at least this share off the peak of the
# start with the same checkpointing: a LoRA or QLoRA job's optimizer state is a few megabytes, and sharding or
# offloading it "fit" only through the full checkpointing the layout also brings (the checkpointing row's saving).
OWN_CHANGE_MIN_SAVING = 0.02


def _own_change_saves(s: _Steps, layouts: Iterable[Layout]) -> Iterator[Layout]:
    """Yield the layouts whose sharding or offload lowers the peak below the start's with their checkpointing."""
    twins: dict[Checkpointing, int] = {}
    batch = s.job.training.batch_size
    for layout in layouts:
        mode = layout.checkpointing
        if mode not in twins:
            twins[mode] = layout_memory(s.job, replace(s.start, checkpointing=mode), gpu=s.gpu,
                                        batch_size=batch).total_bytes
        if layout_memory(s.job, layout, gpu=s.gpu, batch_size=batch).total_bytes < \
                twins[mode] * (1 - OWN_CHANGE_MIN_SAVING):
            yield layout


def _sharding_step(s: _Steps) -> Mitigation | None:
    """Shard more of the model states: the least stronger kind that fits, on the fewest GPUs."""
    found = s.first_fit(_own_change_saves(s, _sharding_layouts(s.start)))
    if found is None:
        return None
    layout = found[0]
    what = {DataParallel.ZERO1: "shard the optimizer state", DataParallel.ZERO2: "shard the optimizer state and "
            "gradients", DataParallel.ZERO3: "shard parameters, gradients and optimizer state"}[layout.data_parallel]
    return s.mitigation(MitigationKind.SHARDING, found, f"{what} {layout.gpu_count} ways")


def _offload_kind(kind: DataParallel, count: int) -> DataParallel:
    """Return the kind that runs optimizer offload: the start's where it can, else ZeRO-2 (ZeRO-Offload)."""
    if kind in (DataParallel.ZERO2, *PARAMETERS_SHARDED):
        return kind
    return DataParallel.ZERO2 if count > 1 else DataParallel.PLAIN


def _offload_layouts(start: Layout) -> Iterator[Layout]:
    """Yield optimizer offload on the job's GPUs (its checkpointing, then full), then on more GPUs; on each, the
    start's kind (or ZeRO-2), then ZeRO-3, whose parameters are sharded too: DeepSpeed's ZeRO-3 with the optimizer
    offloaded is how a 70B model is fully fine-tuned on one machine of 8 x 80 GB, where ZeRO-2 keeps a whole 16-bit
    copy of the weights on every GPU (140 GB). Where the parameters are sharded, their offload comes next on the same
    GPUs (FSDP's CPUOffload(offload_params=True), ZeRO-3's offload_param): Answer.AI's fsdp_qlora fine-tunes Llama 2
    70B with QLoRA on two 24 GB cards so ("--use_cpu_offload true", its README), where the sharded NF4 base alone
    left 25 GiB per GPU and the plan said 4 cards."""
    modes = tuple(dict.fromkeys((start.checkpointing, Checkpointing.FULL)))
    for count in _counts(start):
        for mode in modes:
            kinds = dict.fromkeys((_offload_kind(start.data_parallel, count),
                                   *((DataParallel.ZERO3,) if count > 1 else ())))
            for kind in kinds:
                layout = replace(_on(start, count), data_parallel=kind, offload=replace(start.offload, optimizer=True),
                                 checkpointing=mode)
                yield layout
                if kind in PARAMETERS_SHARDED:
                    yield replace(layout, offload=replace(layout.offload, parameters=True))


def _offload_saves(s: _Steps, layouts: Iterable[Layout]) -> Iterator[Layout]:
    """Yield the offload layouts whose offload itself saves: below the same layout with the start's offload (a QLoRA
    job's ZeRO-3 with its few MB of state offloaded saves what ZeRO-3 alone does, the sharding row's)."""
    batch = s.job.training.batch_size
    for layout in layouts:
        kept = layout_memory(s.job, replace(layout, offload=s.start.offload), gpu=s.gpu, batch_size=batch).total_bytes
        if layout_memory(s.job, layout, gpu=s.gpu, batch_size=batch).total_bytes < kept * (1 - OWN_CHANGE_MIN_SAVING):
            yield layout


def _offload_step(s: _Steps) -> Mitigation | None:
    """Move the optimizer state (fp32 master, gradients, Adam moments) to host memory."""
    if s.start.offload.optimizer:
        return None
    found = s.first_fit(_offload_saves(s, _own_change_saves(s, _offload_layouts(s.start))))
    if found is None:
        return None
    layout = found[0]
    batch = s.job.training.batch_size
    if layout.offload.parameters and fits(layout_memory(s.job, replace(layout, offload=replace(
            layout.offload, parameters=False), checkpointing=Checkpointing.FULL), gpu=s.gpu,
            batch_size=batch).total_bytes, s.gpu):
        return None  # sharding with checkpointing holds it on these GPUs (that row): the weights' trips buy nothing
    held = layout_memory(s.job, layout, gpu=s.gpu, batch_size=batch).host_bytes_per_gpu
    # the host figure said: "fits with offload" on 4 x H100 for a 70B full fine-tune needs about 1 TiB of host memory
    machine = f"{held * layout.gpus_per_node / GIB:,.1f} GiB on the host of its {layout.gpus_per_node} GPUs" \
        if layout.gpus_per_node > 1 else f"{held / GIB:,.1f} GiB on the host"
    if layout.offload.parameters:
        return s.mitigation(MitigationKind.OFFLOAD, found, (
            "offload the optimizer state and the weights to host memory (FSDP's CPUOffload(offload_params=True), "
            f"ZeRO-3's offload_param; the weights cross PCIe in every pass: {machine})"))
    return s.mitigation(MitigationKind.OFFLOAD, found, "offload the optimizer state to host memory (ZeRO-Offload, "
                                                       f"16 bytes per trainable parameter on the host: {machine})")


def _adapter_step(s: _Steps) -> Mitigation | None:
    """Train LoRA, else QLoRA, adapters in the start's layout (its checkpointing, then full).

    Not for a job that trains from scratch (`training.from_pretrained: false`): adapters beside a frozen
    random base learn nothing.
    """
    if s.start.adapter is not None and s.start.adapter.kind is AdapterKind.LORA:
        return _quantized_base_step(s, s.start.adapter)
    if s.start.adapter is not None or s.job.training.from_pretrained is False:
        return None
    modes = tuple(dict.fromkeys((s.start.checkpointing, Checkpointing.FULL)))
    found = s.first_fit(replace(s.start, adapter=Adapter(kind=kind), checkpointing=mode)
                        for kind in (AdapterKind.LORA, AdapterKind.QLORA) for mode in modes)
    if found is None:
        return None
    adapter = found[0].adapter
    assert adapter is not None
    base = " in 4-bit NF4" if adapter.kind is AdapterKind.QLORA else ""
    step = s.mitigation(MitigationKind.ADAPTERS, found, f"train {_NAMES[adapter.kind]} adapters (rank {adapter.rank} "
                                                        f"on {' and '.join(adapter.targets)}; frozen base{base})")
    caveat = " This changes the method: only the adapters train"
    caveat += ("." if s.job.training.from_pretrained else
               ", on a pretrained base (for pre-training from scratch it is no option; "
               "say so with training.from_pretrained: false).")
    return replace(step, description=step.description + caveat)


def _quantized_base_step(s: _Steps, lora: Adapter) -> Mitigation | None:
    """A LoRA job whose 16-bit base does not fit: the same adapters on a 4-bit base (QLoRA), in micro-batches with
    the effective batch kept where the batch as given does not fit either; the usual answer to "does llama 2 13b with
    lora fit on a 4090" (its parameters are 24.3 GiB in bf16, 6.7 GiB with the base in NF4, as `gpugauge estimate
    llama2-13b --adapter lora|qlora` gives them) and to an 8B LoRA on a 10 GB card."""
    modes = tuple(dict.fromkeys((s.start.checkpointing, Checkpointing.FULL)))
    training = s.job.training
    micro, at = training.batch_size, s
    while True:
        found = at.first_fit(replace(s.start, adapter=replace(lora, kind=AdapterKind.QLORA), checkpointing=mode)
                             for mode in modes)
        if found is None or found[1] <= at.usable or micro % 2:
            break
        micro //= 2
        job = replace(s.job, training=replace(training, batch_size=micro,
                                              update_interval=training.update_interval * training.batch_size // micro))
        at = _Steps(job, s.gpu, s.start, base_ms_per_sample=s.base, profile_gpu=s.profile_gpu)
    if found is None:
        return None
    accumulated = ""
    if micro != training.batch_size:
        steps = at.job.training.update_interval
        accumulated = f" in micro-batches of {micro} with {steps} accumulation steps (the effective batch kept)"
    step = at.mitigation(MitigationKind.ADAPTERS, found, f"keep the LoRA adapters (rank {lora.rank} on "
                                                         f"{' and '.join(lora.targets)}) and hold the frozen base in "
                                                         f"4-bit NF4 (QLoRA){accumulated}")
    # Dettmers et al. 2023 (arXiv 2305.14314), abstract: QLoRA fine-tunes "while preserving full 16-bit
    # finetuning task performance"
    return replace(step, keeps_method=True, batch_size=micro if accumulated else None,
                   update_interval=at.job.training.update_interval if accumulated else None,
                   description=step.description + " This changes the base's precision, not the method: the QLoRA "
                   "paper reports 16-bit fine-tuning's task performance kept.")


def strategy_steps(job: JobSpec, gpu: GpuSpec, *, start: Layout, base_ms_per_sample: float,
                   profile_gpu: GpuSpec | None = None) -> list[Mitigation]:
    """Return the language-model steps of the plan from the start layout (none for a model without attention)."""
    if transformer_shape(job.model) is None:
        return []
    s = _Steps(job, gpu, start, base_ms_per_sample=base_ms_per_sample, profile_gpu=profile_gpu)
    steps = (_checkpointing_step(s), _sharding_step(s), _offload_step(s), _adapter_step(s))
    return [step for step in steps if step is not None]


def plain_start(job: JobSpec, *, gpu_count: int) -> Layout:
    """Return the job as given when it names no strategy: plain data parallel on its GPUs."""
    mode = Checkpointing.FULL if job.training.recompute else Checkpointing.NONE
    return Layout(DataParallel.PLAIN, gpu_count=gpu_count, gpus_per_node=gpu_count, checkpointing=mode,
                  offload=Offload())
