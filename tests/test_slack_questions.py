"""`/gpugauge` as people ask it (2026-12-06): questions, counts, places and typed characters read; what is not sized
said; a decoder's fine-tune and pre-training sized as their recipes run them."""

from __future__ import annotations

import pytest

from tests.recommending import estimate_spec, usable_bytes
from tests.test_slack_phrases import GPUS, PRESET_WORDS, parse
from workers.schemas import JobSpecSchema
from workers.sizing.presets.registry import find_preset
from workers.slack.grammar import CommandError, parse_command


def test_a_gans_image_size_is_its_images_not_its_latent() -> None:
    # "dcgan on celeba 64x64" named the images; it was the 100-channel latent at 64 x 64
    assert parse("dcgan on celeba 64x64 for 25 epochs").spec["model"] == {"preset": "dcgan", "input_shape": [3, 64, 64]}
    assert JobSpecSchema().load(parse("dcgan celeba 64x64").spec)["model"]["input_shape"] == [3, 64, 64]


@pytest.mark.parametrize(("text", "model", "gpus"), [
    ("how much memory does resnet50 need with batch 128", {"preset": "resnet50"}, None),
    ("how much vram do i need to fine-tune llama 3 8b", {"preset": "llama-3-8b"}, None),
    ("what's the cheapest way to fine-tune mistral 7b", {"preset": "mistral-7b"}, None),
    ("is a t4 enough for bert base fine-tuning", {"preset": "bert-base"}, ["t4"]),
    ("estimate resnet50 batch 256 fp16", {"preset": "resnet50"}, None),  # the CLI's other verb
    ("compare t4 vs h100 for resnet50", {"preset": "resnet50"}, ["t4", "h100-sxm"]),  # both ranked side by side
])
def test_memory_questions_and_the_estimate_verb_are_read(text: str, model: dict[str, object],
                                                         gpus: list[str] | None) -> None:
    # each was refused: "unknown preset 'memory'" ('vram', "what's", 'enough', 'estimate')
    command = parse(text)
    assert command.kind == "recommend" and command.spec["model"] == model
    assert command.spec.get("constraints", {}).get("gpus") == gpus


def test_an_unversioned_llama_70b_is_the_llama_3_70b() -> None:
    # "qlora llama 70b on one h100" was refused: "70b: preset is given twice"
    assert find_preset(parse("qlora llama 70b on one h100").spec["model"]["preset"]).name == "llama3-70b"


def test_everyday_words_for_the_objective_the_method_and_a_models_size() -> None:
    assert parse("train resnet50 on imagenet for 90 epochs as cheap as possible").spec["objective"] == "cost"
    assert parse("bert base fine-tune asap").spec["objective"] == "time"
    full = parse("full parameter fine-tune of llama 3 8b on 8 a100s")  # was "unknown preset 'parameter'"
    assert full.spec["model"] == {"preset": "llama-3-8b"} and "parallelism" not in full.spec["training"]
    assert parse("pretrain a 2b parameter model on 1m samples seq 2048").spec["model"] == {
        "preset": "gemma-2b"}  # no preset of that size: the nearest decoder stands in (test_slack_stand_in.py)
    for text, preset in (("pretrain a 1b llama", "llama3.2-1b"), ("fine-tune an 8b llama", "llama3-8b"),
                         ("fine-tune qwen 7b", "qwen2.5-7b"),  # "a 1b llama" was "llama: preset is given twice"
                         ("pretrain a 125m transformer", "gpt2"), ("a 1b llm", "llama3.2-1b")):  # "one model a command"
        command = parse(text)
        assert command.spec["model"] == {"preset": preset} and f"sized as {preset}" in command.defaults_used[0]
    for text, preset in (("fine-tune a 7b model with lora", "llama-7b"),
                         ("train a 1b model from scratch", "llama3.2-1b"),
                         ("train a gan on celeba for 20 epochs", "dcgan")):  # "a gan" was "unknown preset 'gan'"
        command = parse(text)
        assert find_preset(command.spec["model"]["preset"]).name == preset
        assert command.defaults_used[0].startswith(f"{command.spec['model']['preset']}: sized as {preset}, ")


