"""GPU names as people write them ("GTX 1080 Ti", "1080ti", "A100", "RTX4090") matched to catalog slugs.

The contract's identifiers are lower-case slugs (`gtx-1080-ti`, `a100-80gb`). A name is matched on its
compact form: lower case, without spaces, hyphens, underscores or the vendor's brand words (NVIDIA,
GeForce, Tesla, Quadro), so "GeForce GTX 1080 Ti" and "gtx1080ti" are `gtx-1080-ti`. A bare GeForce
number gets its series ("1080 Ti" is `gtx-1080-ti`, "4090" is `rtx-4090`). A name that is a family whose
members differ only in memory size, form factor or generation ("a100", "v100", "h100", "gtx-1060",
"titan-x") matches every member; where one GPU is wanted, that is ambiguous and the caller says so. A memory size
alone ("24gb", "80 GB") is every card of that memory.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence
from functools import lru_cache

from catalog.gpus import load_gpus

_BRAND_WORDS = re.compile(r"\b(nvidia|geforce|tesla|quadro)\b")
_SEPARATORS = re.compile(r"[\s_\-/(),]+")
_SIZE = re.compile(r"[\s_\-/(]+(\d{1,3})\s*gb?\)?$")  # " 80GB", "-16gb", " (12 GB)" at the end of a name
# What may follow a family's name in a member's slug: memory size, form factor, or generation.
_VARIANT = re.compile(r"^(?:(?:pcie|sxm|nvl)?(?:\d{1,3}gb)?|maxwell|pascal)$")
_SERIES = ("gtx", "rtx")  # a bare number ("1080ti", "4090") is one of these
# Products whose name ends in s, not plurals: the V100S PCIe is its own card (not in the catalog)
_PRODUCTS_ENDING_IN_S = frozenset({"v100s"})


def compact(name: str) -> str:
    """Return the form names are compared in: lower case, no brand words, no separators."""
    text = _BRAND_WORDS.sub(" ", name.strip().lower())
    text = _SEPARATORS.sub("", text)
    text = re.sub(r"sxm\d", "sxm", text)  # "H100 SXM5", "V100-SXM2": the slugs say sxm (or nothing)
    text = re.sub(r"(\d+gb)(pcie|sxm|nvl)$", r"\2\1", text)  # "A100 80GB PCIe" is a100-pcie-80gb
    return re.sub(r"(\d+)g$", r"\1gb", text)  # "a100 80g"


@lru_cache(maxsize=8)
def _index(slugs: tuple[str, ...]) -> dict[str, str]:
    """Return compact name -> slug for each slug and for its display name in the GPU table."""
    names = {gpu.slug: gpu.name for gpu in load_gpus()}
    index = {compact(names[slug]): slug for slug in slugs if slug in names}
    index.update((compact(slug), slug) for slug in slugs)
    return index


def gpu_name_matches(name: str, slugs: Collection[str]) -> tuple[str, ...]:
    """Return the slugs `name` means, in `slugs`' order: one, a family's members, or none."""
    if name in slugs:
        return (name,)
    ordered = tuple(slugs)
    by_compact = _index(ordered)
    key = compact(name)
    if not key:
        return ()
    if re.fullmatch(r"\d{1,4}gi?b", key):  # "24gb": the cards of that memory (rtx-3090, rtx-4090, a10g, l4, ...)
        return gpus_of_memory(key, ordered)
    candidates = [key, *(series + key for series in _SERIES if key[:1].isdigit())]
    if re.match(r"a\d{4}", key):  # "A6000" is the RTX A6000
        candidates.append("rtx" + key)
    if "sxm" in key:  # the SXM part is the plain slug (v100-16gb, a100-80gb) where no -sxm slug exists
        candidates.append(key.replace("sxm", ""))
    size = _SIZE.search(name.strip().lower())
    sizeless = compact(name.strip().lower()[:size.start()]) if size else ""
    if size:  # "H100 80GB": the memory size where the slugs do not carry it
        candidates.append(sizeless)

    def of_size(slug: str) -> bool:  # a size said must be the card's ("RTX 3080 12GB" is not the 10 GB rtx-3080)
        return size is None or _memory_gib().get(slug) == int(size[1])

    for candidate in candidates:
        if candidate in by_compact and (candidate != sizeless or of_size(by_compact[candidate])):
            return (by_compact[candidate],)
    for candidate in candidates:
        family = tuple(slug for slug in ordered if _member(slug, candidate) and of_size(slug))
        if family:
            return family
    if key.endswith("s") and len(key) > 2 and key not in _PRODUCTS_ENDING_IN_S:  # "t4s", "a100s"
        return gpu_name_matches(name.strip()[:-1], ordered)
    return ()


def gpu_name_suggestions(name: str, slugs: Collection[str], *, n: int = 3) -> tuple[str, ...]:
    """Return the slugs closest to a name that matches none: compared compact, so case and spacing do not count.

    A name whose only fault is its size ("H100 PCIe 40GB") gets the cards of that name first, then a card the
    name starts with, then the closest by difflib.
    """
    ordered = tuple(slugs)
    if (memory := re.fullmatch(r"(\d{1,4})gi?b", compact(name))) is not None:  # "20gb": the sizes either side
        sizes = sorted({_memory_gib()[s] for s in ordered if s in _memory_gib()})
        below, above = [g for g in sizes if g < int(memory[1])], [g for g in sizes if g > int(memory[1])]
        return tuple(f"{g}gb" for g in (below[-1:] + above[:1]))
    by_compact = {compact(slug): slug for slug in ordered}
    size = _SIZE.search(name.strip().lower())
    first = gpu_name_matches(name.strip()[:size.start()], ordered) if size else ()
    key = compact(name)
    # a card the name starts with ("RTX 4090 Ti" is no card; the 4090 is), longest first
    within = sorted((c for c in by_compact if len(c) >= 3 and key.startswith(c)), key=len, reverse=True)
    close = difflib.get_close_matches(key, list(by_compact), n=n, cutoff=0.6)
    return tuple(dict.fromkeys([*first, *(by_compact[c] for c in (*within, *close))]))[:n]


def model_word(slug: str) -> str:
    """Return a slug's model number, what its variants share ("a100" of a100-pcie-40gb, "4090" of rtx-4090)."""
    return next((part for part in slug.split("-") if any(c.isdigit() for c in part)), slug)


