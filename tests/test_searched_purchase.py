"""The purchase question for jobs the strategy search ranks (adapters, sharding): cards priced with a strategy."""

from __future__ import annotations

from typing import Any

import pytest

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


def test_the_purchase_question_alone_is_advised_on_the_cards_in_scope_not_the_reference_t4(shipped: Catalog) -> None:
    """Llama 3 8B under LoRA, asked with providers ["onprem"] alone: no option to rent, cards to buy. The advice was
    the sizing core's reference T4's ("bf16-unsupported: t4", "does-not-fit ... t4"), a card out of scope."""
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}},
                         "sequence_length": 1024, "batch_size": 8, "epochs": 3, "precision": "bf16-mixed"},
            "dataset": {"samples": 50000}, "constraints": {"providers": ["onprem"]}}
    rec = recommend_spec(spec, shipped)
    assert rec.options == () and rec.purchase
    codes = {w.code for w in rec.requirements.warnings}
    assert "bf16-unsupported" not in codes
    assert not any("t4" in w.message.split() for w in rec.requirements.warnings)
    assert "memory-tier" in codes  # the job's own advice stays


def test_the_purchase_question_alone_puts_the_least_cost_per_run_first_and_keeps_the_least_to_spend(
        shipped: Catalog) -> None:
    # Nothing rented to weigh a purchase against: cheapest first put 1 x RTX 4060 first for ResNet-50 on ImageNet,
    # 10 days a run, where a few hundred dollars more cut the run to days. Now each run's share of the price over the
    # cards' life (lifetime x utilisation, as the break-even assumes) plus its power orders them.
    spec = changed_example("resnet50-imagenet", constraints={"providers": ["onprem"]})
    rec = recommend_spec(spec, shipped)
    costs = [p.run_cost_usd for p in rec.purchase[:-1]]
    assert costs == sorted(costs) and all(p.break_even_runs is None for p in rec.purchase)
    first = rec.purchase[0]  # its share of the price over the hours of use, plus power
    assert first.run_cost_usd == pytest.approx(first.purchase_usd * first.job_hours / first.hours_of_use
                                               + first.power_cost_usd)
    least = min(rec.purchase, key=lambda p: p.purchase_usd)
    assert least.purchase_usd < rec.purchase[0].purchase_usd and least.job_hours > rec.purchase[0].job_hours
    print(f"\nfirst {rec.purchase[0].instance_type} ${rec.purchase[0].purchase_usd:,.0f} "
          f"{rec.purchase[0].job_hours:.1f} h; least to spend {least.instance_type} ${least.purchase_usd:,.0f} "
          f"{least.job_hours:.1f} h")


LORA_8B_ON_4090S: dict[str, Any] = {
    "model": {"preset": "llama3-8b"},
    "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}}, "sequence_length": 1024,
                 "batch_size": 8, "epochs": 3, "precision": "bf16-mixed", "recompute": True,
                 "loss": "fused_linear_cross_entropy"},
    "dataset": {"samples": 50000},
    "constraints": {"max_gpus": 4, "providers": ["onprem", "aws", "gcp"], "gpus": ["rtx-4090"]}}


def test_buy_4090s_or_rent_prices_the_cards_that_hold_it_with_micro_batches_against_any_rental(
        shipped: Catalog) -> None:
    """"Should we buy 4 RTX 4090s or rent to fine-tune Llama 3 8B with LoRA": at batch 8 the job as given (22.1 GiB)
    fits no 4090, and no cloud rents one; the answer was "nothing fits" with no card to buy and no word on renting.
    The cards hold it with micro-batches of 4, and are held against the cheapest rental of the job on any card."""
    rec = recommend_spec(LORA_8B_ON_4090S, shipped)
    assert rec.options == () and {p.gpu_count for p in rec.purchase} == {1, 2, 4}
    assert all(p.gpu == "rtx-4090" and "micro-batch 4 x 2" in p.strategy for p in rec.purchase)
    anywhere = recommend_spec({**LORA_8B_ON_4090S, "constraints": {"providers": ["aws", "gcp"], "max_gpus": 4}},
                              shipped)
    cheapest = min(o.training_cost_usd for o in anywhere.options)
    for p in rec.purchase:
        assert p.rental_cost_usd == pytest.approx(cheapest) and p.gpu not in p.rental
        assert p.break_even_runs == pytest.approx(p.purchase_usd / (cheapest - p.power_cost_usd))
        assert p.pays_off == (p.break_even_hours is not None and p.break_even_hours <= p.hours_of_use)
    # asked to buy alone (providers onprem), nothing is rented to compare
    alone = recommend_spec({**LORA_8B_ON_4090S, "constraints": {**LORA_8B_ON_4090S["constraints"],
                                                                "providers": ["onprem"]}}, shipped)
    assert alone.purchase and all(p.rental_cost_usd is None for p in alone.purchase)


def test_a_card_no_cloud_rents_named_for_a_cnn_is_held_against_any_rental_without_a_strategy(shipped: Catalog) -> None:
    # "should we buy 4 4090s or rent for resnet50 on imagenet": the job fits the card as given, so no strategy
    # (the strategy search would have named ZeRO-3 for a ResNet)
    spec = changed_example("resnet50-imagenet", constraints={"providers": ["onprem", "aws", "gcp"], "max_gpus": 4,
                                                             "gpus": ["rtx-4090"]})
    rec = recommend_spec(spec, shipped)
    assert rec.purchase and all(p.strategy == "" and p.rental_cost_usd for p in rec.purchase)
    hours = [p.break_even_hours for p in rec.purchase if p.pays_off]
    assert hours and hours == sorted(hours)  # those that pay off soonest (in hours of use) first


@pytest.mark.parametrize("adapter", [True, False])  # the strategy search's purchase, and the ranking's as given
def test_the_purchase_question_without_a_data_set_size_still_prices_the_cards_that_hold_the_job(
        shipped: Catalog, adapter: bool) -> None:
    """"what gpu should we buy to fine-tune llama 3 8b with lora" says no sample count: the answer was "No option",
    no card priced. The cards that hold it are priced, without a run's time or power, in the order the run's cost
    over its samples gives where the samples are known."""
    training = ({"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}}, "sequence_length": 1024,
                 "batch_size": 8, "precision": "bf16-mixed"} if adapter else
                {"batch_size": 32, "sequence_length": 128, "precision": "fp16-mixed"})
    spec = {"model": {"preset": "llama3-8b" if adapter else "bert-base"}, "training": training,
            "constraints": {"providers": ["onprem"]}}
    unknown = recommend_spec(spec, shipped)
    assert unknown.options == () and unknown.purchase
    assert all(p.job_hours == 0 and p.power_cost_usd == 0 and p.break_even_hours is None and p.samples_per_second > 0
               for p in unknown.purchase)
    known = recommend_spec({**spec, "dataset": {"samples": 10_000_000}}, shipped)  # start-up a vanishing share
    # the same cards, the same first; near ties (within a start-up's share of the run) may swap
    assert {p.instance_type for p in known.purchase} == {p.instance_type for p in unknown.purchase}
    assert known.purchase[0].instance_type == unknown.purchase[0].instance_type
    assert all(p.job_hours > 0 for p in known.purchase)
