"""Formatting for people: sizes, durations, money, and bars; used by the CLI and Slack, never the core."""

from __future__ import annotations

import math


def fmt_bytes(n: float) -> str:
    """Format a byte count with binary units, e.g. 12.3 GiB."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover


def fmt_count(n: float) -> str:
    """Format a large count compactly, e.g. 25.6M, 4.1G (put a unit after it with fmt_quantity)."""
    value = float(n)
    for unit, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.0f}"


def fmt_quantity(n: float, unit: str) -> str:
    """Format a count with its unit, the SI prefix joined to the unit: 2.15 TFLOP, 950 FLOP."""
    text = fmt_count(n)
    if text[-1:].isalpha():
        return f"{text[:-1]} {text[-1]}{unit}"
    return f"{text} {unit}"


def fmt_hours(hours: float) -> str:
    """Format a duration given in hours: 45 s, 12.5 min, 3.2 h, 4.1 d."""
    if not math.isfinite(hours):
        return "n/a"
    seconds = hours * 3600
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    if hours < 48:
        return f"{hours:.1f} h"
    return f"{hours / 24:.1f} d"


def fmt_rate(rate: float) -> str:
    """Format a rate (samples/s) with three significant figures below 100: 0.868, 12.5, 1,234; never "0"."""
    if not math.isfinite(rate):
        return "n/a"
    if rate >= 100 or rate <= 0:
        return f"{rate:,.0f}"
    digits = max(0, 2 - math.floor(math.log10(rate)))
    return f"{rate:.{digits}f}"


def fmt_usd(amount: float) -> str:
    """Format money in US dollars; a positive amount under half a cent is "<$0.01", not "$0.00"."""
    if not math.isfinite(amount):
        return "n/a"
    if 0 < amount < 0.005:
        return "<$0.01"
    return f"${amount:,.2f}" if amount < 1000 else f"${amount:,.0f}"


def bar(share: float, *, width: int = 20) -> str:
    """Draw a share in [0, 1] as a bar of block characters."""
    share = min(max(share, 0.0), 1.0)
    full, rest = divmod(round(share * width * 8), 8)
    return "█" * full + ("" if rest == 0 else " ▏▎▍▌▋▊▉"[rest])