def test_a_language_model_pre_trained_from_scratch_is_sized_in_16_bits_and_told() -> None:
    # "train gpt2 from scratch on 10B tokens" was sized in fp32: 1 x H100 for 69 h and $88, where bf16 (nanoGPT's
    # train.py) runs it in under an hour on 8 x B200 for $18
    command = parse("train gpt2 from scratch on 10B tokens within 3 days")
    assert command.spec["training"]["precision"] == "bf16-mixed"
    assert any(d.startswith("precision=bf16 (a language model's pre-training runs in") for d in command.defaults_used)
    on_v100 = parse_command("pretrain gpt2 on openwebtext on a v100", presets=PRESET_WORDS, gpus=GPUS,
                            no_bf16=("v100-16gb", "t4"))
    assert on_v100.spec["training"]["precision"] == "fp16-mixed"
    # an encoder's pre-training too (RoBERTa pre-trains in mixed precision); its fine-tune keeps the spec's fp32
    assert parse("pretrain bert base on 1M samples").spec["training"]["precision"] == "bf16-mixed"
    assert "precision" not in parse("fine-tune bert base on 1M samples").spec["training"]


@pytest.mark.parametrize(("text", "samples", "tuned"), [
    ("finetune bert on 2 million sentences", 2_000_000, True),  # was: unknown word '2', 'million', 'sentences'
    ("sft qwen 2.5 7b on 100k conversations", 100_000, True),  # 'sft' is TRL's supervised fine-tune
    ("resnet50 on 10 thousand photos", 10_000, None),
    ("continued pretraining llama 3 8b on 2b tokens", 244_141, True),  # 2e9 tokens / Llama 3's 8,192; its weights
])
def test_counts_and_nouns_as_people_say_them(text: str, samples: int, tuned: bool | None) -> None:
    spec = parse(text).spec
    assert spec["dataset"]["samples"] == samples
    assert spec["training"].get("from_pretrained") is tuned


def test_a_token_count_without_fine_tune_pre_trains_a_decoder_in_16_bits() -> None:
    assert parse("train gpt2 on 1.5 billion tokens").spec["training"]["precision"] == "bf16-mixed"
    pretrained = parse("train gpt2 on 1.5 billion tokens").spec["training"]
    assert "recompute" not in pretrained and "loss" not in pretrained  # TRL's recipe is a fine-tune's


def test_a_decoders_fine_tune_is_sized_as_trls_sft_trainer_runs_it_and_told() -> None:
    # TRL's SFTConfig: gradient_checkpointing=True, bf16=True, loss_type chunked_nll (no logits held); sized without
    # them "fine-tune llama 3 8b with lora on 20k samples" held 82.7 GiB at batch 8 x 1,024
    command = parse("fine-tune gpt2 on 10k samples")
    training = command.spec["training"]
    assert (training["recompute"], training["loss"], training["precision"]) == (
        True, "fused_linear_cross_entropy", "bf16-mixed")
    assert any(d.startswith("checkpointing (TRL's SFTConfig: gradient_checkpointing=True")
               for d in command.defaults_used)
    assert any("loss_type chunked_nll" in d for d in command.defaults_used)
    said = parse("fine-tune llama 3 8b lora no-checkpointing fp32").spec["training"]
    assert (said["recompute"], said["precision"]) == (False, "fp32")  # said wins
    encoder = parse("fine-tune bert base on sst2").spec["training"]
    assert "recompute" not in encoder and "loss" not in encoder and "precision" not in encoder
    assert JobSpecSchema().load(command.spec)["training"]["loss"] == "fused_linear_cross_entropy"


@pytest.mark.parametrize(("text", "method"), [("ppo llama 3 8b", "ppo"), ("grpo qwen 2.5 7b", "grpo"),
                                             ("rlhf llama 2 7b with ppo", "rlhf")])  # dpo, orpo: test_preference
