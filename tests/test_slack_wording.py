"""The product's advice in Slack's words: the setting to type, which the grammar then reads."""

from __future__ import annotations

import re

import pytest

from tests.test_slack_phrases import parse
from workers.slack.wording import slack_words


@pytest.mark.parametrize(("message", "said", "field", "value"), [
    ("No option meets the 504 h (21 d) deadline; ...: move constraints.deadline_hours to 1667.9.",
     "`deadline=1667.9h`", "deadline_hours", 1667.9),
    ("or with up to 32 GPUs the cheapest that meets the deadline is ...: raise constraints.max_gpus to 32.",
     "`gpus=32`", "max_gpus", 32),
    ("No option meets the $100 budget; ...: raise constraints.budget_usd to 1,104.36.", "`budget=1104.36`",
     "budget_usd", 1104.36),
    ("ranked by cost, as asked; constraints.deadline_hours 0.8 (CLI --deadline 0.8h) ranks such options first.",
     "`deadline=0.8h`", "deadline_hours", 0.8),
])
def test_a_field_to_change_is_said_as_the_setting_the_grammar_reads(message: str, said: str, field: str,
                                                                     value: float) -> None:
    # "raise constraints.max_gpus to 32" is the API's field; a Slack user types gpus=32
    words = slack_words(message)
    assert said in words and "constraints." not in words and "(CLI" not in words
    typed = re.search(r"`([^`]+)`", words)
    assert typed is not None
    assert parse(f"resnet50 {typed[1]}").spec["constraints"][field] == value


def test_fields_slack_has_no_setting_for_and_percentages_stay() -> None:
    for message in ("say training.attention: math, 834.9 GiB per GPU",  # no Slack setting for the kernel
                    "dataset.samples is not given",  # no value beside it
                    "training.sequence_length 50% shorter"):  # a share, not a value to set
        assert slack_words(message) == message
