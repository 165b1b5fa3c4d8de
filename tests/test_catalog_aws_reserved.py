"""AWS Reserved Instances (standard, no upfront) read from the Price List's terms.Reserved via Stubber.

The get_products pages are shaped like the real API's (each PriceList entry a JSON string holding
product/attributes and terms.OnDemand + terms.Reserved with offerTermCode, effectiveDate, priceDimensions
and termAttributes; the upfront options carry an extra "Quantity" Upfront Fee dimension). The reserved
rates in tests/fixtures/aws/get_products_us-east-1_reserved.json are made up for the test, not AWS's.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from catalog.fetchers import aws
from catalog.fetchers.aws_reserved import RESERVED_SOURCE, parse_reserved
from catalog.gpus import load_gpus
from catalog.loader import load_catalog, load_snapshot_rows
from catalog.refresh import merge_rows, refresh_catalog
from catalog.store import FileCatalogStore
from catalog.types import Pricing, Provider
from tests.test_catalog_aws import FIXTURES, NOW, FakeAws, aws_env  # noqa: F401 (aws_env: a fixture)
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job

RESNET = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64},
          "dataset": {"samples": 1_281_167}, "objective": "cost", "limit": 200}


@pytest.fixture
def reserved(aws_env: None) -> aws.FetchResult:  # noqa: F811
    fake = FakeAws(("us-east-1",))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_reserved"])
    return fake.fetch()


def _rows(result: aws.FetchResult, itype: str) -> dict[Pricing, tuple[float, str | None, str]]:
    return {o.pricing: (o.price_per_hour_usd, o.as_of, o.source) for o in result.offers if o.instance_type == itype}


def test_standard_no_upfront_terms_become_committed_offers_dated_by_their_effective_date(
    reserved: aws.FetchResult,
) -> None:
    p4d = _rows(reserved, "p4d.24xlarge")
    assert p4d[Pricing.ON_DEMAND][0] == pytest.approx(32.7726)
    # the standard No Upfront terms, not the convertible (22.01 / 14.88) or partial/all upfront ones
    assert p4d[Pricing.COMMITTED_1Y] == (pytest.approx(19.22), "2026-03-01", RESERVED_SOURCE)
    assert p4d[Pricing.COMMITTED_3Y] == (pytest.approx(11.57), "2025-11-01", RESERVED_SOURCE)
    assert set(_rows(reserved, "p3.2xlarge")) == {Pricing.ON_DEMAND, Pricing.SPOT}  # no reserved terms in its item


def _p4d_item() -> dict[str, Any]:
    data = json.loads((FIXTURES / "get_products_us-east-1_reserved.json").read_text())
    item: dict[str, Any] = data["PriceList"][0]
    return item


def test_a_no_upfront_term_with_an_upfront_fee_or_twice_over_is_not_trusted() -> None:
    item = _p4d_item()
    one_year = item["terms"]["Reserved"]["WE87HQHP89BK3AXK.4NA7Y494T4"]
    one_year["priceDimensions"]["WE87HQHP89BK3AXK.4NA7Y494T4.2TG2D8R56U"] = {
        "rateCode": "WE87HQHP89BK3AXK.4NA7Y494T4.2TG2D8R56U", "description": "Upfront Fee", "unit": "Quantity",
        "pricePerUnit": {"USD": "1000"}, "appliesTo": []}
    rates, problems = parse_reserved(item)
    assert Pricing.COMMITTED_1Y not in rates and Pricing.COMMITTED_3Y in rates
    assert any("not one positive Hrs rate" in p for p in problems)

    twice = _p4d_item()
    three = twice["terms"]["Reserved"]["WE87HQHP89BK3AXK.BPH4J8HBKS"]
    twice["terms"]["Reserved"]["WE87HQHP89BK3AXK.XXXXXXXXXX"] = {**copy.deepcopy(three), "offerTermCode": "XXXXXXXXXX"}
    rates, problems = parse_reserved(twice)
    assert Pricing.COMMITTED_3Y not in rates and Pricing.COMMITTED_1Y in rates
    assert any("2 standard no-upfront committed_3y terms" in p for p in problems)


def test_a_refresh_brings_aws_commitments_that_a_pricing_constraint_selects(
    reserved: aws.FetchResult, tmp_path: Path,
) -> None:
    store = FileCatalogStore(tmp_path)
    # the current version: the shipped rows with us-east-1's AWS offers cut to the three stubbed types
    # (else the refresh is refused as losing most of that region's offers)
    base = load_snapshot_rows()
    kept = tuple(o for o in base.offers if o.provider is not Provider.AWS or o.region != "us-east-1"
                 or o.instance_type in {"p3.2xlarge", "g5.xlarge", "p4d.24xlarge"})
    store.write_version(dataclasses.replace(base, offers=kept), gpus=load_gpus(), previous=None)
    report = refresh_catalog("aws", store=store, fetcher=lambda **_: reserved, now=NOW)
    # g5.xlarge's made-up 1-year rate (1.20) is above its on-demand 1.006: left out, with the reason
    assert any("g5.xlarge" in e and "committed rate not below on-demand" in e for e in report.excluded)
    cat = load_catalog(store=store)
    aws_committed = {(o.instance_type, o.pricing) for o in cat.offers
                     if o.provider is Provider.AWS and o.pricing in (Pricing.COMMITTED_1Y, Pricing.COMMITTED_3Y)}
    assert aws_committed == {("p4d.24xlarge", Pricing.COMMITTED_1Y), ("p4d.24xlarge", Pricing.COMMITTED_3Y)}

    _, job = load_job({**RESNET, "constraints": {"providers": ["aws"], "pricing": ["committed_3y"]}})
    asked = recommend(job, cat)
    assert asked.options and {(o.instance_type, o.pricing) for o in asked.options} == {
        ("p4d.24xlarge", Pricing.COMMITTED_3Y)}
    # GCP's committed offers are still derived from its rates although AWS now carries its own
    _, gcp_job = load_job({**RESNET, "constraints": {"providers": ["gcp"], "pricing": ["committed_1y"]}})
    gcp = recommend(gcp_job, cat)
    assert gcp.options and all(o.pricing is Pricing.COMMITTED_1Y for o in gcp.options)


def test_a_reserved_terms_effective_date_does_not_age_the_rows(reserved: aws.FetchResult) -> None:
    base = load_snapshot_rows()
    dated = dataclasses.replace(base, offers=tuple(dataclasses.replace(o, as_of="2026-11-01") for o in base.offers))
    merged = merge_rows(dated, reserved, version="test")
    assert any(o.as_of == "2025-11-01" for o in merged.offers)  # the 3-year term, effective since then
    assert merged.prices_as_of == "2026-11-01"  # the oldest pay-as-you-go row's date
