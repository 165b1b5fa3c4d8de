"""A model said by its parameter count alone: "fine-tune a 2b parameter model" was refused with "neurons= Missing data
for required field", and "fine-tune t5 base" advised "give its size, e.g. params=220m", which was refused the same
way. The dense decoder preset nearest the count stands in, told with the ratio, where one is within 30%."""

from __future__ import annotations

import pytest

from catalog.types import Catalog
from tests.recommending import recommend_spec
from tests.test_slack_phrases import parse
from workers.slack.grammar import CommandError
from workers.slack.stand_in import STAND_IN_RATIO, nearest_decoder


def test_a_two_billion_parameter_model_is_sized_as_the_nearest_decoder_and_answered(shipped: Catalog) -> None:
    command = parse("fine-tune a 2b parameter model on 10k samples seq 1024")
    assert command.spec["model"] == {"preset": "gemma-2b"}  # 2.51B: the nearest dense decoder to 2.0B
    told = next(d for d in command.defaults_used if d.startswith("params=2.0B"))
    assert "sized as gemma-2b (2.5B parameters)" in told and "25% more weights" in told and "25% high" in told
    assert not any(d.startswith("the model by its statistics") for d in command.defaults_used)
    assert command.spec["training"]["batch_size"] == 8  # the stand-in's fine-tune defaults, as for the preset named
    top = recommend_spec(command.spec, shipped).options[0]
    assert top.training_hours > 0 and top.training_cost_usd > 0


@pytest.mark.parametrize(("text", "preset"), [
    ("pretrain a 30b parameter model on 600b tokens", "qwen2.5-32b"),
    ("fine-tune params=780m on 50k samples", "gpt2-large"),  # the size the unknown-family refusal advises
    ("fine-tune params=7b on 20k samples", "mistral-7b"),  # 7.24B; llama-7b's 6.7B is a hair further by ratio
    ("train a 100m parameter transformer from scratch on 2b tokens", "gpt2"),  # the size names which transformer
])
def test_a_count_within_the_ratio_names_its_stand_in(text: str, preset: str) -> None:
    assert parse(text).spec["model"] == {"preset": preset}


def test_no_mixture_of_experts_stands_in_for_a_dense_count() -> None:
    nearest = nearest_decoder(47_000_000_000)  # Mixtral's total: its experts are not a dense 47B's work
    assert nearest is not None
    found, ratio = nearest
    assert "mixture of experts" not in found.description and found.name != "mixtral-8x7b"
    assert ratio > STAND_IN_RATIO or ratio < 1 / STAND_IN_RATIO


@pytest.mark.parametrize(("text", "words"), [
    ("fine-tune wav2vec2 params=220m on 100k samples seq 512", ["params=220M: no decoder preset is within 30%",
                                                                "the nearest is gpt2-medium, 355M", "neurons="]),
    ("train resnet params=60m on 1m images", ["params=60.0M beside resnet", "drop params="]),
    ("train params=30m on 5k 256x256 images", ["params=30.0M alone sizes a language model's decoder only",
                                               "for an image model"]),
])
def test_a_count_that_cannot_stand_in_says_what_sizes_it(text: str, words: list[str]) -> None:
    with pytest.raises(CommandError) as caught:
        parse(text)
    problem = caught.value.problems[0]  # an image input said beside it adds its own line
    assert all(word in problem for word in words), problem


def test_statistics_with_neurons_and_multiply_adds_are_left_as_given() -> None:
    spec = parse("train params=2b neurons=50m madds=4g on 10k samples seq 1024").spec
    assert spec["model"] == {"stats": {"parameters": 2_000_000_000, "neurons": 50_000_000,
                                       "multiply_adds": 4_000_000_000}}


def test_a_bare_size_no_preset_is_called_is_the_count_and_an_alias_stays_its_preset() -> None:
    # "fine-tune a 34b model with qlora" was "unknown preset '34b'; did you mean llama3.2-3b?"
    command = parse("fine-tune a 34b model with qlora on 20k samples")
    assert command.spec["model"] == {"preset": "qwen2.5-32b"}
    assert any(d.startswith("params=34.0B: sized as qwen2.5-32b") and "within 5%" in d for d in command.defaults_used)
    assert parse("yi 34b lora on 20k samples").spec["model"] == {"preset": "qwen2.5-32b"}  # a family the presets lack
    assert parse("fine-tune a 7b model on 20k samples").spec["model"] == {"preset": "7b"}  # an alias: llama-7b


def test_a_count_that_matches_the_named_preset_is_taken_as_said_of_it() -> None:
    # "train resnet50 with 25m params on imagenet" was refused: params= beside a preset
    command = parse("train resnet50 with 25m params on imagenet")
    assert command.spec["model"] == {"preset": "resnet50"}
    assert "params=25.0M beside resnet50: sized by its own layers (25.6M parameters)" in command.defaults_used


def test_an_unknown_name_asks_for_a_language_models_size_or_any_models_statistics() -> None:
    # "train stylegan2 on ffhq" advised "give the model's size, e.g. params=780m", which sizes decoders only
    with pytest.raises(CommandError) as caught:
        parse("train stylegan2 on ffhq")
    [problem] = caught.value.problems
    assert "a language model's size, e.g. params=780m" in problem and "params= neurons= madds=" in problem
