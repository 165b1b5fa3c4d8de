"""Plausibility checks: they catch SkyPilot's known GCP errors and leave genuine regional spreads alone."""

from __future__ import annotations

import dataclasses

from catalog.freshness import oldest_price_date, prices_as_of_by_provider
from catalog.gpus import load_gpus
from catalog.loader import load_snapshot_rows
from catalog.plausibility import PricePoint, find_implausible
from catalog.types import Offer, Pricing, Provider
from catalog.validate import check_rows, screen_rows

OD, SPOT, GCP, AWS = Pricing.ON_DEMAND, Pricing.SPOT, Provider.GCP, Provider.AWS


def _gpu(item: str, region: str, per_gpu: float, *, count: int = 8, pricing: Pricing = OD) -> PricePoint:
    return PricePoint(GCP, item, region, pricing, per_gpu * count, gpu_count=count)


def _flagged(points: list[PricePoint]) -> set[tuple[str, str, Pricing, str]]:
    return {(f.point.item, f.point.region, f.point.pricing, f.check) for f in find_implausible(points)}


def test_h100_in_us_central1_at_4_20_against_9_80_in_us_east4_is_caught() -> None:
    per_gpu = {  # SkyPilot v8 GCP, accelerator H100 x8, on-demand $/GPU-h
        "us-central1": 4.2008, "us-west1": 4.2008, "asia-southeast1": 4.2008, "us-east4": 9.7966,
        "europe-west1": 10.787, "europe-west4": 12.7355, "asia-east1": 11.3434, "us-east5": 11.0338,
    }  # fmt: skip
    flagged = _flagged([_gpu("accelerator H100 x8", r, p) for r, p in per_gpu.items()])
    outliers = {region for _, region, _, check in flagged if check == "regional-outlier"}
    assert outliers == {"us-central1", "us-west1", "asia-southeast1"}


def test_a100_in_europe_west4_at_half_the_us_price_is_caught() -> None:
    per_gpu = {"us-central1": 2.9339, "us-east1": 2.9339, "us-west1": 2.9339, "me-west1": 3.2273,
               "us-west3": 3.4369, "europe-west4": 1.6137}  # fmt: skip
    flagged = _flagged([_gpu("accelerator A100 x1", r, p, count=1) for r, p in per_gpu.items()])
    assert flagged == {("accelerator A100 x1", "europe-west4", OD, "regional-outlier")}


def test_a100_80gb_on_demand_below_its_spot_leaves_both_out() -> None:
    points = [
        _gpu("accelerator A100-80GB x1", "us-central1", 1.8462, count=1),
        _gpu("accelerator A100-80GB x1", "us-central1", 1.964, count=1, pricing=SPOT),
    ]
    assert {(r, p, c) for _, r, p, c in _flagged(points)} == {
        ("us-central1", OD, "spot-not-below-on-demand"),
        ("us-central1", SPOT, "spot-not-below-on-demand"),
    }


def test_a_spot_price_at_its_on_demand_cap_leaves_only_the_spot_row_out() -> None:
    points = [PricePoint(AWS, "p5.48xlarge", "ca-central-1", p, 63.296, gpu_count=8) for p in (OD, SPOT)]
    assert _flagged(points) == {("p5.48xlarge", "ca-central-1", SPOT, "spot-not-below-on-demand")}


def test_genuine_regional_spreads_and_cheap_spot_pass() -> None:
    per_gpu = {"us-east-1": 0.526, "eu-west-1": 0.587, "ap-east-1": 0.81, "sa-east-1": 0.75, "us-west-2": 0.526}
    points = [PricePoint(AWS, "g4dn.xlarge", r, OD, p) for r, p in per_gpu.items()]
    points += [PricePoint(AWS, "g4dn.xlarge", r, SPOT, p / 10) for r, p in per_gpu.items()]  # AWS's 90 % off
    assert _flagged(points) == set()


def test_zero_and_negative_prices_are_caught() -> None:
    points = [PricePoint(AWS, "g5.xlarge", "us-east-1", OD, 0.0), PricePoint(AWS, "g5.xlarge", "us-west-2", OD, -1.0)]
    assert {c for *_, c in _flagged(points)} == {"bad-price"}


def _shape(item: str, price: float, gpus: int, vcpus: int, gib: int) -> PricePoint:
    return PricePoint(AWS, item, "us-east-1", OD, price, gpu_count=gpus, family="p5", vcpus=vcpus,
                      memory_bytes=gib * 2**30)  # fmt: skip


def test_a_shape_priced_per_gpu_instead_of_per_machine_is_a_family_jump() -> None:
    good = [_shape("p5.4xlarge", 6.88, 1, 16, 256), _shape("p5.48xlarge", 55.04, 8, 192, 2048)]
    assert _flagged(good) == set()
    wrong = [_shape("p5.4xlarge", 6.88, 1, 16, 256), _shape("p5.48xlarge", 6.88, 8, 192, 2048)]
    assert ("p5.48xlarge", "us-east-1", OD, "family-jump") in _flagged(wrong)


def test_check_rows_reports_and_screen_rows_leaves_out_with_the_reason() -> None:
    rows = load_snapshot_rows()
    index = next(i for i, o in enumerate(rows.offers) if (o.instance_type, o.region, o.pricing) ==
                 ("p5.48xlarge", "us-east-1", OD))  # fmt: skip
    wrong = dataclasses.replace(rows.offers[index], price_per_hour_usd=550.4)  # a digit slip: 10x
    broken = dataclasses.replace(rows, offers=(*rows.offers[:index], wrong, *rows.offers[index + 1 :]))
    problems = check_rows(broken, gpus=load_gpus())
    assert problems and {p.code for p in problems} <= {"regional-outlier", "family-jump"}
    screened = screen_rows(broken)
    assert wrong not in screened.offers and len(screened.offers) == len(rows.offers) - 1
    assert screened.excluded[-1].item == "p5.48xlarge" and "p5.48xlarge" in screened.excluded[-1].reason
    assert check_rows(screened, gpus=load_gpus()) == []


def _offer(provider: Provider, as_of: str | None) -> Offer:
    return Offer(provider, "x", "r", OD, 1.0, "test", as_of)


def test_prices_as_of_is_the_oldest_date_overall_and_per_provider() -> None:
    offers = [_offer(AWS, "2026-12-01"), _offer(AWS, "2026-12-01T06:00Z"), _offer(GCP, "2026-09-30")]
    assert oldest_price_date(offers) == "2026-09-30"
    assert prices_as_of_by_provider(offers) == (("aws", "2026-12-01"), ("gcp", "2026-09-30"))
    undated = [*offers, _offer(GCP, None)]
    assert oldest_price_date(undated) == "unknown"
    assert prices_as_of_by_provider(undated) == (("aws", "2026-12-01"), ("gcp", "unknown"))
