"""constraints.gpus: a recommendation on the GPUs the user allows (names as people write them, families)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from tests.service_helpers import example_spec
from workers.ranking.run_words import hours_text, usd_text
from workers.ranking.scope import unrented_gpus
from workers.ranking.strategy_words import strategy_text
from workers.schemas.specs import load_job
from workers.sizing.errors import UnknownNameError

A100S = {"a100-40gb", "a100-80gb", "a100-pcie-40gb", "a100-pcie-80gb"}


def test_a_family_keeps_every_member_and_nothing_else_in_options_and_rejections(shipped: Catalog) -> None:
    free = recommend_spec(changed_example("bert-finetune"), shipped)
    assert {o.gpu for o in free.options} - A100S  # unrestricted, the top options are other cards
    rec = recommend_spec(changed_example("bert-finetune", constraints={"gpus": ["A100"]}), shipped)
    assert rec.options and {o.gpu for o in rec.options} <= A100S
    assert all(r.gpu in A100S for r in rec.rejected if r.gpu)  # out of scope is left out silently
    assert all(row.gpu in A100S for row in rec.requirements.per_gpu)


def test_a_searched_strategy_ranking_keeps_to_the_named_gpus(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama3-8b"}, "training": {"batch_size": 4, "sequence_length": 4096,
                                                           "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 20000}, "constraints": {"gpus": ["h100 sxm"], "max_gpus": 16}}
    rec = recommend_spec(spec, shipped)
    assert rec.options and {o.gpu for o in rec.options} == {"h100-sxm"}


def test_an_unknown_gpu_is_refused_naming_its_place_in_the_list(shipped: Catalog) -> None:
    spec = changed_example("bert-finetune", constraints={"gpus": ["t4", "a1000"]})
    with pytest.raises(UnknownNameError) as caught:
        recommend_spec(spec, shipped)
    assert caught.value.field == "constraints.gpus[1]" and "a100-40gb" in caught.value.suggestions


def test_gpus_that_leave_no_option_name_the_gpu_that_would_do(shipped: Catalog) -> None:
    spec: dict[str, Any] = {"model": {"preset": "llama-7b"}, "training": {"batch_size": 1, "precision": "bf16-mixed"},
                            "dataset": {"samples": 1000}, "constraints": {"gpus": ["t4"], "max_gpus": 1}}
    rec = recommend_spec(spec, shipped)
    assert rec.options == ()
    [warning] = [w for w in rec.requirements.warnings if w.code == "gpus-exclude-all"]
    unrestricted = recommend_spec({**spec, "constraints": {"max_gpus": 1}, "limit": 1}, shipped).options[0]
    assert f"add {unrestricted.gpu} to constraints.gpus" in warning.message


def test_a_card_no_cloud_rents_is_offered_as_one_the_team_owns(shipped: Catalog) -> None:
    """A user who names a GTX 1080 Ti most likely has one: the warning says how to rank it as owned and what it
    gives, the figure being the one the owned ranking then returns."""
    spec = changed_example("bert-finetune", constraints={"gpus": ["gtx 1080 ti"]})
    rec = recommend_spec(spec, shipped)
    assert rec.options == ()
    [warning] = [w for w in rec.requirements.warnings if w.code == "gpus-exclude-all"]
    # the example's $50 budget and 12 h deadline are not why (other cards meet them): no constraints-conflict
    assert not any(w.code == "constraints-conflict" for w in rec.requirements.warnings)
    assert "no cloud in the catalog rents gtx-1080-ti" in warning.message
    assert "constraints.owned_gpus (CLI --owned 1xgtx-1080-ti)" in warning.message
    owned = recommend_spec(changed_example("bert-finetune", constraints={
        "gpus": ["gtx 1080 ti"], "owned_gpus": [{"gpu": "gtx-1080-ti", "count": 1}]}), shipped)
    first = owned.options[0]
    assert first.pricing.value == "owned" and first.gpu == "gtx-1080-ti"
    assert f"1 x gtx-1080-ti, {hours_text(first.training_hours)} for {usd_text(first.training_cost_usd)} of power" \
        in warning.message
    # a rented card named alone gets no such words
    rented = recommend_spec({"model": {"preset": "llama-7b"}, "training": {"batch_size": 1, "precision": "bf16-mixed"},
                             "dataset": {"samples": 1000}, "constraints": {"gpus": ["t4"], "max_gpus": 1}}, shipped)
    [plain] = [w for w in rented.requirements.warnings if w.code == "gpus-exclude-all"]
    assert "owned_gpus" not in plain.message
    # nor does a family some cloud rents, though some of its members are rented nowhere (h100-nvl); nor a card
    # the team already says it owns
    def unrented(constraints: dict[str, Any]) -> tuple[str, ...]:
        return unrented_gpus(load_job(changed_example("bert-finetune", constraints=constraints))[1], shipped)
    assert unrented({"gpus": ["gtx 1080 ti"]}) == ("gtx-1080-ti",)
    assert unrented({"gpus": ["h100"]}) == () and unrented({"gpus": ["t4"]}) == ()
    assert unrented({"gpus": ["gtx 1080 ti"], "owned_gpus": [{"gpu": "gtx-1080-ti", "count": 2}]}) == ()


def test_an_owned_card_that_runs_the_job_only_changed_is_offered_with_the_change(shipped: Catalog) -> None:
    """"fine-tune llama 3 8b ... on a 3090": one card runs the full fine-tune only with the optimizer offloaded to
    about 120 GiB of host memory. The warning said "1 x rtx-3090, 19.1 h for $1.00 of power" and nothing of how:
    a user would plan on the job as given, on a workstation that cannot hold it."""
    spec = {"model": {"preset": "llama3-8b"}, "dataset": {"samples": 10000},
            "training": {"batch_size": 8, "sequence_length": 1024, "precision": "bf16-mixed", "recompute": True,
                         "optimizer": "adamw", "optimizer_implementation": "fused", "from_pretrained": True},
            "constraints": {"gpus": ["rtx-3090"]}}
    rec = recommend_spec(spec, shipped)
    [warning] = [w for w in rec.requirements.warnings if w.code == "gpus-exclude-all"]
    owned = recommend_spec({**spec, "constraints": {"gpus": ["rtx-3090"],
                                                     "owned_gpus": [{"gpu": "rtx-3090", "count": 1}]}}, shipped)
    first = owned.options[0]
    assert first.pricing.value == "owned" and first.parallelism is not None
    print(f"\n{warning.message}")
    assert f"of power ({strategy_text(first.parallelism, nodes=1)})" in warning.message
    assert "optimizer offloaded to host memory" in warning.message


def test_an_owned_card_offered_for_a_job_without_samples_gives_its_iteration_not_zero_hours(
        shipped: Catalog) -> None:
    """"can i train resnet152 on a gtx 1080 ti with batch 64": no sample count, and the card was offered at
    "0.0 min for $0.0000 of power"; now its iteration and its hourly power, as the rented option beside it."""
    spec = {"model": {"preset": "resnet152"}, "training": {"batch_size": 64}, "constraints": {"gpus": ["gtx-1080-ti"]}}
    [warning] = [w for w in recommend_spec(spec, shipped).requirements.warnings if w.code == "gpus-exclude-all"]
    print(f"\n{warning.message}")
    assert "0.0 min" not in warning.message and "$0.0000" not in warning.message
    assert re.search(r"1 x gtx-1080-ti, [0-9,]+ ms an iteration at \$[0-9.]+/h of power", warning.message)
    mixed = {**spec, "constraints": {"gpus": ["rtx-4090", "a100-80gb"]}}
    [unrented] = [w for w in recommend_spec(mixed, shipped).requirements.warnings if w.code == "gpus-not-rented"]
    assert "0.0 min" not in unrented.message and "ms an iteration at" in unrented.message


def test_the_purchase_question_prices_only_the_named_cards(shipped: Catalog) -> None:
    spec = changed_example("resnet50-imagenet",
                           constraints={"providers": ["aws", "onprem"], "gpus": ["RTX 4090", "t4"]})
    rec = recommend_spec(spec, shipped)
    assert rec.purchase and {p.gpu for p in rec.purchase} == {"rtx-4090"}
    assert {o.gpu for o in rec.options} <= {"rtx-4090", "t4"}


def test_the_spec_keeps_the_names_as_given_and_the_api_refuses_an_unknown_one(embedded_client: FlaskClient) -> None:
    spec = example_spec("bert-finetune")
    spec["constraints"] = {**spec.get("constraints", {}), "gpus": ["1080 ti", "nonsense"]}
    _, job = load_job(spec)
    assert job.constraints.gpus == ("1080 ti", "nonsense")  # resolved against the catalog when ranked
    answer = embedded_client.post("/v1/recommendations", json=spec)
    assert answer.status_code == 422
    assert "constraints.gpus[1]" in answer.get_json()["errors"]


def test_with_no_option_the_advice_is_about_the_named_card_and_each_opened_option_says_how_it_runs(
        shipped: Catalog) -> None:
    """Llama 3 8B fully fine-tuned on one A100 40GB: nothing fits. The advice (does-not-fit, the mitigations)
    was about the sizing core's reference T4 beside a plan worked out on the A100; now both are the A100's.
    The QLoRA step says its batch-4 peak still exceeds the card, and the machine it opens says it runs a
    smaller micro-batch with accumulation."""
    spec = {"model": {"preset": "llama3-8b"}, "training": {"batch_size": 4, "sequence_length": 4096,
                                                           "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 20000}, "constraints": {"gpus": ["a100-40gb"], "max_gpus": 1}}
    rec = recommend_spec(spec, shipped)
    assert rec.options == ()
    said = {w.code: w.message for w in rec.requirements.warnings}
    assert "a100-40gb" in said["does-not-fit"] and "t4" not in said["does-not-fit"]
    assert "bf16-unsupported" not in said  # a T4's warning, about a card not in scope
    assert rec.requirements.mitigations and {m.gpu for m in rec.requirements.mitigations} == {"a100-40gb"}
    [adapters] = [m for m in rec.plan if m.kind == "adapters"]
    assert "still exceeds" in adapters.description and adapters.opens
    assert all("accumulation steps" in line and "QLoRA" in line for line in adapters.opens)


def test_a_named_card_no_cloud_rents_gets_its_own_plan_not_the_reference_cards(shipped: Catalog) -> None:
    """Mistral 7B under QLoRA at 8 x 1,024 tokens, asked on a 4090 (no cloud rents one): 59 GiB as given. The plan
    and the mitigations were worked out on the sizing core's reference T4 ("fits the 14.4 GiB usable on t4");
    they are now the 4090's, whose steps fit its 21.6 GiB usable."""
    spec = {"model": {"preset": "mistral-7b"},
            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "qlora"}},
                         "sequence_length": 1024, "batch_size": 8, "precision": "bf16-mixed"},
            "dataset": {"samples": 10000}, "constraints": {"gpus": ["rtx-4090"]}}
    rec = recommend_spec(spec, shipped)
    assert rec.options == () and unrented_gpus(load_job(spec)[1], shipped) == ("rtx-4090",)
    assert rec.plan and all(m.gpu == "rtx-4090" for m in rec.plan)
    assert {m.gpu for m in rec.requirements.mitigations} == {"rtx-4090"}
    assert all("t4" not in m.description for m in rec.plan)
    said = {w.code: w.message for w in rec.requirements.warnings}
    assert "rtx-4090" in said["does-not-fit"]
    fitting = [m for m in rec.plan if m.gpu_memory_bytes is not None and m.gpu_memory_bytes < 21 * 2**30]
    assert {"smaller-batch", "checkpointing"} <= {m.kind for m in fitting}


