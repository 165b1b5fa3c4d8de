"""Energy and carbon coefficients (catalog/data/energy.json): PUE, grid intensity, host power; loaded and checked.

Every row carries the dataset it comes from (with the repository, path and commit it was read from)
and the data year where the dataset states one; the loader refuses a row without a source, a
negative or absurd figure, or a duplicate key, so a bad edit fails at start-up, not in a ranking.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ENERGY_PATH = Path(__file__).resolve().parent / "data" / "energy.json"

# Bounds a coefficient must lie in (a typo such as 3790 for 379.0 g/kWh fails loudly).
_PUE_RANGE = (1.0, 3.0)
_GRID_RANGE_G_PER_KWH = (0.0, 1500.0)
_WATTS_PER_VCPU_RANGE = (0.0, 50.0)


class EnergyDataError(ValueError):
    """The energy table is malformed; names the row and field."""


@dataclass(frozen=True)
class Coefficient:
    """One sourced figure: its value, the dataset and commit it came from, and the year it describes."""

    value: float
    source: str
    data_year: int | None = None  # None where the dataset does not state it


@dataclass(frozen=True)
class HostPower:
    """A provider's host power per vCPU, idle and at full load (Cloud Carbon Footprint's min and max watts)."""

    min_watts_per_vcpu: float
    max_watts_per_vcpu: float
    source: str


@dataclass(frozen=True)
class EnergyTable:
    """Everything the energy estimate multiplies by, with a source beside each figure."""

    version: str
    pue: Mapping[tuple[str, str | None], Coefficient]  # (provider, region or None for the provider's average)
    grid_g_per_kwh: Mapping[tuple[str, str], Coefficient]  # (provider, region)
    country_g_per_kwh: Mapping[str, Coefficient]  # ISO 3166 alpha-3
    host: Mapping[str, HostPower]  # provider
    memory_watts_per_gb: Coefficient
    cpu_utilisation: Coefficient
    default_country: str

    def pue_for(self, provider: str, region: str | None) -> Coefficient | None:
        """Return the region's PUE where published, else the provider's average, else None."""
        return self.pue.get((provider, region)) or self.pue.get((provider, None))

    def grid_for(self, provider: str, region: str) -> Coefficient | None:
        """Return the region's grid intensity in g CO2e per kWh, or None when the table has none."""
        return self.grid_g_per_kwh.get((provider, region))


def _number(row: Mapping[str, Any], key: str, where: str, bounds: tuple[float, float]) -> float:
    """Return row[key] as a finite float within bounds, or raise naming the row."""
    value = row.get(key)
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise EnergyDataError(f"{where}.{key}: expected a number, got {value!r}")
    if not bounds[0] <= value <= bounds[1]:
        raise EnergyDataError(f"{where}.{key}: {value} outside {bounds[0]}-{bounds[1]}")
    return float(value)


def _source(row: Mapping[str, Any], where: str) -> str:
    """Return the row's source, refusing a row without one."""
    source = row.get("source")
    if not isinstance(source, str) or not source.strip():
        raise EnergyDataError(f"{where}.source: every coefficient needs its source")
    return source


def _year(row: Mapping[str, Any], where: str) -> int | None:
    """Return the row's data year (None allowed), refusing anything else."""
    year = row.get("data_year")
    if year is None:
        return None
    if not isinstance(year, int) or isinstance(year, bool) or not 1990 <= year <= 2100:
        raise EnergyDataError(f"{where}.data_year: expected a year or null, got {year!r}")
    return year


def _unique(table: dict[Any, Any], key: object, value: object, where: str) -> None:
    """Insert value under key, refusing a duplicate key."""
    if key in table:
        raise EnergyDataError(f"{where}: duplicate entry for {key!r}")
    table[key] = value


def parse_energy(doc: Mapping[str, Any]) -> EnergyTable:
    """Build the energy table from its JSON document, or raise EnergyDataError naming the bad row."""
    pue: dict[tuple[str, str | None], Coefficient] = {}
    for i, row in enumerate(doc.get("pue", [])):
        where = f"pue[{i}]"
        key = (str(row.get("provider")), row.get("region"))
        _unique(pue, key, Coefficient(_number(row, "pue", where, _PUE_RANGE), _source(row, where),
                                      _year(row, where)), where)
    grid: dict[tuple[str, str], Coefficient] = {}
    for i, row in enumerate(doc.get("grid", [])):
        where = f"grid[{i}]"
        _unique(grid, (str(row.get("provider")), str(row.get("region"))),
                Coefficient(_number(row, "g_co2e_per_kwh", where, _GRID_RANGE_G_PER_KWH), _source(row, where),
                            _year(row, where)), where)
    countries: dict[str, Coefficient] = {}
    for i, row in enumerate(doc.get("countries", [])):
        where = f"countries[{i}]"
        _unique(countries, str(row.get("country")),
                Coefficient(_number(row, "g_co2e_per_kwh", where, _GRID_RANGE_G_PER_KWH), _source(row, where),
                            _year(row, where)), where)
    host: dict[str, HostPower] = {}
    for i, row in enumerate(doc.get("host", [])):
        where = f"host[{i}]"
        low = _number(row, "min_watts_per_vcpu", where, _WATTS_PER_VCPU_RANGE)
        high = _number(row, "max_watts_per_vcpu", where, _WATTS_PER_VCPU_RANGE)
        if high < low:
            raise EnergyDataError(f"{where}: max_watts_per_vcpu below min_watts_per_vcpu")
        _unique(host, str(row.get("provider")), HostPower(low, high, _source(row, where)), where)
    memory = doc.get("memory_watts_per_gb", {})
    utilisation = doc.get("cpu_utilisation", {})
    default_country = str(doc.get("default_country", ""))
    if default_country not in countries:
        raise EnergyDataError(f"default_country: {default_country!r} has no row in countries")
    return EnergyTable(
        version=str(doc.get("version", "")), pue=pue, grid_g_per_kwh=grid, country_g_per_kwh=countries, host=host,
        memory_watts_per_gb=Coefficient(_number(memory, "value", "memory_watts_per_gb", (0.0, 10.0)),
                                        _source(memory, "memory_watts_per_gb")),
        cpu_utilisation=Coefficient(_number(utilisation, "value", "cpu_utilisation", (0.0, 1.0)),
                                    _source(utilisation, "cpu_utilisation")),
        default_country=default_country,
    )


@lru_cache(maxsize=1)
def load_energy(path: Path = ENERGY_PATH) -> EnergyTable:
    """Return the bundled energy table (read once), or raise EnergyDataError."""
    return parse_energy(json.loads(path.read_text(encoding="utf-8")))
