"""Checks a catalog version must pass before it becomes current: sane prices, known GPUs, no collapse.

The plausibility checks (catalog/plausibility.py) run here too: `screen_rows` leaves implausible prices out
and records why (builds, imports and refreshes call it), and `check_rows` reports any that remain.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from catalog.commitments import COMMITTED
from catalog.freshness import oldest_price_date
from catalog.payload import CatalogRows
from catalog.plausibility import Finding, PricePoint, find_implausible
from catalog.providers import PROVIDERS
from catalog.types import Exclusion, GpuSpec, InstanceType, Pricing, Provider

# Absurd-price bounds, per GPU per hour. The dearest list price in the catalog is about $15/GPU-h (H100/H200
# outside the US); $100/GPU-h is far above any public list price, and below $0.01/h no GPU has ever rented.
MAX_PRICE_PER_GPU_HOUR_USD = 100.0
MIN_PRICE_PER_HOUR_USD = 0.01
MAX_STORAGE_PER_GB_MONTH_USD = 5.0  # io2 peaks near $0.125/GB-month; 40x that is a unit error
MAX_CARD_PRICE_USD = 100_000.0
# A refresh may shrink a provider's rows a little (types retired, a region down); losing more than half
# the rows of the last version is taken as a broken fetch, not a market change.
MIN_ROWS_KEPT = 0.5
MIN_REGION_ROWS = 10  # the same holds per region, for regions that had at least this many on-demand offers


class CatalogValidationError(ValueError):
    """A catalog version failed its checks; `problems` lists every failure in words."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        super().__init__(f"catalog rejected: {shown}")


@dataclass(frozen=True)
class Problem:
    """One failed check, with the rows it concerns."""

    code: str  # "unknown-gpu", "bad-price", "orphan-offer", "duplicate", "collapse", "bad-count", or a
    # plausibility check's name ("spot-not-below-on-demand", "regional-outlier", "family-jump")
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
                [i.instance_type for i in rows.instances if i.provider is provider],
                [i.instance_type for i in previous.instances if i.provider is provider],
            ),
            (
                "on-demand offers",
                [o.region for o in rows.offers if o.provider is provider and o.pricing is Pricing.ON_DEMAND],
                [o.region for o in previous.offers if o.provider is provider and o.pricing is Pricing.ON_DEMAND],
            ),
        ):
            if old and len(new) < MIN_ROWS_KEPT * len(old):
                yield Problem(
                    "collapse",
                    f"{provider.value} {name} fell from {len(old)} to {len(new)} "
                    f"(more than {1 - MIN_ROWS_KEPT:.0%} lost against version {previous.version})",
                )
            if name != "on-demand offers":
                continue
            now, before = Counter(new), Counter(old)
            for region, count in sorted(before.items()):
                if count >= MIN_REGION_ROWS and now[region] < MIN_ROWS_KEPT * count:
                    yield Problem(
                        "collapse",
                        f"{provider.value} on-demand offers in {region} fell from {count} to {now[region]} "
                        f"(more than {1 - MIN_ROWS_KEPT:.0%} lost against version {previous.version})",
                    )


def family_of(provider: Provider, instance_type: str) -> str:
    """Return an instance type's family by the provider registry's rule (catalog/providers.py)."""
    return PROVIDERS[provider.value].family_of(instance_type)


def offer_points(rows: CatalogRows) -> list[tuple[PricePoint, int]]:
    """Return each cloud offer as a price point (with its index in rows.offers) for the plausibility checks."""
    shapes: dict[tuple[Provider, str], InstanceType] = {(i.provider, i.instance_type): i for i in rows.instances}
    points: list[tuple[PricePoint, int]] = []
    for index, offer in enumerate(rows.offers):
        shape = shapes.get((offer.provider, offer.instance_type))
        if offer.provider is Provider.ONPREM or shape is None:
            continue
        point = PricePoint(
            provider=offer.provider,
            item=offer.instance_type,
            region=offer.region,
            pricing=offer.pricing,
            price_per_hour_usd=offer.price_per_hour_usd,
            gpu_count=shape.gpu_count,
            gpu=shape.gpu,
            family=family_of(offer.provider, offer.instance_type),
            vcpus=shape.vcpus,
            memory_bytes=shape.host_memory_bytes,
        )
        points.append((point, index))
    return points


def implausible_offers(rows: CatalogRows) -> list[tuple[Finding, int]]:
    """Return the plausibility findings on the rows' offers, each with the offer's index."""
    points = offer_points(rows)
    index = {id(p): i for p, i in points}
    return [(f, index[id(f.point)]) for f in find_implausible(p for p, _ in points)]


def exclusion(finding: Finding) -> Exclusion:
    """Return a finding as the record a catalog version keeps of a price it left out."""
    p = finding.point
    return Exclusion(p.provider, p.item, p.region, p.pricing, p.price_per_hour_usd, finding.check, finding.reason)


def screen_rows(rows: CatalogRows) -> CatalogRows:
    """Leave out the offers the plausibility checks reject, recording each with its reason."""
    found = implausible_offers(rows)
    if not found:
        return rows
    dropped = {i for _, i in found}
    offers = tuple(o for i, o in enumerate(rows.offers) if i not in dropped)
    return dataclasses.replace(
        rows,
        offers=offers,
        prices_as_of=oldest_price_date(o for o in offers if o.pricing not in COMMITTED),  # pay-as-you-go rows'
        excluded=rows.excluded + tuple(exclusion(f) for f, _ in found),
    )


def check_rows(
    rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
) -> list[Problem]:
    """Return every problem with a catalog version (empty when it may become current)."""
    slugs = {g.slug for g in gpus}
    gpu_counts = {(i.provider, i.instance_type): i.gpu_count for i in rows.instances}
    problems = list(_collapse(rows, previous)) if previous is not None else []
    problems += [*_prices(rows, gpu_counts), *_references(rows, slugs)]
    problems += [Problem(f.check, f.reason) for f, _ in implausible_offers(rows)]
    return problems


def validate_rows(
    rows: CatalogRows, *, gpus: Iterable[GpuSpec], previous: CatalogRows | None = None
) -> CatalogRows:
    """Return the rows unchanged when they pass every check; raise CatalogValidationError otherwise."""
    problems = check_rows(rows, gpus=gpus, previous=previous)
    if problems:
        raise CatalogValidationError([p.message for p in problems])
    return rows
