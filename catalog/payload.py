"""The one JSON shape of a catalog version (bundled snapshot, file store, Redis) and its strict parser."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

from catalog.freshness import UNKNOWN
from catalog.types import BlockStoragePrice, Exclusion, InstanceType, Offer, OnPremCard, Pricing, Provider

FORMAT = 1
_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?)?$")  # a month, a day or a time
_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$")


class CatalogDataError(ValueError):
    """A catalog version is malformed; the message names the first bad field, e.g. `offers[3].region`."""


@dataclass(frozen=True)
class CatalogRows:
    """Everything of one catalog version except the GPU table, which lives in catalog/data/gpus.json."""

    version: str
    prices_as_of: str  # catalog.freshness.oldest_price_date of the offers: an ISO date or "unknown"
    sources: tuple[str, ...]
    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    block_storage: tuple[BlockStoragePrice, ...]
    onprem_cards: tuple[OnPremCard, ...]
    excluded: tuple[Exclusion, ...] = ()  # prices left out by the plausibility checks, with the reason


def _row(obj: Any) -> dict[str, Any]:
    out = asdict(obj)
    for key, value in out.items():
        if isinstance(value, Provider | Pricing):
            out[key] = value.value
    return out


def rows_to_payload(rows: CatalogRows) -> dict[str, Any]:
    """Return the JSON-able document of a catalog version."""
    return {
        "format": FORMAT,
        "version": rows.version,
        "prices_as_of": rows.prices_as_of,
        "sources": list(rows.sources),
        "instances": [_row(r) for r in rows.instances],
        "offers": [_row(r) for r in rows.offers],
        "block_storage": [_row(r) for r in rows.block_storage],
        "onprem_cards": [_row(r) for r in rows.onprem_cards],
        "excluded": [_row(r) for r in rows.excluded],
    }


class _Reader:
    """Typed access to one JSON object that names the field path in every error."""

    def __init__(self, obj: Any, path: str) -> None:
        if not isinstance(obj, dict):
            raise CatalogDataError(f"{path}: expected an object, got {type(obj).__name__}")
        self.obj, self.path = obj, path

    def _get(self, key: str) -> Any:
        if key not in self.obj:
            raise CatalogDataError(f"{self.path}.{key}: missing")
        return self.obj[key]

    def text(self, key: str, *, empty: bool = False) -> str:
        value = self._get(key)
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise CatalogDataError(f"{self.path}.{key}: expected a non-empty string, got {value!r}")
        return value

    def date(self, key: str) -> str:
        value = self.text(key)
        if not _DATE.match(value):
            raise CatalogDataError(f"{self.path}.{key}: expected an ISO date, got {value!r}")
        return value

    def date_or_none(self, key: str) -> str | None:
        return None if self._get(key) is None else self.date(key)

    def date_or_unknown(self, key: str) -> str:
        return UNKNOWN if self._get(key) in (None, UNKNOWN) else self.date(key)

    def integer(self, key: str) -> int:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise CatalogDataError(f"{self.path}.{key}: expected a whole number >= 0, got {value!r}")
        return value

    def number(self, key: str) -> float:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise CatalogDataError(f"{self.path}.{key}: expected a finite number, got {value!r}")
        return float(value)

    def choice(self, key: str, enum: type[Provider] | type[Pricing]) -> Any:
        value = self._get(key)
        try:
            return enum(value)
        except ValueError:
            valid = ", ".join(m.value for m in enum)
            raise CatalogDataError(f"{self.path}.{key}: {value!r} is not one of {valid}") from None


def _list(doc: _Reader, key: str) -> list[Any]:
    value = doc._get(key)
    if not isinstance(value, list):
        raise CatalogDataError(f"{key}: expected a list")
    return value


def _instance(r: _Reader) -> InstanceType:
    return InstanceType(
        provider=r.choice("provider", Provider),
        instance_type=r.text("instance_type"),
        gpu=r.text("gpu"),
        gpu_count=r.integer("gpu_count"),
        vcpus=r.integer("vcpus"),
        host_memory_bytes=r.integer("host_memory_bytes"),
        local_storage_bytes=r.integer("local_storage_bytes"),
        cpu_model=r.text("cpu_model"),
        cpu_single_thread_score=r.number("cpu_single_thread_score"),
        network_gbit_per_s=r.number("network_gbit_per_s"),
        source=r.text("source"),
        source_date=r.date("source_date"),
    )


def _offer(r: _Reader) -> Offer:
    return Offer(
        provider=r.choice("provider", Provider),
        instance_type=r.text("instance_type"),
        region=r.text("region"),
        pricing=r.choice("pricing", Pricing),
        price_per_hour_usd=r.number("price_per_hour_usd"),
        source=r.text("source"),
        as_of=r.date_or_none("as_of"),
    )


def _excluded(r: _Reader) -> Exclusion:
    return Exclusion(
        provider=r.choice("provider", Provider),
        item=r.text("item"),
        region=r.text("region"),
        pricing=r.choice("pricing", Pricing),
        price_per_hour_usd=r.number("price_per_hour_usd"),
        check=r.text("check"),
        reason=r.text("reason"),
    )


def _storage(r: _Reader) -> BlockStoragePrice:
    return BlockStoragePrice(
        provider=r.choice("provider", Provider),
        region=r.text("region"),
        kind=r.text("kind"),
        price_per_gb_month_usd=r.number("price_per_gb_month_usd"),
        source=r.text("source"),
        as_of=r.date_or_none("as_of"),
    )


def _card(r: _Reader) -> OnPremCard:
    return OnPremCard(
        gpu=r.text("gpu"),
        price_usd=r.number("price_usd"),
        power_watts=r.integer("power_watts"),
        source=r.text("source"),
        as_of=r.date("as_of"),
    )


class PriceDate(NamedTuple):
    """What an offer says about its price's age: its provider, pricing kind and as_of (catalog.freshness)."""

    provider: Provider
    pricing: Pricing
    as_of: str | None