def test_methods_the_core_does_not_size_say_what_to_ask_instead(text: str, method: str) -> None:
    # "dpo llama 3 8b" was "unknown preset 'dpo'": as if a model were misspelt
    with pytest.raises(CommandError) as caught:
        parse(text)
    said = caught.value.problems[0]
    assert said.startswith(f"{method}: ") and "not sized" in said and "fine-tune" in said


@pytest.mark.parametrize(("text", "preset"), [
    ("fine\u2011tune Llama-3-8B with LoRA on 10k samples", "llama-3-8b"),  # a phone's non-breaking hyphen
    ("fine-tune \u201cmistral 7b\u201d on 5k samples \U0001F680", "mistral-7b"),  # curly quotes and an emoji
    ("what\u2019s the cheapest way to fine-tune mistral 7b", "mistral-7b"),  # a curly apostrophe
    ("llama3:8b lora 10k samples", "llama3-8b"),  # Ollama's tag
])
def test_what_phones_and_chat_clients_type_is_read_as_plain_words(text: str, preset: str) -> None:
    # each was refused: "unknown word 'fine‑tune'", "unknown preset '“mistral'", "unknown preset 'llama3:8b'"
    assert parse(text).spec["model"]["preset"] == preset
    assert parse("llama 3 8b lora on 4\u00d7a100 samples=1k").spec["constraints"]["max_gpus"] == 4  # "4×a100"


@pytest.mark.parametrize(("text", "constraints"), [
    ("resnet50 imagenet under 100 dollars", {"budget_usd": 100.0}),  # was: unknown words 'under', '100', 'dollars'
    ("resnet50 imagenet $1k budget", {"budget_usd": 1000.0}),  # the value before the word
    ("resnet50 imagenet budget 200 usd", {"budget_usd": 200.0}),
    ("resnet50 imagenet in europe", {"regions": ["eu-*", "europe-*"]}),  # every European region of both clouds
    ("resnet50 imagenet in the us", {"regions": ["us-*"]}),
    ("resnet50 imagenet no spot", {"pricing": ["on_demand", "owned"]}),
])
def test_limits_and_places_as_people_say_them(text: str, constraints: dict[str, object]) -> None:
    assert parse(text).spec["constraints"].items() >= constraints.items()


def test_help_is_help_alone_and_us_is_a_place_only_after_in() -> None:
    assert parse("help").kind == "help" and parse("help me").kind == "help"
    command = parse("help us fine-tune llama 3 8b")  # a question that starts with "help"
    assert command.kind == "recommend" and "regions" not in command.spec.get("constraints", {})


def test_a_layout_said_is_sized_as_said_and_a_framework_alone_is_said_back() -> None:
    # "train mistral 7b with deepspeed zero 3 on 16 gpus" was refused: unknown words 'deepspeed', 'zero', '3'; then
    # read and ranked with the ranking's ZeRO-1 (49.4 GiB a GPU for an 8B fine-tune its team runs in 25.0 with ZeRO-3)
    command = parse("train mistral 7b with deepspeed zero 3 on 16 gpus on 10k samples")
    assert command.spec["constraints"]["max_gpus"] == 16
    assert command.spec["training"]["parallelism"]["data_parallel"] == "zero3"
    assert [d for d in command.defaults_used if d.startswith(("deepspeed: ", "zero3: "))] == [
        "zero3: sized as said (training.parallelism.data_parallel zero3); leave it out for the ranking to choose each "
        "option's"]
    assert parse("fine-tune llama 3 8b with fsdp").spec["training"]["parallelism"] == {"data_parallel": "fsdp"}
    assert parse("train resnet50 with ddp on 8 gpus").spec["training"]["parallelism"] == {"data_parallel": "plain"}
    alone = parse("train mistral 7b with deepspeed on 16 gpus on 10k samples")  # no layout said: the ranking's
    told = [d for d in alone.defaults_used if d.startswith("deepspeed: ")]
    assert len(told) == 1 and "parallelism.data_parallel pins one" in told[0]
    assert "data_parallel" not in alone.spec["training"].get("parallelism", {})
    with_lora = parse("fine-tune llama 3 8b with lora and fsdp on 4 gpus")  # both land in training.parallelism
    assert with_lora.spec["training"]["parallelism"] == {"data_parallel": "fsdp", "adapter": {"kind": "lora"}}
    with pytest.raises(CommandError, match="unknown strategy 'zero4'"):
        parse("llama 3 8b strategy=zero4")
    # pre-training frameworks said by name were refused ("unknown word 'torchtitan'"): said back, the ranking's layout
    for framework in ("torchtitan", "nemo", "llm-foundry", "composer", "nanotron"):
        said = parse(f"pretrain llama 3 8b with {framework} on 500b tokens")
        assert [d for d in said.defaults_used if d.startswith(f"{framework}: ")] and \
            "data_parallel" not in said.spec["training"].get("parallelism", {})


