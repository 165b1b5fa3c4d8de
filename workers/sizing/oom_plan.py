"""The out-of-memory plan of domain.md §5: what to change, in order of simplicity, with exact figures.

1. Smaller batch: halve it, halve the learning rate and double the update interval each time, down to
   the first batch that fits (batch 1 not fitting means the batch is not the problem).
2. Change the network where the per-layer figures show the memory goes.
3. Recompute (gradient checkpointing); for a language model, the checkpointing step of 6 instead.
4. Mixed precision (ours: the notes list it among what the baseline ignores).
5. More GPUs, the same samples per step split among them; or sharding optimizer state and gradients.
6. For language models (strategies/oom_steps.py): checkpointing, sharding, offload, adapters.
A transformer is never told "convolutions instead", and a bf16 job is never told to train in fp16.
Each step carries the peak memory it leaves and its training time relative to the job as given.
Every step starts from the job as given on its GPUs: a spec that names a strategy (zero2 on 4 x
A100) is planned from that layout (its memory and time by the strategy core, footprint.py and
steptime.py), each row saying what changes from it; one that names none, from plain data parallel.
"""

from __future__ import annotations

import heapq
import math
import operator
from dataclasses import dataclass, replace

from catalog.types import GpuSpec
from catalog.units import GIB
from workers.sizing.loss_advice import FUSED_LOSS_SAVING, fused_loss_job, fused_loss_saving_bound
from workers.sizing.memory import (
    activation_bytes_by_layer,
    estimate_memory,
    fits,
    sharded_memory,
    usable_memory_bytes,
)
from workers.sizing.oom_combined import combined_job
from workers.sizing.optimizer_advice import torch_name
from workers.sizing.preference import batch_unit
from workers.sizing.requirements import CodedWarning, MemoryBreakdown, Mitigation, MitigationKind
from workers.sizing.spec import Framework, JobSpec, Optimizer, OptimizerImplementation, Precision, Training
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.named import named_layout
from workers.sizing.strategies.oom_steps import layout_name, layout_per_sample_ms, plain_start, strategy_steps
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.throughput import effective_precision, has_bf16
from workers.sizing.timing import estimate_iteration_ms
from workers.sizing.walk_arrays import heaviest_rows

NAMED_LAYERS = 3  # how many of the heaviest layers the change-network step names
_PARAMETERS = operator.attrgetter("parameters")
SPREAD_SHARE = 0.25  # below this share for the named layers, say the memory is spread out


@dataclass(frozen=True)
class OutOfMemoryPlan:
    """The mitigations for one card, and the warnings the plan raises."""

    mitigations: tuple[Mitigation, ...]
    warnings: tuple[CodedWarning, ...]


