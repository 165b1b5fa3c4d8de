"""The purchase question prices cards of the newest generations on sale, not launch prices of cards long gone."""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog, OnPremCard
from tests.recommending import recommend_spec
from workers.ranking.on_sale import CURRENT_GENERATIONS, current_generation_cards

BERT_MNLI: dict[str, Any] = {
    "model": {"preset": "bert-base"},
    "training": {"batch_size": 32, "sequence_length": 128, "precision": "fp16-mixed", "epochs": 3},
    "dataset": {"samples": 392702}, "constraints": {"providers": ["onprem"]}}


def _card(gpu: str, as_of: str) -> OnPremCard:
    return OnPremCard(gpu=gpu, price_usd=100.0, power_watts=100, source="test", as_of=as_of)


def test_the_newest_generations_are_those_with_the_latest_launches() -> None:
    cards = {"a": _card("a", "2016-07"), "b": _card("b", "2019-01"), "c": _card("c", "2023-06"),
             "d": _card("d", "2025-03"), "e": _card("e", "2020-09")}
    arch = {"a": "pascal", "b": "turing", "c": "ada", "d": "blackwell", "e": "ampere"}
    assert CURRENT_GENERATIONS == 2
    assert current_generation_cards(cards, arch) == {"c", "d"}
    # a generation counts by its newest card: an Ampere card launched after Ada's first keeps Ampere in
    late = {**cards, "f": _card("f", "2025-06")}
    assert current_generation_cards(late, {**arch, "f": "ampere"}) == {"d", "e", "f"}


def test_the_shipped_catalog_prices_ada_and_blackwell_cards_only(shipped: Catalog) -> None:
    archs = {g.slug: g.architecture for g in shipped.gpus}
    cards = {c.gpu: c for c in shipped.onprem_cards}
    current = current_generation_cards(cards, archs)
    assert {archs[g] for g in current} == {"ada", "blackwell"}
    assert {"gtx-1060-6gb", "rtx-2060", "rtx-3090"} <= set(cards) - current


def test_a_bert_fine_tune_is_not_told_to_buy_a_2016_card_at_its_launch_price(shipped: Catalog) -> None:
    rec = recommend_spec(BERT_MNLI, shipped)
    assert rec.purchase, "the purchase question is answered"
    archs = {g.slug: g.architecture for g in shipped.gpus}
    assert {archs[p.gpu] for p in rec.purchase} <= {"ada", "blackwell"}
    assert all(p.as_of >= "2022-10" for p in rec.purchase)  # the GTX 1060 (2016-07, $249) came first before
    warning = next(w for w in rec.requirements.warnings if w.code == "purchase-older-cards")
    assert "left out" in warning.message and "constraints.gpus" in warning.message


def test_an_older_card_named_is_priced_at_its_launch_price_and_date(shipped: Catalog) -> None:
    named = {**BERT_MNLI, "constraints": {"providers": ["onprem"], "gpus": ["rtx-3090", "rtx-4090"]}}
    rec = recommend_spec(named, shipped)
    assert {p.gpu for p in rec.purchase} == {"rtx-3090", "rtx-4090"}
    assert next(p for p in rec.purchase if p.gpu == "rtx-3090").as_of == "2020-09"
    assert not any(w.code == "purchase-older-cards" for w in rec.requirements.warnings)  # none left out of scope


def test_without_the_purchase_question_nothing_is_said_of_it(shipped: Catalog) -> None:
    rec = recommend_spec({**BERT_MNLI, "constraints": {"providers": ["aws"]}}, shipped)
    assert rec.purchase == () and not any(w.code == "purchase-older-cards" for w in rec.requirements.warnings)


def test_a_reviews_buy_vs_rent_prices_the_same_cards(shipped: Catalog) -> None:
    from workers.review.ownership import ReviewUse, buy_vs_rent
    from workers.sizing.spec import OnPremAssumptions

    use = {gpu: ReviewUse(hours=500.0, jobs=2) for gpu in ("gtx-1060-6gb", "rtx-3090", "rtx-4090", "rtx-5090")}
    rows = buy_vs_rent(shipped, providers=["aws", "gcp"], assumptions=OnPremAssumptions(), use=use)
    assert {r.gpu for r in rows} == {"rtx-4090", "rtx-5090"}
