"""The `catalog` command's tables for people: GPUs, instances with prices by region, on-prem cards.

Each fits 80 or 120 columns without cutting a slug, an instance type or a region (tables.py): the
least needed columns are left out first and named under the table; `--wide` shows them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from catalog.freshness import prices_dated_words
from catalog.types import Catalog, OnPremCard
from service.commands.common import console as make_console
from service.commands.tables import Column, fitted_table, left_out_note
from workers.render import fmt_bytes, fmt_usd

GPU_COLUMNS: tuple[Column, ...] = (
    ("slug", "left", 0), ("name", "left", 5), ("arch", "left", 4), ("memory", "right", 0),
    ("bandwidth GB/s", "right", 1), ("fp32 TFLOPS", "right", 2), ("fp16 TFLOPS", "right", 1),
    ("TDP W", "right", 3), ("launch $", "right", 3), ("segment", "left", 4),
)
_MACHINE_COLUMNS: tuple[Column, ...] = (
    ("provider", "left", 2), ("instance type", "left", 0), ("GPUs", "left", 0), ("GPU mem", "right", 1),
    ("vCPUs", "right", 3), ("RAM", "right", 3), ("local disk", "right", 4), ("CPU score", "right", 4),
    ("region", "left", 0),
)
# A column per pricing kind the page holds, in this order: a page of committed prices ("--pricing committed_1y")
# showed on-demand and spot columns of dashes
PRICE_COLUMNS = {"on_demand": "on-demand $/h", "spot": "spot $/h", "committed_1y": "1y committed $/h",
                 "committed_3y": "3y committed $/h", "savings_plan_1y": "1y savings plan $/h",
                 "savings_plan_3y": "3y savings plan $/h"}
# each row's prices' dates ("undated" where the source names none), as every option of a recommendation says
AS_OF_COLUMN: Column = ("prices as of", "left", 1)
INSTANCE_COLUMNS: tuple[Column, ...] = (*_MACHINE_COLUMNS, ("on-demand $/h", "right", 0), ("spot $/h", "right", 0),
                                        AS_OF_COLUMN)


def print_gpu_table(payload: dict[str, Any], *, version: str, wide: bool = False) -> None:
    """Print the GPU table, the least needed columns left out where the terminal is narrow."""
    rows = []
    for g in payload["gpus"]:
        launch = g["launch_price_usd"]
        rows.append([g["slug"], g["name"], g["architecture"], fmt_bytes(g["memory_bytes"]),
                     f"{g['memory_bandwidth_gb_per_s']:.0f}", f"{g['fp32_tflops']:.1f}", f"{g['fp16_tflops']:.1f}",
                     str(g["tdp_watts"]), "" if launch is None else fmt_usd(launch), g["segment"]])
    _print(f"GPUs (catalog {version})", GPU_COLUMNS, rows, wide=wide)


def instance_rows(payload: dict[str, Any]) -> tuple[tuple[Column, ...], list[list[str]]]:
    """Return the instance table's columns (a price column per pricing kind the page holds, on-demand and spot where
    it holds none) and its rows: one per instance type and region, its prices side by side with their dates."""
    held = {price["pricing"] for inst in payload["instances"] for price in inst["prices"]}
    kinds = [kind for kind in PRICE_COLUMNS if kind in held] or ["on_demand", "spot"]
    columns = (*_MACHINE_COLUMNS, *((PRICE_COLUMNS[kind], "right", 0) for kind in kinds), AS_OF_COLUMN)
    rows = []
    for inst in payload["instances"]:
        by_region: dict[str, dict[str, dict[str, Any]]] = {}
        for price in inst["prices"]:
            by_region.setdefault(price["region"], {})[price["pricing"]] = price
        for region, prices in sorted(by_region.items()) or [("-", {})]:
            dates = sorted({str(p.get("as_of") or "undated")[:10] for p in prices.values()}) or ["-"]
            rows.append([
                inst["provider"], inst["instance_type"], f"{inst['gpu_count']} x {inst['gpu']}",
                fmt_bytes(inst["gpu_memory_bytes"]), str(inst["vcpus"]), fmt_bytes(inst["host_memory_bytes"]),
                fmt_bytes(inst["local_storage_bytes"]) if inst["local_storage_bytes"] else "-",
                f"{inst['cpu_single_thread_score']:.0f}", region,
                *(fmt_usd(prices[kind]["price_per_hour_usd"]) if kind in prices else "-" for kind in kinds),
                ", ".join(dates),
            ])
    return columns, rows


def print_instance_table(payload: dict[str, Any], *, wide: bool = False) -> None:
    """Print one row per instance type and region, its prices side by side with the day each was true."""
    columns, rows = instance_rows(payload)
    dated = prices_dated_words(payload["prices_as_of"]).replace("each option", "each row")
    console = _print(f"instances (catalog {payload['version']}, {dated})", columns, rows, wide=wide)
    more = f"; next page: --offset {payload['next_offset']}" if payload.get("next_offset") is not None else ""
    console.print(f"{len(payload['instances'])} of {payload.get('total', len(payload['instances']))} instance "
                  f"types, {len(rows)} rows{more}; sources: `gpugauge catalog info`")


def print_onprem_table(catalog: Catalog, cards: Sequence[OnPremCard]) -> None:
    """Print the on-prem cards: GPU, memory, price, power."""
    rows = [[c.gpu, fmt_bytes(catalog.gpu(c.gpu).memory_bytes), fmt_usd(c.price_usd), c.as_of or "undated",
             str(c.power_watts)] for c in cards]
    columns: tuple[Column, ...] = (("GPU", "left", 0), ("memory", "right", 0), ("price", "right", 0),
                                   ("price as of", "left", 0), ("power W", "right", 0))
    _print(f"on-prem cards (catalog {catalog.version}); hourly cost: see `gpugauge recommend`", columns, rows)


def _print(title: str, columns: Sequence[Column], rows: list[list[str]], *, wide: bool = False) -> Any:
    console = make_console()
    table, left_out = fitted_table(title, columns, rows, width=console.width, wide=wide)
    console.print(table)
    if left_out:
        console.print(left_out_note(left_out))
    return console
