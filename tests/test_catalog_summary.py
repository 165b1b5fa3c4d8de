"""load_catalog_summary gives the version, price date and GPUs load_catalog gives, without the offers (issue 17)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog.gpus import load_gpus
from catalog.loader import SNAPSHOT_DIR, load_catalog, load_catalog_summary, load_snapshot_rows
from catalog.payload import CatalogDataError
from catalog.store import FileCatalogStore
from catalog.types import Catalog, CatalogSummary


def _summary_of(catalog: Catalog) -> CatalogSummary:
    return CatalogSummary(version=catalog.version, prices_as_of=catalog.prices_as_of, gpus=catalog.gpus)


def _snapshot_copy(directory: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    """Write the bundled snapshot, edited, under `directory`; return the directory."""
    manifest = json.loads((SNAPSHOT_DIR / "manifest.json").read_text())
    document = json.loads((SNAPSHOT_DIR / manifest["file"]).read_text())
    edit(document)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    (directory / manifest["file"]).write_text(json.dumps(document))
    return directory


def _date_every_offer(document: dict[str, Any]) -> None:
    """Give each offer a date: AWS 2026-05-0x, GCP 2026-06-1x, the oldest a spot row (spot counts)."""
    for i, offer in enumerate(document["offers"]):
        offer["as_of"] = f"2026-05-0{1 + i % 9}" if offer["provider"] == "aws" else f"2026-06-1{i % 10}"
    spot = next(o for o in document["offers"] if o["provider"] == "gcp" and o["pricing"] == "spot")
    spot["as_of"] = "2026-04-02"


def _carry_an_older_commitment(document: dict[str, Any]) -> None:
    """Add an AWS 1-year commitment dated before every other price: it must not date the catalog."""
    _date_every_offer(document)
    on_demand = next(o for o in document["offers"] if o["provider"] == "aws" and o["pricing"] == "on_demand")
    document["offers"].append({**on_demand, "pricing": "committed_1y", "as_of": "2019-01-01",
                               "price_per_hour_usd": round(on_demand["price_per_hour_usd"] * 0.6, 4)})


def test_the_bundled_snapshots_summary_is_the_full_catalogs() -> None:
    assert load_catalog_summary() == _summary_of(load_catalog())


@pytest.mark.parametrize(("edit", "expected"), [(_date_every_offer, "2026-04-02"),
                                                (_carry_an_older_commitment, "2026-04-02")])
def test_a_dated_snapshots_summary_is_the_full_catalogs(tmp_path: Path, edit: Callable[[dict[str, Any]], None],
                                                        expected: str) -> None:
    directory = _snapshot_copy(tmp_path, edit)
    summary = load_catalog_summary(snapshot_dir=directory)
    assert summary == _summary_of(load_catalog(snapshot_dir=directory))
    assert summary.prices_as_of == expected


def test_one_undated_price_makes_the_summarys_date_unknown(tmp_path: Path) -> None:
    def edit(document: dict[str, Any]) -> None:
        _date_every_offer(document)
        document["offers"][-1]["as_of"] = None

    assert load_catalog_summary(snapshot_dir=_snapshot_copy(tmp_path, edit)).prices_as_of == "unknown"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["offers"][3].__setitem__("as_of", "last week"), r"offers\[3\].as_of"),
        (lambda d: d["offers"][7].__setitem__("pricing", "reserved"), r"offers\[7\].pricing"),
        (lambda d: d["offers"][2].pop("provider"), r"offers\[2\].provider: missing"),
        (lambda d: d.__setitem__("version", "skypilot-v9"), "manifest.json names version"),
        (lambda d: d.__setitem__("format", 2), "format"),
    ],
)
def test_a_summary_refuses_a_malformed_snapshot_naming_the_field(tmp_path: Path, edit: Any, field: str) -> None:
    with pytest.raises(CatalogDataError, match=field):
        load_catalog_summary(snapshot_dir=_snapshot_copy(tmp_path, edit))


def test_a_stores_version_is_summarised_as_load_catalog_loads_it(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path)
    rows = load_snapshot_rows()
    store.write_version(dataclasses.replace(rows, version="2026-12-01.1"), gpus=load_gpus())
    summary = load_catalog_summary(store=store)
    assert summary.version == "2026-12-01.1"
    assert summary == _summary_of(load_catalog(store=store))
