"""Slack sizes an encoder-decoder's fine-tune (T5, FLAN-T5, BART) as Seq2SeqTrainer and transformers' summarization
example run one: the source at run_summarization.py's 1,024 tokens (at most the model's context), the target at its
128, the Trainer's batch, epochs and fused AdamW, and none of TRL's decoder defaults (gradient checkpointing, the
chunked loss). Before 2026-12-07 "fine-tune t5 base" was refused as a family without a preset, and "t5 small on cnn
dailymail" read "cnn" as a second model."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import parse


@pytest.mark.parametrize(("text", "preset", "source", "target", "samples"), [
    ("fine-tune t5 small on cnn dailymail", "t5-small", 512, 128, 287_113),
    ("fine-tune bart-large on xsum target 64", "bart-large", 1024, 64, 204_045),
    ("fine tune flan t5 xl on 50k samples target=256 bf16", "flan-t5-xl", 512, 256, 50_000),
    ("fine-tune mt5 base on 50k samples", "mt5-base", 512, 128, 50_000),
])
def test_an_encoder_decoders_fine_tune_is_sized_as_its_recipe(text: str, preset: str, source: int, target: int,
                                                              samples: int) -> None:
    command = parse(text)
    training = command.spec["training"]
    assert command.spec["model"] == {"preset": preset} and command.spec["dataset"]["samples"] == samples
    assert (training["sequence_length"], training["target_length"], training["batch_size"]) == (source, target, 8)
    assert training["optimizer_implementation"] == "fused" and training["gradient_clipping"] == "global"
    assert "recompute" not in training and "loss" not in training  # TRL's defaults are a decoder's, not Seq2Seq's
    said = " ".join(command.defaults_used)
    assert ("target=128" in said) == (target == 128) and "SFTTrainer" not in said


def test_a_decoders_fine_tune_keeps_trls_defaults() -> None:
    training = parse("fine-tune llama 3 8b on 10k samples").spec["training"]
    assert training["recompute"] is True and training["loss"] == "fused_linear_cross_entropy"
    assert "target_length" not in training


def test_whisper_is_sized_by_its_clips_and_its_transcripts_as_the_api_defaults_them() -> None:
    command = parse("fine-tune whisper small on 20k clips of audio")
    training = command.spec["training"]
    assert command.spec["model"] == {"preset": "whisper-small"} and command.spec["dataset"]["samples"] == 20_000
    # no token length: it reads 30 s of frames; its transcripts at its 448 positions, which the answer warns of
    assert "sequence_length" not in training and "target_length" not in training
    # checkpointing, batch 16 and fp16 as the Hugging Face Whisper fine-tuning blog runs it (2026-12-07; none before)
    assert training["optimizer_implementation"] == "fused" and training["recompute"] is True
    assert (training["batch_size"], training["precision"]) == (16, "fp16-mixed")
