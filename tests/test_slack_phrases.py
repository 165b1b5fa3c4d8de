"""`/gpugauge` in everyday phrasing: the words people type to a bot become the grammar's words, never guesses."""

from __future__ import annotations

from typing import Any

import pytest

from workers.schemas import JobSpecSchema
from workers.sizing.presets.registry import PRESETS, preset_names
from workers.slack.grammar import Command, CommandError, parse_command
from workers.slack.phrases import normalize

PRESET_WORDS = frozenset([*preset_names(), *(alias for p in PRESETS.values() for alias in p.aliases)])
GPUS = ("v100-16gb", "a100-80gb", "t4", "h100-sxm")


def parse(text: str) -> Command:
    return parse_command(text, presets=PRESET_WORDS, gpus=GPUS)


@pytest.mark.parametrize(("text", "expected"), [
    ("fine-tune llama 7b with lora on 1 gpu for 3 epochs, 50k samples, bf16, budget $50",
     {"model": {"preset": "llama-7b"},
      "training": {"from_pretrained": True, "epochs": 3.0, "precision": "bf16-mixed",
                   "parallelism": {"adapter": {"kind": "lora"}}, "batch_size": 8, "sequence_length": 1024,
                   "recompute": True, "loss": "fused_linear_cross_entropy",  # TRL's SFTConfig defaults
                   "optimizer": "adamw", "optimizer_implementation": "fused", "gradient_clipping": "global"},
      "dataset": {"samples": 50000}, "constraints": {"max_gpus": 1, "budget_usd": 50.0}}),
    ("resnet50 imagenet 90 epochs budget $500 spot",
     {"model": {"preset": "resnet50"}, "training": {"epochs": 90.0, "batch_size": 32},
      "dataset": {"samples": 1_281_167}, "constraints": {"budget_usd": 500.0, "pricing": ["spot", "owned"]}}),
    ("resnet18 on cifar10, batch size 128, 200 epochs, within 2 days",
     {"model": {"preset": "resnet18-cifar"},
      "training": {"batch_size": 128, "epochs": 200.0}, "dataset": {"samples": 50000},
      "constraints": {"deadline_hours": 48.0}}),
    ("gpt2 medium pretraining seq length 1024 batch 8 in 36 hours, cheapest",
     {"model": {"preset": "gpt2-medium"}, "objective": "cost",  # pre-trained in bf16, as nanoGPT does
      "training": {"from_pretrained": False, "sequence_length": 1024, "batch_size": 8, "precision": "bf16-mixed",
                   "optimizer": "adamw", "optimizer_implementation": "fused", "gradient_clipping": "global"},
      "constraints": {"deadline_hours": 36.0}}),
    ("bert base fine-tuning batch 32 seq 128 fp16 3 epochs 1,281,167 samples under $20 in europe-west4",
     {"model": {"preset": "bert-base"},
      "training": {"from_pretrained": True, "batch_size": 32, "sequence_length": 128, "precision": "fp16-mixed",
                   "epochs": 3.0},
      "dataset": {"samples": 1_281_167}, "constraints": {"budget_usd": 20.0, "regions": ["europe-west4"]}}),
])
def test_everyday_phrasing_makes_the_spec_the_key_value_words_make(text: str, expected: dict[str, Any]) -> None:
    command = parse(text)
    assert command.kind == "recommend"
    assert command.spec == expected
    JobSpecSchema().load(command.spec)  # and the job spec schema takes it


def test_the_documented_key_value_form_is_unchanged() -> None:
    text = "resnet50 batch=64 epochs=90 data=150GB samples=1.28M budget=$500 deadline=2d spot"
    assert normalize(text.split(), presets=PRESET_WORDS) == (text.split(), None, ())


def test_a_question_about_fitting_is_the_fit_command() -> None:
    command = parse("does llama 7b fit on a t4? batch 1, seq 512, bf16")
    assert (command.kind, command.gpus) == ("fit", ("t4",))
    assert command.spec["model"]["preset"] == "llama-7b" and command.spec["training"]["batch_size"] == 1
    assert parse("will resnet50 with batch 64 fit on an a100-80gb?").gpus == ("a100-80gb",)


