"""Two model words that name one preset: a part said beside its whole ("the unet of stable diffusion": the `-unet`
twin; "clip vit-b/16": CLIP's ViT-B/16), in either order, where the grammar would say "one model a command"."""

from __future__ import annotations

from collections.abc import Collection

from workers.sizing.presets.registry import find_preset

UNET_WORDS = frozenset(("unet", "u-net"))  # the unet preset's words, said beside a Stable Diffusion model's
CLIP_WORDS = frozenset(("clip",))  # CLIP said beside one of its image towers (a ViT preset: vit-b32, vit-b16)


def twin_of(first: str | None, second: str, presets: Collection[str]) -> str | None:
    """Return the preset that two model words said apart name together, else None (two models: the one-model rule)."""
    pair = {first or "", second}
    if pair & UNET_WORDS:
        model = next(iter(pair - UNET_WORDS), "")
        return f"{model}-unet" if f"{model}-unet" in presets else None
    if pair & CLIP_WORDS:
        other = next(iter(pair - CLIP_WORDS), "")
        tower = find_preset(other).name if other in presets else ""
        return f"clip-{tower}" if f"clip-{tower}" in presets else None
    return None
