"""Human quantities ("16GB", "2d", "$500") parsed into plain numbers: bytes, hours, US dollars."""

from __future__ import annotations

import math
import re

# Decimal units are powers of 10 (SI, as disk and cloud vendors quote them); binary units powers of 2
# (IEC 80000-13: KiB, MiB, GiB ...). A bare K/M/G/T counts as decimal, like "16G" on a price page.
KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40
KB, MB, GB, TB = 10**3, 10**6, 10**9, 10**12
_BYTE_UNITS: dict[str, int] = {
    "": 1, "b": 1, "byte": 1, "bytes": 1,
    "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
    "t": 10**12, "tb": 10**12, "p": 10**15, "pb": 10**15,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40, "pib": 2**50,
}
_HOUR_UNITS: dict[str, float] = {
    "": 1.0, "h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0,
    "s": 1 / 3600, "sec": 1 / 3600, "secs": 1 / 3600, "second": 1 / 3600, "seconds": 1 / 3600,
    "m": 1 / 60, "min": 1 / 60, "mins": 1 / 60, "minute": 1 / 60, "minutes": 1 / 60,
    "d": 24.0, "day": 24.0, "days": 24.0,
    "w": 168.0, "wk": 168.0, "week": 168.0, "weeks": 168.0,
    "month": 720.0, "months": 720.0,  # a month said as a deadline: 30 days
}
_USD_SCALE: dict[str, int] = {"": 1, "k": 10**3, "m": 10**6}

_NUMBER = r"([+-]?(?:\d[\d_,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf(?:inity)?))"
_QUANTITY = re.compile(rf"^\s*{_NUMBER}\s*([a-zA-Z]*)\s*$", re.IGNORECASE)
_DURATION_PART = re.compile(rf"\s*{_NUMBER}\s*([a-zA-Z]*)", re.IGNORECASE)
_USD = re.compile(rf"^\s*\$?\s*{_NUMBER}\s*([kKmM]?)\s*(?:usd)?\s*$", re.IGNORECASE)


def _number(text: str, *, what: str, original: str) -> float:
    """Turn one matched number into a finite, non-negative float or raise ValueError naming the problem."""
    value = float(text.replace(",", "").replace("_", ""))
    if math.isnan(value):
        raise ValueError(f"{original!r} is not a number ({what} cannot be NaN)")
    if math.isinf(value):
        raise ValueError(f"{original!r} is not a finite {what}")
    if value < 0:
        raise ValueError(f"{original!r} is negative; {'an' if what[0] in 'aeiou' else 'a'} {what} must be 0 or more")
    return value


def _plain(value: int | float, *, what: str) -> float:
    """Check a number given as a number, not text."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a {what}")
    return _number(repr(float(value)), what=what, original=str(value))


def parse_bytes(text: str | int | float) -> int:
    """Parse a size such as "16GB" (10^9), "16GiB" (2^30), "512 MB" or "1.5T" into bytes."""
    if not isinstance(text, str):
        return round(_plain(text, what="size"))
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size (examples: 16GB, 16GiB, 512MB, 1.5TB)")
    unit = match.group(2).lower()
    if unit not in _BYTE_UNITS:
        raise ValueError(
            f"{text!r}: unknown size unit {match.group(2)!r} (use B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
        )
    return round(_number(match.group(1), what="size", original=text) * _BYTE_UNITS[unit])


def parse_duration_hours(text: str | int | float) -> float:
    """Parse a duration such as "2d", "36h", "90min" or "1d 12h" into hours (a bare number is hours)."""
    if not isinstance(text, str):
        return _plain(text, what="duration")
    parts = list(_DURATION_PART.finditer(text))
    if not parts or "".join(m.group(0) for m in parts).strip() != text.strip() or (
        len(parts) > 1 and any(m.group(2) == "" for m in parts)
    ):
        raise ValueError(f"{text!r} is not a duration (examples: 2d, 36h, 90min, 1d 12h)")
    total = 0.0
    for match in parts:
        unit = match.group(2).lower()
        if unit not in _HOUR_UNITS:
            raise ValueError(f"{text!r}: unknown duration unit {match.group(2)!r} (use s, min, h, d, w, month)")
        total += _number(match.group(1), what="duration", original=text) * _HOUR_UNITS[unit]
    return total


def parse_usd(text: str | int | float) -> float:
    """Parse an amount of money such as "$500", "500", "$1,200.50", "$1.5k" or "20 USD" into dollars."""
    if not isinstance(text, str):
        return _plain(text, what="amount")
    match = _USD.match(text.replace("-$", "$-", 1) if text.lstrip().startswith("-$") else text)
    if not match:
        raise ValueError(f"{text!r} is not an amount in US dollars (examples: $500, 1200, $1.5k)")
    return _number(match.group(1), what="amount", original=text) * _USD_SCALE[match.group(2).lower()]