@pytest.mark.parametrize(("text", "gpus"), [
    ("fine-tune llama 3 8b on an 8xh100 node", 8),  # was: unknown word 'node'
    ("fine-tune llama 3 8b on one node of 8 a100s", 8),  # the GPU count said wins
    ("fine-tune llama 3 8b on 2 nodes", 16),  # machines of 8 GPUs, told back
])
def test_nodes_are_machines_of_eight_gpus(text: str, gpus: int) -> None:
    command = parse(text)
    assert command.spec["constraints"]["max_gpus"] == gpus
    assert any(d.startswith("gpus=16 (2 nodes of 8 GPUs") for d in command.defaults_used) is (gpus == 16)


def test_a_decoders_fine_tune_takes_the_trainers_fused_adamw_and_fits_what_it_fits() -> None:
    # "fine-tune phi 3 mini on 100k samples on a single a100" held foreach AdamW's fp32 copy of every weight: 76.4 GiB,
    # over the A100 80GB's usable memory, so the answer offloaded the optimizer (43.8 h, PCIe-bound); the Trainer's
    # adamw_torch_fused makes no copy
    command = parse("fine-tune phi 3 mini on 100k samples on a single a100")
    training = command.spec["training"]
    assert (training["optimizer"], training["optimizer_implementation"], training["gradient_clipping"]) == (
        "adamw", "fused", "global")
    assert any(d.startswith("optimizer=adamw, fused") and "adamw_torch_fused" in d for d in command.defaults_used)
    peak = estimate_spec(command.spec, "a100-80gb").per_gpu[0]
    assert peak.fits and peak.gpu_memory_bytes < usable_bytes("a100-80gb")
    foreach = {**command.spec, "training": {**training, "optimizer_implementation": "foreach"}}
    assert not estimate_spec(foreach, "a100-80gb").per_gpu[0].fits
    assert "optimizer_implementation" not in parse("fine-tune llama 3 8b with sgd").spec["training"]  # said: kept
    pretrain = parse("train gpt2 from scratch on openwebtext")  # nanoGPT's fused AdamW, grad_clip 1.0
    assert pretrain.spec["training"]["optimizer_implementation"] == "fused"
    assert any("nanoGPT's fused AdamW" in d for d in pretrain.defaults_used)


def test_a_decoder_with_a_logit_softcap_keeps_the_plain_loss_and_says_why() -> None:
    # "fine-tune gemma 2 9b with lora" was refused: the chunked loss fuses the output projection, and Gemma 2's
    # logits pass a tanh softcap after it
    command = parse("fine-tune gemma 2 9b with lora on 30k samples within 4 hours")
    assert "loss" not in command.spec["training"] and command.spec["training"]["recompute"] is True
    assert any(d.startswith("the plain loss, logits held (gemma2-9b's logits pass a softcap")
               for d in command.defaults_used)
    JobSpecSchema().load(command.spec)  # and the spec loads


def test_inference_is_said_to_be_unsized() -> None:
    with pytest.raises(CommandError) as caught:
        parse("what's the cheapest gpu for inference of llama 3 8b")
    assert caught.value.problems[0].startswith("inference: gpugauge sizes training runs;")


