"""A refresh makes one new validated version current, and a fault at any step leaves the current one alone."""

from __future__ import annotations

import dataclasses
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import catalog.refresh as refresh_module
from catalog.fetchers.result import FetchError, FetchResult
from catalog.gpus import load_gpus
from catalog.loader import load_catalog, load_snapshot_rows
from catalog.payload import CatalogRows
from catalog.refresh import RefreshError, refresh_catalog
from catalog.store import CatalogStoreError, FileCatalogStore
from catalog.types import Offer, Pricing, Provider
from catalog.validate import CatalogValidationError

NOW = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")


def aws_result(
    *, factor: float = 1.01, failed: tuple[tuple[str, str], ...] = (), **changes: Any
) -> FetchResult:
    """Build what the AWS fetcher would return: the snapshot's AWS rows, prices moved by `factor`."""
    rows = load_snapshot_rows()
    skip = {r for r, _ in failed}
    offers = tuple(
        dataclasses.replace(
            o,
            price_per_hour_usd=round(o.price_per_hour_usd * factor, 5),
            source="test fetch",
            as_of="2026-12-01",
        )
        for o in rows.offers
        if o.provider is Provider.AWS and o.region in AWS_REGIONS and o.region not in skip
    )
    priced = {o.instance_type for o in offers}
    instances = tuple(i for i in rows.instances if i.provider is Provider.AWS and i.instance_type in priced)
    result = FetchResult(
        Provider.AWS, instances, offers, AWS_REGIONS, "2026-12-01", failed, ("g6f.large: skipped",)
    )
    return dataclasses.replace(result, **changes)


def fake_fetcher(result: FetchResult | Exception) -> Any:
    def fetch(**kwargs: Any) -> FetchResult:
        kwargs["progress"]("aws: fake fetch", 0, 1)
        if isinstance(result, Exception):
            raise result
        return result

    return fetch


@pytest.fixture
def store(tmp_path: Path) -> FileCatalogStore:
    return FileCatalogStore(tmp_path)


@pytest.fixture
def refreshed_once(store: FileCatalogStore) -> CatalogRows:
    refresh_catalog("aws", store=store, fetcher=fake_fetcher(aws_result()), now=NOW)
    current = store.current()
    assert current is not None
    return current


def _price(rows: CatalogRows, itype: str, region: str, pricing: Pricing = Pricing.ON_DEMAND) -> float:
    return next(
        o.price_per_hour_usd
        for o in rows.offers
        if (o.instance_type, o.region, o.pricing) == (itype, region, pricing)
    )


def test_refresh_writes_a_new_current_version_and_reports_progress(store: FileCatalogStore) -> None:
    seen: list[str] = []
    report = refresh_catalog(
        "aws",
        store=store,
        fetcher=fake_fetcher(aws_result()),
        now=NOW,
        progress=lambda message, done, total: seen.append(message),
    )
    current = store.current()
    assert current is not None and current.version == report.version == "2026-12-01.1"
    assert current.prices_as_of == "unknown"  # the oldest price: the snapshot's other rows carry no date
    assert _price(current, "p3.2xlarge", "us-east-1") == pytest.approx(3.06 * 1.01)
    assert _price(current, "a2-highgpu-1g", "us-central1") == _price(
        load_snapshot_rows(), "a2-highgpu-1g", "us-central1"
    )  # GCP rows untouched
    assert seen == ["aws: fake fetch", "aws: merging", "aws: validating", "aws: writing version 2026-12-01.1"]
    assert report.problems == ("g6f.large: skipped",)
    assert load_catalog(store=store).version == "2026-12-01.1"


def test_a_failed_region_keeps_its_last_good_rows_and_is_reported(
    refreshed_once: CatalogRows, store: FileCatalogStore
) -> None:
    failed = (("eu-west-1", "UnauthorizedOperation"),)
    report = refresh_catalog(
        "aws", store=store, fetcher=fake_fetcher(aws_result(factor=1.02, failed=failed)), now=NOW
    )
    current = store.current()
    assert current is not None and current.version == "2026-12-01.2"
    assert report.failed_regions == failed and "eu-west-1" not in report.fetched_regions
    assert _price(current, "p3.2xlarge", "eu-west-1") == _price(refreshed_once, "p3.2xlarge", "eu-west-1")
    assert _price(current, "p3.2xlarge", "us-east-1") == pytest.approx(3.06 * 1.02)


def _unchanged(store: FileCatalogStore, before: CatalogRows, versions: list[str]) -> None:
    assert store.current() == before
    assert store.versions() == versions


