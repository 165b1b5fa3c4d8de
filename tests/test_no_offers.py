"""No option because the catalog sells nothing the constraints name: the answer says which pricing kinds it has there
("resnet50 with a 3 year savings plan on aws" answered "No option" and nothing else)."""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import recommend_spec

SPEC = {"model": {"preset": "resnet50"}, "training": {"batch_size": 32, "epochs": 1},
        "dataset": {"samples": 100_000}}


def _codes(rec: object) -> list[str]:
    return [w.code for w in rec.requirements.warnings]  # type: ignore[attr-defined]


def test_pricing_the_catalog_does_not_sell_there_is_said_with_what_it_does_sell(shipped: Catalog) -> None:
    rec = recommend_spec({**SPEC, "constraints": {"providers": ["aws"], "pricing": ["savings_plan_3y"]}}, shipped)
    assert rec.options == ()
    [said] = [w.message for w in rec.requirements.warnings if w.code == "no-offers-in-scope"]
    assert "no savings_plan_3y offers on aws" in said and "it has on_demand, spot there" in said
    assert "gpugauge catalog refresh --provider aws" in said
    regional = recommend_spec({**SPEC, "constraints": {"providers": ["aws"], "pricing": ["committed_1y"],
                                                       "regions": ["us-east-1"]}}, shipped)
    assert any("committed_1y offers on aws in us-east-1" in w.message for w in regional.requirements.warnings)


def test_where_the_catalog_sells_what_is_named_there_is_no_such_warning(shipped: Catalog) -> None:
    committed = recommend_spec({**SPEC, "constraints": {"providers": ["gcp"], "pricing": ["committed_1y"]}}, shipped)
    assert committed.options and "no-offers-in-scope" not in _codes(committed)
    spot = recommend_spec({**SPEC, "constraints": {"providers": ["aws"], "pricing": ["spot"], "budget_usd": 0.01}},
                          shipped)
    assert not spot.options and "no-offers-in-scope" not in _codes(spot)  # a budget, not the catalog, rules out
