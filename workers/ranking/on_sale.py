"""Which cards the purchase question prices: those of the newest generations on sale, and any the user names.

An on-prem card's price is its launch price (US MSRP or list, catalog/data), true in its launch month. It stays
roughly what a card sells for new while the card is made; NVIDIA's consumer and workstation generations come about
two years apart, and a generation leaves production after its successor arrives, after which a card sells used, or
as old stock, at prices we do not have. So the purchase question (and a review's buy-vs-rent) prices the cards of
the CURRENT_GENERATIONS newest architectures among the cards listed (by their newest launch: with the catalog of
2026-12, Blackwell's RTX 50 series and RTX PRO 6000, and Ada's RTX 40 series and RTX 6000 Ada); a GTX 1060 at its
2016 launch price of $249 was the cheapest "purchase" for a BERT fine-tune. An older card named in
constraints.gpus is still priced, at its launch price and date. Owned cards (constraints.owned_gpus) are not
bought and are unaffected.
"""

from __future__ import annotations

from collections.abc import Mapping

from catalog.types import OnPremCard
from workers.sizing.requirements import CodedWarning

CURRENT_GENERATIONS = 2


def current_generation_cards(cards: Mapping[str, OnPremCard], architectures: Mapping[str, str]) -> frozenset[str]:
    """Return the slugs of the cards whose architecture is among the CURRENT_GENERATIONS newest launched."""
    newest: dict[str, str] = {}
    for slug, card in cards.items():
        arch = architectures.get(slug, "")
        newest[arch] = max(newest.get(arch, ""), card.as_of)
    kept = set(sorted(newest, key=lambda a: (newest[a], a), reverse=True)[:CURRENT_GENERATIONS])
    return frozenset(slug for slug in cards if architectures.get(slug, "") in kept)


def older_cards_warning(cards: Mapping[str, OnPremCard], current: frozenset[str],
                        priced: Mapping[str, OnPremCard]) -> CodedWarning | None:
    """Return `purchase-older-cards` naming the cards of older generations the purchase question left out."""
    left = sorted((c for slug, c in cards.items() if slug not in current and slug not in priced),
                  key=lambda c: (c.as_of, c.gpu))
    if not left:
        return None
    names = ", ".join(c.gpu for c in left[-4:])
    return CodedWarning("purchase-older-cards", (
        f"The purchase question prices cards of the {CURRENT_GENERATIONS} newest generations listed; "
        f"{len(left)} older cards (launched {left[0].as_of} to {left[-1].as_of}, e.g. {names}) are left out: their "
        "launch prices are not what they sell for now (out of production, sold used or as old stock). Name one "
        "(constraints.gpus, CLI --gpu) to price it at its launch price anyway."))
