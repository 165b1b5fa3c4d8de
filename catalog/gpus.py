"""The GPU specification table (catalog/data/gpus.json): load it, validate every row, fail loudly."""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from catalog.types import GpuSpec

GPUS_PATH = Path(__file__).resolve().parent / "data" / "gpus.json"

# Oldest first; the sizing core uses this order for per-generation overheads and efficiencies.
ARCHITECTURES: tuple[str, ...] = (
    "kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell",
)
SEGMENTS = frozenset({"consumer", "workstation", "datacenter"})

_FIELDS: dict[str, type | tuple[type, ...]] = {
    "slug": str, "name": str, "architecture": str, "compute_capability": str, "year": int,
    "memory_bytes": int, "memory_bandwidth_gb_per_s": (int, float), "fp32_tflops": (int, float),
    "fp16_tflops": (int, float), "bf16_tflops": (int, float), "pcie_gen": int,
    "nvlink_gb_per_s": (int, float), "tdp_watts": int, "launch_price_usd": (int, float, type(None)),
    "segment": str, "source": str, "source_date": str,
}
_OPTIONAL = frozenset({"note"})  # free text kept in the data file for readers, not loaded
_POSITIVE = ("memory_bytes", "memory_bandwidth_gb_per_s", "fp32_tflops", "fp16_tflops", "tdp_watts")
_NON_NEGATIVE = ("bf16_tflops", "nvlink_gb_per_s")
_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CC = re.compile(r"^\d{1,2}\.\d$")


class GpuDataError(ValueError):
    """The GPU table is malformed; names the row and field."""


def _number_ok(value: object) -> bool:
    """Return whether value is a real, finite number (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_row(index: int, row: Any) -> GpuSpec:
    """Validate one row of the table and build its GpuSpec."""
    where = f"gpus[{index}]"
    if not isinstance(row, dict):
        raise GpuDataError(f"{where}: expected an object, got {type(row).__name__}")
    where = f"gpus[{index}] ({row.get('slug', '?')})"
    missing = sorted(set(_FIELDS) - set(row))
    unknown = sorted(set(row) - set(_FIELDS) - _OPTIONAL)
    if missing or unknown:
        raise GpuDataError(f"{where}: missing fields {missing}, unknown fields {unknown}")
    for name, kind in _FIELDS.items():
        value = row[name]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise GpuDataError(f"{where}.{name}: {value!r} has the wrong type")
        if isinstance(value, float) and not math.isfinite(value):
            raise GpuDataError(f"{where}.{name}: {value!r} is not finite")
        if isinstance(value, str) and not value.strip():
            raise GpuDataError(f"{where}.{name}: empty")
    for name in _POSITIVE:
        if not _number_ok(row[name]) or row[name] <= 0:
            raise GpuDataError(f"{where}.{name}: {row[name]!r} must be a positive number")
    for name in _NON_NEGATIVE:
        if not _number_ok(row[name]) or row[name] < 0:
            raise GpuDataError(f"{where}.{name}: {row[name]!r} must be 0 or more")
    price = row["launch_price_usd"]
    if price is not None and (not _number_ok(price) or price <= 0):
        raise GpuDataError(f"{where}.launch_price_usd: {price!r} must be positive or null")
    if not _SLUG.match(row["slug"]):
        raise GpuDataError(f"{where}.slug: {row['slug']!r} is not a lower-case slug")
    if row["architecture"] not in ARCHITECTURES:
        raise GpuDataError(f"{where}.architecture: {row['architecture']!r} is not one of {ARCHITECTURES}")
    if row["segment"] not in SEGMENTS:
        raise GpuDataError(f"{where}.segment: {row['segment']!r} is not one of {sorted(SEGMENTS)}")
    if not _CC.match(row["compute_capability"]):
        raise GpuDataError(f"{where}.compute_capability: {row['compute_capability']!r} is not like '8.6'")
    if not _DATE.match(row["source_date"]):
        raise GpuDataError(f"{where}.source_date: {row['source_date']!r} is not an ISO date")
    if not 1 <= row["pcie_gen"] <= 6:
        raise GpuDataError(f"{where}.pcie_gen: {row['pcie_gen']!r} is not a PCIe generation 1-6")
    if not 2000 <= row["year"] <= 2100:
        raise GpuDataError(f"{where}.year: {row['year']!r} is out of range")
    fields = {name: row[name] for name in _FIELDS}
    for name in ("memory_bandwidth_gb_per_s", "fp32_tflops", "fp16_tflops", "bf16_tflops", "nvlink_gb_per_s"):
        fields[name] = float(fields[name])
    if price is not None:
        fields["launch_price_usd"] = float(price)
    return GpuSpec(**fields)


def parse_gpus(document: Any) -> tuple[GpuSpec, ...]:
    """Validate a parsed gpus.json document and return its rows, in file order."""
    if not isinstance(document, dict) or not isinstance(document.get("gpus"), list):
        raise GpuDataError("expected an object with a 'gpus' list")
    gpus = tuple(_check_row(i, row) for i, row in enumerate(document["gpus"]))
    if not gpus:
        raise GpuDataError("the GPU table is empty")
    seen: set[str] = set()
    for gpu in gpus:
        if gpu.slug in seen:
            raise GpuDataError(f"duplicate slug {gpu.slug!r}")
        seen.add(gpu.slug)
    return gpus


@lru_cache(maxsize=4)
def load_gpus(path: Path = GPUS_PATH) -> tuple[GpuSpec, ...]:
    """Load and validate the GPU table; raise GpuDataError on any bad row."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GpuDataError(f"{path}: cannot read the GPU table: {exc}") from exc
    return parse_gpus(document)


def gpu_slugs(path: Path = GPUS_PATH) -> tuple[str, ...]:
    """Return every GPU slug in table order."""
    return tuple(gpu.slug for gpu in load_gpus(path))


def gpus_by_slug(path: Path = GPUS_PATH) -> dict[str, GpuSpec]:
    """Return the table as a slug -> GpuSpec mapping (a fresh dict each call)."""
    return {gpu.slug: gpu for gpu in load_gpus(path)}
