"""The out-of-memory plan's last row: the changes that keep what the run learns, all together on the card as given.

Each step of the plan (oom_plan.py) starts from the job as given, so a job that only fits with several of them
(a QLoRA Llama 3 8B at 8,192 tokens on a 24 GB card: micro-batch 2, bf16-mixed, full checkpointing and the fused
loss, 15.7 GiB; none of them alone comes under 100 GiB) read as "no" in every row. This row takes them together:
- the largest micro-batch that fits (the batch as given halved while it divides evenly, down to 1) with gradient
  accumulation over the rest (the same effective batch; a batch-norm layer still sees the micro-batch);
- 16-bit mixed precision for an fp32 job (bf16 where the card has it, else fp16; a bf16 job is never made fp16);
- the fused Adam/AdamW update (PyTorch; not with adapters, whose optimizer state is a few megabytes);
- checkpointing: full (each block's input kept, the block recomputed in backward) for a transformer, the
  recomputation of the layer walk otherwise;
- the fused linear cross-entropy for a language model's loss.
More GPUs, sharding, offload and adapters are left out: they need other cards or change the method, and have their
own rows.
"""

from __future__ import annotations

from dataclasses import replace

from catalog.types import GpuSpec
from workers.sizing.loss_advice import fused_loss_job
from workers.sizing.optimizer_advice import torch_name
from workers.sizing.spec import Framework, JobSpec, Optimizer, OptimizerImplementation, Precision
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.types import AdapterKind, Checkpointing
from workers.sizing.throughput import effective_precision, has_bf16


def combined_job(job: JobSpec, gpu: GpuSpec, *, micro_batch: int = 1) -> tuple[JobSpec, tuple[str, ...]]:
    """Return the job with every same-card change that keeps what it learns, and those changes in words.

    `micro_batch` divides the batch as given; the accumulation steps make up the rest of it."""
    t, changes = job.training, []
    if t.batch_size > micro_batch:
        steps = t.batch_size // micro_batch
        t = replace(t, batch_size=micro_batch, update_interval=t.update_interval * steps)
        changes.append(f"micro-batch {micro_batch} x {steps} accumulation steps (the same effective batch)")
    if t.precision is Precision.FP32 and effective_precision(t.precision, gpu) is Precision.FP32:
        target = Precision.BF16_MIXED if has_bf16(gpu) else Precision.FP16_MIXED
        t = replace(t, precision=target)
        changes.append(target.value)
    adapted = t.parallelism.adapter is not None and t.parallelism.adapter.kind is not AdapterKind.NONE
    if (t.framework is Framework.PYTORCH and t.optimizer in (Optimizer.ADAM, Optimizer.ADAMW) and not adapted
            and t.optimizer_implementation is not OptimizerImplementation.FUSED):  # adapters: a few MB of state
        t = replace(t, optimizer_implementation=OptimizerImplementation.FUSED)
        changes.append(f"the fused {torch_name(t.optimizer)} update")
    if transformer_shape(job.model) is not None:
        if t.parallelism.checkpointing is not Checkpointing.FULL:
            t = replace(t, parallelism=replace(t.parallelism, checkpointing=Checkpointing.FULL))
            changes.append("full checkpointing (each block's input kept, the block recomputed in backward)")
    elif not t.recompute:
        t = replace(t, recompute=True)
        changes.append("recomputation (gradient checkpointing)")
    changed = replace(job, training=t)
    fused = fused_loss_job(changed)
    if fused is not None:
        changed = fused
        changes.append("the fused linear cross-entropy (no logits held)")
    return changed, tuple(changes)
