"""Block Kit messages: ranked options, memory, warnings, the out-of-memory plan, errors, all within limits."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from slack_sdk.models.blocks import Block

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommendation import RankedOption, Recommendation, Rejected
from workers.render import fmt_bytes, fmt_hours, fmt_usd
from workers.schemas import RecommendationSchema, RequirementsSchema
from workers.sizing.requirements import CodedWarning, MemoryBreakdown, Mitigation, PerGpu, Requirements
from workers.slack.blocks import (
    MAX_BLOCKS,
    MAX_SECTION_CHARS,
    memory_lines,
    render_error,
    render_fit,
    render_help,
    render_recommendation,
)
from workers.slack.grammar import parse_command
from workers.slack.phrases import normalize

GIB = 2**30


def requirements(*, warnings: tuple[CodedWarning, ...] = (), fits: bool = True,
                 mitigations: tuple[Mitigation, ...] = ()) -> Requirements:
    return Requirements(
        gpu_memory_bytes=12 * GIB,
        gpu_memory_breakdown=MemoryBreakdown(activations_bytes=8 * GIB, parameters_bytes=1 * GIB,
                                             gradients_bytes=1 * GIB,
                                             optimizer_state_bytes=1 * GIB, framework_reserve_bytes=1 * GIB),
        baseline_formula_bytes=9 * GIB, host_memory_bytes=160 * 10**9,
        storage_min_bytes=450 * 10**9, storage_max_bytes=600 * 10**9, cpu_single_thread_score=1500.0,
        flops_per_iteration=1e12, iterations_per_epoch=20_000, iterations_total=1_800_000,
        per_gpu=(PerGpu(gpu="v100-16gb", gpu_count=1, fits=fits, gpu_memory_bytes=12 * GIB,
                        iteration_ms=123.4, throughput_samples_per_s=518.0, training_hours=61.7,
                        bottleneck="compute"),),
        warnings=warnings, mitigations=mitigations,
    )


def option(rank: int, **changes: Any) -> RankedOption:
    base = RankedOption(rank=rank, provider="aws", instance_type=f"p3.{rank}xlarge", region="us-east-1",
                        pricing="spot", gpu="v100-16gb", gpu_count=rank, gpu_memory_bytes=16 * GIB, vcpus=8,
                        host_memory_bytes=61 * GIB, storage_bytes=0, cpu_single_thread_score=1400.0,
                        price_per_hour_usd=0.92 * rank, training_hours=60.0 / rank,
                        training_cost_usd=55.2 + rank, fits=True,
                        why=f"cheapest that meets the deadline #{rank}")
    return dataclasses.replace(base, **changes)


def result(options: tuple[RankedOption, ...], *, plan: tuple[Mitigation, ...] = (),
           rejected: tuple[Rejected, ...] = (), **req: Any) -> dict[str, Any]:
    rec = Recommendation(requirements=requirements(**req), options=options, rejected=rejected,
                         catalog_version="2025-06-01.1", prices_as_of="2025-06-01", plan=plan)
    dumped: dict[str, Any] = RecommendationSchema().dump(rec)
    return dumped


def assert_valid_message(msg: dict[str, Any]) -> None:
    assert isinstance(msg["text"], str) and msg["text"].strip()
    assert 0 < len(msg["blocks"]) <= MAX_BLOCKS
    for block in msg["blocks"]:
        parsed = Block.parse(block)
        assert parsed is not None
        parsed.validate_json()  # raises SlackObjectFormationError on any Slack limit
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= MAX_SECTION_CHARS
    json.dumps(msg, allow_nan=False)


def text_of(msg: dict[str, Any]) -> str:
    return json.dumps(msg["blocks"], ensure_ascii=False)


def test_the_top_five_options_show_instance_gpus_price_hours_cost_and_why() -> None:
    msg = render_recommendation(result(tuple(option(r) for r in range(1, 8))), title="resnet50 batch=64")
    assert_valid_message(msg)
    sections = [b for b in msg["blocks"] if b["type"] == "section" and b.get("fields")]
    assert len(sections) == 5
    first = json.dumps(sections[0], ensure_ascii=False)
    for expected in ("p3.1xlarge", "1 × v100-16gb", fmt_usd(0.92), fmt_hours(60.0), fmt_usd(56.2),
                     "cheapest that meets the deadline #1"):
        assert expected in first
    assert "…and 2 more options" in text_of(msg)


def test_the_fallback_text_names_the_best_option_and_its_cost() -> None:
    msg = render_recommendation(result((option(1), option(2))), title="resnet50")
    assert "p3.1xlarge" in msg["text"] and fmt_usd(56.2) in msg["text"]


def test_the_memory_line_names_the_biggest_term_and_its_share() -> None:
    msg = render_recommendation(result((option(1),)), title="resnet50")
    assert "12.0 GiB per GPU, mostly activations (8.0 GiB, 67%)" in text_of(msg)


def test_warnings_are_listed_with_their_codes() -> None:
    msg = render_recommendation(result((option(1),), warnings=(CodedWarning("short-run", "the run is short"),)),
                                title="x")
    assert "the run is short (`short-run`)" in text_of(msg)


def test_when_nothing_fits_the_out_of_memory_plan_and_the_reasons_are_shown() -> None:
    plan = (Mitigation(kind="smaller-batch", description="halve the batch twice", gpu_memory_bytes=7 * GIB,
                       time_factor=1.1, batch_size=16, learning_rate=0.025, update_interval=4),)
    rejected = (Rejected(instance_type="g4dn.xlarge", reason="needs 12.0 GiB, the T4 has 15 GiB usable"),)
    msg = render_recommendation(result((), plan=plan, rejected=rejected), title="vgg16")
    assert_valid_message(msg)
    blocks = text_of(msg)
    assert "Nothing fits" in blocks and "nothing fits" in msg["text"]
    assert "batch 16, lr 0.025, accum 4" in blocks and "7.0 GiB per GPU" in blocks
    assert "g4dn.xlarge: needs 12.0 GiB" in blocks


@pytest.mark.parametrize("code", ["constraints-conflict", "gpus-exclude-all", "fused-loss-opens"])
def test_when_the_limits_rule_every_option_out_what_to_relax_comes_with_nothing_fits(code: str) -> None:
    relax = CodedWarning(code, "No option meets the $5.00 budget and the 2 h deadline together; "
                               "raise constraints.budget_usd to 13.38.")
    msg = render_recommendation(result((), warnings=(relax, CodedWarning("short-run", "the run is short"))),
                                title="resnet50")
    assert_valid_message(msg)
    # the job fits memory (no plan): the limits leave no option, which is not "Nothing fits"
    [first] = [b for b in msg["blocks"] if "*No option* within the constraints" in json.dumps(b)]
    assert "Nothing fits" not in text_of(msg) and msg["text"].endswith("no option within the constraints")
    # in the words the user types to Slack: the setting and its value, not the spec's field
    assert "raise `budget=13.38`" in json.dumps(first) and "constraints.budget_usd" not in text_of(msg)
    assert text_of(msg).count("raise `budget=13.38`") == 1  # not again under Warnings
    assert "the run is short (`short-run`)" in text_of(msg)


def test_a_deadline_no_option_meets_is_no_option_even_where_the_job_as_given_needs_a_plan() -> None:
    # "pretrain a 7b llama on 1t tokens within 3 weeks" was headed "Nothing fits": it fits 8 B200s with ZeRO-1 in
    # micro-batches, 69 days; the deadline and the GPU limit leave no option, which the conflict says
    plan = (Mitigation(kind="smaller-batch", description="halve the batch", gpu_memory_bytes=7 * GIB,
                       time_factor=1.0, batch_size=4, update_interval=8),)
    relax = CodedWarning("constraints-conflict", "No option meets the 504 h (21 d) deadline; ...: raise "
                                                 "constraints.max_gpus to 32.")
    msg = render_recommendation(result((), plan=plan, warnings=(relax,)), title="llama 7b")
    assert "*No option* within the constraints" in text_of(msg) and "Nothing fits" not in text_of(msg)
    assert "raise `gpus=32`" in text_of(msg) and "Out-of-memory plan" in text_of(msg)
    memory = render_recommendation(result((), plan=plan), title="vgg16")  # memory alone: nothing fits as given
    assert "Nothing fits" in text_of(memory)


def test_huge_answers_stay_within_slack_limits() -> None:
    long_why = "because " * 600
    warnings = tuple(CodedWarning(f"code-{i}", "w" * 200) for i in range(500))
    options = tuple(option(r, why=long_why) for r in range(1, 200))
    msg = render_recommendation(result(options, warnings=warnings), title="t" * 500, top=200)
    assert_valid_message(msg)
    assert len(msg["blocks"]) == MAX_BLOCKS
    assert "more" in text_of(msg)


def test_a_fit_answer_says_whether_it_fits_and_the_time_per_iteration() -> None:
    req: dict[str, Any] = RequirementsSchema().dump(requirements())
    msg = render_fit(req, title="resnet50 on v100-16gb")
    assert_valid_message(msg)
    assert ":white_check_mark: fits" in text_of(msg) and "123.4 ms" in text_of(msg)
    assert "v100-16gb fits" in msg["text"]


def test_a_fit_that_does_not_fit_carries_the_plan() -> None:
    plan = (Mitigation(kind="recompute", description="checkpoint activations", gpu_memory_bytes=6 * GIB,
                       time_factor=1.33),)
    req: dict[str, Any] = RequirementsSchema().dump(requirements(fits=False, mitigations=plan))
    msg = render_fit(req, title="resnet50 on t4")
    assert_valid_message(msg)
    assert "does not fit" in msg["text"] and "recompute" in text_of(msg) and "×1.33" in text_of(msg)


def test_an_error_message_says_what_went_wrong_and_what_to_change() -> None:
    msg = render_error("gpugauge could not size this job", problems=["batch= Must be at least 1."])
    assert_valid_message(msg)
    assert "batch= Must be at least 1." in msg["text"] and "What to change" in text_of(msg)


def test_the_help_lists_the_words_defaults_presets_and_gpus() -> None:
    msg = render_help(presets=["resnet50", "vgg16"], gpus=["t4", "v100-16gb"])
    assert_valid_message(msg)
    blocks = text_of(msg)
    for expected in ("`batch=64`", "`spot`", "resnet50, vgg16", "t4, v100-16gb", "batch=32", "`qlora`", "`rank=16`",
                     "`targets=q,k,v,o`", "llama3-8b qlora rank=16 bf16",
                     "precision=fp32, bf16 for a model of 1B parameters or more", "`owned=4xrtx-3090`",
                     "on my 1080 ti"):
        assert expected in blocks
    # the default objective said is the one a command without one gets: the spec's cost (it said balanced)
    assert "objective cost" in blocks and "objective balanced" not in blocks
    assert parse_command("resnet50 batch=64", presets={"resnet50"}, gpus=("t4",)).spec.get("objective") is None


def test_a_long_list_of_rejected_offers_is_cut_to_the_first_few() -> None:
    rejected = tuple(Rejected(instance_type=f"x{i}.large", reason="too small") for i in range(20))
    msg = render_recommendation(result((), rejected=rejected), title="vgg16")
    assert_valid_message(msg)
    why_not = next(b["text"]["text"] for b in msg["blocks"] if b["type"] == "section"
                   and b["text"]["text"].startswith("*Why not*"))
    assert why_not.count("• ") == 8 and why_not.endswith("…and 12 more")


def test_without_a_dataset_size_hours_and_cost_read_unknown_not_zero() -> None:
    msg = render_recommendation(result((option(1, training_hours=0.0, training_cost_usd=0.0),)), title="x")
    assert_valid_message(msg)
    blocks = text_of(msg)
    assert "n/a: add samples=" in blocks and "$0.00" not in blocks
    assert "per hour" in msg["text"] and "$0.00" not in msg["text"]


def test_a_warning_every_option_shown_carries_is_said_once_and_the_others_under_their_option() -> None:
    same = CodedWarning("duration-unknown", "dataset.samples is not given, so the budget cannot be worked out")
    spot = CodedWarning("spot-interruptions", "one interruption every 67 h")
    msg = render_recommendation(result(tuple(option(r, warnings=(same, spot) if r == 2 else (same,))
                                             for r in range(1, 6))), title="resnet50 under $1")
    assert_valid_message(msg)
    blocks = text_of(msg)
    assert blocks.count("the budget cannot be worked out") == 1
    assert "every option shown: dataset.samples is not given" in blocks
    options = [json.dumps(b) for b in msg["blocks"] if b.get("fields")]
    assert "one interruption every 67 h" in options[1] and "interruption" not in options[0]
    # one option shown keeps its warnings under it
    alone = text_of(render_recommendation(result((option(1, warnings=(same,)),)), title="x"))
    assert ":warning: dataset.samples is not given" in alone and "every option shown" not in alone


def test_a_top_option_with_its_own_strategy_gives_its_step_beside_the_job_as_given(shipped: Catalog) -> None:
    from tests.recommending import recommend_spec

    spec = {"model": {"preset": "llama-7b"},
            "training": {"batch_size": 64, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 5200}, "constraints": {"max_gpus": 8}}
    dumped = RecommendationSchema().dump(recommend_spec(spec, shipped))
    top = dumped["options"][0]["parallelism"]
    text = render_recommendation(dumped, title="llama")["blocks"][1]["text"]["text"]
    assert "per GPU as given" in text
    assert f"*The top option's step:* {fmt_bytes(top['gpu_memory_per_gpu_bytes'])} per GPU" in text
    assert f"{top['batch_size']} x {top['update_interval']} accumulation steps" in text


def test_an_option_on_several_machines_shows_all_its_gpus_and_its_whole_price() -> None:
    """gpu_count and price_per_hour_usd are one machine's; an option on 4 machines of 8 GPUs reads 32 GPUs
    and 4 x the hourly price, so that price x hours is the total shown beside it."""
    spread = option(1, instance_type="p4d.24xlarge", gpu_count=8, price_per_hour_usd=10.0, nodes=4,
                    training_hours=2.0, training_cost_usd=80.0)
    msg = render_recommendation(result((spread, option(2))), title="llama")
    assert_valid_message(msg)
    [first] = [b for b in msg["blocks"] if b["type"] == "section" and "p4d.24xlarge" in json.dumps(b)]
    fields = [f["text"] for f in first["fields"]]
    assert "4 × p4d.24xlarge" in first["text"]["text"]
    assert fields[0].startswith("*GPUs*\n32 × v100-16gb") and "on 4 machines" in fields[0]
    assert fields[1] == f"*Price per hour*\n{fmt_usd(40.0)} (4 × {fmt_usd(10.0)})"
    assert "4 × p4d.24xlarge (32× v100-16gb)" in msg["text"]
    # one machine reads as before
    [second] = [b for b in msg["blocks"] if b["type"] == "section" and "p3.2xlarge" in json.dumps(b)]
    assert second["fields"][1]["text"] == f"*Price per hour*\n{fmt_usd(1.84)}"


def test_each_option_says_the_day_its_price_was_true_or_that_its_source_names_none() -> None:
    dated = option(1, price_source="pricing.yml (generated Thu Jul 30 2026)", price_as_of="2026-07-30")
    undated = option(2, price_source="SkyPilot catalog skypilot-org/skypilot-catalog@abc")
    owned = option(3, provider="onprem", instance_type="onprem-1x-rtx-3090", pricing="owned",
                   price_source="power only: 1 x 350 W board power at $0.15/kWh (...)")
    msg = render_recommendation(result((dated, undated, owned)), title="bert")
    assert_valid_message(msg)
    prices = {b["text"]["text"].split("*")[1]: b["fields"][1]["text"] for b in msg["blocks"]
              if b["type"] == "section" and b.get("fields")}
    assert prices["1. aws p3.1xlarge"] == f"*Price per hour*\n{fmt_usd(0.92)}, as of 2026-07-30"
    assert prices["2. aws p3.2xlarge"] == f"*Price per hour*\n{fmt_usd(1.84)}, undated"
    # the team's own cards: power at its electricity rate, which has no market date (nor "undated" to fix)
    assert prices["3. onprem onprem-1x-rtx-3090"].endswith(", power at your electricity rate")


def test_asked_what_to_buy_the_answer_lists_the_cards_to_buy_not_nothing_fits(shipped: Catalog) -> None:
    """"What should we buy to fine-tune llama 3 8b with lora on 50k samples": the purchase question alone (providers
    onprem). The result has no option to rent and a list of cards to buy, which Slack did not show: it answered
    "Nothing fits within the constraints"."""
    asked, either = "what should we buy to fine-tune llama 3 8b with lora on 50k samples", "buy or rent for resnet50"
    said, _, _ = normalize(asked.split(), presets=("llama-3-8b",))
    assert "onprem" in said and "aws" not in said
    both, _, _ = normalize(either.split(), presets=("resnet50",))
    assert {"onprem", "aws", "gcp"} <= set(both)
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}},
                         "sequence_length": 1024, "batch_size": 8, "epochs": 3, "precision": "bf16-mixed"},
            "dataset": {"samples": 50000}, "constraints": {"providers": ["onprem"]}}
    dumped = RecommendationSchema().dump(recommend_spec(spec, shipped))
    assert dumped["options"] == [] and dumped["purchase"]
    msg = render_recommendation(dumped, title="buy", purchase=True)
    assert_valid_message(msg)
    text = text_of(msg)
    assert "Cards to buy" in text and "Nothing fits" not in text
    first = dumped["purchase"][0]
    assert f"{first['gpu_count']} × {first['gpu']}" in text and fmt_usd(first["purchase_usd"]) in text
    assert msg["text"].endswith(f"first to buy is {first['instance_type']}")
    # nothing rented to weigh it against: the least a run costs over the cards' life first, the least to spend too
    assert "a run with its price spread over 3 years at 50% use" in text
    least = min(dumped["purchase"], key=lambda p: p["purchase_usd"])
    assert least is not first and f"the least to spend: *{least['gpu_count']} × {least['gpu']}*" in text
    # not asked: no list (the default providers take on-prem in too, and every answer would carry it)
    assert "Cards to buy" not in text_of(render_recommendation(dumped, title="buy"))
    assert "Cards to buy*" in text  # nothing rented: no rental named
    # "buy 4 4090s or rent": held against a rental, named once in the section's title with its cost a run
    rented = RecommendationSchema().dump(recommend_spec(
        {**spec, "constraints": {"providers": ["onprem", "aws", "gcp"], "gpus": ["rtx-4090"], "max_gpus": 4}},
        shipped))
    row = rented["purchase"][0]
    assert f"*Cards to buy against renting {row['rental']}, {fmt_usd(row['rental_cost_usd'])} a run*" in text_of(
        render_recommendation(rented, title="buy or rent", purchase=True))
    # no sample count said: the cards still listed, at their throughput, asking for the count
    untimed = RecommendationSchema().dump(recommend_spec({**spec, "dataset": {}}, shipped))
    said = text_of(render_recommendation(untimed, title="buy", purchase=True))
    assert untimed["purchase"] and "Cards to buy" in said and "No option" not in said
    assert "samples/s (add samples= for a run's time and cost)" in said and "0 s a run" not in said


def test_a_comparison_shows_the_first_option_of_each_gpu_model_first() -> None:
    from workers.slack.blocks import each_model_first

    options = [{"gpu": g, "rank": r} for r, g in enumerate(("h100-sxm", "h100-sxm", "a100-80gb", "h100-pcie",
                                                              "a100-40gb", "t4"), start=1)]
    assert [o["rank"] for o in each_model_first(options)] == [1, 3, 6, 2, 4, 5]


@pytest.mark.parametrize(("total", "baseline", "said"), [(20, 366, True), (20, 30, False)])
def test_the_plain_formula_says_what_it_counts_where_it_is_far_above_the_estimate(total: int, baseline: int,
                                                                                said: bool) -> None:
    # a LoRA fine-tune of a 7B: "the plain formula gives 366.4 GiB" beside 20.5 GiB read as an alarm
    text = memory_lines({"gpu_memory_bytes": total * GIB, "baseline_formula_bytes": baseline * GIB})
    assert f"gives {fmt_bytes(baseline * GIB)}" in text
    assert ("every weight trained" in text) is said