def test_a_model_no_preset_is_near_asks_for_its_size_once() -> None:
    # "fine-tune t5 base" said "see /gpugauge help" twice: nothing to do with a model that has no preset (T5 has one
    # since 2026-12-07, as BART and Whisper; wav2vec2 has none)
    with pytest.raises(CommandError) as caught:
        parse("fine-tune wav2vec2 on 100k samples")
    [family] = caught.value.problems  # wav2vec2's family is known to have no preset: said so once, with what to give
    assert family.startswith("unknown preset 'wav2vec2'; no preset of that family") and "params=780m" in family
    assert parse("fine-tune t5 base on 100k samples").spec["model"] == {"preset": "t5-base"}
    assert parse("fine-tune bart large on 100k samples").spec["model"] == {"preset": "bart-large"}
    sized = parse("fine-tune params=780m on 100k samples seq 512")  # the size it advises sizes it (stand_in.py)
    assert sized.spec["model"] == {"preset": "gpt2-large"}


@pytest.mark.parametrize("text", ["train a unet on 256x256 images 5k samples 100 epochs",
                                  "train a unet on 5k 256x256 images for 100 epochs"])
def test_an_image_size_said_with_its_images_is_the_input_and_a_count_before_it_the_samples(text: str) -> None:
    # "256x256 images" was refused: "unknown word 'images'"
    spec = parse(text).spec
    assert spec["model"]["input_shape"] == [3, 256, 256] and spec["dataset"]["samples"] == 5000


def test_continued_pre_training_is_sized_as_pre_training_from_the_published_weights() -> None:
    # "continued pretraining of llama 3 8b on 10b tokens" was a run from scratch ("continued" a filler word)
    command = parse("continued pretraining of llama 3 8b on 10b tokens")
    training = command.spec["training"]
    assert training["from_pretrained"] is True and training["sequence_length"] == 8192  # the context, as pre-training
    assert "recompute" not in training and "loss" not in training  # no fine-tune recipe's defaults
    assert command.spec["dataset"]["samples"] == 1_220_704
    JobSpecSchema().load(command.spec)


@pytest.mark.parametrize(("text", "adapter"), [
    ("fine-tune llama 3.1 8b instruct with qlora r=64", {"kind": "qlora", "rank": 64}),  # was "unknown word 'r'"
    ("fine-tune qwen2.5 7b lora r 16 alpha 32 on 50k samples", {"kind": "lora", "rank": 16}),
    ("fine-tune mistral 7b with lora rank 64 on all linear layers",
     {"kind": "lora", "rank": 64, "targets": ["q", "k", "v", "o", "mlp"]}),  # QLoRA's "all linear layers"
    ("fine-tune llama 3 8b with 4-bit qlora and flash attention", {"kind": "qlora"}),
    ("fine-tune llama 3 8b with lora in 4-bit lora_alpha=16", {"kind": "qlora"}),  # 4-bit LoRA is QLoRA
])
def test_a_lora_recipes_words_are_read_and_what_changes_nothing_is_said(text: str, adapter: dict[str, object]) -> None:
    command = parse(text)
    assert command.spec["training"]["parallelism"]["adapter"] == adapter
    JobSpecSchema().load(command.spec)


def test_words_that_size_nothing_differently_are_told_back() -> None:
    text = "fine-tune llama-3-8b, lr 2e-4, 2 epochs, packing, seq 2048 with flash attention alpha 32"
    told = parse(text).defaults_used
    assert any(t.startswith("packing: every sample is sized at the full sequence length") for t in told)
    assert any(t.startswith("flash attention: attention is sized as the fused kernel") for t in told)
    assert any(t.startswith("lora alpha:") for t in told)


