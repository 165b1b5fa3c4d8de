"""The purchase question for jobs the strategy search ranks (adapters, sharding): cards priced with a strategy."""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec

QLORA_7B: dict[str, Any] = {
    "model": {"preset": "llama2-7b"},
    "training": {"batch_size": 4, "sequence_length": 2048, "precision": "bf16-mixed", "epochs": 3,
                 "parallelism": {"adapter": {"kind": "qlora"}}},
    "dataset": {"samples": 50000}, "constraints": {"providers": ["aws", "onprem"]}}


def test_a_qlora_fine_tune_gets_cards_to_buy_each_with_the_strategy_that_fits_it(shipped: Catalog) -> None:
    rec = recommend_spec(QLORA_7B, shipped)
    assert rec.options and rec.purchase, "an adapter job is ranked by the strategy search and still gets the question"
    by_machine = {p.instance_type: p for p in rec.purchase}
    assert all(p.strategy and "QLoRA" in p.strategy for p in rec.purchase)
    # 24 GB consumer cards hold it only with micro-batches: named, with the hours of that strategy
    consumer = [p for p in rec.purchase if p.gpu in ("rtx-4090", "rtx-3090", "rtx-4080-super", "rtx-4070-ti-super")]
    assert consumer and all("micro-batch" in p.strategy for p in consumer)
    assert all(p.job_hours > 0 and p.rental_cost_usd == rec.options[0].training_cost_usd for p in by_machine.values())


def test_without_onprem_there_is_no_purchase_question(shipped: Catalog) -> None:
    rec = recommend_spec({**QLORA_7B, "constraints": {"providers": ["aws"]}}, shipped)
    assert rec.options and rec.purchase == ()


def test_a_job_as_given_names_no_strategy_for_its_cards(shipped: Catalog) -> None:
    rec = recommend_spec(changed_example("buy-or-rent"), shipped)
    assert rec.purchase and all(p.strategy == "" for p in rec.purchase)
