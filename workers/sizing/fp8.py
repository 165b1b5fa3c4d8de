"""What a job in fp8-mixed is told per card: FP8 missing there, or FP8 not paying there.

fp8-mixed (spec.Precision.FP8_MIXED) computes linear layers' products at twice the bf16 tensor rate and pays
each such layer's casts as memory-bound kernels (throughput.py, timing.FP8_CAST_BYTES_PER_VALUE). Narrow
layers and few tokens a step make the casts cost what the products save, and cards whose bandwidth is
small beside their tensor rate (L40S, L4) lose more to them: there the job as given is predicted no faster
than in bf16-mixed, which needs no scaling recipe. Both warnings compare one GPU's step as given, without
a strategy (timing.single_gpu_time).
"""

from __future__ import annotations

from dataclasses import replace

from catalog.types import GpuSpec
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec, Precision
from workers.sizing.strategies.types import AdapterKind
from workers.sizing.throughput import has_bf16, has_fp8
from workers.sizing.timing import single_gpu_time

# fp8-mixed must save at least this share of the bf16-mixed step to be said to pay. [ours: below 3% the
# difference is inside the time model's own error between two runs of one configuration]
FP8_MIN_GAIN = 0.03


def fp8_warning(job: JobSpec, gpu: GpuSpec) -> CodedWarning | None:
    """Return `fp8-unsupported` or `fp8-no-gain` for an fp8-mixed job on this card, else None."""
    training = job.training
    if training.precision is not Precision.FP8_MIXED:
        return None
    name = gpu.slug
    if not has_fp8(gpu):
        fallback = "bf16-mixed" if has_bf16(gpu) else "fp32 (it has no bf16 either)"
        return CodedWarning("fp8-unsupported", (
            f"{name} ({gpu.architecture.title()}) has no FP8 tensor cores (Ada, Hopper and Blackwell have them); "
            f"estimated as {fallback} there, as FP8 recipes fall back."))
    adapter = training.parallelism.adapter
    if adapter is not None and adapter.kind is AdapterKind.QLORA:
        return CodedWarning("fp8-no-gain", (
            f"On {name} fp8-mixed gains nothing for QLoRA: bitsandbytes expands each 4-bit base weight to bf16 for "
            f"its product, so the step is timed as bf16-mixed. Train in bf16-mixed, or LoRA on a 16-bit base "
            f"for FP8 products."))
    if training.profile is not None:
        return None  # a measured step: the model's comparison would not be what the answer shows
    fp8_ms = single_gpu_time(job.time_model, training, gpu).total_ms
    bf16_ms = single_gpu_time(job.time_model, replace(training, precision=Precision.BF16_MIXED), gpu).total_ms
    if fp8_ms <= bf16_ms * (1.0 - FP8_MIN_GAIN):
        return None
    return CodedWarning("fp8-no-gain", (
        f"On {name} fp8-mixed is predicted no faster than bf16-mixed ({fp8_ms:,.1f} against {bf16_ms:,.1f} ms an "
        f"iteration on one GPU, batch {training.batch_size}): casting each linear layer's operands to FP8 costs "
        f"what its FP8 products save at these layer widths and tokens per step. Train in bf16-mixed, or give "
        f"FP8 larger micro-batches."))