def gpus_of_memory(size: str, slugs: Collection[str]) -> tuple[str, ...]:
    """Return the slugs, in `slugs`' order, of the cards with `size` of memory ("24gb": rtx-3090, rtx-4090, a10g,
    l4, ...; GB read as the GiB the cards are sold by); () for a size no card has or no size."""
    found = re.fullmatch(r"(\d{1,4})\s*gi?b", size.strip().lower())
    return tuple(s for s in slugs if _memory_gib().get(s) == int(found[1])) if found else ()


def smallest_card(slugs: Sequence[str]) -> str | None:
    """Return the one card `slugs` name, or where they are one model's variants ("a100": its 40 and 80 GB cards, SXM
    and PCIe) the one of least memory, the first of those in order; None for no card or several models."""
    if len({model_word(s) for s in slugs}) != 1:
        return None
    memory = _memory_gib()
    return min(slugs, key=lambda s: memory.get(s, 0))


@lru_cache(maxsize=1)
def _memory_gib() -> dict[str, int]:
    return {gpu.slug: round(gpu.memory_bytes / 2**30) for gpu in load_gpus()}


def _member(slug: str, family: str) -> bool:
    """Whether `slug` is the family's name (compact) followed by variant words only: "a100-pcie-80gb" of "a100"."""
    parts = slug.split("-")
    return any(compact("-".join(parts[:k])) == family and _VARIANT.match("".join(parts[k:]))
               for k in range(1, len(parts)))


class AmbiguousGpuName(ValueError):
    """A name that matches several GPUs where one is wanted."""

    def __init__(self, name: str, slugs: tuple[str, ...]) -> None:
        self.name, self.slugs = name, slugs
        super().__init__(f"{name!r} names {len(slugs)} GPUs ({', '.join(slugs)}): name one")


def canonical_gpu(name: str, slugs: Collection[str]) -> str:
    """Return the one slug `name` means; `name` unchanged where it means none (the caller reports it unknown).

    Raises AmbiguousGpuName where it names a family of several.
    """
    matches = gpu_name_matches(name, slugs)
    if len(matches) > 1:
        raise AmbiguousGpuName(name, matches)
    return matches[0] if matches else name
