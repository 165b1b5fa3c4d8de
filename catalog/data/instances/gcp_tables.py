"""Author's tables for the bundled snapshot's Google Cloud rows: shapes, host and GPU prices per region.

Google bills an accelerator machine as vCPU x core SKU + GiB x RAM SKU + GPUs x GPU SKU; the tables keep the
host part and the per-GPU part apart and the builder adds them, as the live fetcher does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog.types import InstanceType, Offer, Pricing, Provider

SKY = (
    "SkyPilot catalog skypilot-org/skypilot-catalog@017e2502 catalogs/v7/gcp/vms.csv (Cloud Billing "
    "Catalog prices as collected by SkyPilot; read 2026-11-29)"
)
LIST = (
    "Google Cloud Compute Engine / GPU pricing pages, list price recalled by the catalog author (not re-read)"
)
SPEC = (
    "Google Cloud GPU machine types documentation (cloud.google.com/compute/docs/gpus and "
    "accelerator-optimized machines), recalled"
)
REGIONAL = 1.10  # estimate: europe-west4/asia-east1 list prices run ~10 % over us-central1 on GCP's pages

N1, CLX, SPR, EMR80, EMR81 = (
    "Intel Xeon (Skylake) @ 2.0 GHz",
    "Intel Xeon (Cascade Lake) @ 2.2 GHz",
    "Intel Xeon Platinum 8481C (Sapphire Rapids)",
    "Intel Xeon Platinum 8580 (Emerald Rapids)",
    "Intel Xeon Platinum 8581C (Emerald Rapids)",
)
# bundled-GPU shapes: name, gpu slug, GPU price key, gpus, vCPUs, GiB, local GB, Gbit/s, CPU
BUNDLED: tuple[tuple[str, str, str, int, int, float, int, float, str], ...] = (
    ("a2-highgpu-1g", "a100-40gb", "a100-40gb", 1, 12, 85, 0, 24, CLX),
    ("a2-highgpu-2g", "a100-40gb", "a100-40gb", 2, 24, 170, 0, 32, CLX),
    ("a2-highgpu-4g", "a100-40gb", "a100-40gb", 4, 48, 340, 0, 50, CLX),
    ("a2-highgpu-8g", "a100-40gb", "a100-40gb", 8, 96, 680, 0, 100, CLX),
    ("a2-megagpu-16g", "a100-40gb", "a100-40gb", 16, 96, 1360, 0, 100, CLX),
    ("a2-ultragpu-1g", "a100-80gb", "a100-80gb", 1, 12, 170, 375, 24, CLX),
    ("a2-ultragpu-2g", "a100-80gb", "a100-80gb", 2, 24, 340, 750, 32, CLX),
    ("a2-ultragpu-4g", "a100-80gb", "a100-80gb", 4, 48, 680, 1500, 50, CLX),
    ("a2-ultragpu-8g", "a100-80gb", "a100-80gb", 8, 96, 1360, 3000, 100, CLX),
    ("a3-highgpu-1g", "h100-sxm", "h100", 1, 26, 234, 750, 25, SPR),
    ("a3-highgpu-2g", "h100-sxm", "h100", 2, 52, 468, 1500, 50, SPR),
    ("a3-highgpu-4g", "h100-sxm", "h100", 4, 104, 936, 3000, 100, SPR),
    ("a3-highgpu-8g", "h100-sxm", "h100", 8, 208, 1872, 6000, 1000, SPR),
    ("a3-megagpu-8g", "h100-sxm", "h100-mega", 8, 208, 1872, 6000, 1800, SPR),
    ("a3-ultragpu-8g", "h200", "h200", 8, 224, 2952, 12000, 3600, EMR80),
    ("a4-highgpu-8g", "b200", "b200", 8, 224, 3968, 12000, 3600, EMR81),
    ("g2-standard-4", "l4", "l4", 1, 4, 16, 0, 10, CLX),
    ("g2-standard-8", "l4", "l4", 1, 8, 32, 0, 16, CLX),
    ("g2-standard-12", "l4", "l4", 1, 12, 48, 0, 16, CLX),
    ("g2-standard-16", "l4", "l4", 1, 16, 64, 0, 32, CLX),
    ("g2-standard-24", "l4", "l4", 2, 24, 96, 0, 32, CLX),
    ("g2-standard-32", "l4", "l4", 1, 32, 128, 0, 32, CLX),
    ("g2-standard-48", "l4", "l4", 4, 48, 192, 0, 50, CLX),
    ("g2-standard-96", "l4", "l4", 8, 96, 384, 0, 100, CLX),
)
# host (vCPU + RAM) part read from SkyPilot: (on-demand, spot) per region
HOST_READ: dict[str, dict[str, tuple[float, float]]] = {
    "a2-highgpu-1g": {"us-central1": (0.73948, 0.29576), "europe-west4": (0.81406, 0.31824)},
    "a2-highgpu-2g": {"us-central1": (1.47895, 0.59151), "europe-west4": (1.62813, 0.63648)},
    "a2-highgpu-4g": {"us-central1": (2.95791, 1.18302), "europe-west4": (3.25626, 1.27296)},
    "a2-highgpu-8g": {"us-central1": (5.91582, 2.36604), "europe-west4": (6.51251, 2.54592)},
    "a2-megagpu-16g": {"us-central1": (8.79698, 3.51864), "europe-west4": (9.68403, 3.78624)},
    "a2-ultragpu-1g": {"us-central1": (1.09962, 0.43983), "europe-west4": (1.2105, 0.47328)},
    "a2-ultragpu-2g": {"us-central1": (2.19924, 0.87966), "europe-west4": (2.42101, 0.94656)},
    "a2-ultragpu-4g": {"us-central1": (4.39849, 1.75932), "europe-west4": (4.84202, 1.89312)},
    "a2-ultragpu-8g": {"us-central1": (8.79698, 3.51864), "europe-west4": (9.68403, 3.78624)},
    "a3-highgpu-1g": {
        "us-central1": (1.18251, 0.27193),
        "europe-west4": (1.24163, 0.2236),
        "asia-east1": (1.36923, 0.2464),
    },
    "a3-highgpu-2g": {
        "us-central1": (2.36502, 0.54387),
        "europe-west4": (2.48327, 0.4472),
        "asia-east1": (2.73845, 0.4928),
    },
    "a3-highgpu-4g": {
        "us-central1": (4.73003, 1.08774),
        "europe-west4": (4.96653, 0.8944),
        "asia-east1": (5.4769, 0.98561),
    },
    "a3-highgpu-8g": {
        "us-central1": (9.46006, 2.17547),
        "europe-west4": (9.93306, 1.7888),
        "asia-east1": (10.95381, 1.97122),
    },
    "a3-megagpu-8g": {"us-central1": (9.46006, 2.17547), "europe-west4": (9.93306, 1.7888)},
    "a3-ultragpu-8g": {"us-central1": (12.266, 2.82111), "europe-west4": (12.8793, 2.31952)},
}
_EST_A100 = "estimate: us-central1 list x 1.10 (SkyPilot's europe-west4 row, 1.61365, looked half the list)"
_EST_A100_80 = "estimate: recalled us-central1 a2-ultragpu-1g list total 5.0688 minus SkyPilot's host part"
_EST_H100 = "estimate: SkyPilot's us-east4 H100 list figure (us-central1 row looked like a discounted rate)"
# per-GPU (on-demand, spot, on-demand source) per region; spot always read from SkyPilot
GPU_PRICE: dict[str, dict[str, tuple[float | None, float | None, str]]] = {
    "a100-40gb": {"us-central1": (2.93391, 1.1472, SKY), "europe-west4": (3.2273, 1.1691, _EST_A100)},
    "a100-80gb": {
        "us-central1": (3.96918, 1.5712, _EST_A100_80),
        "europe-west4": (3.96918 * REGIONAL, 1.5771, _EST_A100_80 + ", x 1.10 for the region"),
    },
    "h100": {
        "us-central1": (9.79655, 2.253, _EST_H100),
        "europe-west4": (12.73552, 2.2913, SKY),
        "asia-east1": (11.34343, 2.0418, SKY),
    },
    "h100-mega": {
        "us-central1": (82.75421 / 8, 19.0328 / 8, SKY),
        "europe-west4": (107.58048 / 8, 19.3648 / 8, SKY),
    },
    "h200": {"us-central1": (74.49392 / 8, 29.7976 / 8, SKY)},
}
# G2 (L4) whole-machine list prices in us-central1, recalled
G2_TOTAL = {
    "g2-standard-4": 0.70683,
    "g2-standard-8": 0.85355,
    "g2-standard-12": 1.00027,
    "g2-standard-16": 1.14699,
    "g2-standard-24": 2.00054,
    "g2-standard-32": 1.73388,
    "g2-standard-48": 4.00108,
    "g2-standard-96": 8.00216,
}
# N1 hosts with attached GPUs: accelerator id, slug, us-central1 list per GPU, counts, regions
N1_HOST = {1: "n1-standard-8", 2: "n1-standard-16", 4: "n1-standard-32", 8: "n1-standard-64"}
N1_PER_VCPU = 0.031611 + 3.75 * 0.004237  # us-central1 core + 3.75 GB RAM, recalled list
N1_GPUS: tuple[tuple[str, str, float, tuple[int, ...], tuple[str, ...], str], ...] = (
    ("nvidia-tesla-t4", "t4", 0.35, (1, 2, 4), ("us-central1", "europe-west4", "asia-east1"), LIST),
    (
        "nvidia-tesla-v100",
        "v100-16gb",
        2.48,
        (1, 2, 4, 8),
        ("us-central1", "europe-west4", "asia-east1"),
        LIST,
    ),
    ("nvidia-tesla-p100", "p100-16gb", 1.46, (1, 2, 4), ("us-central1", "europe-west4", "asia-east1"), LIST),
    ("nvidia-tesla-p4", "p4", 0.60, (1, 2, 4), ("us-central1", "europe-west4"), LIST),
    (
        "nvidia-tesla-k80",
        "k80",
        0.45,
        (1, 2, 4, 8),
        ("us-central1", "asia-east1"),
        "estimate: historical list price; K80 reached end of life on GCP in 2024",
    ),
)
N1_NET = {"n1-standard-8": 16.0, "n1-standard-16": 32.0, "n1-standard-32": 32.0, "n1-standard-64": 32.0}


def gcp_instances_and_offers(
    *, make_instance: Callable[..., InstanceType], read_on: str
) -> tuple[list[InstanceType], list[Offer]]:
    """Return the GCP instance rows and their offers, host and GPU prices added up."""
    instances: list[InstanceType] = []
    offers: list[Offer] = []

    def offer(itype: str, region: str, pricing: Pricing, price: float, source: str) -> None:
        offers.append(Offer(Provider.GCP, itype, region, pricing, round(price, 5), source, read_on))

    for name, slug, key, count, vcpus, gib, local_gb, gbit, cpu in BUNDLED:
        instances.append(
            make_instance(Provider.GCP, name, slug, count, vcpus, gib, local_gb, gbit, cpu, SPEC)
        )
        if name in G2_TOTAL:
            offer(name, "us-central1", Pricing.ON_DEMAND, G2_TOTAL[name], LIST)
            for region in ("europe-west4", "asia-east1"):
                offer(
                    name,
                    region,
                    Pricing.ON_DEMAND,
                    G2_TOTAL[name] * REGIONAL,
                    "estimate: recalled us-central1 list x 1.10 for the region",
                )
            continue
        for region, (host_od, host_spot) in HOST_READ.get(name, {}).items():
            gpu: Any = GPU_PRICE.get(key, {}).get(region)
            if gpu is None:
                continue
            gpu_od, gpu_spot, gpu_source = gpu
            parts = f"host vCPU+RAM: {SKY}; GPUs x {count}: " + (
                gpu_source if gpu_source != SKY else "same catalog"
            )
            source = parts if gpu_source == SKY else f"estimate: {parts}"
            if gpu_od is not None:
                offer(name, region, Pricing.ON_DEMAND, host_od + count * gpu_od, source)
            if gpu_spot is not None:
                offer(
                    name,
                    region,
                    Pricing.SPOT,
                    host_spot + count * gpu_spot,
                    f"host vCPU+RAM and GPU spot prices: {SKY}",
                )
    for accel, slug, gpu_price, counts, regions, gpu_source in N1_GPUS:
        for count in counts:
            host = N1_HOST[count]
            vcpus = int(host.rsplit("-", 1)[1])
            name = f"{host}+{count}x{accel}"
            instances.append(
                make_instance(
                    Provider.GCP,
                    name,
                    slug,
                    count,
                    vcpus,
                    vcpus * 3.75 * 10**9 / 2**30,
                    0,
                    N1_NET[host],
                    N1,
                    SPEC + "; N1 host with attached GPUs",
                )
            )
            base = vcpus * N1_PER_VCPU + count * gpu_price
            src = f"{LIST} (N1 host) + {gpu_source} (GPU)"
            for region in regions:
                if region == "us-central1":
                    offer(name, region, Pricing.ON_DEMAND, base, src)
                else:
                    offer(
                        name,
                        region,
                        Pricing.ON_DEMAND,
                        base * REGIONAL,
                        f"estimate: {src}, x 1.10 for the region",
                    )
    return instances, offers
