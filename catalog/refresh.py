"""Refresh one provider's rows: fetch, merge into the current version, validate, write a new version.

Every step can fail; none changes what is current until the store's single atomic switch at the end. A
region that fails keeps its rows from the last version and is named in the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from catalog.commitments import COMMITTED
from catalog.fetchers.result import FetchResult, Progress, no_progress
from catalog.freshness import oldest_price_date
from catalog.gpus import load_gpus
from catalog.loader import load_snapshot_rows
from catalog.payload import CatalogRows
from catalog.providers import FETCHED_PROVIDERS, PROVIDERS
from catalog.store import CatalogStore, next_version
from catalog.types import GpuSpec, Provider
from catalog.validate import CatalogValidationError, screen_rows, validate_rows

# A fetch whose prices fail the plausibility checks this often is broken (a unit or parsing error), not a
# market: the version is rejected instead of written with those rows left out.
MAX_IMPLAUSIBLE_SHARE = 0.25


class RefreshError(RuntimeError):
    """A refresh stopped; the current catalog version is unchanged."""


@dataclass(frozen=True)
class RefreshReport:
    """What a refresh wrote and what it could not do."""

    provider: str
    version: str
    prices_as_of: str  # the oldest price's date, or "unknown" (catalog.freshness)
    instances: int  # the provider's instance rows in the new version
    offers: int  # the provider's offers in the new version
    fetched_regions: tuple[str, ...]
    failed_regions: tuple[tuple[str, str], ...]  # (region, reason): the last version's rows kept there
    problems: tuple[str, ...]
    excluded: tuple[str, ...] = ()  # prices of this provider the plausibility checks left out, with why


def merge_rows(base: CatalogRows, result: FetchResult, *, version: str) -> CatalogRows:
    """Replace the provider's rows in regions that were fetched; keep everything else from `base`."""
    provider = result.provider
    fetched = set(result.fetched_regions)
    kept_offers = tuple(o for o in base.offers if o.provider is not provider or o.region not in fetched)
    offers = kept_offers + result.offers
    new_types = {i.instance_type for i in result.instances}
    still_priced = {o.instance_type for o in kept_offers if o.provider is provider}
    instances = (
        tuple(
            i
            for i in base.instances
            if i.provider is not provider
            or (i.instance_type not in new_types and i.instance_type in still_priced)
        )
        + result.instances
    )
    sources = sorted(
        {i.source for i in instances}
        | {o.source for o in offers}
        | {b.source for b in base.block_storage}
        | {c.source for c in base.onprem_cards}
    )
    kept_excluded = tuple(e for e in base.excluded if e.provider is not provider or e.region not in fetched)
    return CatalogRows(
        version=version,
        # the oldest pay-as-you-go row's date, not this fetch's (a reserved term's date is when it took effect)
        prices_as_of=oldest_price_date(o for o in offers if o.pricing not in COMMITTED),
        sources=tuple(sources),
        instances=instances,
        offers=offers,
        block_storage=base.block_storage,
        onprem_cards=base.onprem_cards,
        excluded=kept_excluded,
    )


def refresh_catalog(
    provider: str,
    *,
    store: CatalogStore,
    regions: Sequence[str] | None = None,
    progress: Progress = no_progress,
    fetcher: Callable[..., FetchResult] | None = None,
    fetch_kwargs: dict[str, Any] | None = None,
    gpus: tuple[GpuSpec, ...] | None = None,
    now: datetime | None = None,
) -> RefreshReport:
    """Fetch `provider`, make a validated new version current; on any failure raise and change nothing."""
    entry = PROVIDERS.get(provider)
    if entry is None or entry.fetch is None:
        raise ValueError(f"unknown provider {provider!r} (valid: {', '.join(sorted(FETCHED_PROVIDERS))})")
    now = now or datetime.now(UTC)
    gpus = gpus if gpus is not None else load_gpus()
    base = store.current() or load_snapshot_rows()
    result = (fetcher or entry.fetch)(
        regions=tuple(regions or entry.default_regions),
        progress=progress,
        now=now,
        **(fetch_kwargs or {}),
    )
    if result.provider is not Provider(provider):
        raise RefreshError(f"the {provider} fetcher returned {result.provider.value} rows")
    if not result.fetched_regions:
        reasons = "; ".join(f"{r}: {why}" for r, why in result.failed_regions) or "no region was read"
        raise RefreshError(f"{provider}: every region failed ({reasons}); the catalog is unchanged")
    progress(f"{provider}: merging", 1, 3)
    version = next_version(now.date().isoformat(), [*store.versions(), base.version])
    rows = screen_rows(merge_rows(base, result, version=version))  # implausible prices left out, reasons kept
    fetched = set(result.fetched_regions)
    new = [e for e in rows.excluded if e.provider is result.provider and e.region in fetched]
    if result.offers and len(new) > MAX_IMPLAUSIBLE_SHARE * len(result.offers):
        raise CatalogValidationError(
            [f"{provider}: {len(new)} of {len(result.offers)} fetched prices are implausible (a broken fetch)"]
            + [e.reason for e in new[:4]]
        )
    progress(f"{provider}: validating", 2, 3)
    validate_rows(rows, gpus=gpus, previous=base)
    progress(f"{provider}: writing version {version}", 3, 3)
    store.write_version(rows, gpus=gpus, previous=base)
    mine = Provider(provider)
    return RefreshReport(
        provider=provider,
        version=version,
        prices_as_of=rows.prices_as_of,
        instances=sum(1 for i in rows.instances if i.provider is mine),
        offers=sum(1 for o in rows.offers if o.provider is mine),
        fetched_regions=result.fetched_regions,
        failed_regions=result.failed_regions,
        problems=result.problems,
        excluded=tuple(e.reason for e in rows.excluded if e.provider is mine),
    )
