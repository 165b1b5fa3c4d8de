"""Plausibility checks: they catch SkyPilot's known GCP errors and leave genuine regional spreads alone."""

from __future__ import annotations

import dataclasses

import pytest

from catalog.freshness import oldest_price_date, prices_as_of_by_provider
from catalog.gpus import load_gpus
from catalog.loader import load_snapshot_rows
from catalog.plausibility import PricePoint, find_implausible, region_spot
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


def test_b200_at_the_reviewed_64_44_is_left_out_and_its_other_figure_kept() -> None:
    # SkyPilot v8 GCP, accelerator B200 x8 on demand: two region-uniform figures, the lower one within the band
    machine = {"asia-northeast1": 64.44, "us-east4": 64.44, "us-west2": 64.44, "europe-north1": 64.44,
               "us-central1": 90.216, "us-east1": 90.216, "europe-west4": 90.216, "us-south1": 90.216}  # fmt: skip
    points = [PricePoint(GCP, "accelerator B200 x8", r, OD, usd, gpu_count=8) for r, usd in machine.items()]
    points.append(PricePoint(GCP, "accelerator B200 x8", "us-east4", SPOT, 32.6064, gpu_count=8))
    flagged = _flagged(points)
    assert flagged == {("accelerator B200 x8", r, OD, "reviewed-error") for r, usd in machine.items() if usd == 64.44}
    # the review names one price: a catalog that corrects it, or the same figure for another item, passes
    assert not _flagged([dataclasses.replace(p, price_per_hour_usd=64.5) if p.price_per_hour_usd == 64.44 else p
                         for p in points])
    assert not _flagged([dataclasses.replace(p, item="accelerator H200 x8") for p in points if p.region != "us-east4"])


def test_the_snapshot_prices_gcp_b200_on_demand_only_at_the_kept_figure() -> None:
    rows = load_snapshot_rows()
    a4 = {o.region: o.price_per_hour_usd for o in rows.offers
          if o.instance_type == "a4-highgpu-8g" and o.pricing is OD}
    assert a4 == dict.fromkeys(("europe-west4", "us-central1", "us-east1", "us-south1"), 90.216)
    left_out = {e.region for e in rows.excluded if e.item == "accelerator B200 x8" and e.check == "reviewed-error"}
    assert left_out == {"asia-northeast1", "asia-southeast1", "europe-north1", "us-east4", "us-west2", "us-west3"}


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
    # the lowest genuine spot ratio in SkyPilot's v8 AWS rows is 0.1017 (g4dn.8xlarge, ap-east-1, one zone)
    points += [PricePoint(AWS, "g4dn.xlarge", r, SPOT, p * 0.1017) for r, p in per_gpu.items()]
    assert _flagged(points) == set()


def _h200(item: str, region: str, pricing: Pricing, price: float) -> PricePoint:
    return PricePoint(AWS, item, region, pricing, price, gpu_count=8, gpu="h200", vcpus=192, memory_bytes=2 * 2**40)


def test_spot_at_the_providers_floor_is_a_placeholder_and_left_out() -> None:
    points = [PricePoint(AWS, "g4dn.xlarge", "af-south-1", OD, 0.698),  # SkyPilot v8, zone afs1-az2
              PricePoint(AWS, "g4dn.xlarge", "af-south-1", SPOT, 0.0698),
              PricePoint(AWS, "g5.12xlarge", "ap-southeast-3", OD, 7.93854),
              PricePoint(AWS, "g5.12xlarge", "ap-southeast-3", SPOT, 0.7939)]  # 10 % rounded to 4 decimals
    assert _flagged(points) == {("g4dn.xlarge", "af-south-1", SPOT, "spot-at-floor"),
                                ("g5.12xlarge", "ap-southeast-3", SPOT, "spot-at-floor")}
    gcp = [_gpu("accelerator P100 x1", "asia-east1", 1.6, count=1),  # SkyPilot v8: exactly Google's 91 % off
           _gpu("accelerator P100 x1", "asia-east1", 0.144, count=1, pricing=SPOT),
           _gpu("accelerator P100 x1", "europe-west4", 1.533, count=1),
           _gpu("accelerator P100 x1", "europe-west4", 0.2601, count=1, pricing=SPOT)]
    assert _flagged(gcp) == {("accelerator P100 x1", "asia-east1", SPOT, "spot-at-floor")}
    # a Google spot price needs no on-demand reference: its rows stay sane where on-demand ones are wrong
    assert _flagged([_gpu("accelerator H100 x8", "us-central1", 2.8501, pricing=SPOT)]) == set()


def test_a_spot_price_without_its_own_on_demand_is_checked_against_a_same_shape_sibling() -> None:
    points = [_h200("p5en.48xlarge", "ap-southeast-3", OD, 87.34848),
              _h200("p5e.48xlarge", "ap-southeast-3", SPOT, 8.7348),  # exactly 10 % of p5en's on-demand
              _h200("p5en.48xlarge", "us-east-2", OD, 63.296),
              _h200("p5e.48xlarge", "us-east-2", SPOT, 18.9027),  # a market price: 30 % of p5en's
              _h200("p5e.48xlarge", "eu-west-2", SPOT, 20.0)]  # no H200 machine priced on demand there
    findings = {(f.point.item, f.point.region, f.check): f.reason for f in find_implausible(points)}
    assert set(findings) == {("p5e.48xlarge", "ap-southeast-3", "spot-at-floor"),
                             ("p5e.48xlarge", "eu-west-2", "spot-without-on-demand")}
    assert "p5en.48xlarge" in findings[("p5e.48xlarge", "ap-southeast-3", "spot-at-floor")]


def test_zones_at_the_floor_do_not_count_in_a_regions_spot_median() -> None:
    od = PricePoint(AWS, "g4dn.xlarge", "ap-east-1", OD, 0.81)
    spot = PricePoint(AWS, "g4dn.xlarge", "ap-east-1", SPOT, 0.0)
    one_of_three = region_spot(od, spot, {"ape1-az1": 0.1343, "ape1-az2": 0.081, "ape1-az3": 0.1349})
    assert one_of_three.price_per_hour_usd == pytest.approx(0.1346) and one_of_three.left_out == ("ape1-az2",)
    assert one_of_three.finding is not None and "ape1-az2" in one_of_three.finding.reason
    half = region_spot(od, spot, {"ape1-az1": 0.081, "ape1-az2": 0.0871})
    assert half.price_per_hour_usd is None and half.left_out == ("ape1-az1", "ape1-az2")
    assert half.finding is not None and "no spot price for the region" in half.finding.reason
    clean = region_spot(od, spot, {"ape1-az1": 0.2, "ape1-az2": 0.3})
    assert (clean.price_per_hour_usd, clean.left_out, clean.finding) == (pytest.approx(0.25), (), None)
    assert region_spot(None, spot, {"a": 0.081, "b": 0.09}).price_per_hour_usd == pytest.approx(0.0855)


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
    codes = {p.code for p in problems}
    assert codes & {"regional-outlier", "family-jump"} and codes <= {"regional-outlier", "family-jump",
                                                                     "spot-without-on-demand"}
    screened = screen_rows(broken)
    # the wrong on-demand price goes, and with it the spot price it was the only floor reference of
    assert wrong not in screened.offers and len(screened.offers) == len(rows.offers) - 2
    assert {(e.item, e.region, e.pricing) for e in screened.excluded[-2:]} == {
        ("p5.48xlarge", "us-east-1", OD), ("p5.48xlarge", "us-east-1", SPOT)}
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
