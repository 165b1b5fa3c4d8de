"""What a running app holds besides Flask's own: the job store, the task queue and the catalog."""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from flask import Flask, current_app

from catalog.types import Catalog
from workers.tasks.jobs import JobStore
from workers.tasks.queues import TaskQueue
from workers.tasks.runs import RunStore

log = logging.getLogger(__name__)

EXTENSION = "gpugauge"


class CatalogCache:
    """The current catalog, loaded on first use and reloaded every `reload_s` (a refresh may change it).

    When the first load fails (Redis down at start) and a `fallback` is given, the fallback's catalog is
    served (the last version copied locally, else the bundled snapshot) and the loader is tried again
    every `retry_s` until it answers; its version then replaces the fallback's.

    With `current_name` (the store's pointer, read without the catalog), a reload first compares that
    name with the version held and reads nothing more when they are equal.
    """

    def __init__(self, loader: Callable[[], Catalog], *, reload_s: float,
                 fallback: Callable[[], Catalog] | None = None, retry_s: float = 5.0,
                 current_name: Callable[[], str] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._loader = loader
        self._fallback = fallback
        self._current_name = current_name
        self._reload_s = reload_s
        self._retry_s = min(retry_s, reload_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._loaded_at = 0.0
        self._degraded = False

    @property
    def degraded(self) -> bool:
        """Whether the catalog served is the fallback's, because the loader has not answered yet."""
        return self._degraded

    def _fresh(self, now: float) -> bool:
        return self._catalog is not None and now - self._loaded_at < (
            self._retry_s if self._degraded else self._reload_s)

    def get(self) -> Catalog:
        """Return the catalog; a failed reload keeps serving the last good one."""
        catalog, now = self._catalog, self._clock()
        if catalog is not None and self._fresh(now):
            return catalog
        with self._lock:
            if self._catalog is not None and self._fresh(now):
                return self._catalog
            try:
                if self._catalog is not None and self._current_name is not None \
                        and self._current_name() == self._catalog.version:
                    self._loaded_at, self._degraded = now, False  # the store answered: it holds this version
                    return self._catalog
                loaded = self._loader()
            except Exception as error:
                self._keep_after(error)
            else:
                if self._degraded:
                    log.warning("catalog store answers again: version %s replaces %s", loaded.version,
                                self._catalog.version if self._catalog else None)
                # The same version keeps the same object, and so whatever the ranking cached for it.
                if self._catalog is None or loaded.version != self._catalog.version:
                    self._catalog = loaded
                self._degraded = False
            self._loaded_at = now
            assert self._catalog is not None  # _keep_after raised otherwise
            return self._catalog

    def _keep_after(self, error: Exception) -> None:
        if self._catalog is not None:
            if not self._degraded:
                log.warning("catalog reload failed (%s: %s); keeping version %s", type(error).__name__,
                            error, self._catalog.version)
            return
        if self._fallback is None:
            raise error
        self._catalog = self._fallback()
        self._degraded = True
        log.warning("catalog store unreachable at start (%s: %s); serving version %s (the last local copy, "
                    "else the bundled snapshot) and trying again every %.0f s", type(error).__name__, error,
                    self._catalog.version, self._retry_s)


@dataclass(frozen=True)
class Runtime:
    """The app's job store, task queue and catalog, and whether it runs embedded."""

    jobs: JobStore
    queue: TaskQueue
    catalog: CatalogCache
    embedded: bool
    runs: RunStore | None = None  # reported runs (workers/tasks/runs.py); None: no calibration


def runtime(app: Flask | None = None) -> Runtime:
    """Return the runtime of `app` (default: the current app)."""
    found: Runtime = (app or current_app).extensions[EXTENSION]
    return found


def settle(app: Flask) -> None:
    """Ready a long-lived process (a gunicorn worker, a Celery worker before it forks): warm, then frozen.

    It loads the catalog and builds what every job's first use would otherwise build inside a request
    (the ranking's catalog index, ~60 ms; Celery's backend and message machinery, ~25 ms, looked up
    through entry points), then gc.freeze() moves every object alive now (the catalog's ~100,000, the
    imported modules) into the permanent generation, which the collector never scans. Without it each
    full collection walked them all: 100-250 ms every 30-odd recommendation jobs in a worker (measured
    with gc.callbacks, 200 jobs of examples/resnet50-imagenet.json: 6 full collections, 0.7-0.9 s in
    all; frozen, 15 ms), the p99 of a job. A Celery worker's pool processes, forked after this, inherit
    the frozen generation and the index. Nothing here needs Redis.
    """
    from workers.ranking.catalog_index import catalog_index  # the ranking's, imported when a process readies

    catalog_index(runtime(app).catalog.get())
    celery = app.extensions.get("celery")
    if celery is not None:
        _ = celery.backend, celery.amqp.producer_pool  # built on first use otherwise: the first job's submit
    gc.freeze()
