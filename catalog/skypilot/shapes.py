"""What SkyPilot's rows do not say about a machine: host CPU model, local disk, network; and GPU name maps.

SkyPilot gives vCPUs, memory (GiB), GPU name and count; these tables add the rest. They were written from the
providers' instance-type documentation as recalled by the catalog author on SPEC_DATE (no machine-readable
copy was at hand): treat them as such, which every instance row's source says.
"""

from __future__ import annotations

import re

SPEC_DATE = "2026-11-29"
AWS_SPEC = (
    "AWS EC2 accelerated-computing instance specifications (docs.aws.amazon.com/ec2/latest/instancetypes/"
    "ac.html), recalled: CPU, local NVMe, network ('up to' figures as their burst value); vCPUs, memory and "
    "GPUs from the SkyPilot rows"
)
GCP_SPEC = (
    "Google Cloud GPU machine types documentation (cloud.google.com/compute/docs/gpus), recalled: CPU, "
    "bundled local SSD, network; vCPUs, memory and GPUs from the SkyPilot rows"
)

# SkyPilot accelerator name -> our GPU slug (catalog/data/gpus.json)
GPU_SLUGS = {
    "T4": "t4", "T4g": "t4g", "A10G": "a10g", "A10": "a10", "L4": "l4", "L40S": "l40s",
    "V100": "v100-16gb", "V100-32GB": "v100-32gb", "A100": "a100-40gb", "A100-80GB": "a100-80gb",
    "H100": "h100-sxm", "H100-MEGA": "h100-sxm", "H200": "h200", "B200": "b200", "P100": "p100-16gb",
    "P4": "p4", "K80": "k80", "M60": "m60",
}  # fmt: skip
# AWS g6f/gr6f sell a share of one L4 (NVIDIA vGPU): the share -> the slug of that slice
L4_SHARES = {0.125: "l4-eighth", 0.25: "l4-quarter", 0.5: "l4-half"}
RETIRED = {"K80": "NVIDIA K80: retired by Google Cloud (end of life 2024) and AWS (p2)"}

BDW, SKL, CLX, CLX3 = (
    "Intel Xeon E5-2686 v4 (Broadwell)",
    "Intel Xeon Platinum 8175M (Skylake)",
    "Intel Xeon Platinum 8259CL (Cascade Lake)",
    "Intel Xeon Platinum 8275CL (Cascade Lake)",
)
ROME, MILAN, SPR, EMR, GRAVITON2 = (
    "AMD EPYC 7R32 (Zen 2)",
    "AMD EPYC 7R13 (Zen 3)",
    "Intel Xeon Platinum 8488C (Sapphire Rapids)",
    "Intel Xeon Platinum 8559C (Emerald Rapids)",
    "AWS Graviton2 (Arm Neoverse N1)",
)
AWS_FAMILY_CPU = {
    "p3": BDW, "p3dn": SKL, "g4dn": CLX, "g5": ROME, "g5g": GRAVITON2, "g6": MILAN, "g6e": MILAN,
    "g6f": MILAN, "gr6": MILAN, "gr6f": MILAN, "p4d": CLX3, "p4de": CLX3, "p5": MILAN, "p5e": MILAN,
    "p5en": SPR, "p6-b200": EMR,
}  # fmt: skip
# instance type -> (local NVMe GB, network Gbit/s); types not listed: no local disk, AWS_DEFAULT_GBIT
AWS_DISK_NET: dict[str, tuple[int, float]] = {
    "p3.2xlarge": (0, 10), "p3.8xlarge": (0, 10), "p3.16xlarge": (0, 25), "p3dn.24xlarge": (1800, 100),
    "g4dn.xlarge": (125, 25), "g4dn.2xlarge": (225, 25), "g4dn.4xlarge": (225, 25), "g4dn.8xlarge": (900, 50),
    "g4dn.12xlarge": (900, 50), "g4dn.16xlarge": (900, 50), "g4dn.metal": (1800, 100),
    "g5.xlarge": (250, 10), "g5.2xlarge": (450, 10), "g5.4xlarge": (600, 25), "g5.8xlarge": (900, 25),
    "g5.12xlarge": (3800, 40), "g5.16xlarge": (1900, 25), "g5.24xlarge": (3800, 50), "g5.48xlarge": (7600, 100),
    "g5g.xlarge": (0, 10), "g5g.2xlarge": (0, 10), "g5g.4xlarge": (0, 10), "g5g.8xlarge": (0, 12),
    "g5g.16xlarge": (0, 25), "g5g.metal": (0, 25),
    "g6.xlarge": (250, 10), "g6.2xlarge": (450, 10), "g6.4xlarge": (600, 25), "g6.8xlarge": (900, 25),
    "g6.12xlarge": (3760, 40), "g6.16xlarge": (1880, 25), "g6.24xlarge": (3760, 50), "g6.48xlarge": (7520, 100),
    "gr6.4xlarge": (600, 25), "gr6.8xlarge": (900, 25),
    "g6e.xlarge": (250, 20), "g6e.2xlarge": (450, 20), "g6e.4xlarge": (600, 20), "g6e.8xlarge": (900, 25),
    "g6e.12xlarge": (3800, 100), "g6e.16xlarge": (1900, 35), "g6e.24xlarge": (3800, 200),
    "g6e.48xlarge": (7600, 400),
    "g6f.large": (0, 10), "g6f.xlarge": (0, 10), "g6f.2xlarge": (0, 10), "g6f.4xlarge": (0, 20),
    "gr6f.4xlarge": (0, 20),
    "p4d.24xlarge": (8000, 400), "p4de.24xlarge": (8000, 400), "p5.4xlarge": (3840, 100),
    "p5.48xlarge": (30720, 3200), "p5e.48xlarge": (30720, 3200), "p5en.48xlarge": (30720, 3200),
    "p6-b200.48xlarge": (30720, 3200),
}  # fmt: skip
AWS_DEFAULT_GBIT = 10.0  # the smallest published 'up to' figure of the GPU families

