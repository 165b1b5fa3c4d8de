"""A card's price asked in Slack, with no job: which questions are one, and the answer's figures."""

from __future__ import annotations

import pytest

from catalog.loader import load_catalog
from workers.slack.prices import priced_cards, render_prices

CATALOG = load_catalog()
GPUS = [g.slug for g in CATALOG.gpus]


@pytest.mark.parametrize(("text", "cards"), [
    ("how much does an h100 cost per hour", ("h100-sxm", "h100-pcie", "h100-nvl")),
    ("rtx 4090 price?", ("rtx-4090",)),
    ("how much for a t4", ("t4",)),
    ("a100 80gb pricing", ("a100-80gb",)),  # its words read once: not every 80 GB card again
])
def test_a_question_about_a_cards_price_names_its_cards(text: str, cards: tuple[str, ...]) -> None:
    assert priced_cards(text, GPUS) == cards


@pytest.mark.parametrize("text", ["how much vram does a t4 have", "what does an h100 have", "price"])
def test_what_asks_no_price_of_a_card_is_no_price_question(text: str) -> None:
    assert priced_cards(text, GPUS) == ()


def test_each_price_is_the_cheapest_gpu_hour_of_its_provider_and_pricing() -> None:
    answer = render_prices(("t4",), CATALOG, title="t4 price")
    text = answer["blocks"][1]["text"]["text"]
    shapes = {(i.provider.value, i.instance_type): i for i in CATALOG.instances}
    for provider in ("aws", "gcp"):
        for pricing, said in (("on_demand", "on demand"), ("spot", "spot")):
            per_gpu = [o.price_per_hour_usd / shapes[(o.provider.value, o.instance_type)].gpu_count
                       for o in CATALOG.offers if o.provider.value == provider and o.pricing.value == pricing
                       and (o.provider.value, o.instance_type) in shapes
                       and shapes[(o.provider.value, o.instance_type)].gpu == "t4"]
            assert f"{provider} {said} ${min(per_gpu):.2f}/GPU-h (" in text
    bought = render_prices(("rtx-4090",), CATALOG, title="4090")["blocks"][1]["text"]["text"]
    assert "to buy $1,599 (" in bought and "/GPU-h" not in bought  # no cloud rents one; its launch price, sourced
