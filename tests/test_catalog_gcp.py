"""GCP fetcher against real Google clients whose transport is mocked, fed proto-shaped recorded responses."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import requests
from google.auth.credentials import AnonymousCredentials
from google.cloud import billing_v1, compute_v1

from catalog.fetchers import gcp
from catalog.fetchers.result import CredentialsError, FetchResult
from catalog.types import Pricing

FIXTURES = Path(__file__).parent / "fixtures" / "gcp"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
REGIONS = ("us-central1", "europe-west4", "asia-east1")
Fetched = tuple[FetchResult, dict[str, Any]]


def rest_response(name: str) -> requests.Response:
    """Return a requests.Response carrying a recorded REST body, as the generated client tests build it."""
    response = requests.Response()
    response.status_code = 200
    response._content = (FIXTURES / name).read_bytes()
    response.headers["Content-Type"] = "application/json"
    return response


def sku_page(name: str) -> billing_v1.ListSkusResponse:
    return billing_v1.ListSkusResponse.from_json((FIXTURES / name).read_text(), ignore_unknown_fields=True)


def run_fetch(**overrides: Any) -> Fetched:
    creds = AnonymousCredentials()
    machines = compute_v1.MachineTypesClient(credentials=creds)
    accels = compute_v1.AcceleratorTypesClient(credentials=creds)
    billing = billing_v1.CloudCatalogClient(credentials=creds)
    with (
        mock.patch.object(machines.transport._session, "request") as machine_call,
        mock.patch.object(accels.transport._session, "request") as accel_call,
        mock.patch.object(type(billing.transport.list_skus), "__call__") as sku_call,
    ):
        machine_call.side_effect = [
            rest_response("machine_types_page1.json"),
            rest_response("machine_types_page2.json"),
        ]
        accel_call.side_effect = [rest_response("accelerator_types.json")]
        sku_call.side_effect = overrides.pop("sku_pages", None) or [
            sku_page("skus_page1.json"),
            sku_page("skus_page2.json"),
        ]
        result = gcp.fetch(
            client=billing,
            project="demo-project",
            regions=REGIONS,
            machine_types_client=machines,
            accelerator_types_client=accels,
            now=NOW,
            **overrides,
        )
        calls = {"machines": machine_call.call_args_list, "skus": sku_call.call_count}
    return result, calls


@pytest.fixture(scope="module")
def fetched() -> Fetched:
    return run_fetch()


def _offer(result: FetchResult, name: str, region: str, pricing: Pricing) -> float | None:
    found = [
        o.price_per_hour_usd
        for o in result.offers
        if (o.instance_type, o.region, o.pricing) == (name, region, pricing)
    ]
    return found[0] if found else None


def test_both_pages_of_machine_types_and_skus_are_read(fetched: Fetched) -> None:
    result, calls = fetched
    assert len(calls["machines"]) == 2 and calls["skus"] == 2
    method, url = calls["machines"][0].args[:2]
    assert method == "GET" and url.endswith("/projects/demo-project/aggregated/machineTypes")
    names = {i.instance_type for i in result.instances}
    assert {"a2-highgpu-1g", "g2-standard-4", "n1-standard-8+1xnvidia-tesla-t4"} <= names


def test_price_is_vcpus_times_core_plus_gib_times_ram_plus_gpus(fetched: Fetched) -> None:
    result, _ = fetched
    n1 = 8 * Decimal("0.031611") + 30 * Decimal("0.004237")
    assert _offer(
        result, "n1-standard-8+1xnvidia-tesla-t4", "us-central1", Pricing.ON_DEMAND
    ) == pytest.approx(float(n1 + Decimal("0.35")))
    assert _offer(
        result, "n1-standard-16+2xnvidia-tesla-t4", "us-central1", Pricing.ON_DEMAND
    ) == pytest.approx(float(2 * n1 + 2 * Decimal("0.35")))
    a2 = 12 * Decimal("0.031611") + 85 * Decimal("0.004237") + Decimal("2.933908")
    assert _offer(result, "a2-highgpu-1g", "us-central1", Pricing.ON_DEMAND) == pytest.approx(float(a2))
    spot = 8 * Decimal("0.006655") + 30 * Decimal("0.000892") + Decimal("0.11")
    assert _offer(result, "n1-standard-8+1xnvidia-tesla-t4", "us-central1", Pricing.SPOT) == pytest.approx(
        float(spot)
    )


def test_gpu_memory_comes_from_our_table_via_the_slug(fetched: Fetched) -> None:
    result, _ = fetched
    by_name = {i.instance_type: i for i in result.instances}
    assert by_name["g2-standard-4"].gpu == "l4"
    assert by_name["a2-highgpu-1g"].gpu == "a100-40gb"
    assert by_name["a3-highgpu-8g"].local_storage_bytes == 16 * 375 * 10**9
    assert by_name["n1-standard-8+1xnvidia-tesla-t4"].host_memory_bytes == 30720 * 2**20


def test_missing_sku_and_unknown_gpu_are_reported(fetched: Fetched) -> None:
    result, _ = fetched
    text = "\n".join(result.problems)
    assert "a3-highgpu-8g: no complete on_demand price" in text  # no H100 SKU in the recorded pages
    assert "a9-futuregpu-1g: unknown GPU 'nvidia-x900'" in text
    assert _offer(result, "a3-highgpu-8g", "europe-west4", Pricing.ON_DEMAND) is None
    assert "vws" not in text  # virtual-workstation variants are known and skipped quietly


def test_a_region_with_no_gpu_shapes_is_reported_as_failed(fetched: Fetched) -> None:
    result, _ = fetched
    assert [r for r, _ in result.failed_regions] == ["asia-east1"]
    assert "asia-southeast1" not in {o.region for o in result.offers}


def test_money_units_and_nanos_add_exactly() -> None:
    price = gcp.money(mock.Mock(units=2, nanos=933908000))
    assert price == Decimal("2.933908")


def test_missing_application_default_credentials_stop_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    with pytest.raises(CredentialsError) as info:
        gcp.fetch(regions=REGIONS, now=NOW)
    assert "\n" not in str(info.value) and "credentials" in str(info.value)


def test_a_failing_billing_call_fails_the_fetch_not_silently() -> None:
    from google.api_core import exceptions

    with pytest.raises(gcp.FetchError, match="gcp:"):
        run_fetch(sku_pages=[exceptions.PermissionDenied("Cloud Billing API has not been used in project")])