@pytest.mark.parametrize("step", ["fetch", "merge", "validate", "write-version", "switch-pointer"])
def test_a_fault_at_any_step_leaves_the_current_version(
    step: str, refreshed_once: CatalogRows, store: FileCatalogStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    versions = store.versions()
    result: FetchResult | Exception = aws_result(factor=1.05)
    if step == "fetch":
        result = FetchError("aws: DescribeInstanceTypes failed: throttled")
    elif step == "merge":
        monkeypatch.setattr(refresh_module, "merge_rows", _boom)
    elif step == "validate":
        monkeypatch.setattr(refresh_module, "validate_rows", _boom)
    else:
        real_replace = os.replace
        target = "version-" if step == "write-version" else "CURRENT"

        def failing_replace(src: Any, dst: Any) -> None:
            if Path(dst).name.startswith(target):
                raise OSError(28, "No space left on device")
            real_replace(src, dst)

        monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises((FetchError, RuntimeError, CatalogStoreError)):
        refresh_catalog("aws", store=store, fetcher=fake_fetcher(result), now=NOW)
    _unchanged(store, refreshed_once, versions)
    assert not list((store.root).glob(".tmp-*")), "temporary files are cleaned up"


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("injected fault")


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"factor": -1.0}, "implausible"),
        ({"factor": 1000.0}, "per GPU"),
        ({"collapse": True}, "fell from"),
    ],
)
def test_a_malformed_or_collapsed_fetch_never_becomes_current(
    change: dict[str, Any], needle: str, refreshed_once: CatalogRows, store: FileCatalogStore
) -> None:
    versions = store.versions()
    result = aws_result(factor=change.get("factor", 1.0))
    if change.get("collapse"):  # a fetch that saw one instance type where there were dozens
        keep = result.instances[0]
        result = dataclasses.replace(
            result,
            instances=(keep,),
            offers=tuple(o for o in result.offers if o.instance_type == keep.instance_type),
        )
    with pytest.raises(CatalogValidationError, match=needle):
        refresh_catalog("aws", store=store, fetcher=fake_fetcher(result), now=NOW)
    _unchanged(store, refreshed_once, versions)


def test_an_instance_with_a_gpu_outside_the_table_is_rejected(
    refreshed_once: CatalogRows, store: FileCatalogStore
) -> None:
    result = aws_result()
    odd = dataclasses.replace(result.instances[0], gpu="rtx-9090")
    with pytest.raises(CatalogValidationError, match="rtx-9090"):
        refresh_catalog(
            "aws",
            store=store,
            now=NOW,
            fetcher=fake_fetcher(dataclasses.replace(result, instances=(odd, *result.instances[1:]))),
        )
    assert store.current() == refreshed_once


def test_every_region_failing_is_an_error_and_changes_nothing(
    refreshed_once: CatalogRows, store: FileCatalogStore
) -> None:
    failed = tuple((r, "Could not connect to the endpoint URL") for r in AWS_REGIONS)
    with pytest.raises(RefreshError, match="every region failed"):
        refresh_catalog("aws", store=store, fetcher=fake_fetcher(aws_result(failed=failed)), now=NOW)
    assert store.current() == refreshed_once


def test_an_unknown_provider_names_the_valid_ones(store: FileCatalogStore) -> None:
    with pytest.raises(ValueError, match="aws, gcp"):
        refresh_catalog("azure", store=store)


def test_offer_rows_keep_their_source_and_date(refreshed_once: CatalogRows) -> None:
    fresh = [o for o in refreshed_once.offers if o.provider is Provider.AWS and o.region in AWS_REGIONS]
    assert fresh and all(
        isinstance(o, Offer) and o.source == "test fetch" and o.as_of == "2026-12-01" for o in fresh
    )
    assert load_gpus()  # the GPU table the validation used is the shared one


def test_prices_as_of_is_the_oldest_row_not_the_newest_after_refreshing_one_provider(store: FileCatalogStore) -> None:
    base = load_snapshot_rows()
    dated = dataclasses.replace(
        base, version="2026-10-01.1", offers=tuple(dataclasses.replace(o, as_of="2026-10-01") for o in base.offers)
    )
    store.write_version(dated, gpus=load_gpus())
    aws = [o for o in base.offers if o.provider is Provider.AWS]
    result = FetchResult(
        Provider.AWS,
        tuple(i for i in base.instances if i.provider is Provider.AWS),
        tuple(dataclasses.replace(o, as_of="2026-12-01") for o in aws),
        tuple(sorted({o.region for o in aws})),
        "2026-12-01",
    )
    report = refresh_catalog("aws", store=store, fetcher=fake_fetcher(result), now=NOW)
    assert report.prices_as_of == "2026-10-01"  # GCP's rows are older than this fetch
    catalog = load_catalog(store=store)
    assert catalog.prices_as_of == "2026-10-01"
    assert dict(catalog.prices_as_of_by_provider) == {"aws": "2026-12-01", "gcp": "2026-10-01"}
