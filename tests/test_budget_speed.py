"""`budget-buys-speed`: a cost-ranked answer with a budget, no deadline and a long cheapest run names what the budget
buys (ViT-B/16 on ImageNet-21k for 90 epochs within $5,000 was one L40S for 42 days, said alone)."""

from __future__ import annotations

import re

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.budget_speed import BUDGET_SPEED_MIN_HOURS, BUDGET_SPEED_SHARE

VIT_21K = {"model": {"preset": "vit-b16"}, "training": {"epochs": 90, "batch_size": 32},
           "dataset": {"samples": 14_197_122}, "constraints": {"budget_usd": 5000}}


def _codes(spec: dict, shipped: Catalog) -> dict[str, str]:
    rec = recommend_spec(spec, shipped)
    return {w.code: w.message for w in rec.requirements.warnings}


def test_a_long_cheapest_run_names_a_run_within_the_budget_at_least_twice_as_fast(shipped: Catalog) -> None:
    rec = recommend_spec(VIT_21K, shipped)
    top = rec.options[0]
    assert top.training_hours > BUDGET_SPEED_MIN_HOURS and top.training_cost_usd < 5000
    message = next(w.message for w in rec.requirements.warnings if w.code == "budget-buys-speed")
    assert "of the $5,000 budget" in message and "objective: balanced" in message
    named = re.search(r"for \$([\d,]+)(?:\.\d+)?, ([\d.]+)x as fast", message)
    assert named, message
    assert float(named.group(1).replace(",", "")) <= 5000  # within the budget the user named
    assert float(named.group(2)) >= 1 / BUDGET_SPEED_SHARE
    assert rec.options[0] is top  # still ranked by cost, as asked
    assert all(o.training_cost_usd >= top.training_cost_usd for o in rec.options)


def test_no_such_note_where_the_user_ranked_otherwise_set_a_deadline_or_named_no_budget(shipped: Catalog) -> None:
    balanced = {**VIT_21K, "objective": "balanced"}
    deadline = {**VIT_21K, "constraints": {"budget_usd": 5000, "deadline_hours": 2000}}
    unbudgeted = {**VIT_21K, "constraints": {}}
    for spec in (balanced, deadline, unbudgeted):
        assert "budget-buys-speed" not in _codes(spec, shipped)


def test_a_short_run_is_left_to_speed_for_little(shipped: Catalog) -> None:
    short = {"model": {"preset": "resnet18-cifar"}, "training": {"epochs": 200, "batch_size": 128},
             "dataset": {"samples": 50_000}, "constraints": {"budget_usd": 500}}
    assert "budget-buys-speed" not in _codes(short, shipped)
