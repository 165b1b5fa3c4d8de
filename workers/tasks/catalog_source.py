"""Where a process reads its catalog: Redis (with a local copy of the last version read), files, or the snapshot.

With Redis, each version read is also copied to a local file, so that a process started while Redis is
down still serves the catalog it last saw (else the bundled snapshot) instead of failing to start;
workers/tasks/runtime.py's CatalogCache calls `fallback` then, and keeps trying `load` until Redis answers.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.gpus import load_gpus
from catalog.loader import build_catalog, current_version_name, load_catalog
from catalog.payload import CatalogDataError
from catalog.store import FileCatalogStore, LocalCopy, RedisCatalogStore
from catalog.types import Catalog
from catalog.validate import CatalogValidationError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CatalogSource:
    """How to load the current catalog, and what to serve when that fails before anything was loaded."""

    load: Callable[[], Catalog]
    fallback: Callable[[], Catalog] | None = None
    current_name: Callable[[], str] | None = None  # the version `load` would load, read without loading it


def default_copy_path(redis_url: str) -> Path:
    """Return where the local copy of a Redis catalog lives by default: the user's cache, one file per Redis."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "gpugauge" / f"catalog-{hashlib.sha256(redis_url.encode()).hexdigest()[:12]}.json"


def catalog_source(*, redis: Any = None, data_dir: str | None = None, copy_path: str | None = None) -> CatalogSource:
    """Return the source for a process: Redis (a client) with its copy at `copy_path`, a directory, or none."""
    if redis is None:
        store = FileCatalogStore(data_dir) if data_dir else None
        return CatalogSource(load=lambda: load_catalog(store=store),
                             current_name=lambda: current_version_name(store=store))
    return _redis_source(RedisCatalogStore(redis), LocalCopy(copy_path) if copy_path else None)


def _redis_source(store: RedisCatalogStore, copy: LocalCopy | None) -> CatalogSource:
    copied: list[str] = []  # the version last written to the copy, so that a reload rewrites nothing

    def load() -> Catalog:
        rows = store.current()  # CatalogStoreError when Redis does not answer
        if rows is None:
            return load_catalog(store=None)  # no refresh has run: the bundled snapshot
        catalog = build_catalog(rows, load_gpus())
        if copy is not None and copied[-1:] != [rows.version]:
            try:
                copy.save(rows)
                copied[:] = [rows.version]
            except OSError as exc:
                log.warning("catalog %s not copied to %s: %s", rows.version, copy.path, exc)
        return catalog

    def fallback() -> Catalog:
        rows = copy.load() if copy is not None else None
        if copy is not None and rows is not None:
            try:
                return build_catalog(rows, load_gpus())
            except (CatalogDataError, CatalogValidationError) as exc:
                log.warning("local catalog copy %s refused (%s); using the bundled snapshot", copy.path, exc)
        return load_catalog(store=None)

    return CatalogSource(load=load, fallback=fallback, current_name=lambda: current_version_name(store=store))
