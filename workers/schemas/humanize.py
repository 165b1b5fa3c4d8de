"""Human units in CLI and Slack specs ("150GB", "2d", "$500", "1.28M") turned into plain numbers."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from marshmallow import ValidationError

from catalog.units import parse_bytes, parse_duration_hours, parse_usd

_COUNT = re.compile(r"^\s*(\d+(?:\.\d+)?(?:[eE]\+?\d{1,2})?)\s*([kKmMbBgGtT]?)\s*$")  # "1e6" too
_COUNT_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}  # "15T tokens": Llama 3's


def parse_count(text: str) -> int:
    """Parse a count such as "1281167", "1.28M", "50k", "1T" or "1e6" into an integer."""
    match = _COUNT.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a count (examples: 50000, 50k, 1.28M)")
    value = float(match.group(1)) * _COUNT_SCALE[match.group(2).lower()]
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite count")
    return round(value)


def sequence_count(text: str) -> int:
    """Parse a sequence length: a count, where "4k" and "128k" are binary, as context sizes are said (Llama 3.1's 128k
    context is 131,072 tokens; "4k" is 4,096, not 4,000)."""
    count = int(text[:-1]) * 1024 if text.lower().endswith("k") and text[:-1].isdigit() else parse_count(text)
    if count < 1:  # a run's tokens are made samples by it: "seq=0" divided by zero
        raise ValueError("a sequence is at least 1 token")
    return count


# (section, field) -> the parser for a human string in that place
_FIELDS: dict[tuple[str, str], Callable[[str], float | int]] = {
    ("dataset", "bytes"): parse_bytes,
    ("dataset", "samples"): parse_count,
    ("dataset", "tokens"): parse_count,  # "100B"
    ("training", "sequence_length"): sequence_count,  # "4k", "2,048"
    ("constraints", "budget_usd"): parse_usd,
    ("constraints", "deadline_hours"): parse_duration_hours,
}


def apply_human_units(raw: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of the spec with human strings in the known size fields made plain numbers."""
    out = dict(raw)
    errors: dict[str, list[str]] = {}
    for (section, field), parse in _FIELDS.items():
        part = out.get(section)
        if not isinstance(part, dict) or not isinstance(part.get(field), str):
            continue
        try:
            out[section] = {**part, field: parse(part[field])}
        except ValueError as exc:
            errors[f"{section}.{field}"] = [str(exc)]
    if errors:
        raise ValidationError(errors)
    return out
