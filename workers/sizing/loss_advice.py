"""Advice on the loss: where a language model's logits set much of the peak, what a fused loss would need.

A decoder's cross-entropy over a large vocabulary holds the logits, their fp32 log-softmax and, in
backward, two more logit-sized gradients (layers/loss.py): for Llama 3 (128,256 tokens in its vocabulary)
at 8,192 tokens that is about 15 GB a sample, at 131,072 tokens over 200 GB. A fused linear cross-entropy
(Liger Kernel; the Hugging Face Trainer's `use_liger_kernel=True`) never holds them. Where the job as given
uses the plain loss and the fused one would need FUSED_LOSS_SAVING less at the peak, the answer says so,
with both figures: the spec field is the user's to set, since it is their code that decides.
"""

from __future__ import annotations

from dataclasses import replace

from workers.sizing.advice import _gb
from workers.sizing.layers.loss import Loss, as_fused
from workers.sizing.memo import IdentityMemo
from workers.sizing.presets.transformer import MASKED_LM_DECODER
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec
from workers.sizing.stats import ModelStats
from workers.sizing.strategies.named import job_peak_bytes

# The share of the peak the fused loss must save before the answer names it. [ours: a tenth, the share
# that changes which cards hold a job]
FUSED_LOSS_SAVING = 0.10
# What the plain loss's logit-sized tensors can hold at the peak, per value, at most: the logits themselves, an
# fp32 copy, the log-softmax and two gradients of 4 bytes each, and a spare (the walk's LOSS_VALUE_BYTES rows).
# Where even that is under the saving asked for, the fused job is not walked (a classifier's 1,000 logits).
LOGIT_BYTES_BOUND = 6 * 4


# A model's fused form, built once per model object: the same object each task, so the walks and allocator replays
# remembered per model (memory.step_peak, the strategies' footprints) are not redone for every job of one model.
_FUSED: IdentityMemo[ModelStats | None] = IdentityMemo(size=256)


def fused_loss_saving_bound(job: JobSpec) -> int:
    """Return an upper bound of what the fused loss can take off one GPU's peak: the logits' tensors at most."""
    values = max((row.neurons for row in job.model.layers[-3:]), default=0)
    return values * job.training.batch_size * LOGIT_BYTES_BOUND


def fused_loss_job(job: JobSpec, loss: Loss = Loss.FUSED_LINEAR_CROSS_ENTROPY) -> JobSpec | None:
    """Return the job with its plain cross-entropy as a fused linear cross-entropy (or `loss`, the fused cross-entropy
    alone), None where it cannot be."""
    if job.training.loss is not Loss.CROSS_ENTROPY:
        return None
    model = _FUSED.get(job.model, loss.value, lambda: as_fused(job.model, loss))
    given = job.timed_model
    timed = _FUSED.get(given, loss.value, lambda: as_fused(given, loss)) if given is not None else None
    if model is None or (job.timed_model is not None and timed is None):
        return None
    return replace(job, model=model, timed_model=timed, training=replace(job.training, loss=loss))


def fused_loss_warning(job: JobSpec, *, memory_bytes: int, gpu_count: int) -> CodedWarning | None:
    """Return `fused-loss` where the fused linear cross-entropy would need FUSED_LOSS_SAVING less memory."""
    if memory_bytes <= 0 or fused_loss_saving_bound(job) < memory_bytes * FUSED_LOSS_SAVING:
        return None  # the logits are too few to matter: no walk of the fused job
    fused = fused_loss_job(job)
    if fused is None:
        return None
    fused_bytes = job_peak_bytes(fused, gpu_count=gpu_count)
    if fused_bytes > memory_bytes * (1.0 - FUSED_LOSS_SAVING):
        return None
    kernel = fused_loss_job(job, Loss.FUSED_CROSS_ENTROPY)  # flash-attn's: the logits held once, in 16 bits
    kernel_bytes = job_peak_bytes(kernel, gpu_count=gpu_count) if kernel is not None else memory_bytes
    kernel_words = "" if kernel_bytes >= memory_bytes else (
        f" A cross-entropy kernel that reads the 16-bit logits and writes their gradient in one pass (flash-attn's "
        f"CrossEntropyLoss, llm-foundry's default; Megatron's cross-entropy fusion) needs {_gb(kernel_bytes)} per "
        "GPU; say training.loss: fused_cross_entropy.")
    classes = job.model.layers[-1].neurons
    if any(row.name == MASKED_LM_DECODER for row in job.model.layers[-4:]):
        # an encoder's masked-LM head: the Trainer's Liger switch patches decoder models only
        where = (" in the masked-LM head's place; the Hugging Face Trainer's use_liger_kernel patches decoder "
                 "models only), needs")
        other = (" Computing the head at the masked positions only (about 15% of them; NVIDIA's and MosaicML's "
                 "BERT pre-training, ModernBERT's sparse_prediction) holds about a seventh of the logits.")
    else:
        where, other = "; Hugging Face Trainer use_liger_kernel=True), needs", ""
    return CodedWarning("fused-loss", (
        f"The loss holds the model's logits ({classes:,} values a sample) in fp32 with their gradients: "
        f"{_gb(memory_bytes)} per GPU as given. A fused linear cross-entropy, which computes the output "
        f"projection and the loss chunk by chunk and never holds the logits (Liger Kernel's "
        f"LigerFusedLinearCrossEntropyLoss{where} {_gb(fused_bytes)} per GPU at the same speed. If the run uses "
        f"it, say training.loss: fused_linear_cross_entropy.{kernel_words}{other}"))
