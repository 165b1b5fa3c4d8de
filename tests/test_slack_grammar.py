"""The `/gpugauge` command grammar: words to a job spec the schema accepts, and typos to suggestions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workers.schemas import JobSpecSchema
from workers.slack.grammar import (
    DEFAULT_BATCH_SIZE,
    FLAGS,
    Command,
    CommandError,
    parse_command,
)
from workers.slack.wording import describe_errors

PRESETS = ("resnet50", "resnet18", "vgg16", "bert-base", "gpt2-124m")
GPUS = ("v100-16gb", "v100-32gb", "a100-80gb", "t4", "gtx-1080-ti")


def parse(text: str) -> Command:
    return parse_command(text, presets=PRESETS, gpus=GPUS)


def problems_of(text: str) -> list[str]:
    with pytest.raises(CommandError) as caught:
        parse(text)
    return caught.value.problems


def test_the_issue_example_becomes_plain_numbers_in_the_right_fields() -> None:
    command = parse("resnet50 batch=64 epochs=90 data=150GB samples=1.28M budget=$500 deadline=2d spot")
    assert command.kind == "recommend"
    assert command.spec["model"] == {"preset": "resnet50"}
    assert command.spec["training"] == {"batch_size": 64, "epochs": 90.0}
    assert command.spec["dataset"] == {"bytes": 150 * 10**9, "samples": 1_280_000}
    constraints = command.spec["constraints"]
    assert constraints["budget_usd"] == 500.0
    assert constraints["deadline_hours"] == 48.0
    assert constraints["pricing"] == ["spot", "owned"]  # owned cards stay in: no provider was named


def test_the_clis_recommend_verb_is_taken_as_the_default_it_is() -> None:
    said = "resnet50 batch=64 epochs=90 data=150GB samples=1.28M spot"
    assert parse(f"recommend {said}") == parse(said)
    assert parse("recommend").kind == "help"
    assert any("'recommend'" in p for p in problems_of("resnet50 recommend"))  # only as the first word


def test_the_parsed_spec_passes_the_job_spec_schema_with_its_defaults() -> None:
    command = parse("resnet50 batch=64 epochs=90 data=150GB samples=1.28M budget=$500 deadline=2d spot")
    loaded = JobSpecSchema().load(command.spec)
    assert loaded["objective"] == "cost"  # the cheapest option that meets the deadline
    assert loaded["training"]["precision"] == "fp32"
    assert loaded["constraints"]["providers"] == ["aws", "gcp"]  # the clouds; buying is asked for


def test_without_batch_the_documented_default_is_used_and_reported() -> None:
    command = parse("resnet50")
    assert command.spec["training"]["batch_size"] == DEFAULT_BATCH_SIZE
    assert command.defaults_used == (f"batch={DEFAULT_BATCH_SIZE}", "precision=fp32")
    # what the user said is not told back as assumed
    assert parse("resnet50 batch=64 bf16").defaults_used == ()
    assert parse("resnet50 precision=fp16").defaults_used == (f"batch={DEFAULT_BATCH_SIZE}",)
    assert JobSpecSchema().load(parse("resnet50 batch=8").spec)["training"]["precision"] == "fp32"
    assert JobSpecSchema().load(command.spec)["training"]["epochs"] == 1.0


def test_a_preset_with_its_own_recipe_is_sized_at_the_recipes_batch_and_told_so() -> None:
    presets = (*PRESETS, "dcgan", "mlp-mnist", "vae-mnist", "dqn-atari")
    dcgan = parse_command("dcgan 25 epochs", presets=presets, gpus=GPUS)
    assert dcgan.spec["training"]["batch_size"] == 128  # DCGAN's 128 (domain notes §7), not Keras' 32
    assert dcgan.defaults_used[0].startswith("batch=128 (DCGAN's: Radford et al. 2016")
    assert parse_command("mlp-mnist", presets=presets, gpus=GPUS).spec["training"]["batch_size"] == 128
    assert parse_command("dqn-atari", presets=presets, gpus=GPUS).spec["training"]["batch_size"] == 32
    # a U-Net at 512x512 trains one image a batch (3.4 GiB), not Keras' 32 (50 GiB: an 80 GB card for 5k images)
    unet = parse_command("train a unet on 5000 images for 50 epochs", presets=(*presets, "unet"), gpus=GPUS)
    assert unet.spec["training"]["batch_size"] == 1 and unet.defaults_used[0].startswith("batch=1 (the U-Net paper's")
    # one sample of the LSTM meta-learner is one episode: 32 of them were 15.1 GiB
    meta = parse_command("train an lstm meta-learner", presets=(*presets, "lstm-meta-learner", "meta-learner"),
                         gpus=GPUS)
    assert meta.spec["training"]["batch_size"] == 1 and meta.defaults_used[0].startswith("batch=1 (one episode a step")
    said = parse_command("dcgan batch=64", presets=presets, gpus=GPUS)
    assert said.spec["training"]["batch_size"] == 64 and not any(d.startswith("batch=") for d in said.defaults_used)
    assert parse("resnet50").spec["training"]["batch_size"] == DEFAULT_BATCH_SIZE  # no one recipe: Keras' 32


def test_a_model_of_a_billion_parameters_or_more_is_assumed_in_bf16_and_told_so() -> None:
    presets = (*PRESETS, "llama3-8b", "gpt2-xl")
    command = parse_command("fine-tune llama3-8b lora samples=52k", presets=presets, gpus=GPUS)
    assert command.spec["training"]["precision"] == "bf16-mixed"  # what an 8B fine-tune runs in, not fp32
    assert any(d.startswith("precision=bf16 (TRL's SFTTrainer fine-tunes in bf16-mixed (SFTConfig: bf16=True)")
               for d in command.defaults_used)
    assert "precision=fp32" not in command.defaults_used
    # said wins, and a model under 1B that no recipe runs in 16 bits (a ResNet; a decoder is TRL's or nanoGPT's bf16)
    # keeps the spec's fp32
    said = parse_command("llama3-8b fp32 qlora", presets=presets, gpus=GPUS)
    assert said.spec["training"]["precision"] == "fp32" and not any("precision" in d for d in said.defaults_used)
    assert parse_command("gpt2-xl", presets=presets, gpus=GPUS).spec["training"]["precision"] == "bf16-mixed"
    small = parse("resnet50 batch=64")
    assert "precision" not in small.spec["training"] and "precision=fp32" in small.defaults_used
    assert parse("gpt2-124m").spec["training"]["precision"] == "bf16-mixed"
    # asked about cards without bf16 alone (a T4, a V100: estimated as fp32 there), fp16-mixed
    on_t4 = parse_command("does llama3-8b fit on a t4", presets=presets, gpus=GPUS, no_bf16=("t4", "v100-16gb"))
    assert on_t4.spec["training"]["precision"] == "fp16-mixed"
    assert any(d.startswith("precision=fp16 (") and "t4 has no bf16" in d for d in on_t4.defaults_used)
    mixed = parse_command("llama3-8b lora t4 a100-80gb", presets=presets, gpus=GPUS, no_bf16=("t4",))
    assert mixed.spec["training"]["precision"] == "bf16-mixed"  # the A100 has it
    # a model given by its statistics alone, params= at 1B or more, likewise
    stats = parse("params=7B neurons=1M madds=7B batch=4")
    assert stats.spec["training"]["precision"] == "bf16-mixed"
    assert any(d.startswith("precision=bf16 (a model of 7.0B parameters") for d in stats.defaults_used)
    assert JobSpecSchema().load(stats.spec)["training"]["precision"] == "bf16-mixed"


def test_a_language_model_without_seq_is_told_it_is_sized_at_its_whole_context() -> None:
    command = parse_command("pretrain llama3-8b samples=10k", presets=(*PRESETS, "llama3-8b"), gpus=GPUS)
    assert "seq=8192 (the model's context)" in command.defaults_used  # Llama 3's 8,192: time follows the tokens
    assert "sequence_length" not in command.spec["training"]  # the spec keeps the preset's own default
    assert command.spec["training"]["batch_size"] == DEFAULT_BATCH_SIZE
    assert "seq=512 (the model's context)" in parse("pretrain bert-base batch=32").defaults_used
    # neither pre-training nor fine-tuning said: a published encoder is mostly fine-tuned, at GLUE's 128, told so
    assert parse("bert-base batch=32").defaults_used[0].startswith("seq=128 (sized as a fine-tune, as BERT's GLUE")
    assert not any(d.startswith("seq=") for d in parse("bert-base seq=128 bf16 batch=4").defaults_used)
    assert not any(d.startswith("seq=") for d in parse("resnet50 batch=64 bf16").defaults_used)  # images


def test_switches_set_precision_recompute_objective_optimizer_and_framework() -> None:
    spec = parse("resnet50 bf16 recompute cost adamw jax").spec
    assert spec["training"] == {"precision": "bf16-mixed", "recompute": True, "optimizer": "adamw",
                                "framework": "jax", "batch_size": DEFAULT_BATCH_SIZE}
    assert spec["objective"] == "cost"


def test_naming_providers_restricts_them_and_drops_owned_pricing_without_onprem() -> None:
    spec = parse("resnet50 aws gcp ondemand").spec
    assert spec["constraints"]["providers"] == ["aws", "gcp"]
    assert spec["constraints"]["pricing"] == ["on_demand"]
    assert parse("resnet50 onprem spot").spec["constraints"]["pricing"] == ["spot", "owned"]
    said = parse("train resnet50 on 20k samples on aws on demand").spec  # two words: was 'demand' unknown
    for words, pricing in (("with preemptible instances", "spot"), ("with a 1 year commitment", "committed_1y"),
                           ("with reserved instances", "committed_1y"), ("with 3 year reserved", "committed_3y"),
                           ("with a 3-year savings plan", "savings_plan_3y"), ("with savings plans", "savings_plan_1y"),
                           ("with committed use discounts", "committed_1y")):  # each was refused
        assert parse(f"resnet50 {words}").spec["constraints"]["pricing"][0] == pricing, words
    assert parse("resnet50 on aws in us-east-1 or us-west-2").spec["constraints"]["regions"] == ["us-east-1",
                                                                                              "us-west-2"]
    for words in ("every week", "each month", "nightly", "retrained every month"):  # were refused: said back instead
        recurring = parse(f"resnet50 buy or rent {words}")
        assert any("one run is sized and costed" in d for d in recurring.defaults_used), words
    assert said["constraints"]["pricing"] == ["on_demand"] and said["constraints"]["providers"] == ["aws"]


def test_settings_cover_sequence_learning_rate_gpus_region_and_top() -> None:
    spec = parse("gpt2-124m seq=1024 lr=3e-4 gpus=4 accum=8 region=us-east-1,us-west-2 top=3").spec
    assert spec["training"]["sequence_length"] == 1024
    assert spec["training"]["learning_rate"] == pytest.approx(3e-4)
    assert spec["training"]["update_interval"] == 8
    assert spec["constraints"]["max_gpus"] == 4
    assert spec["constraints"]["regions"] == ["us-east-1", "us-west-2"]
    assert spec["limit"] == 3
    JobSpecSchema().load(spec)


def test_stats_words_describe_a_model_without_a_preset() -> None:
    spec = parse("neurons=11M params=25.6M madds=4.1G batch=64").spec
    assert spec["model"] == {"stats": {"neurons": 11_000_000, "parameters": 25_600_000,
                                       "multiply_adds": 4_100_000_000}}
    JobSpecSchema().load(spec)


def test_a_misspelt_setting_suggests_the_right_word() -> None:
    assert problems_of("resnet50 batchsize=64") == ["unknown word 'batchsize'; did you mean batch=?"]


def test_a_misspelt_preset_suggests_the_closest_presets() -> None:
    [problem] = problems_of("resnt50 batch=64")
    assert problem.startswith("unknown preset 'resnt50'; did you mean resnet50")


def test_a_misspelt_switch_suggests_the_switch() -> None:
    assert problems_of("resnet50 spto") == ["unknown word 'spto'; did you mean spot?"]


def test_a_data_set_not_known_by_name_is_asked_for_by_its_size() -> None:
    # "pretrain bert base on wikipedia" was "unknown word 'wikipedia'; see `/gpugauge help`", which lists no such word
    [problem] = problems_of("pretrain bert base on common-crawl")  # wikipedia is read since 2026-12-07
    assert problem.startswith("unknown word 'common-crawl'") and "`3b tokens` or `1m samples`" in problem
    # only a word said after "on" is taken for a data set
    assert all("tokens" not in p for p in problems_of("fine-tune llama 3 8b on 50k samples every week"))


def test_every_bad_word_is_reported_at_once() -> None:
    problems = problems_of("resnt50 batchsize=64 spto data=150XB")
    assert len(problems) == 4
    assert any(p.startswith("data=150xb:") and "unknown size unit" in p for p in problems)


def test_bad_values_name_the_word_and_say_what_is_wrong() -> None:
    assert problems_of("resnet50 batch=abc")[0].startswith("batch=abc:")
    assert "not a duration" in problems_of("resnet50 deadline=soon")[0]
    assert problems_of("resnet50 epochs=")[0].startswith("epochs= needs a value")
    [precision] = problems_of("resnet50 precision=fp7")
    assert "unknown precision 'fp7'" in precision


def test_a_setting_given_twice_is_refused() -> None:
    assert problems_of("resnet50 batch=64 batch=32") == ["batch=32: batch is given twice"]
    assert problems_of("resnet50 precision=bf16 fp16") == ["fp16: precision is given twice"]


def test_a_command_without_a_model_asks_for_one() -> None:
    assert "name a model" in problems_of("batch=64 spot")[0]


def test_help_and_empty_text_ask_for_help() -> None:
    assert parse("help").kind == "help"
    assert parse("   ").kind == "help"


def test_fit_takes_a_preset_and_gpus_and_counts_gpus_from_gpus_word() -> None:
    command = parse("fit resnet50 v100-16gb a100-80gb batch=64 gpus=2")
    assert command.kind == "fit"
    assert command.gpus == ("v100-16gb", "a100-80gb")
    assert command.gpu_count == 2
    assert "max_gpus" not in command.spec.get("constraints", {})
    JobSpecSchema().load(command.spec)


def test_fit_with_a_misspelt_gpu_suggests_the_slug() -> None:
    [problem] = problems_of("fit resnet50 v1000-16gb")
    assert problem.startswith("unknown GPU 'v1000-16gb'; did you mean v100-16gb")


def test_fit_takes_gpus_as_people_write_them_and_a_family_as_each_member() -> None:
    assert parse("fit resnet50 on a gtx 1080 ti batch 64").gpus == ("gtx-1080-ti",)
    assert parse("fit resnet50 1080ti batch=64").gpus == ("gtx-1080-ti",)
    assert parse("fit resnet50 v100 batch=64").gpus == ("v100-16gb", "v100-32gb")
    command = parse("does resnet50 fit on 4x a100 80gb? batch 64")
    assert (command.gpus, command.gpu_count) == (("a100-80gb",), 4)
    command = parse("fit resnet50 on 2 t4s batch 64")
    assert (command.gpus, command.gpu_count) == (("t4",), 2)


def test_fit_without_a_gpu_lists_the_gpus() -> None:
    [problem] = problems_of("fit resnet50")
    assert "name a GPU" in problem and "a100-80gb" in problem


def test_slack_escaping_spacing_and_case_are_undone() -> None:
    command = parse("ResNet50 Batch = 64 budget=$1.5k")
    assert command.spec["training"]["batch_size"] == 64
    assert command.spec["constraints"]["budget_usd"] == 1500.0
    assert problems_of("resnet50 &lt;oops&gt;") == ["unknown word '<oops>'; see `/gpugauge help`"]


def test_an_overlong_command_is_refused_without_parsing() -> None:
    assert "over" in problems_of("resnet50 " + "spot " * 400)[0]


def test_schema_errors_are_named_by_the_words_the_user_typed() -> None:
    lines = describe_errors({"training.batch_size": ["Must be at least 1."], "model.preset": ["unknown"]})
    assert lines == ["batch= Must be at least 1.", "the preset unknown"]


@pytest.mark.parametrize("flag", sorted(FLAGS))
def test_every_switch_alone_gives_a_spec_the_schema_accepts(flag: str) -> None:
    JobSpecSchema().load(parse(f"resnet50 {flag}").spec)


@given(st.text(max_size=200))
def test_any_text_parses_or_fails_with_a_command_error(text: str) -> None:
    try:
        command = parse(text)
    except CommandError as exc:
        assert exc.problems
    else:
        assert command.kind in ("help", "recommend", "fit")


def test_pretrain_and_finetune_say_whether_the_job_starts_from_a_pretrained_model() -> None:
    assert parse("gpt2-124m pretrain").spec["training"]["from_pretrained"] is False
    assert parse("gpt2-124m scratch").spec["training"]["from_pretrained"] is False
    assert parse("bert-base finetune").spec["training"]["from_pretrained"] is True
    assert "from_pretrained" not in parse("bert-base").spec["training"]
    assert JobSpecSchema().load(parse("gpt2-124m pretrain seq=1024").spec)["training"]["from_pretrained"] is False
    assert any("pretrain" in p or "finetune" in p for p in problems_of("bert-base pretrain finetune"))


def test_lora_and_qlora_with_rank_and_targets_set_the_adapter_the_schema_accepts() -> None:
    spec = parse("bert-base qlora rank=16 targets=q,k,v,o batch=4 seq=512").spec
    assert spec["training"]["parallelism"] == {"adapter": {"kind": "qlora", "rank": 16,
                                                            "targets": ["q", "k", "v", "o"]}}
    loaded = JobSpecSchema().load(spec)["training"]["parallelism"]["adapter"]
    assert (loaded["kind"], loaded["rank"], loaded["targets"]) == ("qlora", 16, ["q", "k", "v", "o"])
    # The adapter's own defaults (rank 8 on q and v) where only its kind is said.
    assert parse("bert-base lora").spec["training"]["parallelism"] == {"adapter": {"kind": "lora"}}
    assert JobSpecSchema().load(parse("bert-base lora").spec)["training"]["parallelism"]["adapter"]["rank"] == 8
    assert "parallelism" not in parse("bert-base batch=8").spec["training"]


def test_an_adapter_setting_without_lora_or_qlora_and_two_adapters_are_refused() -> None:
    assert any("rank=" in p and "lora" in p for p in problems_of("bert-base rank=16"))
    assert any("targets=" in p for p in problems_of("bert-base targets=q,v"))
    assert any("given twice" in p for p in problems_of("bert-base lora qlora"))
    assert any(p.startswith("rank=8") and "given twice" in p for p in problems_of("bert-base lora rank=16 rank=8"))


def test_a_bad_adapter_target_is_named_by_the_word_the_user_typed() -> None:
    from marshmallow import ValidationError

    from workers.schemas.specs import flatten_errors

    with pytest.raises(ValidationError) as caught:
        JobSpecSchema().load(parse("bert-base lora targets=q,x").spec)
    lines = describe_errors(flatten_errors(caught.value.messages))
    assert any(line.startswith("targets= ") for line in lines), lines


def test_a_gpu_named_in_a_recommendation_keeps_the_ranking_to_it() -> None:
    command = parse("resnet50 batch 64 on a v100 or t4")
    assert command.kind == "recommend" and command.gpus == ()
    assert command.spec["constraints"]["gpus"] == ["v100-16gb", "v100-32gb", "t4"]
    assert "gpus" not in parse("resnet50 batch 64").spec.get("constraints", {})


def test_liger_asks_for_the_fused_linear_cross_entropy() -> None:
    command = parse_command("llama3-8b liger seq=131072 bf16 batch=1", presets=(*PRESETS, "llama3-8b"), gpus=GPUS)
    assert command.spec["training"]["loss"] == "fused_linear_cross_entropy"
    assert "loss" not in parse("bert-base batch=32").spec["training"]
    assert JobSpecSchema().load(command.spec)["training"]["loss"] == "fused_linear_cross_entropy"
    # "with fused cross entropy" (three words, joined in turn) and "fused ce": flash-attn's kernel; said plainly, the
    # plain loss, over the chunked loss a decoder's fine-tune takes unless told
    for said, loss in (("llama3-8b fine-tune with fused cross entropy bf16 batch=1", "fused_cross_entropy"),
                       ("llama3-8b fused ce bf16 batch=1", "fused_cross_entropy"),
                       ("llama3-8b fine-tune with cross entropy loss bf16 batch=1", "cross_entropy")):
        spec = parse_command(said, presets=(*PRESETS, "llama3-8b"), gpus=GPUS).spec
        assert spec["training"]["loss"] == loss and JobSpecSchema().load(spec)["training"]["loss"] == loss


def test_a_suggestion_names_each_preset_once_and_a_size_suggests_that_size() -> None:
    from service.slack.intake import preset_words

    words = preset_words()
    (typo,) = _problems(words, "resnt50")
    assert typo.startswith("unknown preset 'resnt50'; did you mean resnet50 or")
    assert "resnet_50" not in typo and "resnet-50" not in typo  # its aliases are not suggested beside it
    # a size no preset is called: the decoder of about that size stands in (test_slack_stand_in.py)
    assert parse_command("pretrain a 0.5b", presets=words, gpus=GPUS).spec["model"] == {"preset": "qwen2.5-0.5b"}


def _problems(words: tuple[str, ...], text: str) -> list[str]:
    with pytest.raises(CommandError) as caught:
        parse_command(text, presets=words, gpus=GPUS)
    return caught.value.problems