class _Planner:
    """Price changes of one job on one card against the job as given (in the layout it names, if any)."""

    def __init__(self, job: JobSpec, gpu: GpuSpec, *, gpu_count: int, profile_gpu: GpuSpec | None,
                 inter_node_gbit_per_s: float | None) -> None:
        self.job, self.gpu, self.gpu_count = job, gpu, gpu_count
        self.profile_gpu, self.inter_node = profile_gpu, inter_node_gbit_per_s
        self.usable = usable_memory_bytes(gpu)
        self.layout: Layout | None = named_layout(job, gpu_count=gpu_count)
        self.base_ms_per_sample = self.ms_per_sample(job.training, gpu_count)

    def _named(self, training: Training, gpu_count: int) -> tuple[JobSpec, Layout]:
        """Return the changed job and its named layout on `gpu_count` GPUs of one machine."""
        assert self.layout is not None
        return replace(self.job, training=training), replace(self.layout, gpu_count=gpu_count,
                                                             gpus_per_node=gpu_count)

    def breakdown(self, training: Training, gpu_count: int) -> MemoryBreakdown:
        """Return the per-GPU peak of a changed job, by term."""
        if self.layout is None:
            return estimate_memory(self.job.model, training, gpu=self.gpu, gpu_count=gpu_count)
        job, layout = self._named(training, gpu_count)
        return layout_memory(job, layout, gpu=self.gpu, batch_size=training.batch_size).breakdown

    def memory(self, training: Training, gpu_count: int) -> int:
        """Return the per-GPU peak of a changed job."""
        return self.breakdown(training, gpu_count).total_bytes

    def ms_per_sample(self, training: Training, gpu_count: int) -> float:
        """Return wall time per training sample of a changed job."""
        if self.layout is not None:
            job, layout = self._named(training, gpu_count)
            return layout_per_sample_ms(job, layout, self.gpu, profile_gpu=self.profile_gpu)
        time = estimate_iteration_ms(self.job.time_model, training, self.gpu, gpu_count=gpu_count,
                                     profile_gpu=self.profile_gpu, inter_node_gbit_per_s=self.inter_node)
        return time.total_ms / (training.batch_size * gpu_count)

    def as_given(self) -> str:
        """Name the job's layout in a row: ' (ZeRO-2 over 4 x a100-40gb, ...)' when it names one."""
        return "" if self.layout is None else f" ({layout_name(self.layout, self.gpu)} kept)"

    def time_factor(self, training: Training, gpu_count: int) -> float:
        """Return the changed job's training time relative to the job as given."""
        return self.ms_per_sample(training, gpu_count) / self.base_ms_per_sample

    def fits_line(self, peak: int) -> str:
        """Describe a peak against this card."""
        verdict = "fits" if peak <= self.usable else "still exceeds"
        usable = self.usable / GIB
        return f"peak {peak / GIB:.1f} GiB {verdict} the {usable:.1f} GiB usable on {self.gpu.slug}"


# Worth a row: the fused update fits the card, or takes at least this share off the peak.
FUSED_MIN_SAVING = 0.05


def _fused_optimizer(p: _Planner, as_given: int) -> Mitigation | None:
    """Run Adam/AdamW's update as one in-place kernel, where the step's temporaries set the peak.

    torch.optim's foreach path (its CUDA default) makes an fp32 copy of every trainable parameter at once,
    and a per-tensor loop copies the largest tensor (overheads.optimizer_temporary_bytes); the fused
    kernel makes none. The Hugging Face Trainer already defaults to it on torch 2.8 and later
    (huggingface/transformers@00349ae87edd src/transformers/training_args.py: `default_optim =
    "adamw_torch_fused"` when `is_torch_greater_or_equal_than_2_8`). Offered for PyTorch only, and only
    where it fits the card or lowers the peak by FUSED_MIN_SAVING: it changes no result, so it comes first.
    """
    training = p.job.training
    if (training.framework is not Framework.PYTORCH or training.optimizer not in (Optimizer.ADAM, Optimizer.ADAMW)
            or training.optimizer_implementation is OptimizerImplementation.FUSED):
        return None
    changed = replace(training, optimizer_implementation=OptimizerImplementation.FUSED)
    peak = p.memory(changed, p.gpu_count)
    if peak >= as_given or (peak > p.usable and peak > as_given * (1 - FUSED_MIN_SAVING)):
        return None
    name = torch_name(training.optimizer)
    was = "foreach (torch.optim's CUDA default) makes an fp32 copy of every trainable parameter" \
        if training.optimizer_implementation is OptimizerImplementation.FOREACH \
        else "a per-tensor loop copies its largest tensor"
    return Mitigation(
        kind=MitigationKind.FUSED_OPTIMIZER, description=(
            f"Run the {name} update as one fused kernel (torch.optim.{name}(..., fused=True); the Hugging Face "
            f"Trainer's optim=\"adamw_torch_fused\", its default on torch 2.8 and later; apex or DeepSpeed "
            f"FusedAdam; training.optimizer_implementation: fused){p.as_given()}: the same update, done in place, "
            f"where {was} ({(as_given - peak) / GIB:.1f} GiB at the peak): {p.fits_line(peak)}."),
        gpu_memory_bytes=peak, time_factor=p.time_factor(changed, p.gpu_count), gpu=p.gpu.slug)


