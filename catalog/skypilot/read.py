"""Read a SkyPilot catalog's vms.csv (schema v7 or v8) and reduce its per-zone rows to one price per region.

SkyPilot lists one row per availability zone. On-demand prices are the same in every zone of a region (AWS
and GCP alike); spot prices differ by zone on AWS. The reduction, stated once: the region's on-demand price
is the median of its zones' (they agree), its spot price the median over the zones that list one.
"""

from __future__ import annotations

import csv
import hashlib
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

V7_COLUMNS = (
    "InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB", "GpuInfo",
    "Price", "SpotPrice", "Region", "AvailabilityZone",
)  # fmt: skip
V8_COLUMNS = (*V7_COLUMNS, "Arch")  # v8 adds the processor architecture (AWS; GCP rows leave it out)
# where a provider's vms.csv may sit under the directory given (the shared extract, ~/.sky/catalogs/v8, ...)
_LAYOUTS = ("{p}-gpu-vms.csv", "{p}/vms.csv", "v8/{p}/vms.csv", "v7/{p}/vms.csv")


class SkyPilotFormatError(ValueError):
    """A SkyPilot catalog file is missing or malformed; the message names the file and the field."""


@dataclass(frozen=True)
class Row:
    """One zone's row of a vms.csv, numbers parsed (None where the cell is empty)."""

    instance_type: str
    accelerator: str
    accelerator_count: float | None
    vcpus: float | None
    memory_gib: float | None
    gpu_info: str
    price: float | None
    spot_price: float | None
    region: str
    zone: str
    arch: str


@dataclass(frozen=True)
class CatalogFile:
    """One provider's vms.csv: where it is, its schema, its checksum and its rows."""

    path: Path
    schema: str  # "v7" or "v8"
    sha256: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class RegionPrice:
    """One priced item (an instance type, or a GCP accelerator and count) in one region."""

    key: tuple[str, ...]
    region: str
    on_demand_usd: float | None
    spot_usd: float | None
    zones: tuple[str, ...]


def find_vms_csv(directory: Path, provider: str) -> Path | None:
    """Return the provider's vms.csv under `directory` in any of the layouts SkyPilot or we use, or None."""
    for layout in _LAYOUTS:
        path = directory / layout.format(p=provider)
        if path.is_file():
            return path
    return None


def _number(text: str, *, where: str) -> float | None:
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise SkyPilotFormatError(f"{where}: {text!r} is not a number") from None


def read_vms_csv(path: Path) -> CatalogFile:
    """Parse a vms.csv strictly; SkyPilotFormatError names the file, line and column of the first problem."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SkyPilotFormatError(f"{path}: cannot read: {exc}") from exc
    text = data.decode("utf-8", errors="strict")
    reader = csv.DictReader(text.splitlines())
    header = tuple(reader.fieldnames or ())
    missing = [c for c in V7_COLUMNS if c not in header]
    if missing:
        raise SkyPilotFormatError(f"{path}: not a SkyPilot vms.csv (v7/v8): missing columns {missing}")
    schema = "v8" if "Arch" in header else "v7"
    rows: list[Row] = []
    for line, raw in enumerate(reader, start=2):
        if None in raw or any(raw.get(c) is None for c in header):
            raise SkyPilotFormatError(f"{path}:{line}: expected {len(header)} fields")
        where = f"{path}:{line}"
        rows.append(
            Row(
                instance_type=raw["InstanceType"].strip(),
                accelerator=raw["AcceleratorName"].strip(),
                accelerator_count=_number(raw["AcceleratorCount"], where=f"{where} AcceleratorCount"),
                vcpus=_number(raw["vCPUs"], where=f"{where} vCPUs"),
                memory_gib=_number(raw["MemoryGiB"], where=f"{where} MemoryGiB"),
                gpu_info=raw["GpuInfo"],
                price=_number(raw["Price"], where=f"{where} Price"),
                spot_price=_number(raw["SpotPrice"], where=f"{where} SpotPrice"),
                region=raw["Region"].strip(),
                zone=raw["AvailabilityZone"].strip(),
                arch=(raw.get("Arch") or "").strip(),
            )
        )
    return CatalogFile(path, schema, hashlib.sha256(data).hexdigest(), tuple(rows))


def _median(values: list[float]) -> float | None:
    positive = [v for v in values if v is not None]
    return float(statistics.median(positive)) if positive else None


def reduce_by_region(keyed: list[tuple[tuple[str, ...], Row]]) -> list[RegionPrice]:
    """Return one RegionPrice per (key, region): median on-demand over zones, median spot over zones that list one."""
    groups: dict[tuple[tuple[str, ...], str], list[Row]] = defaultdict(list)
    for key, row in keyed:
        groups[(key, row.region)].append(row)
    out: list[RegionPrice] = []
    for (key, region), rows in sorted(groups.items()):
        on_demand = _median([r.price for r in rows if r.price is not None])
        spot = _median([r.spot_price for r in rows if r.spot_price is not None])
        out.append(RegionPrice(key, region, on_demand, spot, tuple(sorted({r.zone for r in rows}))))
    return out
