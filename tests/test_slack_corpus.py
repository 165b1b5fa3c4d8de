"""A corpus said by its words is made tokens (4 to 3 words), told back; a word count under a million is left alone;
speech said in hours is made Whisper's 30-second samples."""

from __future__ import annotations

from service.slack.intake import preset_words
from workers.slack.corpus import audio_as_samples, words_as_tokens
from workers.slack.grammar import parse_command


def test_a_corpus_in_words_is_sized_by_its_tokens_and_told() -> None:
    # "pretrain bert base from scratch on 3.3b words" (BERT's BooksCorpus and Wikipedia) was "unknown word '3.3b'"
    said, told = words_as_tokens("pretrain bert base from scratch on 3.3b words")
    assert said == "pretrain bert base from scratch on 4400000000 tokens"
    assert told == ("3.3b words: about 4,400,000,000 tokens (4 tokens to 3 words, OpenAI's rule for English)",)
    command = parse_command(said, presets=preset_words(), gpus=["t4"])
    assert command.spec["dataset"]["samples"] == 4_400_000_000 // 512 + (4_400_000_000 % 512 > 0)
    # a pre-training run, in 16 bits as RoBERTa's
    assert command.spec["training"]["precision"] == "bf16-mixed"


def test_a_few_words_are_no_corpus() -> None:
    assert words_as_tokens("summarise 500 words") == ("summarise 500 words", ())
    assert words_as_tokens("pretrain gpt2 on 10b tokens") == ("pretrain gpt2 on 10b tokens", ())


def test_a_fineweb_sample_said_by_its_size_is_its_gpt2_tokens() -> None:
    # "pretrain gpt-2 124m on fineweb 10b" was "unknown word 'fineweb'", "unknown preset '10b'"
    for text in ("pretrain gpt-2 124m on fineweb 10b", "pretrain gpt2 on fineweb-edu10b",
                 "pretrain gpt2 on fineweb-10bt", "pretrain gpt2 on fineweb edu 10b",
                 "pretrain gpt2 on FineWeb_Edu 10b"):
        said, told = words_as_tokens(text)
        assert said.endswith("on 10000000000 tokens") and "10,000,000,000 tokens (FineWeb's sample" in told[0]
    assert words_as_tokens("pretrain gpt2 on fineweb") == ("pretrain gpt2 on fineweb", ())  # 15T: its size is asked


def test_speech_said_in_hours_is_whispers_30_second_samples_and_told() -> None:
    # "fine-tune whisper small on 100 hours of audio" was "unknown word '100'"
    for text, count in (("fine-tune whisper small on 100 hours of audio", 12_000),
                        ("fine-tune whisper large-v3 on 1,000h of transcribed speech", 120_000),
                        ("fine-tune whisper small on 2.5k hrs of speech within 10 hours", 300_000)):
        said, told = audio_as_samples(text)
        assert f"on {count} samples" in said and len(told) == 1 and f"{count:,} samples of 30 s" in told[0]
        command = parse_command(said, presets=preset_words(), gpus=["t4"])
        assert command.spec["dataset"]["samples"] == count
        assert command.spec["model"]["preset"].startswith("whisper")
    said, _ = audio_as_samples("fine-tune whisper small on 2.5k hrs of speech within 10 hours")
    assert parse_command(said, presets=preset_words(), gpus=["t4"]).spec["constraints"]["deadline_hours"] == 10
    assert audio_as_samples("train resnet50 within 100 hours") == ("train resnet50 within 100 hours", ())


def test_a_corpus_said_in_tokens_with_its_sequence_is_pre_training() -> None:
    # "train gpt2 on 10b tokens seq=1024" and "train gpt2 on openwebtext seq=1024" were sized as fine-tunes (3 epochs,
    # the Trainer's batch 8, checkpointing): the seq= said made the tokens samples, and the corpus was forgotten
    for text in ("train gpt2 on 10b tokens seq=1024", "train gpt2 on openwebtext seq=1024",
                 "train gpt2 on openwebtext samples=1000", "train gpt2 on 10b tokens"):
        command = parse_command(text, presets=preset_words(), gpus=["t4"])
        training = command.spec["training"]
        assert "epochs" not in training and "recompute" not in training, text
        assert training["batch_size"] == 32 and training["precision"] == "bf16-mixed"
    said = parse_command("train gpt2 on 10b tokens seq=1024", presets=preset_words(), gpus=["t4"])
    assert said.spec["dataset"]["samples"] == -(-10_000_000_000 // 1024)
    # with no corpus said, a published model is still sized as a fine-tune; said so, it is one whatever its data
    assert parse_command("train gpt2 seq=1024 samples=1000", presets=preset_words(), gpus=["t4"]).spec["training"][
        "epochs"] == 3
    tuned = parse_command("fine-tune llama 3 8b on 1b tokens", presets=preset_words(), gpus=["t4"])
    assert tuned.spec["training"]["from_pretrained"] is True and tuned.spec["training"]["recompute"] is True


def test_a_whisper_fine_tune_is_sized_as_the_hugging_face_blog_runs_it() -> None:
    # huggingface/blog fine-tune-whisper.md: per_device_train_batch_size=16, gradient_checkpointing=True, fp16=True;
    # sized with the Trainer's generic batch 8 in fp32 without checkpointing it needed 17.8 GiB, over a T4
    said, _ = audio_as_samples("fine-tune whisper small on 100 hours of audio")
    command = parse_command(said, presets=preset_words(), gpus=["t4"])
    training = command.spec["training"]
    assert (training["batch_size"], training["precision"], training["recompute"]) == (16, "fp16-mixed", True)
    assert any("Whisper fine-tuning blog" in told for told in command.defaults_used)
    said_otherwise = parse_command("fine-tune whisper small on 10k clips batch=4 fp32 no-checkpointing",
                                   presets=preset_words(), gpus=["t4"]).spec["training"]
    assert (said_otherwise["batch_size"], said_otherwise["precision"]) == (4, "fp32")
    assert not said_otherwise.get("recompute")


def test_a_bert_pretraining_said_without_epochs_reads_its_corpus_as_bert_did() -> None:
    # "pretrain bert base on wikipedia and bookcorpus" was one pass of its 4.4B tokens (3.7 h on one H100); BERT's
    # recipe is 1,000,000 steps of 256 sequences, 90% of 128 tokens and 10% of 512 (Devlin et al. 2019, A.2)
    recipe = 1_000_000 * 256 * (0.9 * 128 + 0.1 * 512)
    command = parse_command("pretrain bert base on wikipedia and bookcorpus", presets=preset_words(), gpus=["t4"])
    training, samples = command.spec["training"], command.spec["dataset"]["samples"]
    assert training["epochs"] == round(recipe / (samples * training.get("sequence_length", 512)), 1) > 9
    assert any("Devlin et al. 2019" in said for said in command.defaults_used)
    big = parse_command("pretrain bert large on 100b tokens", presets=preset_words(), gpus=["t4"])
    assert big.spec["training"]["epochs"] == 1  # a corpus past the recipe's tokens: one pass, as said
    for text in ("pretrain bert base on wikipedia for 3 epochs", "pretrain roberta base on 10b tokens",
                 "fine-tune bert base on 100k samples"):
        epochs = parse_command(text, presets=preset_words(), gpus=["t4"]).spec["training"].get("epochs", 1)
        assert epochs in (1, 3)  # said, another model's recipe, or a fine-tune: not BERT's pre-training
