"""Load the catalog: the store's current version when a refresh has run, else the bundled snapshot.

`load_catalog` parses and validates every row; `load_catalog_summary` reads only what an answer that
uses no offer needs (version, price dates, GPU table), so that `gpugauge estimate` need not (issue 17).
"""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from catalog.commitments import COMMITTED, committed_offers
from catalog.freshness import oldest_price_date, prices_as_of_by_provider, undated_sources
from catalog.gpus import load_gpus
from catalog.payload import CatalogDataError, CatalogRows, payload_price_dates, payload_to_rows
from catalog.store import CatalogStore
from catalog.types import Catalog, CatalogSummary, GpuSpec

SNAPSHOT_DIR = Path(__file__).resolve().parent / "data" / "instances"


def _read_snapshot(directory: Path) -> tuple[dict[str, Any], str, Any]:
    """Return the manifest, the snapshot's file name and its JSON document."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
        name = manifest["file"]
        if not isinstance(name, str) or "/" in name or "\\" in name:
            raise CatalogDataError(f"manifest.json: file {name!r} is not a file name")
        return manifest, name, json.loads((directory / name).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CatalogDataError(f"bundled catalog snapshot in {directory} is unreadable: {exc}") from exc


def _check_manifest(manifest: dict[str, Any], name: str, version: str) -> None:
    if version != manifest.get("current"):
        raise CatalogDataError(f"manifest.json names version {manifest.get('current')!r} but {name} holds {version!r}")


def load_snapshot_rows(directory: Path = SNAPSHOT_DIR) -> CatalogRows:
    """Read the bundled snapshot the manifest names; CatalogDataError when it is missing or malformed."""
    manifest, name, document = _read_snapshot(directory)
    rows = payload_to_rows(document)
    _check_manifest(manifest, name, rows.version)
    return rows


@lru_cache(maxsize=1)
def _bundled(directory: Path) -> CatalogRows:
    return load_snapshot_rows(directory)


def build_catalog(rows: CatalogRows, gpus: tuple[GpuSpec, ...]) -> Catalog:
    """Validate rows against the GPU table and wrap them as a Catalog, its price dates read from the offers.

    Committed-use offers are derived here from the on-demand rows (catalog/commitments.py) for each
    provider whose rows carry none already (an AWS refresh brings its reserved rates), and are validated
    with the rest (a committed rate must lie below on-demand).
    """
    carried = {o.provider for o in rows.offers if o.pricing in COMMITTED}  # e.g. AWS reserved, fetched
    derived = tuple(committed_offers(o for o in rows.offers if o.provider not in carried))
    if derived:
        new_sources = tuple(dict.fromkeys(o.source for o in derived if o.source not in rows.sources))
        rows = dataclasses.replace(rows, offers=rows.offers + derived, sources=rows.sources + new_sources)
    from catalog.validate import validate_rows  # with the plausibility checks: not for a summary

    validate_rows(rows, gpus=gpus)
    # The catalog's price dates are those of the pay-as-you-go rows that answers use by default; a
    # committed offer carries its own as_of (the older of its on-demand row's and its rate's).
    dated = tuple(o for o in rows.offers if o.pricing not in COMMITTED)
    return Catalog(
        version=rows.version,
        prices_as_of=oldest_price_date(dated),
        sources=rows.sources,
        gpus=gpus,
        instances=rows.instances,
        offers=rows.offers,
        block_storage=rows.block_storage,
        onprem_cards=rows.onprem_cards,
        prices_as_of_by_provider=prices_as_of_by_provider(dated),
        excluded=rows.excluded,
        undated_sources=undated_sources(dated),
    )


def load_catalog(*, store: CatalogStore | None = None, snapshot_dir: Path = SNAPSHOT_DIR) -> Catalog:
    """Return the current catalog, validated; raise CatalogDataError or CatalogValidationError loudly."""
    rows = store.current() if store is not None else None
    if rows is None:
        rows = _bundled(snapshot_dir)
    return build_catalog(rows, load_gpus())


@lru_cache(maxsize=1)
def _bundled_summary(directory: Path) -> tuple[str, str]:
    manifest, name, document = _read_snapshot(directory)
    version, dates = payload_price_dates(document)
    _check_manifest(manifest, name, version)
    # as build_catalog dates a catalog: by its pay-as-you-go rows (committed ones, derived or carried, excluded)
    return version, oldest_price_date(d for d in dates if d.pricing not in COMMITTED)


def load_catalog_summary(*, store: CatalogStore | None = None, snapshot_dir: Path = SNAPSHOT_DIR) -> CatalogSummary:
    """Return the current catalog's version, price date and GPU table, as load_catalog would give them.

    The bundled snapshot is read for its version and its offers' dates only: neither its other rows nor
    the validation are needed for an answer that prices nothing, and the snapshot shipped is the one
    tests validate (tests/test_catalog_snapshot.py). A store's version is loaded and validated whole, as
    load_catalog does. Raises CatalogDataError for a malformed snapshot.
    """
    rows = store.current() if store is not None else None
    if rows is not None:
        full = build_catalog(rows, load_gpus())
        return CatalogSummary(version=full.version, prices_as_of=full.prices_as_of, gpus=full.gpus)
    version, prices_as_of = _bundled_summary(snapshot_dir)
    return CatalogSummary(version=version, prices_as_of=prices_as_of, gpus=load_gpus())


def current_version_name(*, store: CatalogStore | None = None, snapshot_dir: Path = SNAPSHOT_DIR) -> str:
    """Return the name of the version `load_catalog` would load, reading only the store's pointer.

    A process that holds a catalog compares this name with the one it holds before reloading, so an
    unchanged catalog costs one small read instead of a parse and validation of every offer.
    """
    name = store.current_name() if store is not None else None
    return name if name is not None else _bundled(snapshot_dir).version