def test_a_named_card_no_cloud_rents_that_holds_the_job_gets_no_plan(shipped: Catalog) -> None:
    """"Can I fine-tune bert-base on a GTX 1060 6GB": 4.4 GiB on that card, 5.4 GiB usable. Nothing to rank (no cloud
    rents one), and the answer said "Nothing fits" with an out-of-memory plan of eight ways to shrink it."""
    from workers.schemas import RecommendationSchema
    from workers.slack.blocks import render_recommendation

    spec = {"model": {"preset": "bert-base"}, "training": {"from_pretrained": True, "sequence_length": 128,
                                                           "batch_size": 32}, "constraints": {"gpus": ["gtx-1060-6gb"]}}
    rec = recommend_spec(spec, shipped)
    assert rec.options == () and rec.plan == () and rec.requirements.mitigations == ()
    said = {w.code: w.message for w in rec.requirements.warnings}
    assert "does-not-fit" not in said and "1 x gtx-1060-6gb, 1,0" in said["gpus-exclude-all"]
    text = json.dumps(render_recommendation(RecommendationSchema().dump(rec), title="can i"))
    assert "*No option* within the constraints" in text and "Nothing fits" not in text
    # the same job at batch 64 does not fit the card: its plan, on that card
    big = recommend_spec({**spec, "training": {**spec["training"], "batch_size": 64}}, shipped)
    assert big.plan and all(m.gpu == "gtx-1060-6gb" for m in big.plan)


