"""Words the slash command's grammar reads as one: two that are one ("fine tune", "gradient accumulation") and a count
with its scale word ("2 million"), joined before anything else reads them (workers/slack/phrases.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

NUMBER = re.compile(r"^\$?\d[\d,]*(\.\d+)?(e\+?\d{1,2})?[kmbt]?$")  # "1e6 samples" too

# Two words that are one ("fine tune", "pre training"): joined before anything else reads them.
TWO_WORDS = {("fine", "tune"): "fine-tune", ("fine", "tuning"): "fine-tune", ("fine", "tuned"): "fine-tune",
             ("pre", "train"): "pretrain", ("pre", "training"): "pretrain", ("by", "tomorrow"): "tomorrow",
             ("gradient", "checkpointing"): "checkpointing", ("activation", "checkpointing"): "checkpointing",
             ("gradient", "clipping"): "clipping", ("grad", "clipping"): "clipping",  # training.gradient_clipping
             ("no", "spot"): "ondemand", ("on", "demand"): "ondemand",  # "on aws on demand": the pricing
             **{(first, unit): f"{word}ly" if word != "dai" else "daily" for first in ("every", "each")
                for unit, word in (("day", "dai"), ("night", "night"), ("week", "week"), ("month", "month"),
                                   ("quarter", "quarter"))},  # "retrained every month": a recurring job
             ("stable", "diffusion"): "stable-diffusion", ("stable-diffusion", "xl"): "sdxl",  # the SD presets
             ("flan", "t5"): "flan-t5", ("cnn", "dailymail"): "cnn-dailymail", ("cnn", "daily-mail"): "cnn-dailymail",
             **{(family, size): f"{family}-{size}" for family in ("t5", "flan-t5", "mt5", "whisper", "bart")
                for size in ("small", "base", "large", "medium", "xl", "xxl", "3b", "11b")},
             **{("zero", n): f"zero{n}" for n in "123"},  # "deepspeed zero 3"
             ("continued", "pretrain"): "continued-pretrain", ("continual", "pretrain"): "continued-pretrain",
             ("continue", "pretrain"): "continued-pretrain", ("vision", "transformer"): "vit",
             ("pytorch", "lightning"): "pytorch",  # PyTorch Lightning runs PyTorch
             ("16", "bit"): "bf16", ("32", "bit"): "fp32", ("4", "bit"): "4-bit", ("8", "bit"): "8-bit",  # "16 bit"
             ("small", "gpt"): "gpt2", ("gpt", "small"): "gpt2",  # "a small gpt": GPT-2 124M, nanoGPT's
             ("learning", "rate"): "lr", ("channels", "last"): "channels-last", ("every", "epoch"): "",
             ("of", "audio"): "", ("of", "speech"): "",  # "20k clips of audio": the clips are the samples
             ("data", "points"): "datapoints", ("data", "point"): "datapoints",  # "500k data points": samples
             ("mlm", "objective"): "mlm", ("masked", "lm"): "mlm", ("squad", "v2"): "squad-v2",
             ("squad", "2.0"): "squad-v2", ("squad2", "2.0"): "squad-v2",
             ("flash", "attention"): "flash-attention", ("all", "linear"): "targets=q,k,v,o,mlp",  # QLoRA's all
             ("mixed", "precision"): "fp16",  # PyTorch's autocast on CUDA: float16 unless told bf16
             ("gradient", "accumulation"): "accum", ("grad", "accum"): "accum",  # "gradient accumulation 16"
             ("cross", "entropy"): "cross-entropy", ("fused", "cross-entropy"): "fused-cross-entropy",
             ("fused", "ce"): "fused-cross-entropy",  # "with fused cross entropy": training.loss fused_cross_entropy
             # bitsandbytes' 8-bit AdamW ("8-bit adam", "adamw 8bit", "paged adamw 8bit"): optimizer=adamw_8bit
             **{pair: "adamw_8bit" for bits in ("8-bit", "8bit") for adam in ("adam", "adamw", "optimizer", "optimiser")
                for pair in ((bits, adam), (adam, bits))}, ("paged", "adamw_8bit"): "adamw_8bit",
             # a commitment's term and kind ("a 3 year commitment", "1-year savings plan"): typed.PRICING_WORDS
             **{(n, unit): f"{term}y" for n, term in (("1", 1), ("one", 1), ("3", 3), ("three", 3))
                for unit in ("year", "years", "yr")},
             **{(f"{term}y", word): f"{term}y-committed" for term in (1, 3)
                for word in ("commitment", "committed", "reserved", "term")},
             ("savings", "plan"): "savings-plan", ("savings", "plans"): "savings-plan",
             ("committed", "use"): "committed", ("committed", "discounts"): "committed",
             ("committed", "discount"): "committed",
             ("1y", "savings-plan"): "savings-plan", ("3y", "savings-plan"): "3y-savings-plan"}
# Runs a year of a job said to recur (TWO_WORDS makes "every week" "weekly"; "every day" and "nightly" alike)
RUNS_PER_YEAR = {"daily": 365, "nightly": 365, "weekly": 52, "monthly": 12, "quarterly": 4}
# One word said another way: a term written as one word ("3-year") as the pair makes it
ONE_WORD = {"1-year": "1y", "3-year": "3y", "1yr": "1y", "3yr": "3y", "one-year": "1y", "three-year": "3y",
            "retrain": "train", "retraining": "training", "retrained": "train",  # "retrain resnet18 nightly"
            "use_ema": "ema", "use-ema": "ema", "--use_ema": "ema", "model-ema": "ema",  # diffusers', timm's flags
            **dict.fromkeys(("adamw8bit", "adam8bit", "adamw-8bit", "adam-8bit", "adam_8bit", "adamw_bnb_8bit",
                             "paged_adamw_8bit", "paged-adamw-8bit", "bnb-adamw8bit"), "adamw_8bit")}


SCALE_WORDS = {"thousand": "k", "million": "m", "billion": "b", "trillion": "t"}


def joined(said: list[str]) -> list[str]:
    """Return the words with TWO_WORDS joined."""
    out: list[str] = []
    for word in said:
        word = ONE_WORD.get(word, word)
        if out and word in SCALE_WORDS and NUMBER.match(out[-1]) and out[-1][-1].isdigit():
            out[-1] += SCALE_WORDS[word]  # "2 million sentences": 2m
        elif out and (out[-1], word) in TWO_WORDS:
            out[-1] = TWO_WORDS[(out[-1], word)]
            while len(out) > 1 and (out[-2], out[-1]) in TWO_WORDS:  # "fused cross entropy": a pair, then three
                out[-2:] = [TWO_WORDS[(out[-2], out[-1])]]
        else:
            out.append(word)
    return [word for word in out if word]  # a pair joined to nothing ("every epoch") leaves no word


MEDIA_WORDS = frozenset({"text", "images", "photos", "audio", "video", "files", "jpegs"})  # "2tb of images"


def media_words(after: list[str]) -> int:
    """Return how many words after a size say what the data is ("images": 1, "of text": 2), 0 where none do."""
    if after[:1] and after[0] in MEDIA_WORDS:
        return 1
    return 2 if after[:1] == ["of"] and after[1:2] and after[1] in MEDIA_WORDS else 0


_DESCRIBING = re.compile(r"^[a-z]+(-[a-z]+)*$")  # "labeled", "customer", "high-quality": a word, no number
_SIZE_BETWEEN = re.compile(r"^(\d{1,2}x)?\d{2,5}x\d{2,5}$")  # "2000 512x512 medical images": the size stays
MOST_DESCRIBING = 3


def described_counts(said: list[str], *, nouns: Collection[str], meaningful: Callable[[str], bool],
                     named: Callable[[str], bool] = lambda word: False) -> list[str]:
    """Drop the words that only describe a count's noun, up to MOST_DESCRIBING of them between a number and the noun
    ("50k instruction examples", "10,000 labeled examples", "20k customer support tickets", "2000 512x512 medical
    images"): plain words that mean nothing of their own to the grammar (`meaningful` says which do), which it would
    refuse as unknown. An image size between them stays; a data set's name between them (`named`: "25k imdb reviews",
    "20k cifar10 images") goes after the noun, where the grammar reads it beside the count said."""
    out: list[str] = []
    i = 0
    while i < len(said):
        out.append(said[i])
        if NUMBER.match(said[i]):
            ahead = said[i + 1:i + 2 + MOST_DESCRIBING]
            end = next((k for k, w in enumerate(ahead) if w in nouns), -1)
            between = ahead[:end] if end > 0 else []
            names = [w for w in between if named(w)]
            dropped = [w for w in between if not _SIZE_BETWEEN.match(w) and not named(w)]
            if (dropped or names) and all(_DESCRIBING.match(w) and not meaningful(w) for w in dropped):
                out.extend([*(w for w in between if _SIZE_BETWEEN.match(w)), ahead[end], *names])
                i += len(between) + 1
        i += 1
    return out
