"""Read a SkyPilot catalog directory (schema v7 or v8) into our instance shapes and offers, checked.

Used by the bundled snapshot's build (catalog/data/instances/build_snapshot.py, from the shared extract at
named commits) and by `gpugauge catalog import --skypilot DIR` (e.g. ~/.sky/catalogs/v8, which SkyPilot
re-downloads every 7 hours). Each price's as_of is the date its source says it was true: where a
PROVENANCE.md names the catalog commit but not its date, None (and the commit is in the source); for a
file SkyPilot downloaded, the file's modification date unless the caller says otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from catalog.skypilot.aws import convert_aws
from catalog.skypilot.gcp import convert_gcp
from catalog.skypilot.read import CatalogFile, SkyPilotFormatError, find_vms_csv, read_vms_csv
from catalog.types import Exclusion, InstanceType, Offer
from catalog.validate import exclusion

REPOSITORY = "skypilot-org/skypilot-catalog"
_PROVENANCE = re.compile(r"(AWS|GCP) source file: `([^`]+)`, commit `([0-9a-f]{7,40})`")

__all__ = ["SkyPilotFormatError", "SkyPilotImport", "import_skypilot"]


@dataclass(frozen=True)
class SkyPilotImport:
    """Everything read from one SkyPilot catalog directory."""

    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    excluded: tuple[Exclusion, ...]  # prices left out while reading (GCP GPU and host parts, AWS zone spot)
    skipped: tuple[str, ...]  # shapes not imported, with the reason (retired GPU, unknown GPU, ...)
    files: tuple[str, ...]  # one line per file read: path, schema, sha256, commit
    providers: tuple[str, ...]


def _provenance(directory: Path) -> dict[str, tuple[str, str]]:
    """Return provider -> (source path, commit) from a PROVENANCE.md beside the files, if there is one."""
    path = directory / "PROVENANCE.md"
    if not path.is_file():
        return {}
    found = _PROVENANCE.findall(path.read_text(encoding="utf-8"))
    return {provider.lower(): (source, commit) for provider, source, commit in found}


def _origin(provider: str, file: CatalogFile, provenance: dict[str, tuple[str, str]]) -> str:
    if provider in provenance:
        source, commit = provenance[provider]
        return f"SkyPilot catalog {REPOSITORY}@{commit[:12]} {source}"
    return f"SkyPilot catalog file {file.path.name} ({file.schema}, sha256 {file.sha256[:16]})"


def _as_of(provider: str, file: CatalogFile, provenance: dict[str, tuple[str, str]], given: str | None) -> str | None:
    if given is not None:
        return given
    if provider in provenance:
        return None  # the commit is named, its date is not: say so rather than guess
    return datetime.fromtimestamp(file.path.stat().st_mtime, UTC).date().isoformat()


def import_skypilot(directory: Path, *, as_of: str | None = None) -> SkyPilotImport:
    """Read the AWS and GCP vms.csv under `directory`; SkyPilotFormatError when neither is there or one is bad."""
    provenance = _provenance(directory)
    instances: list[InstanceType] = []
    offers: list[Offer] = []
    excluded: list[Exclusion] = []
    skipped: list[str] = []
    files: list[str] = []
    providers: list[str] = []
    for provider in ("aws", "gcp"):
        path = find_vms_csv(directory, provider)
        if path is None:
            continue
        file = read_vms_csv(path)
        origin = _origin(provider, file, provenance)
        date = _as_of(provider, file, provenance, as_of)
        if provider == "aws":
            converted = convert_aws(file, origin=origin, as_of=date)
            excluded += [exclusion(f) for f in converted.findings]
        else:
            converted, findings = convert_gcp(file, origin=origin, as_of=date)
            excluded += [exclusion(f) for f in findings]
        instances += converted.instances
        offers += converted.offers
        skipped += converted.skipped
        commit = f"@{provenance[provider][1]}" if provider in provenance else ""
        files.append(
            f"{provider}: {file.path.name}{commit}; {file.schema} columns, {len(file.rows)} rows, sha256 {file.sha256}"
        )
        providers.append(provider)
    if not providers:
        raise SkyPilotFormatError(
            f"{directory}: no SkyPilot vms.csv found (looked for aws/vms.csv, gcp/vms.csv, v8/..., v7/...)"
        )
    return SkyPilotImport(
        tuple(instances), tuple(offers), tuple(excluded), tuple(skipped), tuple(files), tuple(providers)
    )