def test_a_language_model_sized_at_its_context_for_want_of_a_sequence_length_is_told_so(shipped: Catalog) -> None:
    """An API spec naming a Llama 3 8B LoRA fine-tune without training.sequence_length is sized at all 8,192
    tokens of its context; the answer says so and what a fine-tune's recipes use. Said, or pre-training, or a model
    given by its layers: no warning."""
    spec: dict[str, Any] = {"model": {"preset": "llama3-8b"},
                            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}},
                                         "batch_size": 8, "precision": "bf16-mixed"},
                            "dataset": {"samples": 50000}, "limit": 1}
    said = {w.code: w.message for w in recommend_spec(spec, shipped).requirements.warnings}
    assert "8,192 tokens" in said["sequence-length-assumed"] and "1,024" in said["sequence-length-assumed"]
    given = {**spec, "training": {**spec["training"], "sequence_length": 1024}}
    assert "sequence-length-assumed" not in {w.code for w in recommend_spec(given, shipped).requirements.warnings}
    pretraining = {**spec, "training": {"from_pretrained": False, "batch_size": 8, "precision": "bf16-mixed"}}
    assert "sequence-length-assumed" not in {w.code for w in recommend_spec(pretraining, shipped).requirements.warnings}


def test_a_card_no_cloud_rents_named_beside_a_rented_one_is_said_with_its_own_figure(shipped: Catalog) -> None:
    # "is the 4090 or the a100 faster for ...": the A100s were ranked and the 4090 left out without a word
    spec = changed_example("bert-finetune", constraints={"gpus": ["rtx-4090", "a100"]})
    rec = recommend_spec(spec, shipped)
    assert rec.options and {o.gpu for o in rec.options} <= A100S
    [said] = [w.message for w in rec.requirements.warnings if w.code == "gpus-not-rented"]
    assert said.startswith("No cloud in the catalog rents rtx-4090, so the options leave it out.")
    assert "(CLI --owned 1xrtx-4090)" in said and "one rtx-4090, " in said and "for the top option" in said
    owned = recommend_spec(changed_example("bert-finetune", constraints={
        "gpus": ["rtx-4090", "a100"], "owned_gpus": [{"gpu": "rtx-4090", "count": 1}]}), shipped)
    assert "gpus-not-rented" not in [w.code for w in owned.requirements.warnings]
    # several such cards ("a 24gb gpu"): each with its own figure, not the first alone
    many = recommend_spec(changed_example("bert-finetune", constraints={"gpus": ["rtx-4090", "rtx-3090", "a100"]}),
                          shipped)
    [said] = [w.message for w in many.requirements.warnings if w.code == "gpus-not-rented"]
    assert "one rtx-3090, " in said and "; one rtx-4090, " in said and said.endswith("for the top option.")
    # a family's variants no cloud rents (A100 PCIe) are not said: the family's rented cards were ranked
    alone = recommend_spec(changed_example("bert-finetune", constraints={"gpus": ["a100"]}), shipped)
    assert "gpus-not-rented" not in [w.code for w in alone.requirements.warnings]


