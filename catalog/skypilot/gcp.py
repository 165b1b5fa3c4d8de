"""GCP rows of a SkyPilot catalog -> offers composed as Google bills them: host machine + GPUs, per zone.

SkyPilot lists a GPU machine's host part (vCPUs + RAM, under the machine type) apart from its GPUs (an
accelerator row per count). An offer exists in a zone where both are listed; its price is their sum, then
reduced per region as catalog/skypilot/read.py states. Both parts are checked for plausibility before they
are added (catalog/plausibility.py): an implausible GPU price hides inside a machine's total otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.cpu_scores import score_for
from catalog.plausibility import Finding, PricePoint, find_implausible
from catalog.skypilot.aws import GB, GIB, Converted
from catalog.skypilot.read import CatalogFile, RegionPrice, Row, reduce_by_region
from catalog.skypilot.shapes import (
    GCP_BUNDLED,
    GCP_DISK_NET,
    GCP_FAMILY_CPU,
    GCP_SPEC,
    GPU_SLUGS,
    N1_ATTACHABLE,
    N1_HOST_FAMILIES,
    N1_MIN_VCPUS_PER_GPU,
    RETIRED,
    SPEC_DATE,
    gcp_family,
    n1_network_gbit,
)
from catalog.types import InstanceType, Offer, Pricing, Provider


@dataclass(frozen=True)
class Machine:
    """A purchasable GPU machine: a host type with a GPU part, by name."""

    name: str
    host: str
    accelerator: str  # SkyPilot accelerator name
    count: int


def _gpu_key(row: Row) -> tuple[str, int]:
    return row.accelerator, int(row.accelerator_count or 0)


def part_findings(hosts: list[RegionPrice], gpus: list[RegionPrice]) -> list[Finding]:
    """Run the plausibility checks over the GPU parts and the host parts, region by region."""
    points: list[PricePoint] = []
    for price, label, count in [
        *((p, f"accelerator {p.key[0]} x{p.key[1]}", int(p.key[1])) for p in gpus),
        *((p, f"host {p.key[0]}", 1) for p in hosts),
    ]:
        for pricing, usd in ((Pricing.ON_DEMAND, price.on_demand_usd), (Pricing.SPOT, price.spot_usd)):
            # a host part of 0: Google bills that machine (A4) in its GPU price, which is checked
            if usd is not None and not (usd == 0 and label.startswith("host ")):
                points.append(PricePoint(Provider.GCP, label, price.region, pricing, usd, gpu_count=count))
    return find_implausible(points)


def machines(host_rows: dict[str, Row], gpu_keys: Iterable[tuple[str, int]]) -> list[Machine]:
    """Return every machine SkyPilot's rows allow: bundled A2/A3/A4/G2 types, and N1 hosts with GPUs attached."""
    out = [Machine(name, name, *GCP_BUNDLED[name]) for name in sorted(host_rows) if name in GCP_BUNDLED]
    for accelerator, count in sorted(set(gpu_keys)):
        if accelerator not in N1_ATTACHABLE or count not in N1_ATTACHABLE[accelerator][1]:
            continue
        accel_id, limits = N1_ATTACHABLE[accelerator]
        max_vcpus, max_gb = limits[count]
        for host, row in sorted(host_rows.items()):
            vcpus = row.vcpus or 0
            fits = N1_MIN_VCPUS_PER_GPU * count <= vcpus <= max_vcpus and (row.memory_gib or 0) <= max_gb
            if gcp_family(host) in N1_HOST_FAMILIES and fits:
                out.append(Machine(f"{host}+{count}x{accel_id}", host, accelerator, count))
    return out


def _shape(machine: Machine, host: Row, slug: str) -> InstanceType | str:
    family = gcp_family(machine.host)
    cpu = GCP_FAMILY_CPU.get(family)
    score = score_for(cpu) if cpu else None
    if cpu is None or score is None or not host.vcpus or not host.memory_gib:
        return f"no host CPU model, vCPU or memory figure for {machine.host}"
    vcpus = int(host.vcpus)
    disk_gb, gbit = GCP_DISK_NET.get(machine.host, (0, n1_network_gbit(vcpus)))
    return InstanceType(
        provider=Provider.GCP,
        instance_type=machine.name,
        gpu=slug,
        gpu_count=machine.count,
        vcpus=vcpus,
        host_memory_bytes=round(host.memory_gib * GIB),  # SkyPilot's MemoryGiB: n1-standard-8 is 30 GiB
        local_storage_bytes=disk_gb * GB,
        cpu_model=cpu,
        cpu_single_thread_score=score.single_thread_score,
        network_gbit_per_s=float(gbit),
        source=GCP_SPEC + ("; N1 host with attached GPUs" if "+" in machine.name else ""),
        source_date=SPEC_DATE,
    )


