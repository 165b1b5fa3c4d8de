"""Words the slash command's grammar reads as one: two that are one ("fine tune", "gradient accumulation") and a count
with its scale word ("2 million"), joined before anything else reads them (workers/slack/phrases.py)."""

from __future__ import annotations

import re

NUMBER = re.compile(r"^\$?\d[\d,]*(\.\d+)?(e\+?\d{1,2})?[kmbt]?$")  # "1e6 samples" too

# Two words that are one ("fine tune", "pre training"): joined before anything else reads them.
TWO_WORDS = {("fine", "tune"): "fine-tune", ("fine", "tuning"): "fine-tune", ("fine", "tuned"): "fine-tune",
             ("pre", "train"): "pretrain", ("pre", "training"): "pretrain", ("by", "tomorrow"): "tomorrow",
             ("gradient", "checkpointing"): "checkpointing", ("activation", "checkpointing"): "checkpointing",
             ("no", "spot"): "ondemand", **{("zero", n): f"zero{n}" for n in "123"},  # "deepspeed zero 3"
             ("continued", "pretrain"): "continued-pretrain", ("continual", "pretrain"): "continued-pretrain",
             ("continue", "pretrain"): "continued-pretrain", ("vision", "transformer"): "vit",
             ("flash", "attention"): "flash-attention", ("all", "linear"): "targets=q,k,v,o,mlp",  # QLoRA's all
             ("mixed", "precision"): "fp16",  # PyTorch's autocast on CUDA: float16 unless told bf16
             ("gradient", "accumulation"): "accum", ("grad", "accum"): "accum"}  # "gradient accumulation 16"


SCALE_WORDS = {"thousand": "k", "million": "m", "billion": "b"}


def joined(said: list[str]) -> list[str]:
    """Return the words with TWO_WORDS joined."""
    out: list[str] = []
    for word in said:
        if out and word in SCALE_WORDS and NUMBER.match(out[-1]) and out[-1][-1].isdigit():
            out[-1] += SCALE_WORDS[word]  # "2 million sentences": 2m
        elif out and (out[-1], word) in TWO_WORDS:
            out[-1] = TWO_WORDS[(out[-1], word)]
        else:
            out.append(word)
    return out


MEDIA_WORDS = frozenset({"text", "images", "photos", "audio", "video", "files", "jpegs"})  # "2tb of images"


def media_words(after: list[str]) -> int:
    """Return how many words after a size say what the data is ("images": 1, "of text": 2), 0 where none do."""
    if after[:1] and after[0] in MEDIA_WORDS:
        return 1
    return 2 if after[:1] == ["of"] and after[1:2] and after[1] in MEDIA_WORDS else 0
