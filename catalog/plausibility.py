"""Plausibility checks on prices: a price that passes the format checks may still be wrong.

Run on every build, import and refresh, over whole offers and, where a source bills in parts (Google: host
machine + GPUs), over the parts. They run in this order, each on what the previous ones kept:
1. bad-price: zero, negative or missing.
2. spot-not-below-on-demand: a spot price at or above the on-demand price of the same item and region. On
   AWS a spot price at its cap (equal to on-demand) is a market with no discount: the spot row is left out.
   A spot price above on-demand means one of the two is wrong and we cannot tell which: both are left out.
3. regional-outlier: an on-demand price per GPU outside REGIONAL_BAND times the upper quartile of the same
   item's prices over the provider's regions (at least MIN_REGIONS of them). The upper quartile, not the
   median, because the known errors are under-priced clusters: SkyPilot's v8 GCP rows price H100-MEGA at
   $4.42/GPU in 9 of 14 regions against $10.34-13.45 in the others.
4. family-jump: within one family, region and pricing, the cheapest per-GPU price at each GPU count must
   move within FAMILY_STEP_BAND from one count to the next, and a shape with at least the GPUs, vCPUs and
   memory of another in its family must not be cheaper. On-demand only: a spot market is per type.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from catalog.types import Pricing, Provider

# Observed spread of genuine regional prices per item in SkyPilot's v8 rows: AWS 0.72-1.17 and GCP GPU parts
# 0.71-1.3 of the upper quartile; the known GCP errors sit at 0.37-0.55. The band leaves room on both sides.
REGIONAL_BAND = (0.6, 1.6)
MIN_REGIONS = 3
# Cheapest per-GPU price from one GPU count to the next in a family: AWS g5g goes 0.42 -> 1.37 $/GPU-h (1 to
# 2 GPUs, as 2 GPUs come only with 64 vCPUs); a shape priced per GPU instead of per machine moves by 1/n.
FAMILY_STEP_BAND = (0.5, 4.0)
DOMINANCE_TOLERANCE = 0.02  # a larger shape may list up to 2 % under a smaller one (rounding in the source)
_SAME = 1e-4  # prices within 0.01 % are the same (SkyPilot rounds spot to 4 decimals, on-demand to 5)


@dataclass(frozen=True)
class PricePoint:
    """One price to check: an offer, or one billed part of one (a GCP GPU or host price)."""

    provider: Provider
    item: str  # instance type, or "accelerator H100 x8" / "host a3-highgpu-8g"
    region: str
    pricing: Pricing
    price_per_hour_usd: float
    gpu_count: int = 1
    family: str = ""  # empty: no family check
    vcpus: int = 0
    memory_bytes: int = 0


@dataclass(frozen=True)
class Finding:
    """A price a check rejects, and why in words."""

    point: PricePoint
    check: str
    reason: str


def _per_gpu(p: PricePoint) -> float:
    return p.price_per_hour_usd / max(p.gpu_count, 1)


def _where(p: PricePoint) -> str:
    return f"{p.provider.value} {p.item} in {p.region} ({p.pricing.value} ${p.price_per_hour_usd:.4f}/h)"


def _bad_prices(points: Sequence[PricePoint]) -> list[Finding]:
    return [
        Finding(p, "bad-price", f"{_where(p)}: not a positive price")
        for p in points
        if not p.price_per_hour_usd > 0
    ]


def _spot_vs_on_demand(points: Sequence[PricePoint]) -> list[Finding]:
    on_demand = {(p.provider, p.item, p.region): p for p in points if p.pricing is Pricing.ON_DEMAND}
    found: list[Finding] = []
    for spot in points:
        od = on_demand.get((spot.provider, spot.item, spot.region))
        if spot.pricing is not Pricing.SPOT or od is None:
            continue
        if spot.price_per_hour_usd > od.price_per_hour_usd * (1 + _SAME):
            why = (
                f"spot ${spot.price_per_hour_usd:.4f}/h above on-demand ${od.price_per_hour_usd:.4f}/h "
                "in the same region: one of the two is wrong, both left out"
            )
            found += [Finding(od, "spot-not-below-on-demand", f"{_where(od)}: {why}")]
            found += [Finding(spot, "spot-not-below-on-demand", f"{_where(spot)}: {why}")]
        elif spot.price_per_hour_usd >= od.price_per_hour_usd * (1 - _SAME):
            found.append(
                Finding(
                    spot,
                    "spot-not-below-on-demand",
                    f"{_where(spot)}: spot equals on-demand (the market is at its cap: no spot discount)",
                )
            )
    return found


def upper_quartile(values: Sequence[float]) -> float:
    """Return the 75th percentile (inclusive method) of at least two values."""
    return statistics.quantiles(values, n=4, method="inclusive")[2]


def _regional(points: Sequence[PricePoint]) -> list[Finding]:
    groups: dict[tuple[Provider, str], list[PricePoint]] = defaultdict(list)
    for p in points:
        if p.pricing is Pricing.ON_DEMAND:
            groups[(p.provider, p.item)].append(p)
    found: list[Finding] = []
    low, high = REGIONAL_BAND
    for group in groups.values():
        if len({p.region for p in group}) < MIN_REGIONS:
            continue
        reference = upper_quartile([_per_gpu(p) for p in group])
        for p in group:
            ratio = _per_gpu(p) / reference
            if not low <= ratio <= high:
                found.append(
                    Finding(
                        p,
                        "regional-outlier",
                        f"{_where(p)}: ${_per_gpu(p):.4f} per GPU is {ratio:.2f}x the upper quartile "
                        f"(${reference:.4f}) of its {len(group)} regions; plausible band {low}-{high}x",
                    )
                )
    return found


def _family(points: Sequence[PricePoint]) -> list[Finding]:
    groups: dict[tuple[Provider, str, str, Pricing], list[PricePoint]] = defaultdict(list)
    for p in points:
        if p.family and p.pricing is Pricing.ON_DEMAND:  # a spot market is per type: its steps prove nothing
            groups[(p.provider, p.family, p.region, p.pricing)].append(p)
    found: list[Finding] = []
    low, high = FAMILY_STEP_BAND
    for (_, family, _, _), group in groups.items():
        cheapest: dict[int, PricePoint] = {}
        for p in group:
            if p.gpu_count not in cheapest or _per_gpu(p) < _per_gpu(cheapest[p.gpu_count]):
                cheapest[p.gpu_count] = p
        counts = sorted(cheapest)
        for smaller, larger in pairwise(counts):
            a, b = cheapest[smaller], cheapest[larger]
            step = _per_gpu(b) / _per_gpu(a)
            if not low <= step <= high:
                found.append(
                    Finding(
                        b,
                        "family-jump",
                        f"{_where(b)}: ${_per_gpu(b):.4f} per GPU at {larger} GPUs is {step:.2f}x the "
                        f"${_per_gpu(a):.4f} of {a.item} at {smaller} in family {family}; plausible {low}-{high}x",
                    )
                )
        for big in group:
            for small in group:
                dominates = (
                    big.gpu_count >= small.gpu_count
                    and big.vcpus >= small.vcpus
                    and big.memory_bytes >= small.memory_bytes
                    and (big.gpu_count, big.vcpus, big.memory_bytes)
                    != (small.gpu_count, small.vcpus, small.memory_bytes)
                )
                if dominates and big.price_per_hour_usd < small.price_per_hour_usd * (1 - DOMINANCE_TOLERANCE):
                    found.append(
                        Finding(
                            big,
                            "family-jump",
                            f"{_where(big)}: cheaper than the smaller {small.item} "
                            f"(${small.price_per_hour_usd:.4f}/h) of its family {family}",
                        )
                    )
                    break
    return found


_COMMITTED = (Pricing.COMMITTED_1Y, Pricing.COMMITTED_3Y)


def _committed_vs_on_demand(points: Sequence[PricePoint]) -> list[Finding]:
    """A committed rate must lie above zero (see _bad_prices) and below on-demand in the same region."""
    on_demand = {(p.provider, p.item, p.region): p for p in points if p.pricing is Pricing.ON_DEMAND}
    found: list[Finding] = []
    for c in points:
        od = on_demand.get((c.provider, c.item, c.region))
        if c.pricing not in _COMMITTED:
            continue
        if od is None:
            found.append(Finding(c, "committed-not-below-on-demand",
                                 f"{_where(c)}: no on-demand price in the same region to compare with"))
        elif c.price_per_hour_usd >= od.price_per_hour_usd * (1 - _SAME):
            found.append(Finding(c, "committed-not-below-on-demand",
                                 f"{_where(c)}: committed rate not below on-demand "
                                 f"${od.price_per_hour_usd:.4f}/h in the same region"))
    return found


CHECKS = (_bad_prices, _spot_vs_on_demand, _committed_vs_on_demand, _regional, _family)


def find_implausible(points: Iterable[PricePoint]) -> list[Finding]:
    """Run every check in order, each on the prices the previous ones kept; return what they rejected."""
    kept = list(points)
    findings: list[Finding] = []
    seen: set[int] = set()
    for check in CHECKS:
        for finding in check(kept):
            if id(finding.point) not in seen:
                seen.add(id(finding.point))
                findings.append(finding)
        kept = [p for p in kept if id(p) not in seen]
    return findings
