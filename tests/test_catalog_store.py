"""Versioned stores (files, Redis): a write validates, switches current in one step, keeps the last good."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from catalog.gpus import load_gpus
from catalog.loader import load_catalog, load_snapshot_rows
from catalog.payload import CatalogDataError, CatalogRows
from catalog.store import (
    CatalogStoreError,
    FileCatalogStore,
    RedisCatalogStore,
    next_version,
    store_from_settings,
)
from catalog.validate import CatalogValidationError

REDIS_URL = "redis://127.0.0.1:6379/5"  # db 5: ours, away from the service tests


def version(name: str, *, factor: float = 1.0) -> CatalogRows:
    rows = load_snapshot_rows()
    offers = tuple(
        dataclasses.replace(o, price_per_hour_usd=o.price_per_hour_usd * factor) for o in rows.offers
    )
    return dataclasses.replace(rows, version=name, offers=offers)


def test_next_version_counts_up_within_a_day() -> None:
    assert next_version("2026-12-01", []) == "2026-12-01.1"
    assert next_version("2026-12-01", ["2026-12-01.1", "2026-12-01.9", "2026-11-30.4"]) == "2026-12-01.10"


def test_file_store_starts_empty_then_switches_to_each_new_version(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path, keep=2)
    assert store.current() is None
    gpus = load_gpus()
    for i in (1, 2, 3):
        store.write_version(version(f"2026-12-01.{i}", factor=1 + i / 100), gpus=gpus)
        current = store.current()
        assert current is not None and current.version == f"2026-12-01.{i}"
    assert store.versions() == ["2026-12-01.2", "2026-12-01.3"]  # the last good ones are kept


def test_a_version_is_never_overwritten(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path)
    store.write_version(version("v1"), gpus=load_gpus())
    with pytest.raises(CatalogStoreError, match="already exists"):
        store.write_version(version("v1", factor=2), gpus=load_gpus())


def test_an_invalid_version_is_not_written_at_all(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path)
    store.write_version(version("v1"), gpus=load_gpus())
    with pytest.raises(CatalogValidationError):
        store.write_version(version("v2", factor=-1), gpus=load_gpus())
    assert store.versions() == ["v1"]


def test_a_corrupt_current_file_fails_loudly_when_loading(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path)
    store.write_version(version("v1"), gpus=load_gpus())
    (store.root / "version-v1.json").write_text('{"format": 1, "version": "v1"', encoding="utf-8")
    with pytest.raises(CatalogStoreError, match="unreadable"):
        load_catalog(store=store)


def test_load_catalog_prefers_the_store_then_the_bundled_snapshot(tmp_path: Path) -> None:
    store = FileCatalogStore(tmp_path)
    assert load_catalog(store=store).version == load_snapshot_rows().version
    store.write_version(version("2026-12-01.1"), gpus=load_gpus())
    assert load_catalog(store=store).version == "2026-12-01.1"


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["offers"][0].__setitem__("price_per_hour_usd", "3.06"), "offers[0].price_per_hour_usd"),
        (lambda d: d["instances"][2].pop("vcpus"), "instances[2].vcpus: missing"),
        (lambda d: d["offers"][5].__setitem__("pricing", "reserved"), "offers[5].pricing"),
        (lambda d: d.__setitem__("prices_as_of", "last week"), "prices_as_of"),
        (
            lambda d: d["offers"][1].__setitem__("price_per_hour_usd", float("nan")),
            "offers[1].price_per_hour_usd",
        ),
    ],
)
def test_a_malformed_snapshot_is_refused_naming_the_field(tmp_path: Path, edit: Any, field: str) -> None:
    source = Path(__file__).resolve().parent.parent / "catalog" / "data" / "instances"
    manifest = json.loads((source / "manifest.json").read_text())
    document = json.loads((source / manifest["file"]).read_text())
    edit(document)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / manifest["file"]).write_text(json.dumps(document))
    with pytest.raises(CatalogDataError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load_snapshot_rows(tmp_path)


@pytest.fixture
def redis_store() -> Iterator[RedisCatalogStore]:
    client = redis.Redis.from_url(REDIS_URL)
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    yield RedisCatalogStore(client, prefix=prefix, keep=2)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    client.close()


def test_redis_store_switches_current_and_keeps_the_last_versions(redis_store: RedisCatalogStore) -> None:
    assert redis_store.current() is None
    for i in (1, 2, 3):
        redis_store.write_version(version(f"r{i}", factor=1 + i / 100), gpus=load_gpus())
    current = redis_store.current()
    assert current is not None and current.version == "r3"
    assert redis_store.versions() == ["r2", "r3"]
    assert redis_store.redis.get(redis_store._key("version", "r1")) is None


def test_a_failing_redis_transaction_leaves_current_unchanged(
    redis_store: RedisCatalogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis_store.write_version(version("r1"), gpus=load_gpus())

    class BrokenPipeline:
        def __getattr__(self, name: str) -> Any:
            if name == "execute":

                def fail() -> None:
                    raise redis.exceptions.ConnectionError("Connection reset by peer")

                return fail
            return lambda *a, **k: None

    monkeypatch.setattr(redis_store.redis, "pipeline", lambda transaction=True: BrokenPipeline())
    with pytest.raises(CatalogStoreError, match="Connection reset"):
        redis_store.write_version(version("r2", factor=1.1), gpus=load_gpus())
    current = redis_store.current()
    assert current is not None and current.version == "r1"


def test_redis_down_is_a_store_error_not_a_crash() -> None:
    store = RedisCatalogStore(url="redis://127.0.0.1:1/5")
    with pytest.raises(CatalogStoreError, match="Redis read failed"):
        store.current()


def test_settings_pick_redis_over_files_and_none_without_either(tmp_path: Path) -> None:
    assert isinstance(store_from_settings(redis_url=REDIS_URL, data_dir=str(tmp_path)), RedisCatalogStore)
    assert isinstance(store_from_settings(data_dir=str(tmp_path)), FileCatalogStore)
    assert store_from_settings() is None
