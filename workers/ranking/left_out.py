"""Cards the ranking leaves out of a job's answer unless the user asks for them, and why.

- Cards the job's framework cannot train on (advice.framework_gpu_unsupported: CNTK before Ampere).
- Cards of 3 GB or less: "3 GB cards are not recommended" (domain notes §6). They still fit toy jobs, and being
  the cheapest (AWS's g6f.large, an eighth of an L4 at 2.8 GiB) they would head a small job's answer, the one
  pick the rule says not to make. They are ranked where the user names them (constraints.gpus, CLI --gpu) or
  owns them (constraints.owned_gpus); an estimate on one still warns `small-gpu-memory`.
"""

from __future__ import annotations

from catalog.gpu_names import gpu_name_matches
from catalog.types import GpuSpec
from catalog.units import GIB
from workers.sizing.advice import framework_gpu_unsupported
from workers.sizing.rules import NOT_RECOMMENDED_GPU_MEMORY_BYTES
from workers.sizing.spec import JobSpec


def asked_for(job: JobSpec, slug: str) -> bool:
    """Return whether the user named this card (a name in constraints.gpus that matches it) or owns it."""
    constraints = job.constraints
    return (any(owned.gpu == slug for owned in constraints.owned_gpus)
            or any(gpu_name_matches(name, (slug,)) for name in constraints.gpus))


def left_out_reason(job: JobSpec, gpu: GpuSpec) -> str:
    """Return why the ranking leaves this card out of the job's answer, "" where it ranks it."""
    unsupported = framework_gpu_unsupported(job, gpu)
    if unsupported:
        return unsupported
    if gpu.memory_bytes <= NOT_RECOMMENDED_GPU_MEMORY_BYTES and not asked_for(job, gpu.slug):
        return (f"{gpu.slug} has {gpu.memory_bytes / GIB:.1f} GiB: 3 GB cards are not recommended (under about "
                f"4 GB is only for toys), so it is not ranked; name it (constraints.gpus, CLI --gpu {gpu.slug}) "
                "to rank it anyway")
    return ""