def test_a_weekday_after_by_is_the_hours_to_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # "by friday" was refused: "unknown word 'by'"
    from datetime import UTC, datetime

    from workers.slack import deadlines

    monkeypatch.setattr(deadlines, "clock", lambda: datetime(2026, 12, 6, 12, 0, tzinfo=UTC))  # a Sunday, noon
    command = parse("fine-tune llama 3 8b with lora on 50k samples by friday")
    assert command.spec["constraints"]["deadline_hours"] == 132.0  # Friday 23:59:59 UTC, rounded to the hour
    assert "deadline=132h (until the end of Friday 2026-12-11, UTC)" in command.defaults_used
    assert parse("bert base before sun").spec["constraints"]["deadline_hours"] == 12.0  # today's end
    assert parse("bert base by end of day").spec["constraints"]["deadline_hours"] == 12.0
    assert parse("bert base by end of the week 3 epochs").spec["constraints"]["deadline_hours"] == 132.0  # Friday's
    assert parse("bert base by eow").spec["training"]["sequence_length"] == 128
    with pytest.raises(CommandError):
        parse("bert base friday")  # a weekday alone is no deadline
    # "pretrain gpt2 medium on 50b tokens by next friday" was three unknown words: next week's Friday (Monday to
    # Sunday), so on a Monday a week after this week's, on a Sunday the coming one
    monkeypatch.setattr(deadlines, "clock", lambda: datetime(2026, 12, 7, 12, 0, tzinfo=UTC))  # a Monday, noon
    following = parse("pretrain gpt2 medium on 50b tokens by next friday")
    assert following.spec["constraints"]["deadline_hours"] == 276.0  # Friday 2026-12-18 23:59:59
    assert "deadline=276h (until the end of Friday 2026-12-18, UTC)" in following.defaults_used
    assert parse("bert base by next week").spec["constraints"]["deadline_hours"] == 276.0
    assert parse("bert base by the end of next week").spec["constraints"]["deadline_hours"] == 276.0
    assert parse("bert base by friday").spec["constraints"]["deadline_hours"] == 108.0  # this week's
    monkeypatch.setattr(deadlines, "clock", lambda: datetime(2026, 12, 6, 12, 0, tzinfo=UTC))  # Sunday again
    assert parse("bert base by next friday").spec["constraints"]["deadline_hours"] == 132.0


def test_a_sequence_of_no_tokens_is_refused_not_divided_by() -> None:
    # "gpt2 seq=0 on 7b tokens" raised ZeroDivisionError making the tokens samples (found by a seeded fuzz of
    # the grammar's words, 20,000 commands)
    with pytest.raises(CommandError) as caught:
        parse("gpt2 seq=0 on 7b tokens")
    assert caught.value.problems == ["seq=0: a sequence is at least 1 token"]


def test_a_month_and_a_count_in_scientific_notation_are_read() -> None:
    # "within a month" and "1e6 samples" were unknown words
    assert parse("bert base within a month").spec["constraints"]["deadline_hours"] == 720.0  # 30 days
    assert parse("bert base 1e6 samples").spec["dataset"]["samples"] == 1_000_000


def test_gsm8k_gives_its_training_problems() -> None:
    command = parse("fine-tune llama 3 8b with lora on gsm8k")
    assert command.spec["dataset"]["samples"] == 7473 and "samples=7,473 (gsm8k)" in command.defaults_used


def test_a_model_named_beside_its_size_is_sized_by_the_size_and_steps_ask_for_samples() -> None:
    # "fine-tune whisper small on 10k samples params=244m" was refused for the name it gave beside its size; then
    # parsed, and refused at the answer ("neurons= Missing data"): now it says what sizes it (test_slack_stand_in.py);
    # since 2026-12-07 Whisper is a preset whose own count that is (wav2vec2 is the family without one)
    assert parse("fine-tune whisper small on 10k samples params=244m").spec["model"] == {"preset": "whisper-small"}
    with pytest.raises(CommandError) as caught:
        parse("fine-tune wav2vec2 on 10k samples params=244m")
    assert caught.value.problems == [p for p in caught.value.problems if p.startswith("params=244M: no decoder preset")]
    command = parse("fine-tune wav2vec2 on 10k samples params=244m neurons=300m madds=40g")
    assert command.spec["model"] == {"stats": {"parameters": 244_000_000, "neurons": 300_000_000,
                                               "multiply_adds": 40_000_000_000}}
    assert "the model by its statistics (its name is no preset)" in command.defaults_used
    with pytest.raises(CommandError) as caught:  # "500" and "steps" were two unknown words
        parse("fine-tune llama 3 8b for 500 steps")
    [problem] = caught.value.problems
    assert problem.startswith("steps: a run is sized by its samples") and "samples=4000" in problem


