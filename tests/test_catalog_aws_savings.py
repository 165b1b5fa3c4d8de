"""AWS EC2 Instance Savings Plans (no upfront) read from the Savings Plans API via Stubber.

The DescribeSavingsPlansOfferingRates pages in tests/fixtures/aws/describe_savings_plans_offering_rates_us-east-1.json
are shaped like the real API's (botocore's service model for savingsplans, 2019-06-28: searchResults with
savingsPlanOffering, rate as a string, unit, usageType, operation and properties; nextToken); the rates are
invented for the tests, not AWS's (the file says so).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from catalog.fetchers import aws
from catalog.fetchers.aws_savings import SAVINGS_SOURCE, parse_rate, request
from catalog.gpus import load_gpus
from catalog.loader import load_catalog, load_snapshot_rows
from catalog.refresh import refresh_catalog
from catalog.store import FileCatalogStore
from catalog.types import Catalog, Offer, Pricing, Provider
from tests.test_catalog_aws import FIXTURES, NOW, FakeAws, aws_env  # noqa: F401 (aws_env: a fixture)
from workers.ranking.recommend import recommend
from workers.review.yearly import committed_rates
from workers.schemas.specs import load_job

RESNET = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64},
          "dataset": {"samples": 1_281_167}, "objective": "cost", "limit": 200}
TYPES = ["g5.xlarge", "p3.2xlarge", "p4d.24xlarge"]  # priced on demand in us-east-1 by the two get_products pages
PRICES = ["get_products_us-east-1", "get_products_us-east-1_reserved"]


def pages() -> list[dict[str, Any]]:
    data = json.loads((FIXTURES / "describe_savings_plans_offering_rates_us-east-1.json").read_text())
    assert "invented" in data["_note"]
    result: list[dict[str, Any]] = data["pages"]
    return result


def queued(responses: list[dict[str, Any]], region: str = "us-east-1") -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each page with the exact request that must ask for it (the second one carries the first's nextToken)."""
    out = []
    token = None
    for page in responses:
        out.append((page, request(region, TYPES, token)))
        token = page.get("nextToken")
    return out


@pytest.fixture
def savings(aws_env: None) -> aws.FetchResult:  # noqa: F811
    fake = FakeAws(("us-east-1",))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=PRICES, savings=queued(pages()))
    return fake.fetch()


def _rows(result: aws.FetchResult, itype: str) -> dict[Pricing, tuple[float, str | None, str]]:
    return {o.pricing: (o.price_per_hour_usd, o.as_of, o.source) for o in result.offers if o.instance_type == itype}


def test_every_page_of_no_upfront_instance_plan_rates_becomes_savings_plan_offers_dated_the_fetch_day(
    savings: aws.FetchResult,
) -> None:
    p4d = _rows(savings, "p4d.24xlarge")
    # the shared-tenancy rates; the dedicated-tenancy entry (22.44) is not this machine's price
    assert p4d[Pricing.SAVINGS_PLAN_1Y] == (pytest.approx(20.5034), "2026-11-29", SAVINGS_SOURCE)
    assert p4d[Pricing.SAVINGS_PLAN_3Y] == (pytest.approx(13.109), "2026-11-29", SAVINGS_SOURCE)
    # beside the Reserved Instance rates of the same machine, which stay committed_1y / committed_3y
    assert p4d[Pricing.COMMITTED_1Y][0] == pytest.approx(19.22) and p4d[Pricing.ON_DEMAND][0] == pytest.approx(32.7726)
    p3 = _rows(savings, "p3.2xlarge")  # its rates are on the second page
    assert p3[Pricing.SAVINGS_PLAN_1Y][0] == pytest.approx(2.02)
    assert p3[Pricing.SAVINGS_PLAN_3Y][0] == pytest.approx(1.33)
    # g5.xlarge's 3-year rate of 0 is named and not offered
    assert Pricing.SAVINGS_PLAN_3Y not in _rows(savings, "g5.xlarge")
    assert any("g5.xlarge" in p and "savings_plan_3y" in p and "not a positive USD Hrs rate" in p
               for p in savings.problems)


def test_a_rate_for_another_region_tenancy_plan_or_operating_system_is_not_used() -> None:
    good = pages()[0]["searchResults"][0]
    assert parse_rate(good, "us-east-1") == ("p4d.24xlarge", Pricing.SAVINGS_PLAN_1Y, Decimal("20.5034"))
    assert parse_rate(good, "us-west-2") is None
    for change in ({"operation": "RunInstances:0002"}, {"usageType": "DedicatedUsage:p4d.24xlarge"},
                   {"unit": "Hrs", "savingsPlanOffering": {**good["savingsPlanOffering"], "planType": "Compute"}},
                   {"savingsPlanOffering": {**good["savingsPlanOffering"], "paymentOption": "Partial Upfront"}},
                   {"savingsPlanOffering": {**good["savingsPlanOffering"], "durationSeconds": 86400}}):
        assert parse_rate({**good, **change}, "us-east-1") is None, change
    # a region's usage-type prefix, and a type whose name has a dash, still read as the box usage
    b200 = copy.deepcopy(good)
    b200["usageType"] = "USE2-BoxUsage:p6-b200.48xlarge"
    b200["properties"] = [{**p, "value": {"region": "us-east-2", "instanceType": "p6-b200.48xlarge"}.get(
        p["name"], p["value"])} for p in good["properties"]]
    assert parse_rate(b200, "us-east-2") == ("p6-b200.48xlarge", Pricing.SAVINGS_PLAN_1Y, Decimal("20.5034"))
    euro = {**good, "savingsPlanOffering": {**good["savingsPlanOffering"], "currency": "EUR"}}
    assert isinstance(parse_rate(euro, "us-east-1"), str)


