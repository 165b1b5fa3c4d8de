"""AWS fetcher against botocore Stubber, fed hand-trimmed responses shaped like the real EC2/Pricing APIs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from catalog.fetchers import aws
from catalog.fetchers.result import CredentialsError
from catalog.types import Pricing

FIXTURES = Path(__file__).parent / "fixtures" / "aws"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    if "PriceList" in data:  # the API sends each price item as a JSON *string*; the files keep them readable
        data["PriceList"] = [json.dumps(item) for item in data["PriceList"]]
    return data


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))


class FakeAws:
    """Stubbed pricing client plus one stubbed EC2 client per region, with responses queued in call order."""

    def __init__(self, regions: tuple[str, ...]) -> None:
        self.pricing = boto3.client("pricing", region_name="us-east-1")
        self.pricing_stub = Stubber(self.pricing)
        self.ec2 = {r: boto3.client("ec2", region_name=r) for r in regions}
        self.ec2_stub = {r: Stubber(c) for r, c in self.ec2.items()}
        self.savings = boto3.client("savingsplans", region_name="us-east-1")
        self.savings_stub = Stubber(self.savings)
        self.regions = regions

    def queue_types(self) -> None:
        stub = self.ec2_stub[self.regions[0]]
        stub.add_response("describe_instance_types", fixture("describe_instance_types_page1"), {})
        stub.add_response(
            "describe_instance_types", fixture("describe_instance_types_page2"), {"NextToken": "page-2"}
        )

    def queue_region(self, region: str, *, prices: list[str], fail: str | None = None,
                     spot: dict[str, Any] | None = None,
                     savings: list[tuple[dict[str, Any], dict[str, Any] | None]] | None = None) -> None:
        """Queue one region's answers; `savings`: (page, expected parameters or None) of the Savings Plans API,
        by default one page without rates."""
        stub = self.ec2_stub[region]
        if fail:
            stub.add_client_error(
                "describe_instance_type_offerings",
                service_error_code=fail,
                service_message="You are not authorized to perform this operation.",
                http_status_code=403,
            )
            return
        stub.add_response(
            "describe_instance_type_offerings", fixture(f"describe_instance_type_offerings_{region}")
        )
        for i, name in enumerate(prices):
            params = {
                "ServiceCode": "AmazonEC2",
                "Filters": aws.price_filters(region),
                "FormatVersion": "aws_v1",
            }
            if i:
                params["NextToken"] = "prices-page-2"
            self.pricing_stub.add_response("get_products", fixture(name), params)
        stub.add_response("describe_spot_price_history", spot or fixture(f"describe_spot_price_history_{region}"))
        for page, params in savings if savings is not None else [({"searchResults": []}, None)]:
            self.savings_stub.add_response("describe_savings_plans_offering_rates", page, params)

    def fetch(self) -> aws.FetchResult:
        for s in (self.pricing_stub, self.savings_stub, *self.ec2_stub.values()):
            s.activate()
        try:
            return aws.fetch(
                client=self.pricing, regions=self.regions, ec2_client_factory=self.ec2.__getitem__,
                savings_client=self.savings, now=NOW,
            )
        finally:
            for s in (self.pricing_stub, self.savings_stub, *self.ec2_stub.values()):
                s.assert_no_pending_responses()
                s.deactivate()


@pytest.fixture
def two_regions(aws_env: None) -> aws.FetchResult:
    fake = FakeAws(("us-east-1", "us-west-2"))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_page2"])
    fake.queue_region("us-west-2", prices=["get_products_us-west-2"])
    return fake.fetch()


def _offer(result: aws.FetchResult, itype: str, region: str, pricing: Pricing) -> float | None:
    found = [
        o.price_per_hour_usd
        for o in result.offers
        if (o.instance_type, o.region, o.pricing) == (itype, region, pricing)
    ]
    return found[0] if found else None


def test_fetch_reads_every_page_of_types_and_prices(two_regions: aws.FetchResult) -> None:
    by_name = {i.instance_type: i for i in two_regions.instances}
    assert set(by_name) == {"p3.2xlarge", "g5.xlarge", "p4d.24xlarge"}  # page 2 read; m5.large has no GPU
    p4d = by_name["p4d.24xlarge"]
    assert (p4d.gpu, p4d.gpu_count, p4d.vcpus) == ("a100-40gb", 8, 96)
    assert p4d.network_gbit_per_s == 400.0
    assert p4d.local_storage_bytes == 8000 * 10**9
    assert _offer(two_regions, "p4d.24xlarge", "us-east-1", Pricing.ON_DEMAND) == pytest.approx(32.7726)


def test_prices_come_per_region_with_spot_as_the_zone_median(two_regions: aws.FetchResult) -> None:
    assert _offer(two_regions, "p3.2xlarge", "us-east-1", Pricing.ON_DEMAND) == pytest.approx(3.06)
    assert _offer(two_regions, "p3.2xlarge", "us-east-1", Pricing.SPOT) == pytest.approx(0.7031)
    assert _offer(two_regions, "p3.2xlarge", "us-west-2", Pricing.SPOT) == pytest.approx(1.01)
    p3 = next(i for i in two_regions.instances if i.instance_type == "p3.2xlarge")
    assert (p3.gpu, p3.cpu_model, p3.cpu_single_thread_score) == (
        "v100-16gb",
        "Intel Xeon E5-2686 v4 (Broadwell)",
        1700,
    )


def test_zone_spot_prices_at_the_aws_floor_are_left_out_of_the_region_median(aws_env: None) -> None:
    def zone(az: str, price: str) -> dict[str, str]:
        return {"AvailabilityZone": az, "InstanceType": "p3.2xlarge", "ProductDescription": "Linux/UNIX",
                "SpotPrice": price, "Timestamp": "2026-11-29T12:00:00Z"}

    fake = FakeAws(("us-east-1", "us-west-2"))
    fake.queue_types()
    # us-east-1: one zone of three at 10 % of the $3.06 on-demand, the others a market; us-west-2: all on it
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_page2"],
                      spot={"SpotPriceHistory": [zone("us-east-1a", "0.306000"), zone("us-east-1b", "0.7031"),
                                                 zone("us-east-1c", "0.8031")]})
    fake.queue_region("us-west-2", prices=["get_products_us-west-2"],
                      spot={"SpotPriceHistory": [zone("us-west-2a", "0.306000")]})
    result = fake.fetch()
    assert _offer(result, "p3.2xlarge", "us-east-1", Pricing.SPOT) == pytest.approx(0.7531)
    assert _offer(result, "p3.2xlarge", "us-west-2", Pricing.SPOT) is None
    assert _offer(result, "p3.2xlarge", "us-west-2", Pricing.ON_DEMAND) == pytest.approx(3.06)
    floor = [p for p in result.problems if "spot floor" in p]
    assert len(floor) == 2 and any("us-east-1a" in p for p in floor)


def test_fractional_and_unknown_gpus_are_reported_not_silently_dropped(two_regions: aws.FetchResult) -> None:
    text = "\n".join(two_regions.problems)
    assert "g6f.large: fractional GPU shape" in text
    assert "g4ad.xlarge: unknown GPU AMD 'Radeon Pro V520'" in text
    assert "m5.large" not in text


def test_a_type_without_a_price_in_a_region_is_reported_without_offer(two_regions: aws.FetchResult) -> None:
    assert "g5.xlarge: no on-demand price in us-west-2" in two_regions.problems
    assert _offer(two_regions, "g5.xlarge", "us-west-2", Pricing.ON_DEMAND) is None
    assert _offer(two_regions, "g5.xlarge", "us-east-1", Pricing.ON_DEMAND) == pytest.approx(1.006)


def test_a_failing_region_is_isolated_and_reported(aws_env: None) -> None:
    fake = FakeAws(("us-east-1", "eu-west-1"))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_page2"])
    fake.queue_region("eu-west-1", prices=[], fail="UnauthorizedOperation")
    result = fake.fetch()
    assert result.fetched_regions == ("us-east-1",)
    ((region, reason),) = result.failed_regions
    assert region == "eu-west-1" and "UnauthorizedOperation" in reason
    assert {o.region for o in result.offers} == {"us-east-1"}


def test_missing_credentials_stop_the_fetch_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)
    monkeypatch.delenv("AWS_WEB_IDENTITY_TOKEN_FILE", raising=False)
    with pytest.raises(CredentialsError) as info:
        aws.fetch(regions=("us-east-1",), now=NOW)
    assert "\n" not in str(info.value) and "credentials" in str(info.value)


@pytest.mark.parametrize(
    ("name", "mib", "slug"),
    [
        ("V100", 16384, "v100-16gb"),
        ("V100", 32768, "v100-32gb"),
        ("A100", 40960, "a100-40gb"),
        ("A100", 81920, "a100-80gb"),
        ("A100-80GB", 81920, "a100-80gb"),
        ("H100", 81920, "h100-sxm"),
        ("H200", 144384, "h200"),
        ("B200", 183359, "b200"),
        ("A10G", 22888, "a10g"),
        ("L40S", 45776, "l40s"),
        ("K80", 12288, "k80"),
        ("M60", 8192, "m60"),
        ("T4g", 16384, None),
        ("Radeon Pro V520", 8192, None),
    ],
)
def test_aws_gpu_names_map_to_our_slugs_by_memory(name: str, mib: int, slug: str | None) -> None:
    assert aws.gpu_slug(name, mib) == slug


@pytest.mark.parametrize(
    ("info", "gbit"),
    [
        ({"NetworkPerformance": "Up to 25 Gigabit"}, 25.0),
        ({"NetworkPerformance": "4x 100 Gigabit"}, 400.0),
        ({"NetworkPerformance": "3200 Gigabit"}, 3200.0),
        ({"NetworkPerformance": "High"}, 1.0),
    ],
)
def test_network_performance_text_becomes_gbit_per_s(info: dict[str, Any], gbit: float) -> None:
    assert aws.network_gbit(info) == gbit


def test_a_price_item_with_two_on_demand_terms_is_not_trusted() -> None:
    dim = {"unit": "Hrs", "pricePerUnit": {"USD": "1.0"}}
    item = {
        "product": {"attributes": {"instanceType": "x.large"}},
        "terms": {"OnDemand": {"a": {"priceDimensions": {"d": dim}}, "b": {"priceDimensions": {"d": dim}}}},
    }
    assert aws.parse_price_item(item)[1] is None
