"""The sequence lengths a slash command sizes a language model's fine-tune at when it says none, and an
encoder-decoder's (T5, FLAN-T5) recipe.

A decoder's fine-tune as TRL's SFTTrainer runs one (SFT_MAX_LENGTH tokens), an encoder's classifier as BERT's GLUE
recipe (GLUE_MAX_SEQ), each at most the model's context (workers/sizing/sequence_advice.py has the sources). An
encoder-decoder reads two sequences, each as transformers' summarization example truncates them: its source at
run_summarization.py's --max_source_length, 1,024 (SUMMARY_SOURCE; at most the model's context: T5's 512, BART's
1,024), its target at --max_target_length, 128 (SUMMARY_TARGET),
with Seq2SeqTrainer's optimizer (the Trainer's fused AdamW, gradients clipped to norm 1.0) and none of TRL's
SFTConfig defaults (no gradient checkpointing, the plain loss): Seq2SeqTrainer sets neither. A BERT pre-training said
without epochs reads its data as BERT's recipe did (BERT_RECIPE_TOKENS).
"""

from __future__ import annotations

from typing import Any

from workers.sizing.errors import SpecError
from workers.sizing.presets.registry import Preset, find_preset
from workers.sizing.sequence_advice import GLUE_MAX_SEQ, SFT_MAX_LENGTH, SUMMARY_SOURCE, SUMMARY_TARGET


def found_preset(preset: object) -> Preset | None:
    """Return the preset the command names, None where it names none (a model given by its statistics)."""
    if not isinstance(preset, str):
        return None
    try:
        return find_preset(preset)
    except SpecError:
        return None


def fine_tune_kind(training: dict[str, Any], *, tokens: bool) -> str:
    """Return "said" where a command fine-tunes (said so, or an adapter), "assumed" where it says neither that nor
    `pretrain` and counts no tokens (a published model is mostly fine-tuned; a token count is a pre-training corpus),
    "" where it pre-trains."""
    if training.get("from_pretrained") is True or training.get("parallelism", {}).get("adapter"):
        return "said"
    return "assumed" if training.get("from_pretrained") is None and not tokens else ""


def as_fine_tune(kind: str) -> str:
    """Return how the told-back words name the fine-tune: said by the user, or assumed for want of `pretrain`."""
    return "a fine-tune" if kind == "said" else "sized as a fine-tune"


def fine_tune_sequence(spec: dict[str, Any], preset: object, kind: str) -> str:
    """Set the sequence length of a language model's fine-tune said without one (SFT_MAX_LENGTH for a decoder,
    GLUE_MAX_SEQ for an encoder's classifier, at most the context; an encoder-decoder's source at its context);
    return the words told back, "" where none. `kind`: fine_tune_kind's."""
    found = found_preset(preset)
    training = spec["training"]
    if found is None or found.sequence_length is None or "sequence_length" in training or not kind:
        return ""
    if found.heads:  # an encoder: its classifier head (the default) is what GLUE fine-tunes
        if spec["model"].get("head", found.heads[0]) != found.heads[0]:
            return ""
        seq, why = min(GLUE_MAX_SEQ, found.sequence_length), "BERT's GLUE recipe, run_classifier.py's max_seq_length"
    elif found.target:  # an encoder-decoder's source, as transformers' run_summarization.py truncates it
        seq, why = min(SUMMARY_SOURCE, found.sequence_length), "run_summarization.py's max_source_length"
    else:
        seq, why = min(SFT_MAX_LENGTH, found.sequence_length), "TRL's SFTTrainer, its max_length"
    training["sequence_length"] = seq
    if kind == "said" or seq == found.sequence_length:  # "fit gpt2": its context is TRL's length too
        return f"seq={seq} ({as_fine_tune(kind)}, as {why}; the model reads up to {found.sequence_length:,})"
    return f"seq={seq} (sized as a fine-tune, as {why}; say `pretrain` to size its whole {found.sequence_length:,})"


def seq2seq_step(spec: dict[str, Any], found: Preset | None, kind: str) -> list[str]:
    """Size an encoder-decoder's fine-tune (`kind`: fine_tune_kind's) as Seq2SeqTrainer runs it unless said
    otherwise: its target at SUMMARY_TARGET tokens, the Trainer's optimizer; return the words told back."""
    training = spec["training"]
    if found is None or not found.target or not kind:
        return []
    told = []
    if "target_length" not in training and found.input_shape is None:  # Whisper's: the API's default and warning
        training["target_length"] = SUMMARY_TARGET
        told.append(f"target={SUMMARY_TARGET} (the decoder's tokens, as transformers' run_summarization.py truncates "
                    f"them: max_target_length; say target= for yours)")
    if "optimizer" not in training:
        training.update(optimizer="adamw", optimizer_implementation="fused", gradient_clipping="global")
        told.append("optimizer=adamw, fused, gradients clipped to norm 1.0 (Seq2SeqTrainer's optim "
                    "adamw_torch_fused, max_grad_norm=1.0)")
    if found.input_shape is not None and "recompute" not in training:  # Whisper, as the HF blog fine-tunes it
        training["recompute"] = True
        told.append("checkpointing (the Hugging Face Whisper fine-tuning blog: gradient_checkpointing=True; say "
                    "`no-checkpointing` to size without)")
    return told


# BERT's pre-training (Devlin et al. 2019, appendix A.2): "batch size of 256 sequences ... for 1,000,000 steps", with
# "90% of the steps" at sequence length 128 and "the remaining 10% of the steps" at 512: 42.6B tokens in all.
BERT_RECIPE_TOKENS = 1_000_000 * 256 * (0.9 * 128 + 0.1 * 512)
BERT_PRESETS = frozenset({"bert-base", "bert-large", "bert-base-cased", "bert-large-cased"})


def bert_pretrain_epochs(spec: dict[str, Any], found: Preset | None, kind: str) -> str:
    """Set the epochs of a BERT pre-training said without them to the paper's tokens over the data's (at least one
    pass): "pretrain bert base on wikipedia and bookcorpus" was one pass of its 4.4B tokens, 3.7 h on an H100, where
    BERT's recipe reads the corpus about ten times. Return the words told back, "" where it does not apply."""
    training, samples = spec["training"], spec.get("dataset", {}).get("samples")
    if found is None or found.name not in BERT_PRESETS or kind or "epochs" in training or not samples:
        return ""
    tokens = samples * training.get("sequence_length", found.sequence_length or 512)
    epochs = max(1.0, round(BERT_RECIPE_TOKENS / tokens, 1))
    training["epochs"] = epochs
    return (f"epochs={epochs:g} (BERT's pre-training, Devlin et al. 2019 appendix A.2: 1,000,000 steps of 256 "
            f"sequences, 90% of them of 128 tokens and the rest of 512: {BERT_RECIPE_TOKENS / 1e9:.1f}B tokens over "
            f"these {tokens / 1e9:.2g}B, at least one pass; say epochs= for yours)")
