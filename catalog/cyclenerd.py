"""GCP machine families SkyPilot's rows lack, from Cyclenerd's pricing.yml extract (dated by the file).

catalog/data/instances/cyclenerd-gcp.json is copied unchanged out of Cyclenerd/google-cloud-pricing-cost-
calculator's pricing.yml (extract_cyclenerd.py): per machine type its vCPUs, memory, GPU key and count, and per
region the on-demand `hour` and `hour_spot` price, both true on the file's generation date. Only whole-GPU
shapes become instances; a share of one GPU (g4-standard-6/12/24: 1/8, 1/4, 1/2 of an RTX PRO 6000) has no
slice in our GPU table and is skipped with the reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.cpu_scores import score_for
from catalog.skypilot.shapes import G4_CPU, SPEC_DATE
from catalog.types import InstanceType, Offer, Pricing, Provider

EXTRACT = Path(__file__).resolve().parent / "data" / "instances" / "cyclenerd-gcp.json"
GPU_KEYS = {"rtx6000": "rtx-pro-6000"}  # pricing.yml's GPU key -> our slug (G4: RTX PRO 6000 Blackwell)
FAMILY_CPU = {"g4-standard": G4_CPU}
GIB = 2**30
_NETWORK_GBIT = 10.0  # not in the file; the smallest figure Google publishes for GPU machines (recalled)


@dataclass(frozen=True)
class CyclenerdRows:
    """The extract's shapes and offers, what it skipped, and its source line."""

    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    skipped: tuple[str, ...]
    source: str


def _shape(name: str, row: dict[str, Any], slug: str, spec: str) -> InstanceType | str:
    family = name.rsplit("-", 1)[0]
    cpu = FAMILY_CPU.get(family)
    score = score_for(cpu) if cpu else None
    if cpu is None or score is None:
        return f"no host CPU model known for family {family}"
    return InstanceType(
        provider=Provider.GCP, instance_type=name, gpu=slug, gpu_count=int(row["gpus"]), vcpus=int(row["cpu"]),
        host_memory_bytes=round(float(row["ram"]) * GIB), local_storage_bytes=0, cpu_model=cpu,
        cpu_single_thread_score=score.single_thread_score, network_gbit_per_s=_NETWORK_GBIT,
        source=spec, source_date=SPEC_DATE,
    )


def cyclenerd_rows(path: Path = EXTRACT) -> CyclenerdRows:
    """Read the extract into GCP instance shapes and their on-demand and spot offers."""
    data = json.loads(path.read_text(encoding="utf-8"))
    origin = f"{data['source']} (generated {data['generated']}, from Google's Cloud Billing Catalog SKU prices)"
    spec = (f"{origin}: vCPUs, memory (GiB) and GPUs; host CPU recalled (Google's G4 machine series page), "
            "no local SSD counted, network not in the file (10 Gbit/s assumed)")
    instances: list[InstanceType] = []
    offers: list[Offer] = []
    skipped: list[str] = []
    for name, row in sorted(data["machines"].items()):
        slug = GPU_KEYS.get(row["gpu"])
        count = float(row["gpus"])
        if slug is None or count < 1 or count != int(count):
            skipped.append(f"gcp {name}: {count:g} of a {row['gpu']} GPU has no slice in our GPU table")
            continue
        built = _shape(name, row, slug, spec)
        if isinstance(built, str):
            skipped.append(f"gcp {name}: {built}")
            continue
        instances.append(built)
        for region, cost in sorted(row["prices"].items()):
            for pricing, key in ((Pricing.ON_DEMAND, "hour"), (Pricing.SPOT, "hour_spot")):
                if cost.get(key):
                    offers.append(Offer(Provider.GCP, name, region, pricing, float(cost[key]),
                                        f"{origin} ({key})", data["as_of"]))
    return CyclenerdRows(tuple(instances), tuple(offers), tuple(skipped), f"input {path.name}: {origin}")
