"""Which catalog store a CLI command reads: light, so that commands other than `catalog` need not import its
refresh, import and listing machinery (issue 17: `gpugauge estimate` imports only what it uses)."""

from __future__ import annotations

import os

from catalog.store import CatalogStore, FileCatalogStore, RedisCatalogStore

DEFAULT_DATA_DIR = "var"  # where a refresh keeps versions when neither --data-dir, REDIS_URL nor the env say


def open_store(*, data_dir: str | None = None, for_writing: bool = False) -> CatalogStore | None:
    """Return the store this machine is configured for: --data-dir, REDIS_URL, $GPUGAUGE_CATALOG_DIR."""
    if data_dir:
        return FileCatalogStore(data_dir)
    if os.environ.get("REDIS_URL"):
        return RedisCatalogStore(url=os.environ["REDIS_URL"])
    directory = os.environ.get("GPUGAUGE_CATALOG_DIR")
    if directory or for_writing:
        return FileCatalogStore(directory or DEFAULT_DATA_DIR)
    return None
