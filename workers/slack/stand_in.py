"""A model said by its parameter count alone ("a 2b parameter model", "t5-large params=780m"): the dense decoder
preset nearest that size stands in, told, where one is within STAND_IN_RATIO of it.

`model.stats` needs neurons and multiply-adds beside the parameters (the API's contract), so such a command was
refused with "neurons= Missing data", though the refusal of an unknown family ("t5-base") had itself advised
"give its size, e.g. params=220m". A decoder's time and weights follow its parameter count (about one multiply-add
per weight per token), so the preset of nearly that size answers for it, with the ratio said. Beyond the ratio,
or for an image model, or beside a preset of its own, the command says what sizes it instead.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from workers.sizing.presets.registry import PRESETS, Preset
from workers.slack.defaults import GENERIC_NAMES, SIZE_NAME
from workers.slack.sequences import found_preset

STAND_IN_RATIO = 1.3  # the stand-in's weights within 30% of the count said, either way
_OWN = ("give neurons= and madds= beside params= to size it by its statistics, or size it in the CLI or the API from "
        "its ONNX export or its Hugging Face config.json (model.hf_config)")


def size_words(words: list[str], presets: Collection[str]) -> list[str]:
    """Return the words with a bare size that names no preset ("a 34b model", "yi 34b") made params=, once; a size that
    is an alias ("7b", "70b") stays the preset it names."""
    if any(w.startswith("params=") for w in words):
        return words
    sizes = [i for i, w in enumerate(words) if SIZE_NAME.fullmatch(w) and w not in presets]
    return [f"params={w}" if sizes[:1] == [i] else w for i, w in enumerate(words)]


def _decoder_words() -> set[str]:
    """Return the names and aliases of the dense decoder presets."""
    return {word for p in _decoders() for word in (p.name, *p.aliases)}


def _decoders(presets: Collection[str] | None = None) -> list[Preset]:
    """Return the dense decoder presets (a context, no encoder heads, no target, not a mixture of experts), of those
    the words name where `presets` is given."""
    return [p for p in PRESETS.values() if p.sequence_length is not None and not p.heads and not p.target
            and "mixture of experts" not in p.description
            and (presets is None or p.name in presets or any(a in presets for a in p.aliases))]


def _size(count: float) -> str:
    """Return a parameter count as people say it: 3.2M, 220M, 2.0B, 405B."""
    value, unit = (count / 1e9, "B") if count >= 1e9 else (count / 1e6, "M")
    return f"{value:.1f}{unit}" if value < 100 else f"{value:.0f}{unit}"


def nearest_decoder(parameters: int, presets: Collection[str] | None = None) -> tuple[Preset, float] | None:
    """Return the dense decoder preset whose parameter count is nearest (by ratio) and its count / the one said."""
    if not (decoders := _decoders(presets)):
        return None
    best = min(decoders, key=lambda p: (abs(math.log(p.published.parameters / parameters)), p.name))
    return best, best.published.parameters / parameters


def size_stand_in(spec: dict[str, Any], problems: list[str], assumed: tuple[str, ...], *, presets: Collection[str],
                  image_said: bool) -> tuple[str, ...]:
    """Put the stand-in preset in a spec whose model is a parameter count alone and return the words told back (the
    statistics' line replaced), or add what sizes it instead to `problems`. A count said of a preset within the ratio
    of its own ("resnet50 with 25m params") is taken as said of it. A model that is more than a count (neurons= or
    madds= said, or no params=) is left as it is."""
    model = spec.get("model", {})
    stats = model.get("stats") or {}
    if set(stats) != {"parameters"}:
        return assumed
    said = _size(stats["parameters"])
    preset = model.get("preset")
    if preset in GENERIC_NAMES and preset in _decoder_words():  # "a 100m parameter transformer": the size names it
        preset = None
    own = named.published.parameters if (named := found_preset(preset)) else None
    if own and 1 / STAND_IN_RATIO <= own / stats["parameters"] <= STAND_IN_RATIO:  # "resnet50 with 25m params"
        spec["model"] = {k: v for k, v in model.items() if k != "stats"}
        return (*assumed, f"params={said} beside {preset}: sized by its own layers ({_size(own)} parameters)")
    if preset:  # "resnet params=60m": the preset has its own size
        problems.append(f"params={said} beside {preset}: a preset is sized by its own layers; drop params=, or drop "
                        f"the name and {_OWN}")
        return assumed
    if image_said or "input_shape" in model:
        problems.append(f"params={said} alone sizes a language model's decoder only; for an image model {_OWN}")
        return assumed
    nearest = nearest_decoder(int(stats["parameters"]), presets)
    if nearest is None:
        problems.append(f"params={said} alone does not size a model: {_OWN}")
        return assumed
    found, ratio = nearest
    if not 1 / STAND_IN_RATIO <= ratio <= STAND_IN_RATIO:
        problems.append(f"params={said}: no decoder preset is within {STAND_IN_RATIO - 1:.0%} of that size (the "
                        f"nearest is {found.name}, {_size(found.published.parameters)}): name a preset (`/gpugauge "
                        f"help` lists them), or {_OWN}")
        return assumed
    spec["model"] = {"preset": found.name}
    more = f"{abs(ratio - 1):.0%} {'more' if ratio > 1 else 'fewer'} weights, so its time and memory read about " \
           f"{abs(ratio - 1):.0%} {'high' if ratio > 1 else 'low'}" if abs(ratio - 1) >= 0.05 else "within 5%"
    told = (f"params={said}: sized as {found.name} ({_size(found.published.parameters)} parameters), the decoder "
            f"preset nearest that size ({more}; its vocabulary and context are {found.name}'s: say seq= for your "
            f"model's); {_OWN}")
    return (*[a for a in assumed if not a.startswith("the model by its statistics")], told)
