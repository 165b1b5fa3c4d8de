"""A question about fitting a job on cards, in a person's words: "does llama-7b fit on a t4?", "what batch size fits
llama 3 8b on a 4090", "largest batch for bert-large on my 3090". Its answer is the fit answer, with each card's
largest batch (workers/tasks/slack.py)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

BATCH_QUESTION = frozenset({"what", "max", "maximum", "largest", "biggest"})  # "what batch size ...", "max batch"


def as_fit(words: list[str], asked: list[str]) -> list[str]:
    """Return a fit question's words with "fit" first: "does llama-7b fit on a t4?", and a question about the largest
    batch ("what batch size can i use for resnet50 on a v100", "max batch size for bert on a t4", "what batch size fits
    llama 3 8b on a 4090"), its question words dropped; other words unchanged. `asked`: the words without their
    punctuation."""
    if words[0] == "fit":
        return words
    dropped: set[int] = set()
    for at, (word, after) in enumerate(pairwise(asked)):
        if word in BATCH_QUESTION and after in ("batch", "batch-size", "batchsize"):
            dropped.update(range(at, at + (3 if asked[at + 2:at + 3] == ["size"] else 2)))
            break
    if "fit" in asked or "fits" in asked:
        dropped.add(asked.index("fit") if "fit" in asked else asked.index("fits"))
    return ["fit", *(w for i, w in enumerate(words) if i not in dropped)] if dropped else words


def owned_as_fit_cards(spec: dict[str, Any]) -> list[str]:
    """Return the card a fit question names as the team's own ("largest batch for bert-large on my 3090", "does it fit
    on our 2 3090s"), taken out of constraints.owned_gpus, with its count as the spec's gpu_count; [] where none."""
    constraints = spec.get("constraints", {})
    if not (owned := constraints.pop("owned_gpus", None)):
        return []
    if not constraints:
        del spec["constraints"]
    spec["gpu_count"] = owned[0]["count"]
    return [owned[0]["gpu"]]
