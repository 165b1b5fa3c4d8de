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
from workers.sizing.memory import step_peak
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import Framework, JobSpec, Optimizer, OptimizerImplementation
from workers.sizing.strategies.named import estimate_named, named_layout

# Said only where the fused update takes at least this share off the peak.
OPTIMIZER_STEP_WARN_SHARE = 0.05


def torch_name(optimizer: Optimizer) -> str:
    """Return the torch.optim class of an Adam-family optimizer: Adam or AdamW."""
    return "AdamW" if optimizer is Optimizer.ADAMW else "Adam"


def fused_peak_bytes(job: JobSpec, *, gpu_count: int) -> int:
    """Return the job's peak per GPU (no card's reserve: the GPU-independent figure) with the fused update."""
    fused = replace(job, training=replace(job.training, optimizer_implementation=OptimizerImplementation.FUSED))
    layout = named_layout(fused, gpu_count=gpu_count)
    if layout is not None:
        return estimate_named(fused, layout, gpu=None).memory.total_bytes
    return step_peak(fused.model, fused.training, gpu=None, gpu_count=gpu_count).breakdown.total_bytes


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
