"""What a running app holds besides Flask's own: the job store, the task queue and the catalog."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, current_app

from catalog.types import Catalog
from workers.tasks.jobs import JobStore
from workers.tasks.queues import TaskQueue

log = logging.getLogger(__name__)

EXTENSION = "gpugauge"


class CatalogCache:
    """The current catalog, loaded on first use and reloaded every `reload_s` (a refresh may change it)."""

    def __init__(self, loader: Callable[[], Catalog], *, reload_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._loader = loader
        self._reload_s = reload_s
        self._clock = clock
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._loaded_at = 0.0

    def get(self) -> Catalog:
        """Return the catalog; a failed reload keeps serving the last good one."""
        catalog, now = self._catalog, self._clock()
        if catalog is not None and now - self._loaded_at < self._reload_s:
            return catalog
        with self._lock:
            if self._catalog is not None and now - self._loaded_at < self._reload_s:
                return self._catalog
            try:
                loaded = self._loader()
            except Exception:
                if self._catalog is None:
                    raise
                log.exception("catalog reload failed; keeping version %s", self._catalog.version)
            else:
                # The same version keeps the same object, and so whatever the ranking cached for it.
                if self._catalog is None or loaded.version != self._catalog.version:
                    self._catalog = loaded
            self._loaded_at = now
            return self._catalog


@dataclass(frozen=True)
class Runtime:
    """The app's job store, task queue and catalog, and whether it runs embedded."""

    jobs: JobStore
    queue: TaskQueue
    catalog: CatalogCache
    embedded: bool


def runtime(app: Flask | None = None) -> Runtime:
    """Return the runtime of `app` (default: the current app)."""
    found: Runtime = (app or current_app).extensions[EXTENSION]
    return found
