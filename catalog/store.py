"""Versioned catalog store: files under a data directory, or Redis; one atomic switch to a new version.

A version is written whole, validated, and only then named current, in one step: `os.replace` of a small
pointer file (atomic on POSIX), or one Redis MULTI/EXEC. Older versions stay (the last `keep` of them), so
the last good version is always there; a write that fails anywhere leaves `current()` as it was.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from catalog.payload import CatalogRows, payload_to_rows, rows_to_payload
from catalog.types import GpuSpec

DEFAULT_KEEP = 5
_SAFE = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,63}$")


class CatalogStoreError(RuntimeError):
    """The store cannot be read or written (missing directory, Redis down, corrupt pointer)."""


class CatalogStore(Protocol):
    """Where refreshed catalog versions live."""

    def current(self) -> CatalogRows | None:
        """Return the current version, or None when no refresh has written one."""

    def current_name(self) -> str | None:
        """Return the current version's name without reading it, or None when none was written."""

    def versions(self) -> list[str]:
        """Return the stored version names, oldest first."""

    def write_version(
        self, rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
    ) -> str:
        """Validate `rows`, store them and make them current in one step; return the version name."""


def next_version(day: str, existing: Iterable[str]) -> str:
    """Return the next free version name for an ISO day, e.g. "2026-11-29.2" after "2026-11-29.1"."""
    taken = [
        int(v.rsplit(".", 1)[1])
        for v in existing
        if v.startswith(f"{day}.") and v.rsplit(".", 1)[1].isdigit()
    ]
    return f"{day}.{max(taken, default=0) + 1}"


def _check_name(version: str) -> str:
    if not _SAFE.match(version):
        raise CatalogStoreError(f"version name {version!r} is not safe to store")
    return version