def test_gpus_compared_names_the_first_option_of_each_model_the_options_leave_out(shipped: Catalog) -> None:
    # "compare a100 vs h100 for fine-tuning llama 3 8b with lora": ten H100 machines, no A100 figure anywhere
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}}, "sequence_length": 1024,
                         "batch_size": 8, "epochs": 3, "precision": "bf16-mixed", "recompute": True},
            "dataset": {"samples": 50000}, "constraints": {"gpus": ["a100", "h100"]}, "limit": 5}
    rec = recommend_spec(spec, shipped)
    assert {o.gpu for o in rec.options} <= {"h100-sxm", "h100-pcie", "h100-nvl"}
    [said] = [w.message for w in rec.requirements.warnings if w.code == "gpus-compared"]
    alone = recommend_spec({**spec, "constraints": {"gpus": ["a100"]}, "limit": 1}, shipped).options[0]
    assert said.startswith("The options are all h100; the first of each other GPU named, ranked on its own: a100, ")
    assert f"{alone.instance_type} ({alone.provider} {alone.region}" in said
    one = recommend_spec({**spec, "constraints": {"gpus": ["h100"]}}, shipped)
    assert "gpus-compared" not in [w.code for w in one.requirements.warnings]


def test_a_sharding_step_opens_no_machine_of_one_gpu(shipped: Catalog) -> None:
    # the plan's sharding row opened "a3-highgpu-1g ... (ZeRO-3 / FSDP over 1 GPU, ...)": over one GPU nothing is
    # sharded, and its memory was the plain run's
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"from_pretrained": True, "parallelism": {"adapter": {"kind": "lora"}}, "sequence_length": 1024,
                         "batch_size": 8, "epochs": 3, "precision": "bf16-mixed"},
            "dataset": {"samples": 50000}, "constraints": {"gpus": ["a100", "h100"]}, "limit": 3}
    rec = recommend_spec(spec, shipped)
    sharding = [m for m in rec.plan if m.kind.value == "sharding" and m.opens]
    assert sharding and all("over 1 GPU" not in line for m in sharding for line in m.opens)
    assert any("ZeRO-3 / FSDP over 2 GPUs" in line for m in sharding for line in m.opens)