def test_two_different_rates_for_one_type_and_term_are_ambiguous_and_neither_is_kept(aws_env: None) -> None:  # noqa: F811
    first, second = pages()
    other = copy.deepcopy(first["searchResults"][0])
    other["rate"] = "18.0000"
    other["savingsPlanOffering"]["offeringId"] = "3f1c00ff-5a1e-4c0d-9e2f-0000000000ff"
    twice = [{**first, "searchResults": [*first["searchResults"], other]}, second]
    fake = FakeAws(("us-east-1",))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=PRICES, savings=queued(twice))
    result = fake.fetch()
    p4d = _rows(result, "p4d.24xlarge")
    assert Pricing.SAVINGS_PLAN_1Y not in p4d and Pricing.SAVINGS_PLAN_3Y in p4d
    assert any("p4d.24xlarge: 2 different savings_plan_1y savings plan rates" in p for p in result.problems)


def test_a_savings_plans_api_that_refuses_keeps_the_regions_other_prices_and_is_not_asked_again(
    aws_env: None,  # noqa: F811
) -> None:
    fake = FakeAws(("us-east-1", "us-west-2"))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_page2"], savings=[])
    fake.savings_stub.add_client_error(
        "describe_savings_plans_offering_rates", service_error_code="AccessDeniedException",
        service_message="User is not authorized to perform: savingsplans:DescribeSavingsPlansOfferingRates",
        http_status_code=403)
    fake.queue_region("us-west-2", prices=["get_products_us-west-2"], savings=[])  # never asked: nothing queued
    result = fake.fetch()  # asserts every queued answer was used and none was missing
    assert result.fetched_regions == ("us-east-1", "us-west-2") and not result.failed_regions
    assert {o.region for o in result.offers if o.pricing is Pricing.ON_DEMAND} == {"us-east-1", "us-west-2"}
    assert not any(o.pricing in (Pricing.SAVINGS_PLAN_1Y, Pricing.SAVINGS_PLAN_3Y) for o in result.offers)
    said = [p for p in result.problems if "DescribeSavingsPlansOfferingRates failed" in p]
    assert len(said) == 1 and "us-east-1" in said[0] and "AccessDeniedException" in said[0]


def test_a_refresh_brings_savings_plans_that_their_own_pricing_constraint_selects(
    savings: aws.FetchResult, tmp_path: Path,
) -> None:
    store = FileCatalogStore(tmp_path)
    base = load_snapshot_rows()
    kept = tuple(o for o in base.offers if o.provider is not Provider.AWS or o.region != "us-east-1"
                 or o.instance_type in TYPES)
    store.write_version(dataclasses.replace(base, offers=kept), gpus=load_gpus(), previous=None)
    report = refresh_catalog("aws", store=store, fetcher=lambda **_: savings, now=NOW)
    # g5.xlarge's invented 1-year plan rate (1.20) is above its on-demand 1.006: left out, with the reason
    assert any("g5.xlarge" in e and "savings_plan_1y" in e and "not below on-demand" in e for e in report.excluded)
    cat = load_catalog(store=store)
    planned = {(o.instance_type, o.pricing) for o in cat.offers
               if o.pricing in (Pricing.SAVINGS_PLAN_1Y, Pricing.SAVINGS_PLAN_3Y)}
    assert planned == {(t, k) for t in ("p3.2xlarge", "p4d.24xlarge")
                       for k in (Pricing.SAVINGS_PLAN_1Y, Pricing.SAVINGS_PLAN_3Y)}

    _, job = load_job({**RESNET, "constraints": {"providers": ["aws"], "pricing": ["savings_plan_3y"]}})
    asked = recommend(job, cat)
    assert asked.options and {o.pricing for o in asked.options} == {Pricing.SAVINGS_PLAN_3Y}
    assert {o.instance_type for o in asked.options} <= {"p3.2xlarge", "p4d.24xlarge"}
    top = asked.options[0]
    # paid for every hour of the three years, as a commitment is
    assert top.training_cost_usd >= top.price_per_hour_usd * 3 * 8760 * top.nodes * (1 - 1e-6)
    codes = {w.code: w.message for w in top.warnings}
    assert "3-year EC2 Instance Savings Plan" in codes["commitment"]
    assert f"{top.price_per_hour_usd * 3 * 8760 * top.nodes:,.0f}" in codes["commitment"]
    _, plain = load_job({**RESNET, "constraints": {"providers": ["aws"]}})
    assert not any(o.pricing is Pricing.SAVINGS_PLAN_3Y for o in recommend(plain, cat).options)


def test_a_budget_reviews_year_buys_the_lower_of_a_reservation_and_a_savings_plan() -> None:
    def offer(itype: str, pricing: Pricing, price: float) -> Offer:
        return Offer(Provider.AWS, itype, "us-east-1", pricing, price, "test", "2026-11-29")

    cat = Catalog(version="t", prices_as_of="2026-11-29", sources=(), gpus=(), offers=(
        offer("p4d.24xlarge", Pricing.COMMITTED_1Y, 19.22), offer("p4d.24xlarge", Pricing.SAVINGS_PLAN_1Y, 20.50),
        offer("p5.48xlarge", Pricing.SAVINGS_PLAN_1Y, 40.0), offer("p5.48xlarge", Pricing.COMMITTED_1Y, 41.0),
        offer("p3.2xlarge", Pricing.SAVINGS_PLAN_3Y, 1.33)))
    assert committed_rates(cat) == {("aws", "p4d.24xlarge", "us-east-1"): 19.22,
                                    ("aws", "p5.48xlarge", "us-east-1"): 40.0}