def convert_gcp(file: CatalogFile, *, origin: str, as_of: str | None) -> tuple[Converted, list[Finding]]:
    """Build GCP shapes and offers (host + GPUs per zone) and return the implausible parts left out."""
    host_rows = [r for r in file.rows if r.instance_type and not r.accelerator]
    gpu_rows = [r for r in file.rows if r.accelerator and not r.instance_type and not r.accelerator.startswith("tpu-")]
    by_zone_host = {(r.instance_type, r.zone): r for r in host_rows}
    by_zone_gpu = {(*_gpu_key(r), r.zone): r for r in gpu_rows}
    findings = part_findings(
        reduce_by_region([((r.instance_type,), r) for r in host_rows]),
        reduce_by_region([((r.accelerator, str(int(r.accelerator_count or 0))), r) for r in gpu_rows]),
    )
    bad = {(f.point.item, f.point.region, f.point.pricing) for f in findings}
    first_host = {r.instance_type: r for r in reversed(host_rows)}
    shapes: dict[str, InstanceType] = {}
    skipped: dict[str, str] = {}
    composed: dict[tuple[str, str], list[tuple[str, float | None, float | None]]] = defaultdict(list)
    zones_of_host: dict[str, list[Row]] = defaultdict(list)
    for r in host_rows:
        zones_of_host[r.instance_type].append(r)
    for machine in machines(first_host, (_gpu_key(r) for r in gpu_rows)):
        if machine.accelerator in RETIRED or GPU_SLUGS.get(machine.accelerator) is None:
            skipped[machine.name] = RETIRED.get(machine.accelerator, f"GPU {machine.accelerator!r} not in our table")
            continue
        built = _shape(machine, first_host[machine.host], GPU_SLUGS[machine.accelerator])
        if isinstance(built, str):
            skipped[machine.name] = built
            continue
        gpu_label = f"accelerator {machine.accelerator} x{machine.count}"
        for host in zones_of_host[machine.host]:
            gpu = by_zone_gpu.get((machine.accelerator, machine.count, host.zone))
            if gpu is None or by_zone_host.get((machine.host, host.zone)) is None:
                continue
            ok = {
                p: (gpu_label, host.region, p) not in bad and (f"host {machine.host}", host.region, p) not in bad
                for p in Pricing
            }
            od = _total(host.price, gpu.price) if ok[Pricing.ON_DEMAND] else None
            spot = _total(host.spot_price, gpu.spot_price) if ok[Pricing.SPOT] else None
            composed[(machine.name, host.region)].append((host.zone, od, spot))
            shapes[machine.name] = built
    used = set(N1_ATTACHABLE) | {name for name, _ in GCP_BUNDLED.values()}
    for name in sorted({r.accelerator for r in gpu_rows} - used):
        skipped[f"accelerator {name}"] = RETIRED.get(name, "no machine type in our tables takes it")
    offers = _offers(composed, origin=origin, as_of=as_of)
    converted = Converted(
        tuple(shapes[k] for k in sorted(shapes)),
        tuple(offers),
        tuple(f"gcp {name}: {why}" for name, why in sorted(skipped.items())),
    )
    return converted, findings


def _total(host: float | None, gpu: float | None) -> float | None:
    return host + gpu if host is not None and gpu is not None else None


def _offers(
    composed: dict[tuple[str, str], list[tuple[str, float | None, float | None]]], *, origin: str, as_of: str | None
) -> list[Offer]:
    import statistics

    on_demand_source = f"{origin} (Cloud Billing list prices as collected by SkyPilot): host machine + GPUs"
    spot_source = f"{origin} (Cloud Billing spot prices as collected by SkyPilot): host + GPUs, median over zones"
    offers: list[Offer] = []
    for (name, region), zones in sorted(composed.items()):
        ods = [od for _, od, _ in zones if od is not None]
        spots = [s for _, _, s in zones if s is not None]
        if ods:
            price = round(float(statistics.median(ods)), 6)
            offers.append(Offer(Provider.GCP, name, region, Pricing.ON_DEMAND, price, on_demand_source, as_of))
        if spots:
            price = round(float(statistics.median(spots)), 6)
            offers.append(Offer(Provider.GCP, name, region, Pricing.SPOT, price, spot_source, as_of))
    return offers