class FileCatalogStore:
    """Catalog versions as JSON files under `data_dir/catalog/`, with a `CURRENT` pointer file."""

    def __init__(self, data_dir: str | os.PathLike[str], *, keep: int = DEFAULT_KEEP) -> None:
        self.root = Path(data_dir) / "catalog"
        self.keep = max(keep, 1)

    def _pointer(self) -> Path:
        return self.root / "CURRENT"

    def versions(self) -> list[str]:
        """Return the stored version names, oldest first (by write time)."""
        if not self.root.is_dir():
            return []
        files = sorted(self.root.glob("version-*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        return [p.name[len("version-") : -len(".json")] for p in files]

    def current_name(self) -> str | None:
        """Return the current version's name (the pointer file), or None when none was written."""
        try:
            return self._pointer().read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CatalogStoreError(f"cannot read {self._pointer()}: {exc}") from exc

    def current(self) -> CatalogRows | None:
        """Return the current version, or None when none was written."""
        name = self.current_name()
        if name is None:
            return None
        path = self.root / f"version-{_check_name(name)}.json"
        try:
            return payload_to_rows(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise CatalogStoreError(f"current catalog {path} is unreadable: {exc}") from exc

    def _write_atomic(self, path: Path, text: str) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def write_version(
        self, rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
    ) -> str:
        """Validate, write the version file, then switch the pointer atomically; prune old versions."""
        from catalog.validate import validate_rows  # with the plausibility checks: only to write

        validate_rows(rows, gpus=gpus, previous=previous if previous is not None else self.current())
        name = _check_name(rows.version)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            target = self.root / f"version-{name}.json"
            if target.exists():
                raise CatalogStoreError(f"version {name} already exists; versions are never overwritten")
            self._write_atomic(target, json.dumps(rows_to_payload(rows)))
            try:
                self._write_atomic(self._pointer(), name + "\n")
            except BaseException:
                target.unlink(missing_ok=True)  # never current, so not a version at all
                raise
        except OSError as exc:
            raise CatalogStoreError(f"cannot write catalog under {self.root}: {exc}") from exc
        self._prune(keep_also=name)
        return name

    def _prune(self, *, keep_also: str) -> None:
        names = self.versions()
        for old in names[: max(len(names) - self.keep, 0)]:
            if old != keep_also:
                (self.root / f"version-{old}.json").unlink(missing_ok=True)


class RedisCatalogStore:
    """Catalog versions in Redis: `{prefix}catalog:version:{name}` and a `{prefix}catalog:current` key."""

    def __init__(
        self,
        client: Any = None,
        *,
        url: str | None = None,
        prefix: str = "gpugauge:",
        keep: int = DEFAULT_KEEP,
        client_factory: Callable[[str], Any] | None = None,
    ) -> None:
        if client is None:
            if url is None:
                raise CatalogStoreError("RedisCatalogStore needs a client or a URL")
            if client_factory is None:
                import redis

                client_factory = redis.Redis.from_url
            client = client_factory(url)
        self.redis = client
        self.prefix = prefix
        self.keep = max(keep, 1)

    def _key(self, *parts: str) -> str:
        return self.prefix + "catalog:" + ":".join(parts)

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        import redis

        try:
            return fn()
        except redis.exceptions.RedisError as exc:
            raise CatalogStoreError(f"Redis {what} failed: {exc}") from exc

    def versions(self) -> list[str]:
        """Return the stored version names, oldest first."""
        raw = self._call("read", lambda: self.redis.lrange(self._key("versions"), 0, -1))
        return [v.decode() if isinstance(v, bytes) else str(v) for v in raw]

    def current_name(self) -> str | None:
        """Return the current version's name (one GET), or None when none was written."""
        name = self._call("read", lambda: self.redis.get(self._key("current")))
        if name is None:
            return None
        return name.decode() if isinstance(name, bytes) else str(name)

    def current(self) -> CatalogRows | None:
        """Return the current version, or None when none was written."""
        name = self.current_name()
        if name is None:
            return None
        text = self._call("read", lambda: self.redis.get(self._key("version", _check_name(name))))
        if text is None:
            raise CatalogStoreError(f"current catalog version {name} is missing from Redis")
        try:
            return payload_to_rows(json.loads(text))
        except json.JSONDecodeError as exc:
            raise CatalogStoreError(f"current catalog version {name} in Redis is not JSON: {exc}") from exc

    def write_version(
        self, rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
    ) -> str:
        """Validate, then store the version, append it and switch `current` in one MULTI/EXEC."""
        from catalog.validate import validate_rows  # with the plausibility checks: only to write

        validate_rows(rows, gpus=gpus, previous=previous if previous is not None else self.current())
        name = _check_name(rows.version)
        existing = self.versions()
        if name in existing:
            raise CatalogStoreError(f"version {name} already exists; versions are never overwritten")
        stale = existing[: max(len(existing) + 1 - self.keep, 0)]

        def transaction() -> None:
            pipe = self.redis.pipeline(transaction=True)
            pipe.set(self._key("version", name), json.dumps(rows_to_payload(rows)))
            pipe.rpush(self._key("versions"), name)
            pipe.set(self._key("current"), name)
            for old in stale:
                pipe.delete(self._key("version", old))
                pipe.lrem(self._key("versions"), 1, old)
            pipe.execute()

        self._call("write", transaction)
        return name


class LocalCopy:
    """One file holding the last catalog version read from Redis, so a restart without Redis serves it.

    Written atomically (a temporary file, then `os.replace`) whenever a new version is read; read only
    when Redis does not answer. Failing to write it is not an error: the copy is a convenience.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> CatalogRows | None:
        """Return the copied version, or None when there is none or it is unreadable."""
        try:
            return payload_to_rows(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # absent, half-written by another tool, or not a catalog
            return None

    def save(self, rows: CatalogRows) -> None:
        """Replace the copy by `rows`; raise OSError when the file cannot be written."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(rows_to_payload(rows), fh)
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def store_from_settings(*, data_dir: str | None = None, redis_url: str | None = None) -> CatalogStore | None:
    """Pick the configured store: Redis when a URL is given, files under a data dir, else none."""
    if redis_url:
        return RedisCatalogStore(url=redis_url)
    if data_dir:
        return FileCatalogStore(data_dir)
    return None
