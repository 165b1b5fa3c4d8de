"""Cloud machine types said by name in a slash command ("on a p3.8xlarge", "an a2-highgpu-1g"): their GPUs, how many
and their cloud, in the words the grammar reads ("4 v100-16gb aws"), each told back.

The job spec has no instance-type constraint (CONTRACT.md), so a machine said by name is ranked as the GPUs it carries:
that card, at most that count (a count said ranks cost and time together), on that cloud. The machine itself is among
the options where it is worth renting; its siblings of the same card are beside it. Each was "unknown word". A cloud
the catalog lacks ("on runpod", "on azure") is said back and the ranking keeps to AWS and Google Cloud; a count
written apart from its card ("2 x t4") is joined.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from catalog.gpu_names import gpu_name_matches
from catalog.types import InstanceType

_ARTICLES = frozenset({"a", "an", "one"})
_PUNCTUATION = "?!.,;:()"
# Clouds and GPU hosts the catalog does not hold (it has AWS and Google Cloud): said back, and ranked on those two
OTHER_CLOUDS = frozenset({"azure", "runpod", "coreweave", "lambda", "lambdalabs", "vast.ai", "vastai", "paperspace",
                          "colab", "kaggle", "oci", "oracle", "lightning.ai", "together.ai", "modal"})


def machine_words(text: str, instances: Iterable[InstanceType]) -> tuple[str, tuple[str, ...]]:
    """Return the text with each machine type said by name made its GPUs, count and cloud, and what was read."""
    instances = tuple(instances)
    names = {i.instance_type.lower(): i for i in instances if i.gpu_count > 0}
    out: list[str] = []
    told: list[str] = []
    for word in _card_nodes(_joined_times(text), {i.gpu for i in instances}).split():
        bare = word.lower().strip(_PUNCTUATION)
        if bare in OTHER_CLOUDS:
            if out and out[-1].lower() in ("on", "in", "at", "via", "with"):
                out.pop()
            told.append(f"{bare}: not in gpugauge's catalog (AWS and Google Cloud), ranked on those")
            continue
        machine = names.get(bare)
        if machine is None:
            out.append(word)
            continue
        machines = 1
        if out and (out[-1].lower() in _ARTICLES or out[-1].isdigit()):  # "on a p3.8xlarge", "on 2 p4d.24xlarge"
            machines = int(out.pop()) if out[-1].isdigit() else 1
        provider, gpus = machine.provider.value, machines * machine.gpu_count
        out.append(f"{gpus} {machine.gpu} {provider}" + word[len(word.rstrip(_PUNCTUATION)):])
        if bare not in (t.split(":")[0] for t in told):
            told.append(f"{bare}: {machine.gpu_count} x {machine.gpu} on {provider} (sized as its GPUs; a ranking "
                        "shows it beside the other machines of that card, at most that many)")
    return " ".join(out), tuple(told)


def _joined_times(text: str) -> str:
    """Return the text with each "N x M" written as one word, "Nx M" before a card ("2 x t4") and "NxM" for a size
    ("512 x 512"), as the grammar reads them."""
    words = text.split(" ")
    out: list[str] = []
    at = 0
    while at < len(words):
        if at + 2 < len(words) and words[at].isdigit() and words[at + 1].lower() in ("x", "×"):
            after = words[at + 2]
            out.append(f"{words[at]}x{after}" if after[:1].isdigit() else f"{words[at]}x {after}")
            at += 3
            continue
        out.append(words[at])
        at += 1
    return " ".join(out)


_CARD_NODES = re.compile(r"\b(\d{1,3}) ([a-z0-9-]+) (nodes?)\b", re.IGNORECASE)


def _card_nodes(text: str, cards: Collection[str]) -> str:
    """Return the text with "N <card> nodes" said as "N nodes of <card>" ("2 h100 nodes": two machines of eight H100,
    as "2 nodes of h100" reads), where the word between names a card the clouds rent."""
    def said(match: re.Match[str]) -> str:
        named = gpu_name_matches(match[2], cards)
        return f"{match[1]} {match[3]} of {match[2]}" if named else match[0]

    return _CARD_NODES.sub(said, text)

