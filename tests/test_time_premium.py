"""A time-ranked answer says what its last few percent of speed cost (`time-premium`)."""

from __future__ import annotations

import re

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from workers.ranking.wider import NEAR_TIME_SHARE, PREMIUM_COST_SHARE


def test_a_fastest_option_that_costs_several_times_a_nearly_as_fast_one_says_so(shipped: Catalog) -> None:
    spec = changed_example("gpt2-pretrain")
    rec = recommend_spec(spec, shipped)
    top = rec.options[0]
    [warning] = [w for w in rec.requirements.warnings if w.code == "time-premium"]
    hours = float(re.search(r"deadline_hours ([0-9.]+)", warning.message).group(1))  # type: ignore[union-attr]
    assert top.training_hours * NEAR_TIME_SHARE <= hours < top.training_hours * NEAR_TIME_SHARE + 0.1
    # what it names is what objective cost with that deadline ranks first
    cheap = recommend_spec(changed_example("gpt2-pretrain", objective="cost",
                                           constraints={"deadline_hours": hours}), shipped).options[0]
    named = next(o for o in rec.options if f"{o.instance_type}, {o.pricing.value}, {o.region}" in warning.message)
    assert named.training_cost_usd <= PREMIUM_COST_SHARE * top.training_cost_usd
    assert cheap.training_cost_usd <= named.training_cost_usd and cheap.training_hours <= hours


def test_a_cost_ranked_answer_and_a_fastest_option_without_a_premium_say_nothing(shipped: Catalog) -> None:
    rec = recommend_spec(changed_example("gpt2-pretrain", objective="cost"), shipped)
    assert not any(w.code == "time-premium" for w in rec.requirements.warnings)
    # on spot only, the fastest option is already the cheap one
    rec = recommend_spec(changed_example("gpt2-pretrain", constraints={"pricing": ["spot"]}), shipped)
    assert rec.options and not any(w.code == "time-premium" for w in rec.requirements.warnings)
