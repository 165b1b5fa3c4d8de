"""`/gpugauge` about cards (2026-12-06): a card said by its memory, a count of GPUs, the cards a team has, a comparison
that fits with changes, and what is no NVIDIA GPU."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import PRESET_WORDS, parse
from workers.slack.grammar import CommandError, parse_command


def test_a_memory_size_no_card_has_asks_for_the_card() -> None:
    with pytest.raises(CommandError) as caught:
        parse("will bert-large fit in 12gb")  # none of GPUS has 12 GB
    assert caught.value.problems == ["'12gb' is an amount of memory no card has: name the card, e.g. `rtx-3060`, or a "
                                     "size cards have (`a 24gb gpu`), or drop it for the memory the job needs"]


CARDS = ("rtx-3060", "titan-xp", "t4", "v100-16gb", "rtx-3090", "rtx-4090", "a10g", "l4", "a100-80gb", "h100-sxm")


@pytest.mark.parametrize(("text", "kind", "cards"), [
    ("fine-tune mistral 7b with qlora on 10k examples on a single 24gb gpu", "recommend",
     ["rtx-3090", "rtx-4090", "a10g", "l4"]),
    ("will bert-large fit in 12gb", "fit", ["rtx-3060", "titan-xp"]),
    ("does bert base fit on a 16gb card", "fit", ["t4", "v100-16gb"]),
])
def test_a_memory_size_said_of_a_card_is_the_cards_of_that_size(text: str, kind: str, cards: list[str]) -> None:
    size = next(w for w in text.split() if w.endswith("gb"))
    # "on a single 24gb gpu" was refused: "unknown word '24gb'"; "fit in 12gb" asked for the card's name
    command = parse_command(text, presets=PRESET_WORDS, gpus=CARDS)
    named = command.gpus if kind == "fit" else command.spec["constraints"]["gpus"]
    assert (command.kind, list(named)) == (kind, cards)
    assert command.defaults_used[0] == f"{size}: the cards of {size.upper()}, {', '.join(cards)}"


@pytest.mark.parametrize(("text", "objective"), [
    ("how long to train resnet50 on imagenet on 4 v100s", "balanced"),  # was 1 x V100 for 104 h, cheapest first
    ("fine-tune llama 3 8b on 8 h100s with lora, 100k samples, seq 4096", "balanced"),
    ("resnet50 imagenet on 4 v100s cheapest", "cost"),  # an objective said wins
])
def test_a_count_of_gpus_said_alone_ranks_by_cost_and_time_together(text: str, objective: str) -> None:
    command = parse(text)
    assert command.spec["objective"] == objective
    told = any(d.startswith("ranked by cost and time together (up to") for d in command.defaults_used)
    assert told == (objective == "balanced")


@pytest.mark.parametrize("text", [
    "resnet50 imagenet on 4 v100s within 2 days",  # the cheapest meeting the deadline is the question
    "resnet50 imagenet on 4 v100s under $100",
    "fine-tune llama 7b with lora on 1 gpu",  # one GPU: nothing to rank by speed
])
def test_a_count_with_a_limit_or_of_one_keeps_the_cost_objective(text: str) -> None:
    assert "objective" not in parse(text).spec


def test_a_fit_question_says_the_change_that_fits_the_same_cards() -> None:
    # "does llama 3 70b lora fit on 8 a100 80gb" answered ":x: does not fit, 161.2 GiB per GPU": plain data
    # parallel, as given; sharded over the eight it holds in 38.8 GiB, which the plan said only further down
    from catalog.loader import load_catalog
    from workers.schemas import RequirementsSchema
    from workers.schemas.specs import load_job
    from workers.sizing.estimate import estimate_on_gpus
    from workers.slack.blocks import render_fit
    from workers.tasks.slack import fit_fixes

    gpus = load_catalog().gpus
    command = parse_command("does llama 3 70b lora fit on 8 a100 80gb", presets=PRESET_WORDS, gpus=CARDS)
    requirements = estimate_on_gpus(load_job(command.spec)[1], gpus, slugs=command.gpus, gpu_count=command.gpu_count)
    assert not requirements.per_gpu[0].fits
    fixes = fit_fixes(requirements, gpus)
    assert fixes["a100-80gb"].startswith("fits with sharding (") and "per GPU, time ×" in fixes["a100-80gb"]
    message = render_fit(RequirementsSchema().dump(requirements), title="70b", fixes=fixes)
    assert ":x: does not fit as given" in str(message["blocks"]) and "fits with changes" in message["text"]
    fitting = parse_command("does resnet50 fit on a t4", presets=PRESET_WORDS, gpus=CARDS)
    fine = estimate_on_gpus(load_job(fitting.spec)[1], gpus, slugs=fitting.gpus)
    assert fine.per_gpu[0].fits and fit_fixes(fine, gpus) == {}


@pytest.mark.parametrize("text", ["will 4 gpus speed up mlp mnist training",
                                  "is it worth using 8 gpus for resnet18 cifar10",
                                  "does 8 gpus pay off for bert base fine-tuning on 10k samples"])
def test_whether_more_gpus_pay_off_is_asked_as_people_ask_it(text: str) -> None:
    # each was "unknown preset 'speed'" ('worth', 'pay'): the answer's multi-GPU advice is what they ask for
    command = parse(text)
    assert command.kind == "recommend" and command.spec["objective"] == "balanced"


@pytest.mark.parametrize(("text", "owned"), [
    ("i have a 4090, can i fine-tune mistral 7b with qlora", [{"gpu": "rtx-4090", "count": 1}]),
    ("we have 2 a6000s, fine-tune mistral 7b with lora", [{"gpu": "rtx-a6000", "count": 2}]),
    ("we own 4 3090s resnet50 imagenet", [{"gpu": "rtx-3090", "count": 4}]),
])
def test_cards_a_team_says_it_has_are_its_own(text: str, owned: list[dict[str, object]]) -> None:
    # each was "unknown preset 'have'"
    spec = parse_command(text, presets=PRESET_WORDS, gpus=(*CARDS, "rtx-a6000")).spec
    assert spec["constraints"]["owned_gpus"] == owned


def test_a_family_a_team_says_it_has_is_its_smaller_card_told_back() -> None:
    # "we have 4 a100s, how long to fine-tune llama 3 70b with qlora" ranked the clouds' A100 machines ($364 for 51 h
    # on GCP) for a team that owns four: the family's smaller card is theirs (what fits it fits the larger), told
    command = parse_command("we have 2 a100s, fine-tune llama 3 8b on 50k samples", presets=PRESET_WORDS,
                            gpus=(*CARDS, "a100-40gb"))
    assert command.spec["constraints"] == {"owned_gpus": [{"gpu": "a100-40gb", "count": 2}]}
    assert command.defaults_used[0] == ("a100s: the team's taken as a100-40gb, the smaller of its cards (a100-80gb, "
                                        "a100-40gb); name the card for another")
    said = parse_command("we have 2 a100 80gb, fine-tune llama 3 8b", presets=PRESET_WORDS, gpus=(*CARDS, "a100-40gb"))
    assert said.spec["constraints"]["owned_gpus"] == [{"gpu": "a100-80gb", "count": 2}]
    assert not any("the team's taken as" in d for d in said.defaults_used)
    assert parse_command("we have 4xa100, fine-tune llama 3 8b", presets=PRESET_WORDS, gpus=(*CARDS, "a100-40gb")
                         ).spec["constraints"]["owned_gpus"] == [{"gpu": "a100-40gb", "count": 4}]


def test_what_is_no_nvidia_gpu_is_said_and_a_managed_service_is_its_clouds_machines() -> None:
    for text in ("train resnet50 on cpu", "fine-tune llama 3 8b on my macbook", "fine-tune llama 3 8b on tpu"):
        with pytest.raises(CommandError) as caught:
            parse(text)
        assert caught.value.problems[0].split(":")[1].strip().startswith("gpugauge ranks NVIDIA GPUs")
    command = parse("resnet50 on vertex")  # Vertex AI: GCP's machines, at Compute Engine's prices, said
    assert command.spec["constraints"]["providers"] == ["gcp"]
    assert any(d.startswith("vertex: Vertex AI training costs more") for d in command.defaults_used)
    assert parse("bert on ec2").spec["constraints"]["providers"] == ["aws"]


@pytest.mark.parametrize(("text", "owned", "kept"), [
    ("fine-tune gemma 2 9b with qlora on an rtx 4090", [{"gpu": "rtx-4090", "count": 1}], {"max_gpus": 1}),
    ("train resnet50 on imagenet on 2 rtx 3090s", [{"gpu": "rtx-3090", "count": 2}], {"max_gpus": 2}),
])
def test_cards_no_cloud_rents_said_alone_are_read_as_the_teams(text: str, owned: list[dict[str, object]],
                                                               kept: dict[str, object]) -> None:
    command = parse_command(text, presets=PRESET_WORDS, gpus=CARDS, unrented=("rtx-3060", "rtx-3090", "rtx-4090"))
    assert command.spec["constraints"] == {**kept, "owned_gpus": owned}
    assert any("read as your own (no cloud in the catalog rents it)" in d for d in command.defaults_used)


@pytest.mark.parametrize("text", [
    "fine-tune llama 3 8b with lora on an a10g",  # a cloud rents it: its machines are ranked
    "fine-tune llama 3 8b with lora on an rtx 4090 or an a10g",  # one of them is rented: ranked as named
    "buy rtx 4090s for resnet50 on imagenet",  # the purchase question
    "fine-tune llama 3 8b with lora on my rtx 3090 or an rtx 4090",  # own cards said: the others stay as named
])
def test_cards_stay_named_where_a_cloud_rents_one_or_the_question_is_buying(text: str) -> None:
    command = parse_command(text, presets=PRESET_WORDS, gpus=CARDS, unrented=("rtx-3060", "rtx-3090", "rtx-4090"))
    assert not any("read as your own" in d for d in command.defaults_used)
    assert command.spec["constraints"].get("owned_gpus", []) != [{"gpu": "rtx-4090", "count": 1}]


def test_a_card_said_with_an_article_is_one_card() -> None:
    # "fine-tune bert large on squad on a v100" was ranked on p3dn.24xlarge's eight V100s: one V100 was asked about
    one = parse("fine-tune bert large on squad on a v100")
    assert one.spec["constraints"]["max_gpus"] == 1
    sized = parse_command("fine-tune mistral 7b with qlora on a 24gb gpu", presets=PRESET_WORDS, gpus=CARDS)
    assert sized.spec["constraints"]["max_gpus"] == 1
    assert "max_gpus" not in parse("train resnet50 on a100-80gb cards").spec["constraints"]  # plural: any count
    assert "max_gpus" not in parse("train resnet50 on a budget of $50").spec["constraints"]  # "a" before no card
    assert parse("train resnet50 on a single t4").spec["constraints"]["max_gpus"] == 1  # one gpus=, not two
