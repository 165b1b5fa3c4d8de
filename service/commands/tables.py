"""Tables that fit the terminal: identifiers never cut, the least needed columns left out when narrow.

Each column is (header, justify, priority): priority 0 is an identifier (GPU slug, instance type,
region) or a figure the table is for, always shown, never wrapped; higher numbers are left out
first, until the table's natural width (each column as wide as its longest cell, one space each
side) fits. `wide` shows every column, whatever the width. The footnote names what was left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rich import box
from rich.table import Table

Justify = Literal["left", "right"]
Column = tuple[str, Justify, int]


def natural_width(widths: Sequence[int]) -> int:
    """Return the columns a table of these column widths takes with no cell shortened.

    As rich draws `box.SIMPLE_HEAD` with `pad_edge=False`: one space of padding each side of a cell
    but the outer two, one separator between columns and one edge each side: sum + 3 n - 1.
    """
    return sum(widths) + 3 * len(widths) - 1 if widths else 0


def fitted_table(title: str, columns: Sequence[Column], rows: Sequence[Sequence[str]], *, width: int,
                 wide: bool = False) -> tuple[Table, list[str]]:
    """Return the table that fits `width` (or every column with `wide`) and the headers left out."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, (h, _, _) in enumerate(columns)]
    keep = list(range(len(columns)))
    if not wide:
        for drop in sorted((i for i, c in enumerate(columns) if c[2] > 0), key=lambda i: (-columns[i][2], -i)):
            if natural_width([widths[i] for i in keep]) <= width:
                break
            keep.remove(drop)
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    for i in keep:
        header, justify, _ = columns[i]
        table.add_column(header, justify=justify, no_wrap=True, min_width=widths[i])
    for row in rows:
        table.add_row(*(row[i] for i in keep))
    return table, [columns[i][0] for i in range(len(columns)) if i not in keep]


def left_out_note(left_out: Sequence[str]) -> str:
    """Return the line under a table that names its columns left out, or ""."""
    return f"(not shown at this width: {', '.join(left_out)}; --wide shows every column)" if left_out else ""
