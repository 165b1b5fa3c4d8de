"""A question about a card's price, not a job's ("how much does an h100 cost per hour", "h100 price"): answered
from the catalog at once, each price with its machine, region and the date it was true (or "undated").

Per card: the cheapest rental of one GPU-hour by provider and pricing (a machine's price divided by its GPUs, as
`gpugauge catalog` lists them), and what buying one costs where the catalog prices the card to own.
"""

from __future__ import annotations

from collections.abc import Sequence

from slack_sdk.models.blocks import ContextBlock, HeaderBlock, MarkdownTextObject, PlainTextObject, SectionBlock

from catalog.gpu_names import gpu_name_matches
from catalog.types import Catalog
from workers.render import fmt_usd
from workers.slack.blocks import MAX_HEADER_CHARS, MAX_SECTION_CHARS, Message, escape_text, message
from workers.slack.typed import plain_text

PRICE_WORDS = frozenset({"cost", "costs", "price", "prices", "pricing", "priced", "hourly", "rent", "rental"})
MOST_CARDS = 6  # "how much is an a100" names four cards: each answered; more is no question about one card
_PRICINGS = {"on_demand": "on demand", "spot": "spot"}


def priced_cards(text: str, gpus: Sequence[str]) -> tuple[str, ...]:
    """Return the cards a price question names (in the catalog's order), () where the text asks no price or names no
    card. A job's words (a model) make it a job, not a price question: the caller asks only when the grammar found
    none."""
    words = [w.strip("?!.,;:") for w in plain_text(text).lower().split()]
    said = set(words)  # "h100 price", "how much is a t4" (not "how much memory ...")
    if not (PRICE_WORDS & said or ({"how", "much"} <= said and not {"memory", "vram", "ram", "gb"} & said)):
        return ()
    named: set[str] = set()
    i = 0
    while i < len(words):
        size = next((n for n in (3, 2, 1) if i + n <= len(words)  # "gtx 1080 ti", "a100 80gb", "t4": the longest
                     and gpu_name_matches(" ".join(words[i:i + n]), gpus)), 0)
        named.update(gpu_name_matches(" ".join(words[i:i + size]), gpus) if size else ())
        i += size or 1  # the words of a card read once ("a100 80gb" is not "80gb" again)
    return tuple(g for g in gpus if g in named)[:MOST_CARDS]


def render_prices(cards: Sequence[str], catalog: Catalog, *, title: str) -> Message:
    """Render each card's cheapest GPU-hour by provider and pricing, and its price to buy where the catalog has one."""
    shapes = {(i.provider, i.instance_type): i for i in catalog.instances}
    lines = []
    for slug in cards:
        best: dict[tuple[str, str], tuple[float, str]] = {}
        for offer in catalog.offers:
            shape = shapes.get((offer.provider, offer.instance_type))
            if shape is None or shape.gpu != slug or offer.pricing.value not in _PRICINGS:
                continue
            per_gpu = offer.price_per_hour_usd / shape.gpu_count
            key = (offer.provider.value, offer.pricing.value)
            if key not in best or per_gpu < best[key][0]:
                when = f"as of {offer.as_of}" if offer.as_of else "undated"
                best[key] = (per_gpu, f"{offer.instance_type}, {offer.region}, {when}")
        rents = [f"{provider} {_PRICINGS[pricing]} {fmt_usd(price)}/GPU-h ({where})"
                 for (provider, pricing), (price, where) in sorted(best.items())]
        owned = [f"to buy {fmt_usd(c.price_usd)} ({c.source}, {c.as_of})" for c in catalog.onprem_cards
                 if c.gpu == slug]
        if rents or owned:
            gpu = catalog.gpu(slug)
            lines.append(f"*{slug}* ({gpu.name}, {gpu.memory_bytes / 2**30:.0f} GiB): {'; '.join([*rents, *owned])}")
    unpriced = [slug for slug in cards if not any(line.startswith(f"*{slug}*") for line in lines)]
    if unpriced:  # a family's variants no cloud rents and no one prices to buy ("h100": the PCIe and NVL cards)
        lines.append(f"{', '.join(unpriced)}: no cloud in the catalog rents {'it' if len(unpriced) == 1 else 'them'}"
                     " and the catalog has no price to buy")
    text = "\n".join(f"• {escape_text(line)}" for line in lines)
    note = (f"catalog {catalog.version}; the cheapest GPU-hour of each provider and pricing (a machine's price over "
            "its GPUs; spot can be reclaimed). Ask with a model (e.g. `fine-tune llama 3 8b with lora on h100`) for "
            "what a run costs.")
    blocks = [HeaderBlock(text=PlainTextObject(text=f"gpugauge prices · {title}"[:MAX_HEADER_CHARS])),
              SectionBlock(text=MarkdownTextObject(text=text[:MAX_SECTION_CHARS])),
              ContextBlock(elements=[MarkdownTextObject(text=note)])]
    return message(f"{title}: " + "; ".join(lines), blocks)