def _smaller_batch(p: _Planner) -> tuple[Mitigation | None, CodedWarning | None]:
    """Halve the batch (learning rate halved, update interval doubled) until it fits or reaches 1.

    None when the batch as given already fits this card (no row that halves it zero times).
    """
    training = p.job.training
    batch, rate, interval = training.batch_size, training.learning_rate, training.update_interval
    chain = [str(batch)]
    peak = p.memory(training, p.gpu_count)
    if peak <= p.usable:
        return None, None
    unit = batch_unit(training)  # a preference pair's two sequences go together
    while batch > unit and peak > p.usable:
        batch = max(unit, batch // unit // 2 * unit)
        rate = None if rate is None else rate / 2
        interval *= 2
        chain.append(str(batch))
        peak = p.memory(replace(training, batch_size=batch), p.gpu_count)
    changed = replace(training, batch_size=batch, learning_rate=rate, update_interval=interval)
    halvings = len(chain) - 1
    # domain.md §5.1 halves the rate with each halving: right where the micro-batches' gradients add up (each
    # micro-batch's mean loss backpropagated as it is); code that divides each loss by the steps averages
    # them, and its effective update is the batch as given's at the rate as given.
    rate_text = "" if rate is None else (
        f", learning rate {training.learning_rate:g} -> {rate:g} (where the micro-batches' gradients are summed; "
        f"where the code averages them over the accumulation steps, keep {training.learning_rate:g})")
    description = (f"Halve the batch {halvings} time(s) ({' -> '.join(chain)}){rate_text}, update interval "
                   f"{training.update_interval} -> {interval} (gradient accumulation keeps the effective "
                   f"batch){p.as_given()}: {p.fits_line(peak)}.")
    warning = None
    if peak > p.usable:
        description = (f"Even batch 1 needs {peak / GIB:.1f} GiB{p.as_given()}, more than the "
                       f"{p.usable / GIB:.1f} GiB usable on {p.gpu.slug}: the batch is not the problem; the model "
                       f"itself must shrink or spread.")
        warning = CodedWarning("batch-not-the-problem", (
            f"At batch size 1 the job still needs {peak / GIB:.1f} GiB per GPU on {p.gpu.slug} "
            f"({p.usable / GIB:.1f} GiB usable): parameters, optimizer state or one sample's activations are "
            f"too large; see recompute, mixed precision, sharding and the layers named."))
    mitigation = Mitigation(
        kind=MitigationKind.SMALLER_BATCH, description=description, gpu_memory_bytes=peak,
        time_factor=p.time_factor(changed, p.gpu_count), batch_size=batch, learning_rate=rate,
        update_interval=interval, gpu=p.gpu.slug, gpu_count=p.gpu_count)
    return mitigation, warning


def _fused_loss(p: _Planner, as_given: int) -> Mitigation | None:
    """Compute a language model's output projection and its cross-entropy chunk by chunk (layers/loss.py).

    The same loss and the same work (the row keeps the head's multiply-adds and the logits' traffic), so it comes
    with the fused update, before the steps that change the run; offered where it fits the card or takes
    FUSED_LOSS_SAVING off the peak, as the `fused-loss` warning is.
    """
    bound = fused_loss_saving_bound(p.job)
    if as_given - bound > p.usable and bound < as_given * FUSED_LOSS_SAVING:
        return None  # even all the logits' tensors would neither make it fit nor take a tenth off: not worth a walk
    fused = fused_loss_job(p.job)
    if fused is None:
        return None
    planner = _Planner(fused, p.gpu, gpu_count=p.gpu_count, profile_gpu=p.profile_gpu,
                       inter_node_gbit_per_s=p.inter_node)
    peak = planner.memory(fused.training, p.gpu_count)
    if peak >= as_given or (peak > p.usable and peak > as_given * (1 - FUSED_LOSS_SAVING)):
        return None
    return Mitigation(
        kind=MitigationKind.FUSED_LOSS, description=(
            f"Compute the output projection and its cross-entropy chunk by chunk, never holding the logits (Liger "
            f"Kernel's LigerFusedLinearCrossEntropyLoss; the Hugging Face Trainer's use_liger_kernel=True; "
            f"training.loss: fused_linear_cross_entropy){p.as_given()}: the same loss and work, "
            f"{(as_given - peak) / GIB:.1f} GiB less at the peak: {p.fits_line(peak)}."),
        gpu_memory_bytes=peak, time_factor=planner.base_ms_per_sample / p.base_ms_per_sample, gpu=p.gpu.slug)


def _change_network(p: _Planner) -> Mitigation | None:
    """Name the layers that keep most activation memory, or hold most parameters."""
    model, training = p.job.model, p.job.training
    if not model.layers:
        return None
    memory = p.breakdown(training, p.gpu_count)
    state = memory.parameters_bytes + memory.gradients_bytes + memory.optimizer_state_bytes
    if state > memory.activations_bytes:
        positions = heaviest_rows(model, NAMED_LAYERS)  # over arrays for a model of many rows
        heavy = (heapq.nlargest(NAMED_LAYERS, model.layers, key=_PARAMETERS)  # = sorted(..., reverse=True)[:n]
                 if positions is None else [model.layers[i] for i in positions])
        names = tuple(layer.name for layer in heavy)
        share = sum(layer.parameters for layer in heavy) / max(model.parameters, 1)
        shape = transformer_shape(model)
        if shape is not None:  # a transformer: no "convolutions instead"
            steps = "shard it or offload" if training.from_pretrained is False else \
                "shard it, train adapters or offload"
            # blocks alike (a decoder's): each one's share; blocks of many widths (a diffusion U-Net's): the layers
            alike = shape.blocks * shape.block_parameters >= model.parameters / 2
            weighted = sum(1 for layer in model.layers if layer.parameters)
            spread = ("" if share >= SPREAD_SHARE else f" only; the rest is spread over its {shape.blocks} blocks, "
                      f"{shape.block_parameters / max(model.parameters, 1):.1%} each" if alike else
                      f" only; the rest is spread over its {weighted} layers with weights")
            what = (f"hold {share:.0%} of the parameters{spread} (parameters, gradients and optimizer state are "
                    f"{state / GIB:.1f} GiB): a smaller model (fewer or narrower blocks, a smaller vocabulary), "
                    f"or keep the model and {steps} (the steps below)")
        else:
            what = (f"hold {share:.0%} of the parameters (parameters, gradients and optimizer state are "
                    f"{state / GIB:.1f} GiB): fewer or narrower Affine layers, or convolutions instead")
    elif (shape := transformer_shape(model)) is not None:
        rows = activation_bytes_by_layer(model, effective_precision(training.precision, p.gpu))
        names = tuple(name for name, _ in rows[:NAMED_LAYERS])
        share = sum(size for _, size in rows[:NAMED_LAYERS]) / max(sum(size for _, size in rows), 1)
        spread = f" only, the rest spread over its {shape.blocks} blocks alike" if share < SPREAD_SHARE else ""
        what = (f"keep {share:.0%} of the activation memory{spread}: a shorter sequence, fewer blocks, or "
                f"checkpointing (below)")
    else:
        rows = activation_bytes_by_layer(model, effective_precision(training.precision, p.gpu))
        names = tuple(name for name, _ in rows[:NAMED_LAYERS])
        share = sum(size for _, size in rows[:NAMED_LAYERS]) / max(sum(size for _, size in rows), 1)
        what = (f"keep {share:.0%} of the activation memory: fewer channels there, downsample earlier, "
                f"or a smaller input")
        if share < SPREAD_SHARE:
            what += " (the memory is spread over many layers: a smaller input or fewer layers helps most)"
    return Mitigation(
        kind=MitigationKind.CHANGE_NETWORK, description=f"Layers {', '.join(names)} {what}. Peak as given: "
        f"{memory.total_bytes / GIB:.1f} GiB.", gpu_memory_bytes=memory.total_bytes, layers=names,
        gpu=p.gpu.slug)


def _recompute(p: _Planner) -> Mitigation | None:
    """Checkpoint activations and recompute them in backward."""
    if p.job.training.recompute:
        return None
    changed = replace(p.job.training, recompute=True)
    peak = p.memory(changed, p.gpu_count)
    return Mitigation(
        kind=MitigationKind.RECOMPUTE, description=f"Turn on recomputation (gradient checkpointing; one more forward "
        f"pass per step): {p.fits_line(peak)}.", gpu_memory_bytes=peak,
        time_factor=p.time_factor(changed, p.gpu_count), gpu=p.gpu.slug)


def _mixed_precision(p: _Planner) -> Mitigation | None:
    """Train in 16-bit activations with fp32 master weights."""
    if effective_precision(p.job.training.precision, p.gpu) is not Precision.FP32:
        return None
    if p.job.training.precision in (Precision.BF16_MIXED, Precision.FP8_MIXED):
        return None  # a bf16 (or fp8) job on a card without bf16: its precision family is kept, never fp16
    target = Precision.BF16_MIXED if has_bf16(p.gpu) else Precision.FP16_MIXED
    changed = replace(p.job.training, precision=target)
    peak = p.memory(changed, p.gpu_count)
    return Mitigation(
        kind=MitigationKind.MIXED_PRECISION, description=f"Train in {target.value} (16-bit activations, fp32 master "
        f"weights): {p.fits_line(peak)}.", gpu_memory_bytes=peak,
        time_factor=p.time_factor(changed, p.gpu_count), gpu=p.gpu.slug)


def _gpu_counts(p: _Planner) -> list[int]:
    """Return the GPU counts to try: doublings above the current count, up to the job's limit.

    A named layout doubles the job's own count (its tensor-parallel and pipeline split divide it).
    """
    counts, n = [], 2 * p.gpu_count if p.layout is not None else 2
    while n <= p.job.constraints.max_gpus:
        if n > p.gpu_count:
            counts.append(n)
        n *= 2
    return counts


def _more_gpus(p: _Planner) -> list[Mitigation]:
    """Split the same samples per step over more GPUs; shard state if that needs fewer GPUs."""
    training, found = p.job.training, []
    split = 1 if p.layout is None else p.layout.tensor_parallel * p.layout.pipeline_stages
    samples_per_step = training.batch_size * p.gpu_count // split
    plain = None
    kept = "" if p.layout is None else f", {layout_name(p.layout, p.gpu).split(' over ')[0]} kept"
    for n in _gpu_counts(p):
        changed = replace(training, batch_size=max(1, math.ceil(samples_per_step * split / n)))
        peak = p.memory(changed, n)
        if fits(peak, p.gpu):
            plain = n
            found.append(Mitigation(
                kind=MitigationKind.MORE_GPUS, description=f"Use {n} x {p.gpu.slug} with batch {changed.batch_size} "
                f"each (the same {samples_per_step} samples per step{kept}): {p.fits_line(peak)}.",
                gpu_memory_bytes=peak, time_factor=p.time_factor(changed, n), batch_size=changed.batch_size,
                gpu_count=n, gpu=p.gpu.slug))
            break
    if p.layout is not None:
        return found  # a named strategy's sharding is the strategy steps' (stronger kinds from the named one)
    for n in _gpu_counts(p):
        if plain is not None and n >= plain:
            break
        changed = replace(training, batch_size=max(1, math.ceil(samples_per_step / n)))
        peak = sharded_memory(p.job.model, changed, gpu=p.gpu, gpu_count=n).total_bytes
        if fits(peak, p.gpu):
            found.append(Mitigation(
                kind=MitigationKind.SHARDING, description=f"Use {n} x {p.gpu.slug} with batch {changed.batch_size} "
                f"each and shard optimizer state and gradients {n} ways (ZeRO-2 / FSDP): "
                f"{p.fits_line(peak)}.",
                gpu_memory_bytes=peak, time_factor=p.time_factor(changed, n), batch_size=changed.batch_size,
                gpu_count=n, gpu=p.gpu.slug))
            break
    return found


def _combined(p: _Planner, steps: list[Mitigation]) -> Mitigation | None:
    """All the same-card changes together (oom_combined.py), where no row on this card's count makes the job fit."""
    here = [s for s in steps if s.gpu_count in (None, p.gpu_count)]
    if any(s.gpu_memory_bytes <= p.usable for s in here):
        return None
    job, changes = combined_job(p.job, p.gpu)
    if len(changes) < 2:  # one change is its own row
        return None
    planner = _Planner(job, p.gpu, gpu_count=p.gpu_count, profile_gpu=p.profile_gpu,
                       inter_node_gbit_per_s=p.inter_node)
    peak = planner.memory(job.training, p.gpu_count)
    if here and peak >= min(s.gpu_memory_bytes for s in here):
        return None
    micro, batch = 1, p.job.training.batch_size
    # the largest micro-batch that fits, up to the batch as given (no accumulation where the other changes suffice)
    while peak <= p.usable and batch % (2 * micro) == 0 and 2 * micro <= batch:
        bigger, more = combined_job(p.job, p.gpu, micro_batch=2 * micro)
        bigger_planner = _Planner(bigger, p.gpu, gpu_count=p.gpu_count, profile_gpu=p.profile_gpu,
                                  inter_node_gbit_per_s=p.inter_node)
        bigger_peak = bigger_planner.memory(bigger.training, p.gpu_count)
        if bigger_peak > p.usable:
            break
        micro, job, changes, planner, peak = 2 * micro, bigger, more, bigger_planner, bigger_peak
    t = job.training
    return Mitigation(
        kind=MitigationKind.COMBINED, description=f"All together on {p.gpu_count} x {p.gpu.slug}: "
        f"{'; '.join(changes)}: {p.fits_line(peak)}.", gpu_memory_bytes=peak,
        time_factor=planner.base_ms_per_sample / p.base_ms_per_sample, batch_size=t.batch_size,
        update_interval=t.update_interval, gpu_count=p.gpu_count, gpu=p.gpu.slug)


def out_of_memory_plan(job: JobSpec, gpu: GpuSpec, *, gpu_count: int = 1, profile_gpu: GpuSpec | None = None,
                       inter_node_gbit_per_s: float | None = None) -> OutOfMemoryPlan:
    """Return the mitigations that make the job fit this card, in domain.md §5's order."""
    planner = _Planner(job, gpu, gpu_count=gpu_count, profile_gpu=profile_gpu,
                       inter_node_gbit_per_s=inter_node_gbit_per_s)
    smaller, warning = _smaller_batch(planner)
    as_given = planner.memory(job.training, gpu_count)
    # Recompute and mixed precision are offered only where they lower the peak (mixed precision adds a
    # 16-bit copy of the weights, which outweighs the halved activations of a parameter-heavy model).
    start = planner.layout if planner.layout is not None else plain_start(job, gpu_count=gpu_count)
    strategies = strategy_steps(job, gpu, start=start, base_ms_per_sample=planner.base_ms_per_sample,
                                profile_gpu=profile_gpu)
    # A language model's checkpointing step (selective or full, with its mode) is the recompute step:
    # one change, one row.
    checkpointed = any(step.kind is MitigationKind.CHECKPOINTING for step in strategies)
    lowering = [step for step in (None if checkpointed else _recompute(planner), _mixed_precision(planner))
                if step is not None and step.gpu_memory_bytes < as_given]
    steps = [step for step in (_fused_optimizer(planner, as_given), _fused_loss(planner, as_given), smaller,
                               _change_network(planner), *lowering, *_more_gpus(planner), *strategies)
             if step is not None]
    combined = _combined(planner, steps)
    return OutOfMemoryPlan(tuple(steps) if combined is None else (*steps, combined),
                           () if warning is None else (warning,))
