"""Checks a catalog version must pass before it becomes current: sane prices, known GPUs, no collapse."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.payload import CatalogRows
from catalog.types import GpuSpec, Pricing, Provider

# Absurd-price bounds, per GPU per hour. The dearest list price in the catalog is about $15/GPU-h (H100/H200
# outside the US); $100/GPU-h is far above any public list price, and below $0.01/h no GPU has ever rented.
MAX_PRICE_PER_GPU_HOUR_USD = 100.0
MIN_PRICE_PER_HOUR_USD = 0.01
MAX_STORAGE_PER_GB_MONTH_USD = 5.0  # io2 peaks near $0.125/GB-month; 40x that is a unit error
MAX_CARD_PRICE_USD = 100_000.0
# A refresh may shrink a provider's rows a little (types retired, a region down); losing more than half
# the rows of the last version is taken as a broken fetch, not a market change.
MIN_ROWS_KEPT = 0.5


class CatalogValidationError(ValueError):
    """A catalog version failed its checks; `problems` lists every failure in words."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(f"catalog rejected: {shown}")


@dataclass(frozen=True)
class Problem:
    """One failed check, with the rows it concerns."""

    code: str  # "unknown-gpu", "bad-price", "orphan-offer", "duplicate", "collapse", "bad-count"
    message: str


def _prices(rows: CatalogRows, gpu_counts: dict[tuple[Provider, str], int]) -> Iterable[Problem]:
    for offer in rows.offers:
        where = f"{offer.provider.value} {offer.instance_type} {offer.region} {offer.pricing.value}"
        gpus = max(gpu_counts.get((offer.provider, offer.instance_type), 1), 1)
        price = offer.price_per_hour_usd
        if not price >= MIN_PRICE_PER_HOUR_USD:
            yield Problem("bad-price", f"{where}: price {price} $/h is below {MIN_PRICE_PER_HOUR_USD}")
        elif price / gpus > MAX_PRICE_PER_GPU_HOUR_USD:
            yield Problem(
                "bad-price", f"{where}: {price} $/h is over {MAX_PRICE_PER_GPU_HOUR_USD} $/h per GPU"
            )
    for disk in rows.block_storage:
        if not 0 < disk.price_per_gb_month_usd <= MAX_STORAGE_PER_GB_MONTH_USD:
            yield Problem(
                "bad-price",
                f"{disk.provider.value} {disk.region} {disk.kind}: "
                f"{disk.price_per_gb_month_usd} $/GB-month is out of range",
            )
    for card in rows.onprem_cards:
        if not 0 < card.price_usd <= MAX_CARD_PRICE_USD or card.power_watts <= 0:
            yield Problem(
                "bad-price",
                f"onprem {card.gpu}: price {card.price_usd} $ / {card.power_watts} W out of range",
            )


def _references(rows: CatalogRows, slugs: set[str]) -> Iterable[Problem]:
    unknown = sorted(
        {i.gpu for i in rows.instances if i.gpu not in slugs}
        | {c.gpu for c in rows.onprem_cards if c.gpu not in slugs}
    )
    for slug in unknown:
        users = [i.instance_type for i in rows.instances if i.gpu == slug] or ["on-prem card"]
        yield Problem("unknown-gpu", f"GPU {slug!r} is not in the GPU table (used by {', '.join(users[:5])})")
    for inst in rows.instances:
        if inst.gpu_count < 1:
            yield Problem(
                "bad-count", f"{inst.instance_type}: {inst.gpu_count} GPUs (fractional shapes are skipped)"
            )
        if inst.vcpus < 1 or inst.host_memory_bytes < 1:
            yield Problem(
                "bad-count", f"{inst.instance_type}: {inst.vcpus} vCPUs, {inst.host_memory_bytes} B RAM"
            )
    known = {(i.provider, i.instance_type) for i in rows.instances}
    for offer in rows.offers:
        if (offer.provider, offer.instance_type) not in known:
            yield Problem(
                "orphan-offer",
                f"offer for {offer.provider.value} {offer.instance_type} which has no instance row",
            )
    for key, n in Counter((i.provider, i.instance_type) for i in rows.instances).items():
        if n > 1:
            yield Problem("duplicate", f"instance {key[0].value} {key[1]} appears {n} times")
    for okey, n in Counter((o.provider, o.instance_type, o.region, o.pricing) for o in rows.offers).items():
        if n > 1:
            yield Problem(
                "duplicate", f"offer {okey[0].value} {okey[1]} {okey[2]} {okey[3].value} appears {n} times"
            )


def _collapse(rows: CatalogRows, previous: CatalogRows) -> Iterable[Problem]:
    for provider in Provider:
        for name, new, old in (
            (
                "instance types",
                [i for i in rows.instances if i.provider is provider],
                [i for i in previous.instances if i.provider is provider],
            ),
            (
                "on-demand offers",
                [o for o in rows.offers if o.provider is provider and o.pricing is Pricing.ON_DEMAND],
                [o for o in previous.offers if o.provider is provider and o.pricing is Pricing.ON_DEMAND],
            ),
        ):
            if old and len(new) < MIN_ROWS_KEPT * len(old):
                yield Problem(
                    "collapse",
                    f"{provider.value} {name} fell from {len(old)} to {len(new)} "
                    f"(more than {1 - MIN_ROWS_KEPT:.0%} lost against version {previous.version})",
                )


def check_rows(
    rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
) -> list[Problem]:
    """Return every problem with a catalog version (empty when it may become current)."""
    slugs = {g.slug for g in gpus}
    gpu_counts = {(i.provider, i.instance_type): i.gpu_count for i in rows.instances}
    problems = list(_collapse(rows, previous)) if previous is not None else []
    problems += [*_prices(rows, gpu_counts), *_references(rows, slugs)]
    return problems


def validate_rows(
    rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
) -> CatalogRows:
    """Return the rows unchanged when they pass every check; raise CatalogValidationError otherwise."""
    problems = check_rows(rows, gpus=gpus, previous=previous)
    if problems:
        raise CatalogValidationError([p.message for p in problems])
    return rows
