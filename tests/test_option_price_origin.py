"""What a ranked option says of itself: its price's source and the day it gives, and its strategy count."""

from __future__ import annotations

import copy
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from catalog.loader import load_catalog
from catalog.types import Catalog, Pricing
from service.cli import main
from workers.ranking.recommend import recommend
from workers.schemas.results import RecommendationSchema
from workers.schemas.specs import load_job

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BERT: dict[str, Any] = {
    "model": {"preset": "bert-base"},
    "training": {"batch_size": 32, "sequence_length": 128, "epochs": 3, "precision": "fp16-mixed",
                 "optimizer": "adamw", "from_pretrained": True},
    "dataset": {"samples": 100_000},
    "limit": 40,
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _options(spec: dict[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
    job = load_job(copy.deepcopy(spec))[1]
    return list(RecommendationSchema().dump(recommend(job, catalog))["options"])


def test_an_option_carries_its_offers_source_and_date(catalog: Catalog) -> None:
    offers = {(o.provider.value, o.instance_type, o.region, o.pricing.value): o for o in catalog.offers}
    for providers in (["aws"], ["gcp"]):
        spec = copy.deepcopy(BERT)
        spec["constraints"] = {"providers": providers, "pricing": ["on_demand", "spot"]}
        options = _options(spec, catalog)
        assert len(options) > 5
        for o in options:
            offer = offers[(o["provider"], o["instance_type"], o["region"], o["pricing"])]
            assert (o["price_source"], o["price_as_of"]) == (offer.source, offer.as_of)
            assert o["price_per_hour_usd"] == pytest.approx(offer.price_per_hour_usd)


def test_a_gcp_l4_option_is_dated_by_the_pricing_file_and_an_aws_one_says_it_is_undated(catalog: Catalog) -> None:
    spec = copy.deepcopy(BERT)
    spec["constraints"] = {"gpus": ["l4"], "providers": ["aws", "gcp"], "pricing": ["spot"]}
    options = _options(spec, catalog)
    g2 = [o for o in options if o["instance_type"].startswith("g2-")]
    aws = [o for o in options if o["provider"] == "aws"]
    assert g2 and aws
    assert all(o["price_as_of"] == "2026-07-30" and "pricing.yml" in o["price_source"] for o in g2)
    assert all(o["price_as_of"] is None and "skypilot-org/skypilot-catalog@" in o["price_source"] for o in aws)
    spot = {(o.instance_type, o.region): o.price_per_hour_usd for o in catalog.offers if o.pricing is Pricing.SPOT}
    assert all(o["price_per_hour_usd"] == spot[(o["instance_type"], o["region"])] for o in g2)


def test_the_teams_own_cards_are_priced_at_their_power_and_say_so(catalog: Catalog) -> None:
    spec = copy.deepcopy(BERT)
    spec["constraints"] = {"providers": ["onprem"], "owned_gpus": [{"gpu": "rtx-3090", "count": 2}],
                           "onprem": {"electricity_usd_per_kwh": 0.25}}
    options = _options(spec, catalog)
    assert options and all(o["pricing"] == "owned" for o in options)
    one = next(o for o in options if o["gpu_count"] == 1)
    assert one["price_source"].startswith("power only: 1 x 350 W board power at $0.25/kWh")
    assert one["price_per_hour_usd"] == pytest.approx(0.350 * 0.25)
    # the electricity rate is the user's: the price has no market date; the card's launch stays in the source
    assert one["price_as_of"] is None and "(card launched 2020-09)" in one["price_source"]


def test_the_cli_prints_the_first_options_price_source_and_date(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["recommend", str(EXAMPLES / "bert-finetune.json"), "--provider", "gcp", "--gpu", "l4",
                 "--pricing", "spot", "--limit", "3"])
    out = capsys.readouterr().out
    assert code == 0
    line = " ".join(out[out.index("price: $"):].split("spot figures:")[0].split())
    age = (date.today() - date(2026, 7, 30)).days
    assert f"/h as of 2026-07-30 ({age:,} days ago);" in line and "pricing.yml" in line
    code = main(["recommend", str(EXAMPLES / "bert-finetune.json"), "--provider", "aws", "--limit", "3"])
    out = capsys.readouterr().out
    assert code == 0 and "/h undated (its source names no day); SkyPilot catalog" in " ".join(out.split())
    code = main(["recommend", str(EXAMPLES / "bert-finetune.json"), "--provider", "onprem", "--owned", "1xrtx-3090"])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "/h at your electricity rate (no market date); power only: 1 x 350 W" in out


def test_an_options_line_counts_its_strategies_in_words(catalog: Catalog) -> None:
    spec = {"model": {"preset": "mixtral-8x7b"},
            "training": {"batch_size": 2, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                         "from_pretrained": True, "parallelism": {"adapter": {"kind": "qlora"}}},
            "dataset": {"samples": 20_000}, "constraints": {"providers": ["gcp"]}, "limit": 20}
    options = _options(spec, catalog)
    counts = {o["parallelism"]["strategies_considered"] for o in options}
    assert 1 in counts and any(n > 1 for n in counts)  # both wordings are reached on this job
    for o in options:
        n = o["parallelism"]["strategies_considered"]
        said = "1 strategy fits this machine shape" if n == 1 else f"{n} strategies fit this machine shape; the fastest"
        assert said in o["why"] and "1 strategies" not in o["why"]
