"""Host CPU model -> single-thread score, on PassMark's "Single Thread Rating" scale, one sourced row each.

Reference scale: PassMark PerformanceTest CPU Mark, single-thread rating (cpubenchmark.net, higher is
faster; for orientation a desktop Core i7-7700K rates about 2,600-2,700 and a Core i9-13900K about 4,600).
Cloud SKUs (the "C"/"CL"/"M"/"R" parts) are custom and PassMark lists few samples for them; the figures
below are the author's recollection of the published ratings of the part or its closest retail sibling,
rounded to 50 and NOT re-read when this table was written (2026-11-29). Treat them as estimates good to
about +-10 %: they rank hosts by generation and clock, which is what the domain rule needs ("single-thread
speed matters more than core count; an old CPU can halve what a new GPU delivers").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SCORE_SCALE = "PassMark single-thread rating (cpubenchmark.net)"
SCORES_AS_OF = "2026-11-29"
_RECALLED = "estimate: PassMark single-thread rating recalled by the catalog author, not re-read"


@dataclass(frozen=True)
class CpuScore:
    """One host CPU's single-thread score with where it came from."""

    cpu_model: str
    single_thread_score: float
    pattern: str  # case-insensitive regex that recognises the model in provider strings
    source: str
    as_of: str = SCORES_AS_OF


CPU_SCORES: tuple[CpuScore, ...] = (
    CpuScore("Intel Xeon E5-2686 v4 (Broadwell)", 1700, r"E5-2686\s*v4", f"{_RECALLED} (E5-2686 v4)"),
    CpuScore("Intel Xeon Platinum 8175M (Skylake)", 1950, r"8175M", f"{_RECALLED} (Xeon Platinum 8175M)"),
    CpuScore(
        "Intel Xeon Platinum 8259CL (Cascade Lake)", 2000, r"8259CL", f"{_RECALLED} (Xeon Platinum 8259CL)"
    ),
    CpuScore(
        "Intel Xeon Platinum 8275CL (Cascade Lake)", 2200, r"8275CL", f"{_RECALLED} (Xeon Platinum 8275CL)"
    ),
    CpuScore("AMD EPYC 7R32 (Zen 2)", 2100, r"7R32", f"{_RECALLED} (EPYC 7R32; sibling EPYC 7532)"),
    CpuScore("AMD EPYC 7R13 (Zen 3)", 2450, r"7R13", f"{_RECALLED} (EPYC 7R13; sibling EPYC 7513)"),
    CpuScore(
        "Intel Xeon Platinum 8488C (Sapphire Rapids)",
        2600,
        r"8488C",
        f"{_RECALLED} (Xeon Platinum 8488C; sibling 8480+)",
    ),
    CpuScore(
        "Intel Xeon Platinum 8559C (Emerald Rapids)",
        2750,
        r"8559C",
        f"{_RECALLED} (Xeon Platinum 8559C; sibling 8580)",
    ),
    CpuScore(
        "Intel Xeon Platinum 8481C (Sapphire Rapids)",
        2500,
        r"8481C",
        f"{_RECALLED} (Xeon Platinum 8481C; sibling 8480+)",
    ),
    CpuScore(
        "Intel Xeon Platinum 8580 (Emerald Rapids)", 2750, r"8580(?!\d)", f"{_RECALLED} (Xeon Platinum 8580)"
    ),
    CpuScore(
        "Intel Xeon Platinum 8581C (Emerald Rapids)",
        2750,
        r"8581C",
        f"{_RECALLED} (Xeon Platinum 8581C; sibling 8580)",
    ),
    CpuScore(
        "Intel Xeon (Skylake) @ 2.0 GHz",
        1800,
        r"skylake",
        f"{_RECALLED} (GCP N1 Skylake host, Xeon Gold 6138-class @ 2.0 GHz)",
    ),
    CpuScore(
        "Intel Xeon (Cascade Lake) @ 2.2 GHz",
        2000,
        r"cascade\s*lake",
        f"{_RECALLED} (GCP A2/G2 Cascade Lake host, Xeon 8273CL-class @ 2.2 GHz)",
    ),
    CpuScore(
        "AWS Graviton2 (Arm Neoverse N1)",
        1250,
        r"graviton\s*2",
        f"{_RECALLED} (AWS Graviton2, 64 Neoverse N1 cores at 2.5 GHz; AWS g5g hosts)",
    ),
    CpuScore(
        "AMD EPYC (Turin, Zen 5)",
        3000,
        r"turin",
        f"{_RECALLED} (GCP G4 host, 5th-generation EPYC; server Zen 5 parts at 3-3.5 GHz rate about 3,000-3,500)",
    ),
    CpuScore(
        "Intel Xeon (Broadwell) @ 2.2 GHz",
        1650,
        r"broadwell",
        f"{_RECALLED} (GCP N1 Broadwell host, Xeon E5-2699 v4-class)",
    ),
)


# Hardware threads per physical core of a cloud host: a vCPU is one thread, and on every x86 instance of
# AWS and Google Cloud two of them share a core (AWS CpuOptions.ThreadsPerCore: "The default value is 2";
# Google's AdvancedMachineFeatures.threads_per_core: "If unset, the maximum number of threads supported per
# core by the underlying processor is assumed", two on Intel and AMD server parts; both API references,
# read 2026-12-02). Arm hosts (AWS Graviton, Google Axion, Ampere Altra, NVIDIA Grace) have no SMT: one
# vCPU is one core.
_ARM = re.compile(r"graviton|axion|ampere|altra|grace|neoverse|\barm\b", re.IGNORECASE)
X86_CLOUD_THREADS_PER_CORE = 2


def is_arm(cpu_model: str) -> bool:
    """Return whether a provider's CPU string names an Arm (aarch64) host CPU."""
    return bool(_ARM.search(cpu_model))


def threads_per_core(cpu_model: str) -> int:
    """Return the hardware threads (vCPUs) per physical core of a cloud host with this CPU: 1 on Arm, else 2."""
    return 1 if is_arm(cpu_model) else X86_CLOUD_THREADS_PER_CORE


def score_for(cpu_model: str) -> CpuScore | None:
    """Return the score row whose pattern matches a provider's CPU string, or None when none does."""
    exact = {row.cpu_model.lower(): row for row in CPU_SCORES}
    if cpu_model.lower() in exact:
        return exact[cpu_model.lower()]
    for row in CPU_SCORES:
        if re.search(row.pattern, cpu_model, flags=re.IGNORECASE):
            return row
    return None