def test_brackets_and_w_slash_are_read_as_people_type_them() -> None:
    # "(90 epochs)" was "unknown word '(90'", "w/ qlora" "unknown word 'w/'"
    assert parse("Train ResNet-50 on ImageNet (90 epochs) on 4 t4s").spec["training"]["epochs"] == 90.0
    assert parse("Finetune Llama3 8B w/ QLoRA on 20K samples").spec["training"]["parallelism"] == {
        "adapter": {"kind": "qlora"}}


@pytest.mark.parametrize("text", ["bert base under €500", "bert base under 50 euros", "bert base under £40"])
def test_a_budget_in_another_currency_is_refused_naming_dollars(text: str) -> None:
    # "€500" lost its symbol and was "unknown word '500'"; no exchange rate is assumed
    with pytest.raises(CommandError) as caught:
        parse(text)
    [problem] = caught.value.problems
    assert "budgets are in US dollars" in problem


def test_recipe_words_and_comparisons_are_read_and_an_eight_bit_base_is_refused_with_what_to_say() -> None:
    # 'handle', 'difference', 'between', 'dropout', '0.05' were unknown words; '8-bit' now says what to ask instead
    assert parse("can a t4 handle bert large fine-tuning").spec["constraints"]["gpus"] == ["t4"]
    compared = parse("what's the difference between an a100 80gb and h100 for llama 3 8b lora")
    assert compared.spec["constraints"]["gpus"][0] == "a100-80gb" and "max_gpus" not in compared.spec["constraints"]
    told = parse("fine-tune llama 3 8b with lora r=16 alpha=32 dropout 0.05").defaults_used
    assert any(t.startswith("dropout: a model's own is in its layers") for t in told)
    with pytest.raises(CommandError) as caught:
        parse("fine-tune llama 3 8b in 8-bit")
    assert caught.value.problems == ["8-bit: an 8-bit base (bitsandbytes' LLM.int8) is not sized: say `qlora` for "
                                     "adapters on a 4-bit base or `lora` on a 16-bit one"]


@pytest.mark.parametrize(("text", "told"), [
    ("fine-tune llama 3 8b on 50k samples using trl", "trl: TRL's SFTTrainer"),
    ("fine-tune llama 3 8b on 50k samples using axolotl", "axolotl: sized as TRL runs"),
    ("train resnet50 on imagenet with mixed precision and channels last", "channels last: not modelled apart"),
    ("train resnet50 on imagenet with torch.compile", "torch.compile: not modelled"),
    ("train bert from scratch with the mlm objective on 10b tokens", "mlm: an encoder pre-trained from scratch"),
    ("fine-tune llama 3 8b, warmup 100 steps, cosine schedule", "learning-rate schedule: it changes no memory"),
    ("fine-tune llama 3 8b with lora on 5k samples and evaluate every epoch", "evaluation: not counted here"),
])
def test_recipe_words_are_told_back_with_what_they_change(text: str, told: str) -> None:
    # each was refused as unknown words
    assert any(t.startswith(told) for t in parse(text).defaults_used)


def test_a_learning_rate_said_in_words_is_the_runs() -> None:
    assert parse("fine-tune llama 3 8b with a learning rate of 2e-4").spec["training"]["learning_rate"] == 2e-4


def test_a_family_without_a_preset_said_with_a_size_is_sized_by_its_size_and_told() -> None:
    # "fine-tune falcon 7b with qlora" was "unknown preset 'falcon'"; the 7B decoder preset stands in, told twice over
    command = parse("fine-tune falcon 7b with qlora")
    assert command.spec["model"]["preset"] == "7b"
    assert command.defaults_used[0].startswith("7b: sized as llama-7b")
    assert command.defaults_used[1].startswith("falcon: no preset of that family, sized by its size")
    with pytest.raises(CommandError):  # a size no decoder is within 30% of stays refused: nothing stands in
        parse("fine-tune yi 200b with qlora")
    with pytest.raises(CommandError):  # a misspelt preset is not a family
        parse("fine-tune resnt50 on imagenet")
