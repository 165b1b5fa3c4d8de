"""A cost-ranked answer whose top option runs for months says so, naming the fastest option and the deadline field."""

from __future__ import annotations

import re
from typing import Any

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.wider import LONG_RUN_HOURS

# GPT-2 pre-trained on 3e13 tokens: the cheapest, 8 x B200, takes over 100 days; 32 take a quarter of that
SPEC: dict[str, Any] = {"model": {"preset": "gpt2"},
                        "training": {"batch_size": 12, "sequence_length": 1024, "precision": "bf16-mixed",
                                     "from_pretrained": False},
                        "dataset": {"samples": 30_000_000_000}, "constraints": {"max_gpus": 32}}


def _long_run(spec: dict[str, Any], shipped: Catalog) -> tuple[Any, list[str]]:
    rec = recommend_spec(spec, shipped)
    return rec, [w.message for w in rec.requirements.warnings if w.code == "long-run"]


def test_a_top_option_of_months_names_the_fastest_and_the_deadline_field(shipped: Catalog) -> None:
    rec, [message] = _long_run(SPEC, shipped)
    top = rec.options[0]
    assert top.training_hours > LONG_RUN_HOURS
    assert f"({top.training_hours / 24:,.0f} days)" in message
    fastest = float(re.search(r"The fastest within constraints\.max_gpus \(32\) is .*?: ([0-9.]+) h", message)[1])
    assert fastest < 0.8 * top.training_hours
    assert "Set constraints.deadline_hours (CLI --deadline)" in message


def test_a_deadline_or_a_short_run_gets_no_long_run_warning(shipped: Catalog) -> None:
    with_deadline = {**SPEC, "constraints": {"max_gpus": 32, "deadline_hours": 24 * 365 * 20}}
    assert _long_run(with_deadline, shipped)[1] == []
    short = {**SPEC, "dataset": {"samples": 1_000_000}}
    assert _long_run(short, shipped)[1] == []