N1_CPU, A2_CPU, A3_CPU, A3U_CPU, A4_CPU, G4_CPU = (
    "Intel Xeon (Skylake) @ 2.0 GHz",
    "Intel Xeon (Cascade Lake) @ 2.2 GHz",
    "Intel Xeon Platinum 8481C (Sapphire Rapids)",
    "Intel Xeon Platinum 8580 (Emerald Rapids)",
    "Intel Xeon Platinum 8581C (Emerald Rapids)",
    "AMD EPYC (Turin, Zen 5)",  # G4 (catalog/cyclenerd.py): not in SkyPilot's rows
)
# GCP host family -> CPU model; a type's family is its name less the "-<n>g" / "-<n>" size (and "-nolssd")
GCP_FAMILY_CPU = {
    "n1-standard": N1_CPU, "n1-highmem": N1_CPU, "n1-highcpu": N1_CPU, "a2-highgpu": A2_CPU,
    "a2-megagpu": A2_CPU, "a2-ultragpu": A2_CPU, "a3-highgpu": A3_CPU, "a3-edgegpu": A3_CPU,
    "a3-megagpu": A3_CPU, "a3-ultragpu": A3U_CPU, "a4-highgpu": A4_CPU, "g2-standard": A2_CPU,
}  # fmt: skip
# GCP machine type -> (bundled local SSD GB, network Gbit/s); N1 hosts: none, 2 Gbit/s per vCPU up to 32
GCP_DISK_NET: dict[str, tuple[int, float]] = {
    "a2-highgpu-1g": (0, 24), "a2-highgpu-2g": (0, 32), "a2-highgpu-4g": (0, 50), "a2-highgpu-8g": (0, 100),
    "a2-megagpu-16g": (0, 100), "a2-ultragpu-1g": (375, 24), "a2-ultragpu-2g": (750, 32),
    "a2-ultragpu-4g": (1500, 50), "a2-ultragpu-8g": (3000, 100),
    "a3-highgpu-1g": (750, 25), "a3-highgpu-2g": (1500, 50), "a3-highgpu-4g": (3000, 100),
    "a3-highgpu-8g": (6000, 1000), "a3-edgegpu-8g": (6000, 800), "a3-edgegpu-8g-nolssd": (0, 800),
    "a3-megagpu-8g": (6000, 1800), "a3-ultragpu-8g": (12000, 3600), "a3-ultragpu-8g-nolssd": (0, 3600),
    "a4-highgpu-8g": (12000, 3600),
    "g2-standard-4": (0, 10), "g2-standard-8": (0, 16), "g2-standard-12": (0, 16), "g2-standard-16": (0, 32),
    "g2-standard-24": (0, 32), "g2-standard-32": (0, 32), "g2-standard-48": (0, 50), "g2-standard-96": (0, 100),
}  # fmt: skip
# GCP machine types that come with their GPUs: type -> (SkyPilot accelerator name, count). From SkyPilot's
# sky/catalog/gcp_catalog.py _ACC_INSTANCE_TYPE_DICTS (skypilot-org/skypilot@0052610), plus the A3 Edge and
# the -nolssd variants, which carry the same GPUs as their namesakes (Google's A3 machine series page).
GCP_BUNDLED = {
    **{f"a2-highgpu-{n}g": ("A100", n) for n in (1, 2, 4, 8)}, "a2-megagpu-16g": ("A100", 16),
    **{f"a2-ultragpu-{n}g": ("A100-80GB", n) for n in (1, 2, 4, 8)},
    **{f"a3-highgpu-{n}g": ("H100", n) for n in (1, 2, 4, 8)},
    "a3-edgegpu-8g": ("H100", 8), "a3-edgegpu-8g-nolssd": ("H100", 8), "a3-megagpu-8g": ("H100-MEGA", 8),
    "a3-ultragpu-8g": ("H200", 8), "a3-ultragpu-8g-nolssd": ("H200", 8), "a4-highgpu-8g": ("B200", 8),
    **{f"g2-standard-{v}": ("L4", 1) for v in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("L4", 2), "g2-standard-48": ("L4", 4), "g2-standard-96": ("L4", 8),
}  # fmt: skip
# GPUs attached to N1 hosts: SkyPilot name -> (Compute Engine accelerator id, {count: (max vCPUs, max GB)}).
# Limits from SkyPilot's gcp_catalog.py _NUM_ACC_TO_MAX_CPU_AND_MEMORY (citing cloud.google.com/compute/docs/gpus).
N1_ATTACHABLE: dict[str, tuple[str, dict[int, tuple[int, int]]]] = {
    "T4": ("nvidia-tesla-t4", {1: (48, 312), 2: (48, 312), 4: (96, 624)}),
    "P4": ("nvidia-tesla-p4", {1: (24, 156), 2: (48, 312), 4: (96, 624)}),
    "V100": ("nvidia-tesla-v100", {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)}),
    "P100": ("nvidia-tesla-p100", {1: (16, 104), 2: (32, 208), 4: (96, 624)}),
}
N1_HOST_FAMILIES = ("n1-standard", "n1-highmem", "n1-highcpu")  # SkyPilot's _DEFAULT_HOST_VM_FAMILY
# Google allows 1 vCPU per GPU; we compose N1 hosts with at least 2 per GPU (one data-loading worker per GPU
# process and one core for the process itself, as the smallest AWS GPU shapes give): a smaller host is
# purchasable but starves its GPUs, and listing it only invites a cheap answer no engineer would pick.
N1_MIN_VCPUS_PER_GPU = 2
_GCP_SIZE = re.compile(r"-\d+g?(-nolssd)?$")


def gcp_family(machine_type: str) -> str:
    """Return a GCP machine type's family: "a3-highgpu" for a3-highgpu-8g, "n1-standard" for n1-standard-8."""
    return _GCP_SIZE.sub("", machine_type)


def n1_network_gbit(vcpus: int) -> float:
    """Return an N1 host's default egress cap: 2 Gbit/s per vCPU, at most 32 (Compute Engine network docs)."""
    return float(min(2 * vcpus, 32))
