"""AWS rows of a SkyPilot catalog -> our instance shapes and offers (on-demand; spot as the median over zones).

Zone spot prices at AWS's spot floor (catalog/plausibility.py: placeholders, not market prices) are left out
before the median is taken, and recorded as findings.
"""

from __future__ import annotations

import ast
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace

from catalog.cpu_scores import score_for
from catalog.plausibility import Finding, PricePoint, region_spot, spot_reference, spot_references
from catalog.skypilot.read import CatalogFile, Row, reduce_by_region
from catalog.skypilot.shapes import (
    AWS_DEFAULT_GBIT,
    AWS_DISK_NET,
    AWS_FAMILY_CPU,
    AWS_SPEC,
    GPU_SLUGS,
    L4_SHARES,
    RETIRED,
    SPEC_DATE,
)
from catalog.types import InstanceType, Offer, Pricing, Provider

GIB = 2**30
GB = 10**9


@dataclass(frozen=True)
class Converted:
    """One provider's shapes and offers from a SkyPilot file, with the rows it skipped and why."""

    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    skipped: tuple[str, ...]
    findings: tuple[Finding, ...] = ()  # prices left out while converting (AWS: zone spot prices at the floor)


def is_nvidia(row: Row) -> bool:
    """Return whether a row's GpuInfo names NVIDIA as the manufacturer (AWS lists AMD, Habana, ... too)."""
    try:
        info = ast.literal_eval(row.gpu_info) if row.gpu_info else {}
    except (ValueError, SyntaxError):
        return False
    gpus = info.get("Gpus", []) if isinstance(info, dict) else []
    return any(isinstance(g, dict) and str(g.get("Manufacturer", "")).upper() == "NVIDIA" for g in gpus)


def gpu_of(name: str, count: float) -> tuple[str, int] | str:
    """Return (our slug, count) for a SkyPilot GPU name and count, or the reason it is skipped."""
    if name in RETIRED:
        return RETIRED[name]
    slug = GPU_SLUGS.get(name)
    if slug is None:
        return f"GPU {name!r} is not in our GPU table"
    if count < 1:
        share = L4_SHARES.get(count) if slug == "l4" else None
        return (share, 1) if share else f"a {count} share of {name} has no slice in our GPU table"
    if count != int(count):
        return f"{count} GPUs is not a whole number"
    return slug, int(count)


def shape(row: Row, slug: str, count: int) -> InstanceType | str:
    """Return the instance shape of a row, or why it cannot be built."""
    family = row.instance_type.split(".", 1)[0]
    cpu = AWS_FAMILY_CPU.get(family)
    score = score_for(cpu) if cpu else None
    if cpu is None or score is None:
        return f"no host CPU model known for family {family}"
    if not row.vcpus or not row.memory_gib:
        return "no vCPU or memory figure"
    disk_gb, gbit = AWS_DISK_NET.get(row.instance_type, (0, AWS_DEFAULT_GBIT))
    return InstanceType(
        provider=Provider.AWS,
        instance_type=row.instance_type,
        gpu=slug,
        gpu_count=count,
        vcpus=int(row.vcpus),
        host_memory_bytes=round(row.memory_gib * GIB),
        local_storage_bytes=disk_gb * GB,
        cpu_model=cpu,
        cpu_single_thread_score=score.single_thread_score,
        network_gbit_per_s=float(gbit),
        source=AWS_SPEC,
        source_date=SPEC_DATE,
    )


def convert_aws(file: CatalogFile, *, origin: str, as_of: str | None) -> Converted:
    """Build AWS shapes and offers from the NVIDIA GPU rows of a SkyPilot AWS vms.csv."""
    on_demand_source = f"{origin} (AWS Price List on-demand Linux price, as collected by SkyPilot)"
    spot_source = f"{origin} (AWS spot price history as collected by SkyPilot; median over the region's zones)"
    shapes: dict[str, InstanceType] = {}
    skipped: dict[str, str] = {}
    keyed: list[tuple[tuple[str, ...], Row]] = []
    for row in file.rows:
        if not row.accelerator or not row.instance_type or not is_nvidia(row):
            continue
        if row.instance_type not in shapes and row.instance_type not in skipped:
            gpu = gpu_of(row.accelerator, row.accelerator_count or 0.0)
            built = gpu if isinstance(gpu, str) else shape(row, *gpu)
            if isinstance(built, str):
                skipped[row.instance_type] = built
            else:
                shapes[row.instance_type] = built
        if row.instance_type in shapes:
            keyed.append(((row.instance_type,), row))
    keyed, findings = _screen_zone_spots(keyed, shapes)
    offers: list[Offer] = []
    for price in reduce_by_region(keyed):
        name = price.key[0]
        if price.on_demand_usd is not None:
            offers.append(
                Offer(Provider.AWS, name, price.region, Pricing.ON_DEMAND, price.on_demand_usd, on_demand_source, as_of)
            )
        if price.spot_usd is not None:
            offers.append(Offer(Provider.AWS, name, price.region, Pricing.SPOT, price.spot_usd, spot_source, as_of))
    return Converted(
        tuple(shapes[k] for k in sorted(shapes)),
        tuple(offers),
        tuple(f"aws {name}: {why}" for name, why in sorted(skipped.items())),
        tuple(findings),
    )


def _point(shape: InstanceType, region: str, pricing: Pricing, usd: float) -> PricePoint:
    return PricePoint(Provider.AWS, shape.instance_type, region, pricing, usd, gpu_count=shape.gpu_count,
                      gpu=shape.gpu, vcpus=shape.vcpus, memory_bytes=shape.host_memory_bytes)


def _screen_zone_spots(
    keyed: list[tuple[tuple[str, ...], Row]], shapes: dict[str, InstanceType]
) -> tuple[list[tuple[tuple[str, ...], Row]], list[Finding]]:
    """Blank the zone spot prices a region's median must not see (plausibility.region_spot), with findings."""
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for (name,), row in keyed:
        groups[(name, row.region)].append(row)
    references = spot_references(
        _point(shapes[name], region, Pricing.ON_DEMAND, float(statistics.median(prices)))
        for (name, region), rows in groups.items()
        if (prices := [r.price for r in rows if r.price is not None and r.price > 0])
    )
    findings: list[Finding] = []
    blank: set[tuple[str, str, str]] = set()  # (type, region, zone) whose spot price is left out
    for (name, region), rows in sorted(groups.items()):
        zones = {r.zone: r.spot_price for r in rows if r.spot_price is not None}
        spot = _point(shapes[name], region, Pricing.SPOT, 0.0)
        reduced = region_spot(spot_reference(references, spot), spot, zones)
        if reduced.finding is not None:
            findings.append(reduced.finding)
        blank |= {(name, region, z) for z in reduced.left_out}
    screened = [(k, replace(r, spot_price=None) if (k[0], r.region, r.zone) in blank else r) for k, r in keyed]
    return screened, findings
