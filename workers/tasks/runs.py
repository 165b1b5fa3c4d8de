"""The reported runs: stored in Redis beside the job queue, or in a local file in the embedded mode.

A run is kept as the JSON RunSchema dumps (the validated spec, the GPU, the measured figures, when it
was recorded and what the plain model predicted then). Both stores keep a revision that changes with
every write, so that a recommendation's job id (and any cached calibration) changes when the runs do.
RedisRunStore (workers/tasks/runs_redis.py) is kept apart so that the CLI's estimate imports no Redis client.
The file store writes a new file and renames it over the old one (atomic on POSIX), under a lock,
so that a crash mid-write leaves the last complete file, and a restart loses nothing.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Protocol

from catalog.types import Catalog, CatalogSummary
from workers.schemas.specs import build_job
from workers.sizing.errors import SizingError
from workers.sizing.reported import (
    NO_CALIBRATION,
    Calibration,
    ReportedRun,
    RunRefused,
    check_run,
    fit_calibration,
    predicted_iteration_ms,
)

log = logging.getLogger(__name__)


class RunStoreUnavailable(Exception):
    """The store cannot be read or written now (Redis down, an unreadable file)."""


class RunStore(Protocol):
    """Where reported runs live."""

    def add(self, record: Mapping[str, Any]) -> None:
        """Store one run (its "id" is its key)."""

    def list(self) -> list[dict[str, Any]]:
        """Return every stored run, oldest first."""

    def remove(self, run_id: str) -> bool:
        """Delete one run; False when there was none."""

    def revision(self) -> str:
        """Return a token that changes with every add and remove ("" while nothing was ever stored)."""


class FileRunStore:
    """Runs in one JSON file, rewritten whole (atomically) on every change."""

    _locks: ClassVar[dict[str, threading.Lock]] = {}

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._lock = self._locks.setdefault(str(self._path.resolve()), threading.Lock())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self._path.with_suffix(self._path.suffix + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # other processes (a CLI beside the server)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self) -> list[dict[str, Any]]:
        if not self._path.exists():
            return []
        try:
            data = json.loads(self._path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise RunStoreUnavailable(f"cannot read {self._path}: {error}") from error
        runs: list[dict[str, Any]] = data.get("runs", [])
        return runs

    def _write(self, runs: Sequence[Mapping[str, Any]]) -> None:
        tmp = self._path.with_suffix(self._path.suffix + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"format": 1, "runs": list(runs)}, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self._path)

    def add(self, record: Mapping[str, Any]) -> None:
        """Append one run."""
        with self._locked():
            self._write([*self._read(), dict(record)])

    def list(self) -> list[dict[str, Any]]:
        """Return every run, oldest first."""
        with self._locked():
            return self._read()

    def remove(self, run_id: str) -> bool:
        """Delete one run."""
        with self._locked():
            runs = self._read()
            kept = [r for r in runs if r["id"] != run_id]
            if len(kept) == len(runs):
                return False
            self._write(kept)
            return True

    def revision(self) -> str:
        """Return a digest of the file (empty while there is none)."""
        try:
            return hashlib.sha256(self._path.read_bytes()).hexdigest()[:16]
        except FileNotFoundError:
            return ""


def default_runs_file() -> Path:
    """Return where the embedded mode keeps runs when RUNS_FILE is not set: the user's data directory."""
    return Path.home() / ".local" / "share" / "gpugauge" / "runs.json"


def reported_run(record: Mapping[str, Any]) -> ReportedRun:
    """Build the core's ReportedRun from a stored record."""
    return ReportedRun(run_id=str(record["id"]), job=build_job(record["spec"]), gpu=record["gpu"],
                       gpu_count=int(record["gpu_count"]), iteration_ms=float(record["iteration_ms"]),
                       peak_memory_bytes=record.get("peak_memory_bytes"), source=record.get("source", ""))


def record_run(store: RunStore, report: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """Check a validated report against the plain model (RunRefused when absurd), store it, return the record."""
    record: dict[str, Any] = {**report, "id": uuid.uuid4().hex[:16],
                              "recorded_at": datetime.now(UTC).isoformat(timespec="seconds")}
    known = {g.slug: g for g in catalog.gpus}
    try:
        run = reported_run(record)
        ratio = check_run(run, known)
    except RunRefused:
        raise
    except SizingError as error:  # the spec the core refuses: name the field within the report
        raise type(error)(f"spec.{error.field}", error.reason) from error
    record["predicted_iteration_ms"] = predicted_iteration_ms(run, known[run.gpu])
    record["ratio"] = ratio
    store.add(record)
    return record


def runs_revision(store: RunStore | None) -> str:
    """Return the store's revision, or "" when there is no store or it cannot be read now."""
    if store is None:
        return ""
    try:
        return store.revision()
    except RunStoreUnavailable:
        return ""


_fitted: dict[tuple[int, str, str], Calibration] = {}
_last_good: dict[int, Calibration] = {}


def calibration_for(store: RunStore | None, catalog: Catalog | CatalogSummary, *,
                    revision: str | None = None) -> Calibration:
    """Return the corrections fitted from the stored runs, refitted only when the runs or catalog change.

    `revision`: the store's revision as the caller already read it (the API passes the one its job id
    was made from to the worker), so that it is not read again. Sizing needs no Redis: when the store
    cannot be read, the last corrections this process fitted from it are used (none before the first),
    and the estimates say which runs those were.
    """
    if store is None:
        return NO_CALIBRATION
    try:
        key = (id(store), store.revision() if revision is None else revision, catalog.version)
        if key not in _fitted:
            known = {g.slug: g for g in catalog.gpus}
            fitted = fit_calibration((reported_run(r) for r in store.list()), known)
            _fitted.clear()  # one live entry per process is enough: the newest revision
            _fitted[key] = fitted
    except RunStoreUnavailable as error:
        log.warning("reported runs unreadable (%s); estimating with the last corrections fitted", error)
        return _last_good.get(id(store), NO_CALIBRATION)
    _last_good[id(store)] = _fitted[key]
    return _fitted[key]
