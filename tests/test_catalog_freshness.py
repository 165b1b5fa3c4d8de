"""Answers say how old their prices are: undated prices and prices past the age limit each carry a warning."""

from __future__ import annotations

import dataclasses
from datetime import date

from catalog.loader import load_catalog
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job

SPEC = {"model": {"preset": "resnet18"}, "training": {"batch_size": 32, "epochs": 1},
        "dataset": {"samples": 10000, "bytes": 10**9}, "constraints": {"providers": ["aws"]}}  # fmt: skip


def _codes(catalog_prices_as_of: str | None = None, *, today: date | None, days: int = 90) -> dict[str, str]:
    catalog = load_catalog()
    if catalog_prices_as_of is not None:  # the same offers, dated
        offers = tuple(dataclasses.replace(o, as_of=catalog_prices_as_of) for o in catalog.offers)
        catalog = dataclasses.replace(catalog, offers=offers, prices_as_of=catalog_prices_as_of, undated_sources=())
    rec = recommend(load_job(SPEC)[1], catalog, today=today, stale_after_days=days)
    return {w.code: w.message for w in rec.requirements.warnings if w.code.endswith("-prices")}


def test_the_snapshots_undated_prices_are_said_to_be_undated_naming_the_commit() -> None:
    codes = _codes(today=date(2026, 12, 1))
    assert set(codes) == {"undated-prices"} and "skypilot-org/skypilot-catalog@" in codes["undated-prices"]
    # each provider's file named once (the AWS file was left out behind two GCP sources of one file)
    message = codes["undated-prices"]
    assert "catalogs/v8/aws/vms.csv" in message and "catalogs/v8/gcp/vms.csv" in message
    assert message.count("catalogs/v8/gcp/vms.csv") == 1


def test_prices_past_the_age_limit_carry_a_stale_prices_warning_naming_the_date() -> None:
    codes = _codes("2026-08-01", today=date(2026, 12, 1))
    assert set(codes) == {"stale-prices"}
    assert "2026-08-01" in codes["stale-prices"] and "122 days" in codes["stale-prices"]
    assert _codes("2026-11-01", today=date(2026, 12, 1)) == {}
    assert _codes("2026-08-01", today=date(2026, 12, 1), days=200) == {}


def test_the_top_options_own_old_price_is_said_where_undated_rows_keep_the_catalog_from_saying_it() -> None:
    # the shipped catalog has undated SkyPilot rows, so `stale-prices` cannot date it; the U-Net's first option is a
    # GCP spot price of 2026-07-30 (Cyclenerd), 129 days old on 2026-12-06, and the answer only said "undated"
    import json

    from tests.recommending import EXAMPLES

    catalog = load_catalog()
    _, job = load_job(json.loads((EXAMPLES / "unet-highres.json").read_text()))
    rec = recommend(job, catalog, today=date(2026, 12, 6))
    top = rec.options[0]
    assert top.price_as_of == "2026-07-30"
    [said] = [w.message for w in rec.requirements.warnings if w.code == "top-price-stale"]
    assert f"({top.instance_type}, {top.pricing.value}, {top.region}) is from 2026-07-30, 129 days ago" in said
    fresh = recommend(job, catalog, today=date(2026, 8, 30))
    assert "top-price-stale" not in [w.code for w in fresh.requirements.warnings]


def test_a_title_says_prices_are_partly_undated_never_as_of_unknown() -> None:
    from catalog.freshness import UNKNOWN, prices_dated_words

    assert prices_dated_words("2026-07-30") == "prices as of 2026-07-30"
    assert prices_dated_words(UNKNOWN) == "prices partly undated (each option says its own date)"