def test_fit_reads_plain_words_too() -> None:
    command = parse("fit resnet50 on v100-16gb with batch 64 on 2 gpus")
    assert (command.kind, command.gpus, command.gpu_count) == ("fit", ("v100-16gb",), 2)
    assert command.spec["training"]["batch_size"] == 64


@pytest.mark.parametrize(("text", "preset", "samples"), [
    ("fine tune llama 3.1 8b instruct with qlora on 10k examples", "llama3.1-8b", 10_000),  # "fine tune": one word
    ("llama 3 8b lora on 10k rows", "llama-3-8b", 10_000),
    ("mistral 7b instruct qlora on dolly", "mistral-7b", 15_011),  # an instruction-tuned name: its base's layers
    ("llama 2 7b chat lora, 2k records", "llama-2-7b", 2_000),
])
def test_model_names_as_people_write_them_and_their_rows(text: str, preset: str, samples: int) -> None:
    command = parse(text)
    assert command.spec["model"]["preset"] == preset
    assert command.spec["dataset"]["samples"] == samples
    assert command.spec["training"]["parallelism"]["adapter"]["kind"] in ("lora", "qlora")


def test_gpus_as_people_count_and_name_them() -> None:
    gpus = ("rtx-3090", "v100-16gb", "v100-32gb", "rtx-4060-ti", "rtx-4060-ti-16gb", "t4")
    two = parse_command("fit llama 2 13b on two 3090s with qlora", presets=PRESET_WORDS, gpus=gpus)
    assert two.kind == "fit" and two.gpus == ("rtx-3090",) and two.gpu_count == 2  # "two": a count
    four = parse_command("fit gpt2 xl on 4 v100s", presets=PRESET_WORDS, gpus=gpus)  # "v100s" after a count: plural
    assert four.gpus == ("v100-16gb", "v100-32gb") and four.gpu_count == 4
    ti = parse_command("does llama 3 8b fit on a rtx 4060 ti 16gb with qlora", presets=PRESET_WORDS, gpus=gpus)
    assert ti.gpus == ("rtx-4060-ti-16gb",)  # a GPU in four words
    assert parse("resnet50 imagenet for two epochs").spec["training"]["epochs"] == 2.0


@pytest.mark.parametrize("said", ["gradient checkpointing", "activation checkpointing", "checkpointing",
                                  "gradient_checkpointing", "recompute"])
def test_activation_checkpointing_in_the_words_people_use(said: str) -> None:
    command = parse(f"llama3-8b qlora with {said} batch 4 seq 2048")
    assert command.spec["training"]["recompute"] is True  # full checkpointing where the spec leaves it to auto


@pytest.mark.parametrize(("text", "constraints"), [
    ("bert base on sst2 on aws only", {"providers": ["aws"]}),
    ("resnet50 imagenet on google cloud", {"providers": ["gcp"]}),
    ("resnet50 imagenet on amazon", {"providers": ["aws"]}),
    ("llama 3 8b lora on 10k samples, max 4 gpus", {"max_gpus": 4}),
    ("llama 3 8b lora on 10k samples with at most 4 gpus", {"max_gpus": 4}),
    ("llama 3 8b lora on 10k samples on up to 8 gpus", {"max_gpus": 8}),
    ("resnet50 imagenet 90 epochs up to 2 days", {"deadline_hours": 48.0}),
    ("resnet50 imagenet 90 epochs max $100", {"budget_usd": 100.0}),
])
def test_limits_and_clouds_as_people_say_them(text: str, constraints: dict[str, object]) -> None:
    assert parse(text).spec["constraints"].items() >= constraints.items()


def test_an_image_size_sizes_an_image_presets_input_with_its_channels() -> None:
    said = parse("train a unet on 5k images 1024x1024 batch 8")
    assert said.spec["model"] == {"preset": "unet", "input_shape": [3, 1024, 1024]}
    assert parse("unet input=1x512x512 batch 8").spec["model"]["input_shape"] == [1, 512, 512]
    # said wins over a data set's size; a language model has no image input
    assert parse("resnet50 cifar10 224x224").spec["model"]["input_shape"] == [3, 224, 224]
    with pytest.raises(CommandError) as caught:
        parse("gpt2 512x512")
    assert caught.value.problems == ["input= sizes an image model's input: name an image preset (e.g. unet, resnet50)"]
    assert JobSpecSchema().load(said.spec)["model"]["input_shape"] == [3, 1024, 1024]


