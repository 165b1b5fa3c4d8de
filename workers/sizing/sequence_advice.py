"""The sequence a language model is sized at where the spec gives none, and the warning that says so.

A preset or Hugging Face config without training.sequence_length is sized at the model's whole context (CONTRACT:
the preset's default): what pre-training packs every sample to. A fine-tune mostly truncates its samples much
shorter, and memory and time follow the tokens, so a spec that leaves the length out is told what it was sized at
and what the usual recipes use. Those recipes are also what Slack sizes a fine-tune at when no seq= is said:
- a decoder (GPT-2, the LLMs) as TRL's SFTTrainer runs one: SFTConfig.max_length 1,024 (huggingface/trl
  trl/trainer/sft_config.py, read 2026-12-06), at transformers' TrainingArguments.per_device_train_batch_size, 8,
  for its num_train_epochs, 3;
- an encoder's classifier as BERT's GLUE recipe: google-research/bert run_classifier.py, max_seq_length 128.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from workers.sizing.stats import ModelStats

SFT_MAX_LENGTH = 1024
SFT_BATCH = 8
HF_TRAINER_EPOCHS = 3  # TrainingArguments.num_train_epochs (TRL's SFTConfig keeps it), read 2026-12-06
GLUE_MAX_SEQ = 128
WARNING_CODE = "sequence-length-assumed"


def with_context_warning(stats: ModelStats, model: Mapping[str, Any], training: Mapping[str, Any]) -> ModelStats:
    """Return the model with a `sequence-length-assumed` warning where a preset or config model was sized at its
    context for want of training.sequence_length, longer than GLUE_MAX_SEQ, and the job is not said to pre-train."""
    sized = stats.sequence_length
    if ("preset" not in model and "hf_config" not in model) or training.get("sequence_length") is not None \
            or sized is None or sized <= GLUE_MAX_SEQ or training.get("from_pretrained") is False:
        return stats
    message = (f"training.sequence_length is not given, so every sample is sized at the model's whole context, "
               f"{sized:,} tokens: memory and time follow the tokens. Pre-training packs samples to the context; a "
               f"fine-tune mostly truncates them shorter: TRL's SFTTrainer at {SFT_MAX_LENGTH:,} tokens "
               f"(SFTConfig.max_length), BERT's GLUE recipe at {GLUE_MAX_SEQ} (run_classifier.py). Give "
               f"training.sequence_length (and training.mean_sequence_length where batches are padded to their "
               f"longest sample), or training.from_pretrained: false for pre-training.")
    return replace(stats, import_warnings=(*stats.import_warnings, (WARNING_CODE, message)))


TARGET_WARNING = "target-length-assumed"
# transformers' examples/pytorch/summarization/run_summarization.py: --max_source_length 1024, --max_target_length 128
SUMMARY_SOURCE, SUMMARY_TARGET = 1024, 128


def with_target_warning(stats: ModelStats, model: Mapping[str, Any], training: Mapping[str, Any]) -> ModelStats:
    """Return the model with a `target-length-assumed` warning where an encoder-decoder (a T5, BART or Whisper preset
    or config) was sized with its decoder reading as many tokens as its encoder (Whisper's: its 448 positions), for
    want of training.target_length."""
    from workers.sizing.presets.hf_seq2seq import SEQ2SEQ_TYPES, WHISPER_TARGET
    from workers.sizing.presets.registry import find_preset

    if training.get("target_length") is not None:
        return stats
    preset, config = model.get("preset"), model.get("hf_config")
    if not ((isinstance(preset, str) and find_preset(preset).target)
            or (isinstance(config, Mapping) and config.get("model_type") in SEQ2SEQ_TYPES)):
        return stats
    if stats.sequence_length is None:  # Whisper: audio in, its decoder at its whole target positions
        positions = config.get("max_target_positions", WHISPER_TARGET) if isinstance(config, Mapping) \
            else WHISPER_TARGET
        message = (f"training.target_length is not given, so the decoder is sized at its {positions} target "
                   "positions, the longest transcript Whisper reads; a 30-second clip's transcript is mostly far "
                   "shorter: give training.target_length, the tokens of your longest transcript.")
        return replace(stats, import_warnings=(*stats.import_warnings, (TARGET_WARNING, message)))
    message = (f"training.target_length is not given, so the decoder is sized at the source's "
               f"{stats.sequence_length:,} tokens, as a translation's targets run. A summary's or an answer's "
               f"targets are mostly shorter (transformers' run_summarization.py truncates them at "
               f"{SUMMARY_TARGET}); give training.target_length: the decoder's memory and time follow it.")
    return replace(stats, import_warnings=(*stats.import_warnings, (TARGET_WARNING, message)))

