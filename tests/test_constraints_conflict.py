"""When the budget, the deadline or the CO2e cap rule every option out, the answer says which to relax, and to what."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommendation import Recommendation
from workers.sizing.errors import SpecError

RESNET50 = json.loads((Path(__file__).resolve().parents[1] / "examples" / "resnet50-imagenet.json").read_text())




def _with(**constraints: float) -> dict[str, Any]:
    return {**RESNET50, "constraints": {**RESNET50["constraints"], **constraints}}


def _conflict(rec: Recommendation) -> str:
    [message] = [w.message for w in rec.requirements.warnings if w.code == "constraints-conflict"]
    return message


def _field(message: str, name: str) -> float:
    return float(re.search(rf"constraints\.{name} to ([0-9]+(?:\.[0-9]+)?)", message).group(1))  # type: ignore[union-attr]


def test_a_budget_too_small_for_the_deadline_names_the_budget_that_opens_an_option(shipped: Catalog) -> None:
    rec = recommend_spec(_with(budget_usd=5, deadline_hours=2), shipped)
    assert not rec.options
    message = _conflict(rec)
    assert "$5.00 budget" in message and "2 h deadline" in message
    budget = _field(message, "budget_usd")
    assert budget > 5
    opened = recommend_spec(_with(budget_usd=budget, deadline_hours=2), shipped)
    assert opened.options and all(o.training_cost_usd <= budget for o in opened.options)
    assert "constraints-conflict" not in [w.code for w in opened.requirements.warnings]


def test_a_deadline_no_machine_meets_names_the_deadline_that_does(shipped: Catalog) -> None:
    rec = recommend_spec(_with(deadline_hours=0.1), shipped)
    assert not rec.options
    message = _conflict(rec)
    assert "whatever the budget, no option meets the 6 min deadline on at most 8 GPUs" in message
    deadline = _field(message, "deadline_hours")
    if deadline < 1:  # a sub-hour figure is said in minutes beside the field's hours
        assert f"deadline_hours to {deadline:g} ({deadline * 60:.3g} min)" in message
    opened = recommend_spec(_with(deadline_hours=deadline), shipped)
    assert opened.options and opened.options[0].training_hours <= deadline


def test_a_co2e_cap_too_low_names_the_cap_the_cleanest_option_needs(shipped: Catalog) -> None:
    rec = recommend_spec(_with(max_co2e_kg=0.01), shipped)
    assert not rec.options
    cap = _field(_conflict(rec), "max_co2e_kg")
    opened = recommend_spec(_with(max_co2e_kg=cap), shipped)
    assert opened.options


def test_a_job_with_options_gets_no_conflict_warning(shipped: Catalog) -> None:
    rec = recommend_spec(RESNET50, shipped)
    assert rec.options and "constraints-conflict" not in [w.code for w in rec.requirements.warnings]


def test_a_deadline_only_more_gpus_meet_names_the_gpu_count_that_does(shipped: Catalog) -> None:
    rec = recommend_spec(_with(deadline_hours=0.4), shipped)
    assert not rec.options
    message = _conflict(rec)
    gpus = int(_field(message, "max_gpus"))
    assert gpus > 8
    opened = recommend_spec({**RESNET50, "constraints": {**RESNET50["constraints"], "deadline_hours": 0.4,
                                                         "max_gpus": gpus}}, shipped)
    assert opened.options and opened.options[0].training_hours <= 0.4


def test_a_deadline_alone_that_eight_gpus_miss_names_the_deadline_and_the_gpu_count_that_meet_it(
        shipped: Catalog) -> None:
    # "pretrain llama 7b on 1T tokens within 30 days" was told only to move its deadline to 1,667 h
    alone = {k: v for k, v in RESNET50["constraints"].items() if k != "budget_usd"}
    rec = recommend_spec({**RESNET50, "constraints": {**alone, "deadline_hours": 0.4}}, shipped)
    assert not rec.options
    message = _conflict(rec)
    assert message.startswith("No option meets the 24 min deadline; the fastest option without the deadline")
    assert _field(message, "deadline_hours") > 0.4
    gpus = int(_field(message, "max_gpus"))
    assert gpus > 8 and "or with up to 32 GPUs the cheapest that meets the deadline is" in message
    opened = recommend_spec({**RESNET50, "constraints": {**alone, "deadline_hours": 0.4, "max_gpus": gpus}}, shipped)
    assert opened.options and opened.options[0].training_hours <= 0.4


def test_a_region_pattern_ranks_every_region_it_starts_and_an_empty_one_is_refused(shipped: Catalog) -> None:
    # "in europe" from Slack: constraints.regions ["eu-*", "europe-*"]
    rec = recommend_spec({**RESNET50, "constraints": {"regions": ["eu-*", "europe-*"]}}, shipped)
    regions = {o.region for o in rec.options}
    assert rec.options and all(r.startswith(("eu-", "europe-")) for r in regions)
    with pytest.raises(SpecError) as caught:
        recommend_spec({**RESNET50, "constraints": {"regions": ["mars-*"]}}, shipped)
    assert caught.value.field == "constraints.regions"