def test_pre_training_in_two_words_is_pre_training() -> None:
    assert parse("pre training gpt2 on 10B tokens").spec["training"]["from_pretrained"] is False
    assert parse("fine tuning bert base on sst2").spec["training"]["from_pretrained"] is True


@pytest.mark.parametrize(("text", "problem"), [
    ("resnet50 sometime soonish", "unknown word 'sometime'"),  # a word it does not know is refused, not guessed
    ("resnet50 batch", "unknown word 'batch'; did you mean batch=?"),  # a setting with no value
    ("resnet50 batch size", "unknown word 'batch'"),
    ("resnet50 epochs soon", "epochs=soon:"),  # a value that is no number is named
    ("llama 7b llama 7b", "llama-7b: one model a command (llama-7b is named first)"),
    ("compare llama 3 8b vs mistral 7b on 50k samples", "mistral-7b: one model a command (llama-3-8b is named first); "
                                                        "ask for each, or compare jobs in a budget review"),
])
def test_what_is_not_understood_is_still_said(text: str, problem: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse(text)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems


@pytest.mark.parametrize(("text", "owned"), [
    ("bert on my t4", [{"gpu": "t4", "count": 1}]),
    ("bert on our 4 t4s", [{"gpu": "t4", "count": 4}]),
    ("bert on our 2x v100", [{"gpu": "v100-16gb", "count": 2}]),
    ("bert on our 8xh100", [{"gpu": "h100-sxm", "count": 8}]),
])
def test_a_gpu_said_as_mine_or_ours_is_owned(text: str, owned: list[dict[str, Any]]) -> None:
    command = parse(text)
    assert command.spec["constraints"] == {"owned_gpus": owned}
    JobSpecSchema().load(command.spec)  # the spec's own field, as the CLI's --owned writes it


def test_a_family_said_as_ours_is_its_smaller_card_and_single_is_one_gpu() -> None:
    family = parse_command("bert on our a100", presets=PRESET_WORDS, gpus=("a100-80gb", "a100-40gb", "t4"))
    assert family.spec["constraints"] == {"owned_gpus": [{"gpu": "a100-40gb", "count": 1}]}  # since 2026-12-07
    assert parse("bert on a single t4").spec["constraints"] == {"max_gpus": 1, "gpus": ["t4"]}
    assert parse("bert on a single gpu").spec["constraints"] == {"max_gpus": 1}
    with pytest.raises(CommandError) as caught:
        parse("bert owned=4")
    assert any("owned=4xrtx-3090" in p for p in caught.value.problems)


@pytest.mark.parametrize(("text", "expected"), [
    ("what gpu do i need to fine-tune llama 3 8b with lora, batch 8",  # a question's nouns are no settings
     {"model": {"preset": "llama-3-8b"}, "batch_size": 8}),
    ("fine-tune llama 2 7b on my data, 100k samples, lora",  # the count is the samples', not data's
     {"model": {"preset": "llama-2-7b"}, "samples": 100000}),
    ("cheapest way to train distilbert on 1M samples", {"model": {"preset": "distilbert"}, "objective": "cost"}),
    ("resnet50 batch 64 epochs 3", {"batch_size": 64, "epochs": 3.0}),
    # "full" fine-tuning trains every weight: the default, no adapter
    ("full fine-tune qwen 2.5 1.5b bf16 batch 8 seq 2048", {"model": {"preset": "qwen-2.5-1.5b"}, "batch_size": 8,
                                                            "from_pretrained": True, "parallelism": None}),
    ("fine-tune gemma 2 9b with qlora", {"model": {"preset": "gemma-2-9b"}}),
])
def test_questions_as_people_ask_them_are_read(text: str, expected: dict[str, object]) -> None:
    spec = parse(text).spec
    flat = {**spec, **spec.get("training", {}), **spec.get("dataset", {})}
    assert {k: flat.get(k) for k in expected} == expected


@pytest.mark.parametrize(("text", "seq", "batch"), [
    ("llama-3-8b lora samples=10k", 1024, 8),  # an adapter is a fine-tune: TRL's max_length, the Trainer's batch
    ("fine-tune mistral-7b qlora samples=10k", 1024, 8),
    ("fine-tune gpt2 samples=50k", 1024, 8),  # at most the context (GPT-2's is 1,024)
    ("fine-tune bert-base samples=400k", 128, 32),  # an encoder: BERT's GLUE recipe, Keras' and its batch 32
    ("fine-tune bert base on squad", 384, 32),  # SQuAD's own script: run_squad.py's 384
    ("fine-tune llama-3-8b seq=4096 batch=2", 4096, 2),  # said wins
    ("llama 3 8b on 100k samples", 1024, 8),  # neither said: a published model is mostly fine-tuned
    ("does bert base fit on a100-80gb", 128, 32),
])
def test_a_fine_tune_is_sized_at_its_recipe_not_the_whole_context(text: str, seq: int, batch: int) -> None:
    command = parse(text)
    assert command.spec["training"]["sequence_length"] == seq
    assert command.spec["training"]["batch_size"] == batch
    said = [d for d in command.defaults_used if d.startswith("seq=")]
    recipe = ("(google-research/bert run_squad.py" if "squad" in text else
              "(a fine-tune, as" if "fine-tune" in text or "lora" in text else "(sized as a fine-tune, as")
    assert said == ([] if "seq=" in text else [f"seq={seq} {recipe}" + d.partition(recipe)[2] for d in said])
    assert "seq=" in text or len(said) == 1
    assert JobSpecSchema().load(command.spec)["training"]["sequence_length"] == seq


def test_a_fine_tune_made_of_tokens_counts_samples_at_its_own_sequence() -> None:
    command = parse("fine-tune llama-3-8b lora on 100M tokens")
    assert command.spec["training"]["sequence_length"] == 1024
    assert command.spec["dataset"]["samples"] == -(-100_000_000 // 1024)
    assert any(d.endswith("tokens / seq 1,024, the fine-tune's)") for d in command.defaults_used)
    # a pre-training run keeps the context, and a masked-LM encoder (pre-training's head) no GLUE length
    assert "sequence_length" not in parse("pretrain gpt2 on 10B tokens").spec["training"]


@pytest.mark.parametrize(("text", "hours"), [
    ("fine-tune qwen2.5 7b with lora on 200k samples by tomorrow", 24.0),
    ("resnet50 cifar10 overnight", 12.0),
    ("resnet50 cifar10 within 2 days", 48.0),
])
def test_a_deadline_said_as_a_time_of_day_is_hours_from_now(text: str, hours: float) -> None:
    command = parse(text)
    assert command.spec["constraints"]["deadline_hours"] == hours
    assert any(d.startswith("deadline=") for d in command.defaults_used) is (hours != 48.0)


def test_counts_of_one_five_and_ten_in_words() -> None:
    assert parse("qlora llama 3 70b on one gpu 10k samples").spec["constraints"]["max_gpus"] == 1
    assert parse("resnet50 cifar10 ten epochs").spec["training"]["epochs"] == 10
    assert parse("bert one epoch on sst2").spec["training"]["epochs"] == 1


def test_pretrain_from_scratch_within_a_week_is_one_setting_each() -> None:
    command = parse("pretrain llama 3.2 1b from scratch on 100B tokens within a week")
    assert command.spec["training"]["from_pretrained"] is False  # said twice, the same thing: no problem
    assert command.spec["constraints"]["deadline_hours"] == 168.0
    assert command.spec["dataset"]["samples"] == -(-100_000_000_000 // 8192)


@pytest.mark.parametrize(("text", "seq"), [
    ("llama 3 8b lora 4k context 10k samples", 4096),  # a context said in k is binary
    ("llama 3 8b lora seq=4k", 4096),
    ("fine-tune mistral 7b with 2048 seq len on 10k samples", 2048),
    ("fine-tune mistral 7b 1024 sequence length", 1024),
    ("llama 3 8b lora context 8192 batch 2", 8192),
    ("gpt2 seq length 512 batch 16", 512),
    ("fine-tune llama 3 8b for 2 epochs on 12,000 examples with a max length of 2048", 2048),  # TRL's max_length
])
def test_a_sequence_length_said_as_people_say_it(text: str, seq: int) -> None:
    command = parse(text)
    assert command.spec["training"]["sequence_length"] == seq
    assert not any(d.startswith("seq=") for d in command.defaults_used)


def test_a_data_size_said_before_data_and_the_comparison_words() -> None:
    assert parse("fine-tune bert on 1M samples 2gb of data").spec["dataset"]["bytes"] == 2_000_000_000
    assert parse("resnet50 imagenet 150GB dataset").spec["dataset"]["bytes"] == 150_000_000_000
    assert "dataset" not in parse("does llama 7b fit on a100 80gb").spec  # a card's size is no data
    # "2tb of images", "500mb of text" were "unknown word '2tb'"
    assert parse("train resnet50 on 2tb of images").spec["dataset"] == {"bytes": 2 * 10**12}
    assert parse("resnet50 on 2tb images for 90 epochs").spec["dataset"] == {"bytes": 2 * 10**12}
    assert parse("fine-tune llama 3 8b with lora on 500mb of text").spec["dataset"] == {"bytes": 500 * 10**6}
    assert parse("resnet50 on 1.28m images, 150gb of images").spec["dataset"] == {
        "samples": 1_280_000, "bytes": 150 * 10**9}
    compared = parse("is an a100 or h100 cheaper for llama 3 8b lora on 20k samples").spec
    assert compared["objective"] == "cost" and "a100-80gb" in compared["constraints"]["gpus"]
    assert parse("resnet50 imagenet faster").spec["objective"] == "time"
    # "better" weighs both (it was "unknown preset 'better'")
    better = parse("is a t4 or an a100 better for fine-tuning llama 3 8b on 10k samples").spec
    assert better["objective"] == "balanced" and "t4" in better["constraints"]["gpus"]


def test_a_fine_tune_assumed_says_so_and_asks_for_pretrain_only_where_it_changes_the_length() -> None:
    told = parse("fit gpt2 v100-16gb").defaults_used  # GPT-2's context is TRL's 1,024 too
    assert told[0] == ("seq=1024 (sized as a fine-tune, as TRL's SFTTrainer, its max_length; the model reads up to "
                       "1,024)")
    assert told[1].startswith("batch=8 (sized as a fine-tune, as transformers' Trainer")
    assert parse("bert-base batch=32").defaults_used[0].endswith("say `pretrain` to size its whole 512)")
    assert parse("fine-tune llama 3 8b lora 10k samples").defaults_used[1].startswith("batch=8 (a fine-tune, as")


def test_mixed_precision_said_in_words_is_pytorchs_autocast_float16() -> None:
    # "with mixed precision" was "unknown word 'mixed'", "unknown word 'precision'"
    command = parse("train resnet50 on 1.2m images for 90 epochs with mixed precision")
    assert command.spec["training"]["precision"] == "fp16-mixed" and command.spec["dataset"]["samples"] == 1_200_000


def test_gradient_accumulation_and_unsloth_said_in_words() -> None:
    # "gradient accumulation 16" was three unknown words; "with unsloth" one
    command = parse("fine tune llama 2 7b chat on 1000 samples for 5 epochs with batch size 1 and gradient "
                    "accumulation 16")
    assert command.spec["training"]["batch_size"] == 1 and command.spec["training"]["update_interval"] == 16
    told = parse("fine-tune llama 3.1 8b instruct with unsloth on 10k samples").defaults_used
    assert any(t.startswith("unsloth: sized as Hugging Face TRL runs the same fine-tune") for t in told)


def test_what_a_model_is_for_is_no_word_to_refuse() -> None:
    # "a classifier ... with resnet18", "a unet for segmentation": each was an unknown word beside the model named
    assert parse("train a classifier on 50k 224x224 images with resnet18").spec["model"]["preset"] == "resnet18"
    assert parse("train a unet for segmentation on 2000 512x512 images").spec["dataset"]["samples"] == 2000
