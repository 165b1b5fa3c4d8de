"""`gpugauge validate`'s multi-GPU section: speed-ups at 8 and 16 GPUs against DeepLearningExamples' tables."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.markup import escape
from rich.table import Table

from service.commands.common import console as make_console
from workers.accuracy.scaling import ScalingRow


def scaling_payload(rows: list[ScalingRow], summary: dict[str, tuple[int, float, float]]) -> dict[str, Any]:
    """Return the section as JSON: each row (with its error) and the summaries."""
    return {"rows": [{**asdict(row), "error": row.error} for row in rows],
            "summary": [{"group": name, "count": n, "median_abs_error": median, "p90_abs_error": p90}
                        for name, (n, median, p90) in sorted(summary.items())]}


def print_scaling(rows: list[ScalingRow], summary: dict[str, tuple[int, float, float]]) -> None:
    """Print each published speed-up beside the core's, and the error per group."""
    table = Table(title=f"Multi-GPU speed-up against NVIDIA DeepLearningExamples ({len(rows)} records)")
    for col in ("id", "GPUs", "precision", "predicted", "measured", "error", "loss ms", "exchange ms"):
        table.add_column(col, justify="left" if col in ("id", "precision") else "right", no_wrap=col == "id")
    for row in rows:
        table.add_row(escape(row.id), f"{row.gpu_count} x {row.gpu}", row.precision, f"{row.predicted:.2f}x",
                      f"{row.measured:.2f}x", f"{row.error:+.1%}", f"{row.implied_loss_ms:.1f}",
                      f"{row.exchange_ms:.1f}")
    console = make_console()
    console.print(table)
    groups = Table(title="Speed-up errors per group (absolute relative error)",
                   caption="loss ms: per iteration beyond one GPU, as the measured speed-up implies; "
                           "exchange ms: the whole gradient exchange the links allow")
    for col in ("group", "count", "median", "p90"):
        groups.add_column(col, justify="left" if col == "group" else "right")
    for name, (n, median, p90) in sorted(summary.items()):
        groups.add_row(escape(name), str(n), f"{median:.1%}", f"{p90:.1%}")
    console.print(groups)
