"""Slash-command answers this flow posts or gives at once, beyond the flow's own tests (tests/test_slack_flow.py, whose
app, Redis store and stand-in response_url these reuse): a card no cloud rents read as the asker's, a card's price."""

from __future__ import annotations

import json
import re

from flask import Flask

from tests.test_slack_flow import (  # noqa: F401  (fixtures: pytest finds them by name in this module)
    ResponseUrl,
    app,
    assert_valid_message,
    clean,
    command_form,
    signed_post,
    slack,
    store,
    switch,
)


def test_a_card_no_cloud_rents_said_alone_is_read_as_the_askers_own(app: Flask, slack: ResponseUrl) -> None:  # noqa: F811
    """"fine-tune gemma 2 9b with qlora on an rtx 4090" was ranked on the clouds only, none renting one: "Nothing
    fits". Someone who names a card no cloud rents has one: ranked as owned, first, with the micro-batches it takes."""
    url = slack.new_url()
    response = signed_post(app.test_client(), command_form("fine-tune gemma 2 9b with qlora on an rtx 4090", url))
    assert "1 x rtx-4090 read as your own (no cloud in the catalog rents it)" in response.json["text"]
    assert "Your own cards: 1 x rtx-4090, ranked at their power cost" in response.json["text"]
    answer = slack.answer(url)
    assert_valid_message(answer)
    assert "Nothing fits" not in answer["text"]
    first = next(b for b in answer["blocks"] if b["type"] == "section" and b.get("fields"))
    assert first["text"]["text"].startswith("*1. onprem onprem-1x-rtx-4090")
    assert "micro-batch 2 x 4 accumulation steps" in first["text"]["text"]


def test_a_cards_price_is_answered_at_once_with_each_prices_date(app: Flask, slack: ResponseUrl) -> None:  # noqa: F811
    """"how much does an h100 cost per hour" names no model: it was "unknown preset 'hour'". It is the cheapest
    GPU-hour of each provider and pricing, each with its machine, region and date (or "undated"), answered at once."""
    response = signed_post(app.test_client(), command_form("how much does an h100 cost per hour", slack.new_url()))
    assert response.status_code == 200
    reply = response.json
    assert_valid_message(reply)
    text = json.dumps(reply)
    assert reply["response_type"] == "ephemeral" and "gpugauge prices" in text
    assert re.search(r"\*h100-sxm\* \(NVIDIA H100 SXM, 80 GiB\): aws on demand \$[\d.]+/GPU-h \(p5", text)
    assert "undated" in text and "as of 20" in text  # every price says whether it is dated
    assert "h100-pcie, h100-nvl: no cloud in the catalog rents them" in text