def _version(doc: _Reader) -> str:
    if doc._get("format") != FORMAT:
        raise CatalogDataError(f"format: expected {FORMAT}, got {doc.obj.get('format')!r}")
    version = doc.text("version")
    if not _VERSION.match(version):
        raise CatalogDataError(f"version: {version!r} is not a version name (letters, digits, '.', '-', '_')")
    return version


def payload_price_dates(document: Any) -> tuple[str, tuple[PriceDate, ...]]:
    """Return a catalog document's version and each offer's price date, read as strictly as payload_to_rows.

    Only the fields the catalog's price dates come from are read (an offer's other fields, and the
    instances, are neither parsed nor checked): enough for an answer that uses no offer (`gpugauge estimate`).
    """
    doc = _Reader(document, "catalog")
    version = _version(doc)
    dates = []
    for i, o in enumerate(_list(doc, "offers")):
        r = _Reader(o, f"offers[{i}]")
        dates.append(PriceDate(r.choice("provider", Provider), r.choice("pricing", Pricing), r.date_or_none("as_of")))
    return version, tuple(dates)


def payload_to_rows(document: Any) -> CatalogRows:
    """Parse a catalog document strictly; CatalogDataError names the first malformed field."""
    doc = _Reader(document, "catalog")
    version = _version(doc)
    sources = _list(doc, "sources")
    if not all(isinstance(s, str) and s.strip() for s in sources):
        raise CatalogDataError("sources: expected a list of non-empty strings")
    excluded = doc.obj.get("excluded", [])  # optional: versions written before the plausibility checks
    if not isinstance(excluded, list):
        raise CatalogDataError("excluded: expected a list")
    return CatalogRows(
        version=version,
        prices_as_of=doc.date_or_unknown("prices_as_of"),
        sources=tuple(sources),
        instances=tuple(
            _instance(_Reader(o, f"instances[{i}]")) for i, o in enumerate(_list(doc, "instances"))
        ),
        offers=tuple(_offer(_Reader(o, f"offers[{i}]")) for i, o in enumerate(_list(doc, "offers"))),
        block_storage=tuple(
            _storage(_Reader(o, f"block_storage[{i}]")) for i, o in enumerate(_list(doc, "block_storage"))
        ),
        onprem_cards=tuple(
            _card(_Reader(o, f"onprem_cards[{i}]")) for i, o in enumerate(_list(doc, "onprem_cards"))
        ),
        excluded=tuple(_excluded(_Reader(o, f"excluded[{i}]")) for i, o in enumerate(excluded)),
    )
