"""Write a derived data file, or check that the committed one is what its source gives (`--check`)."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(out: Path, text: str, *, source: Path, check: bool) -> int:
    """Write `text` to `out`, or with `check` return 1 (saying so) when `out` holds anything else."""
    if check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print(f"{out.name} is not what {source} gives", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    return 0
