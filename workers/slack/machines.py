"""Cloud machine types said by name in a slash command ("on a p3.8xlarge", "an a2-highgpu-1g"): their GPUs, how many
and their cloud, in the words the grammar reads ("4 v100-16gb aws"), each told back.

The job spec has no instance-type constraint (CONTRACT.md), so a machine said by name is ranked as the GPUs it carries:
that card, at most that count (a count said ranks cost and time together), on that cloud. The machine itself is among
the options where it is worth renting; its siblings of the same card are beside it. Each was "unknown word". A cloud
the catalog lacks ("on runpod", "on azure") is said back and the ranking keeps to AWS and Google Cloud, except Colab,
whose question is whether the job runs on its free tier's T4 (a fit); a count written apart from its card ("2 x t4")
is joined.
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
# A notebook service said without a card ("fine-tune gemma 2 2b with lora on colab"): the question is whether the job
# runs on the GPU its free tier gives, so it is a fit on that card. Colab's free tier has given a Tesla T4 (16 GB)
# [recalled: its FAQ says the GPU types vary over time and are not guaranteed]; Colab Pro's L4 or A100 is said by name
# ("on colab with an a100": a fit on that card).
FREE_TIER_CARDS = {"colab": ("t4", "colab: a fit on the T4 (16 GB) Colab's free tier gives (the GPU types vary; "
                                   "name the card for Colab Pro's L4 or A100); Colab's own price is not ranked")}


def machine_words(text: str, instances: Iterable[InstanceType]) -> tuple[str, tuple[str, ...]]:
    """Return the text with each machine type said by name made its GPUs, count and cloud, and what was read."""
    instances = tuple(instances)
    names = {i.instance_type.lower(): i for i in instances if i.gpu_count > 0}
    out: list[str] = []
    told: list[str] = []
    cards = {i.gpu for i in instances}
    said = _card_nodes(_joined_times(text), cards)
    named_card = any(gpu_name_matches(w.strip(_PUNCTUATION), cards) for w in said.lower().split() if len(w) > 1)
    for word in said.split():
        bare = word.lower().strip(_PUNCTUATION)
        if bare in FREE_TIER_CARDS:  # the free tier's card, or the one said ("on colab with an a100"): a fit on it
            if out and out[-1].lower() == "google":  # "on google colab": no Google Cloud ranking
                out.pop()
            out.append("fit" if named_card else f"{FREE_TIER_CARDS[bare][0]} fit")
            told.append(FREE_TIER_CARDS[bare][1] if not named_card else f"{bare}: a fit on the card said")
            continue
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

