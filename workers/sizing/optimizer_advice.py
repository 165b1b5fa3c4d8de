"""The `optimizer-step-peak` warning: the peak is the update's temporaries, which the fused kernel does not make.

torch.optim's foreach Adam/AdamW (its CUDA default, and what the spec assumes when it says nothing) makes an
fp32 copy of every trainable parameter at once; a per-tensor loop copies its largest tensor; the fused
kernel updates in place (overheads.optimizer_temporary_bytes). Where that copy sets the job's peak, the
figure depends on a choice many users have already made without knowing it: the Hugging Face Trainer
runs `adamw_torch_fused` by default on torch 2.8 and later (huggingface/transformers@00349ae87edd
src/transformers/training_args.py). The warning gives both peaks and the field that picks one.
"""

from __future__ import annotations

from dataclasses import replace

from catalog.units import GIB
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import Framework, JobSpec, Optimizer, OptimizerImplementation
from workers.sizing.strategies.named import job_peak_bytes

# Said only where the fused update takes at least this share off the peak.
OPTIMIZER_STEP_WARN_SHARE = 0.05
# Said only where 8-bit states take at least this share off the peak [ours: the fused loss's tenth, loss_advice.py]
EIGHT_BIT_SAVING = 0.10
# The most 8-bit states can save a weight: 6 of the two moments' 8 bytes and foreach's 4-byte copy
EIGHT_BIT_MOST_SAVED = 10
# ... and only for a job past the 6-8 GB cards of the domain notes' individual tier (domain.md §2): below, every card
# holds it either way (BERT-base's fine-tune, 4.6 GiB, 3.8 with 8-bit states, was told so).
EIGHT_BIT_FROM_BYTES = 8 * GIB


def torch_name(optimizer: Optimizer) -> str:
    """Return the torch.optim class of an Adam-family optimizer: Adam or AdamW."""
    return "AdamW" if optimizer is Optimizer.ADAMW else "Adam"


def fused_peak_bytes(job: JobSpec, *, gpu_count: int) -> int:
    """Return the job's peak per GPU (no card's reserve: the GPU-independent figure) with the fused update."""
    fused = replace(job, training=replace(job.training, optimizer_implementation=OptimizerImplementation.FUSED))
    return job_peak_bytes(fused, gpu_count=gpu_count)


def optimizer_step_warning(job: JobSpec, *, memory_bytes: int, phase: str, gpu_count: int) -> CodedWarning | None:
    """Return `optimizer-step-peak` where a PyTorch Adam/AdamW job peaks in its non-fused update."""
    training = job.training
    if (phase != "optimizer_step" or training.framework is not Framework.PYTORCH
            or training.optimizer not in (Optimizer.ADAM, Optimizer.ADAMW)
            or training.optimizer_implementation is OptimizerImplementation.FUSED):
        return None
    fused = fused_peak_bytes(job, gpu_count=gpu_count)
    if fused > memory_bytes * (1 - OPTIMIZER_STEP_WARN_SHARE):
        return None
    what = ("foreach (torch.optim's CUDA default, assumed when training.optimizer_implementation is not given) "
            "makes an fp32 copy of every trainable parameter there"
            if training.optimizer_implementation is OptimizerImplementation.FOREACH
            else "the per-tensor loop copies its largest tensor there")
    return CodedWarning("optimizer-step-peak", (
        f"The peak, {memory_bytes / GIB:.1f} GiB per GPU, is the optimizer step: {what}. The fused update "
        f"(torch.optim.{torch_name(training.optimizer)}(..., fused=True); the "
        f"Hugging Face Trainer's default on torch 2.8 and later; apex or DeepSpeed FusedAdam) makes none: "
        f"{fused / GIB:.1f} GiB. If your code runs it, say training.optimizer_implementation: fused (CLI "
        f"--optimizer-impl fused) and every figure and option is sized so."))


def eight_bit_warning(job: JobSpec, *, memory_bytes: int, gpu_count: int) -> CodedWarning | None:
    """Return `optimizer-8bit` where a PyTorch Adam/AdamW job would peak EIGHT_BIT_SAVING lower with 8-bit states."""
    training = job.training
    if (training.framework is not Framework.PYTORCH or training.optimizer not in (Optimizer.ADAM, Optimizer.ADAMW)
            or memory_bytes < EIGHT_BIT_FROM_BYTES
            or job.model.parameters * EIGHT_BIT_MOST_SAVED < memory_bytes * EIGHT_BIT_SAVING):
        return None  # few trained weights (an adapter's, a small model's): no walk of the 8-bit job
    eight = job_peak_bytes(replace(job, training=replace(training, optimizer=Optimizer.ADAMW_8BIT)),
                           gpu_count=gpu_count)
    if eight > memory_bytes * (1 - EIGHT_BIT_SAVING):
        return None
    return CodedWarning("optimizer-8bit", (
        f"{torch_name(training.optimizer)}'s two fp32 moments are a large part of the {memory_bytes / GIB:.1f} GiB "
        f"per GPU. bitsandbytes' 8-bit AdamW keeps them in 1 byte each (Dettmers et al. 2022; the Hugging Face "
        f"Trainer's optim adamw_bnb_8bit, Unsloth's adamw_8bit): {eight / GIB:.1f} GiB per GPU. If your run uses it, "
        "say training.optimizer: adamw_8bit (CLI --optimizer adamw_8bit) and every figure and option is sized so."))
