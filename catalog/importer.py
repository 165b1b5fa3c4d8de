"""Import a SkyPilot catalog directory as the new current version, the way a refresh writes one.

`gpugauge catalog import --skypilot ~/.sky/catalogs/v8` (SkyPilot re-downloads that directory every 7 hours)
gives a team fresh AWS and GCP prices without cloud credentials. Each provider found in the directory
replaces that provider's rows whole (every region); the rest of the current version is kept. The rows are
checked for plausibility and validated against the current version (no collapse, known GPUs) before the
store's one atomic switch; any failure leaves the current version as it was. As in the snapshot's build
(build_snapshot.py), where a check leaves out the GPU or host part of a bundled GCP machine's on-demand
price, the Cyclenerd pricing.yml price of that machine and region stands in (catalog/cyclenerd.py), with its
own source and date, checked like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from catalog.commitments import COMMITTED
from catalog.cyclenerd import stand_in_on_demand
from catalog.freshness import oldest_price_date
from catalog.gpus import load_gpus
from catalog.loader import load_snapshot_rows
from catalog.payload import CatalogRows
from catalog.refresh import MAX_IMPLAUSIBLE_SHARE
from catalog.skypilot import import_skypilot
from catalog.store import CatalogStore, next_version
from catalog.types import GpuSpec, Provider
from catalog.validate import CatalogValidationError, screen_rows, validate_rows


@dataclass(frozen=True)
class ImportReport:
    """What an import wrote."""

    version: str
    prices_as_of: str
    providers: tuple[str, ...]
    instances: int  # the imported providers' instance rows in the new version
    offers: int
    excluded: tuple[str, ...]  # prices of the imported providers left out, with why
    skipped: tuple[str, ...]  # shapes not imported, with why
    files: tuple[str, ...]


def import_catalog(
    directory: Path,
    *,
    store: CatalogStore,
    as_of: str | None = None,
    gpus: tuple[GpuSpec, ...] | None = None,
    now: datetime | None = None,
) -> ImportReport:
    """Read a SkyPilot catalog directory, check it and make it current; raise and change nothing on failure."""
    now = now or datetime.now(UTC)
    gpus = gpus if gpus is not None else load_gpus()
    read = import_skypilot(directory, as_of=as_of)
    base = store.current() or load_snapshot_rows()
    mine = {Provider(p) for p in read.providers}
    # rows of an imported provider that came from another source (GCP G4 from Cyclenerd's pricing.yml,
    # catalog/cyclenerd.py) and that the import does not carry are kept: SkyPilot has no rows to replace them
    imported = {(i.provider, i.instance_type) for i in read.instances}
    other = {(i.provider, i.instance_type) for i in base.instances
             if i.provider in mine and "SkyPilot" not in i.source and (i.provider, i.instance_type) not in imported}
    offers = tuple(o for o in base.offers if o.provider not in mine or (o.provider, o.instance_type) in other)
    offers += read.offers
    instances = tuple(i for i in base.instances if i.provider not in mine or (i.provider, i.instance_type) in other)
    instances += read.instances
    version = next_version(now.date().isoformat(), [*store.versions(), base.version])
    merged = CatalogRows(
        version=version,
        prices_as_of=oldest_price_date(o for o in offers if o.pricing not in COMMITTED),  # as a refresh does
        sources=(),
        instances=instances,
        offers=offers,
        block_storage=base.block_storage,
        onprem_cards=base.onprem_cards,
        excluded=tuple(e for e in base.excluded if e.provider not in mine) + read.excluded,
    )
    rows = screen_rows(merged)
    screened = len(rows.excluded) - len(merged.excluded)
    if Provider.GCP in mine:
        rows = screen_rows(stand_in_on_demand(rows))  # the stand-ins are checked like the rest
    if read.offers and screened > MAX_IMPLAUSIBLE_SHARE * len(read.offers):
        raise CatalogValidationError(
            [f"{screened} of {len(read.offers)} imported prices are implausible (a broken catalog)"]
            + [e.reason for e in rows.excluded[-screened:][:4]]
        )
    sources = sorted(
        {i.source for i in rows.instances}
        | {o.source for o in rows.offers}
        | {b.source for b in rows.block_storage}
        | {c.source for c in rows.onprem_cards}
        | {f"input {line}" for line in read.files}
    )
    rows = replace(rows, sources=tuple(sources))
    validate_rows(rows, gpus=gpus, previous=base)
    store.write_version(rows, gpus=gpus, previous=base)
    return ImportReport(
        version=version,
        prices_as_of=rows.prices_as_of,
        providers=read.providers,
        instances=sum(1 for i in rows.instances if i.provider in mine),
        offers=sum(1 for o in rows.offers if o.provider in mine),
        excluded=tuple(e.reason for e in rows.excluded if e.provider in mine),
        skipped=read.skipped,
        files=read.files,
    )
