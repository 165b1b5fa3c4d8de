"""The task queues: the embedded thread pool serialises like a broker; Celery readiness fails fast."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

import pytest
from flask import Flask
from kombu.exceptions import EncodeError

from workers.ranking.catalog_index import _INDEXES
from workers.tasks.queues import CeleryQueue, ThreadQueue
from workers.tasks.recommend import RECOMMEND_TASK
from workers.tasks.runtime import runtime, settle


def test_the_embedded_queue_refuses_what_a_broker_could_not_carry(make_app: Callable[..., Flask]) -> None:
    queue = runtime(make_app()).queue
    assert isinstance(queue, ThreadQueue)
    with pytest.raises(EncodeError):
        queue.enqueue(RECOMMEND_TASK, "job", {"not-json": {1, 2}})


def test_the_embedded_queue_stops_taking_tasks_when_closed(make_app: Callable[..., Flask]) -> None:
    queue = runtime(make_app()).queue
    assert queue.unready_reason(timeout_s=0.1) is None
    queue.close()
    assert queue.unready_reason(timeout_s=0.1) is not None


def test_celery_readiness_answers_within_its_timeout_when_nothing_listens(
        make_app: Callable[..., Flask]) -> None:
    queue = runtime(make_app(REDIS_URL="redis://127.0.0.1:1/0")).queue  # port 1: refused at once
    assert isinstance(queue, CeleryQueue)
    started = time.monotonic()
    reason = queue.unready_reason(timeout_s=0.5)
    assert reason is not None and "Redis" in reason
    assert time.monotonic() - started < 1.0


def test_the_catalog_is_loaded_once_and_reloaded_only_as_a_new_version() -> None:
    from catalog.types import Catalog
    from workers.tasks.runtime import CatalogCache

    versions = iter(["v1", "v1", "v2"])
    loads: list[str] = []

    def loader() -> Catalog:
        loads.append(next(versions))
        return Catalog(version=loads[-1], prices_as_of="2026-01-01", sources=(), gpus=())

    now = [0.0]
    cache = CatalogCache(loader, reload_s=10, clock=lambda: now[0])
    first = cache.get()
    assert cache.get() is first and loads == ["v1"]
    now[0] = 11.0
    assert cache.get() is first  # the same version: the object its caches hang on is kept
    now[0] = 22.0
    assert cache.get().version == "v2" and loads == ["v1", "v1", "v2"]


def test_a_failed_catalog_reload_keeps_the_last_good_version() -> None:
    from catalog.types import Catalog
    from workers.tasks.runtime import CatalogCache

    calls: list[int] = []

    def loader() -> Catalog:
        calls.append(1)
        if len(calls) > 1:
            raise OSError("snapshot unreadable")
        return Catalog(version="v1", prices_as_of="2026-01-01", sources=(), gpus=())

    now = [0.0]
    cache = CatalogCache(loader, reload_s=10, clock=lambda: now[0])
    assert cache.get().version == "v1"
    now[0] = 11.0
    assert cache.get().version == "v1" and len(calls) == 2


def test_an_unchanged_catalog_is_not_read_again_when_its_current_name_is_known() -> None:
    from catalog.types import Catalog
    from workers.tasks.runtime import CatalogCache

    current = ["v1"]
    loads: list[str] = []
    asked: list[str] = []

    def loader() -> Catalog:
        loads.append(current[0])
        return Catalog(version=current[0], prices_as_of="2026-01-01", sources=(), gpus=())

    def name() -> str:
        asked.append(current[0])
        return current[0]

    now = [0.0]
    cache = CatalogCache(loader, reload_s=10, current_name=name, clock=lambda: now[0])
    first = cache.get()
    for step in range(1, 4):  # three reload intervals, the name unchanged: no load
        now[0] = 11.0 * step
        assert cache.get() is first
    assert loads == ["v1"] and len(asked) == 3
    current[0] = "v2"
    now[0] = 50.0
    assert cache.get().version == "v2" and loads == ["v1", "v2"]


def test_the_app_names_the_current_catalog_from_the_store_pointer_alone(tmp_path: object,
                                                                        make_app: Callable[..., Flask]) -> None:
    from pathlib import Path

    from catalog.loader import current_version_name, load_catalog
    from catalog.store import FileCatalogStore

    store = FileCatalogStore(Path(str(tmp_path)))
    assert current_version_name(store=store) == load_catalog().version  # nothing written: the snapshot
    (store.root).mkdir(parents=True)
    (store.root / "CURRENT").write_text("2030-01-01.1\n")  # a pointer only: the name, nothing read
    assert current_version_name(store=store) == "2030-01-01.1"


def test_a_process_is_settled_warm_and_frozen(make_app: Callable[..., Flask]) -> None:
    app = make_app()
    gc.unfreeze()
    try:
        settle(app)
        catalog = runtime(app).catalog.get()
        assert _INDEXES[id(catalog)][0] is catalog  # the ranking's index is built before any job
        assert gc.get_freeze_count() > 10_000  # the catalog's objects are out of the collector's reach
    finally:
        gc.unfreeze()
