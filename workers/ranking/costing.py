"""What running a job costs: block storage by the hour, and owned cards amortised into an hourly rate."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from catalog.types import BlockStoragePrice, OnPremCard, Provider
from workers.sizing.spec import OnPremAssumptions

# Cloud prices per "GB-month" count binary gigabytes: AWS EBS bills 2**30 bytes as a GB
# (aws.amazon.com/ebs/pricing, FAQ "GB-month"), Google's persistent disk prices are per GiB
# (cloud.google.com/compute/disks-image-pricing). Read 2024-11.
BYTES_PER_BILLED_GB = 2**30

# Hours in a billing month: both AWS and Google price a month as 730 hours (8760 / 12)
# (aws.amazon.com/ebs/pricing examples; cloud.google.com/products/calculator). Read 2024-11.
HOURS_PER_MONTH = 730.0

HOURS_PER_YEAR = 8760.0

# A team's own cards are used in 1, 2, 4 or 8: the slot counts of workstation and server boards
# (8 double-width cards is what one PCIe server takes; e.g. the 8-GPU HGX and 4U GPU servers). Machines to
# buy stop at PURCHASE_MAX_GPUS, below.
ONPREM_GPU_COUNTS = (1, 2, 4, 8)

# A machine to buy holds at most 4 cards: constraints.onprem.host_price_usd prices one workstation host
# (default $1,500). Workstations built for deep learning carry up to about four cards (Curtis Northcutt's
# 2019 build, l7.curtisnorthcutt.com: three RTX 2080 Ti in a desktop against a $12,500 pre-built
# workstation; "4 GPUs in 1 system is easy", forums.chaos.com; both read 2026-12-02); eight are a server's
# (AIME's GPU servers take "up to eight", aime.info/en/blog), with a server chassis, several power
# supplies and more than one household circuit (8 x 575 W for RTX 5090s), which that single host price
# does not cover. A team that owns eight says so in constraints.owned_gpus. A rule of thumb, stated as one.
PURCHASE_MAX_GPUS = 4

ONPREM_REGION = "onprem"


def block_storage_price_table(
    prices: Iterable[BlockStoragePrice],
) -> dict[Provider, tuple[dict[str, float], float | None]]:
    """Return, per provider, the cheapest USD per GB-month by region and the dearest of them as fallback.

    The cheapest kind in a region is taken (a training job's data set is read sequentially, so
    any block storage kind the catalog lists will do). A region without a price falls back to
    the provider's dearest known regional price, so that a missing row never makes an option
    look cheaper than it is.
    """
    by_region: dict[Provider, dict[str, float]] = {}
    for p in prices:
        regions = by_region.setdefault(p.provider, {})
        known = regions.get(p.region)
        if known is None or p.price_per_gb_month_usd < known:
            regions[p.region] = p.price_per_gb_month_usd
    return {prov: (regions, max(regions.values()) if regions else None)
            for prov, regions in by_region.items()}


def block_storage_cost_usd(*, storage_bytes: int, price_per_gb_month_usd: float, hours: float) -> float:
    """Return the cost of `storage_bytes` of block storage held for `hours`.

    cost = storage_bytes / 2**30 x price per GB-month x hours / 730
    """
    return storage_bytes / BYTES_PER_BILLED_GB * price_per_gb_month_usd * hours / HOURS_PER_MONTH


def onprem_price_per_hour_usd(card: OnPremCard, *, gpu_count: int, assumptions: OnPremAssumptions) -> float:
    """Return the hourly cost of owning a machine with `gpu_count` of these cards.

    amortised = (card price x cards + host price) / (lifetime years x 8760 x utilisation)
    power     = card watts x cards x electricity USD per kWh / 1000
    hourly    = amortised + power

    The purchase is spread over the hours the machine is busy (a machine used half the time
    costs twice as much per busy hour); power is paid only while the job runs. The host's own
    power (CPU, disks, fans) is left out: the cards dominate a GPU box's draw.
    """
    busy_hours = assumptions.lifetime_years * HOURS_PER_YEAR * assumptions.utilisation
    purchase_usd = card.price_usd * gpu_count + assumptions.host_price_usd
    power_usd_per_hour = card.power_watts * gpu_count * assumptions.electricity_usd_per_kwh / 1000.0
    return purchase_usd / busy_hours + power_usd_per_hour


def owned_power_per_hour_usd(*, power_watts: float, gpu_count: int, electricity_usd_per_kwh: float) -> float:
    """Return what a team's own cards cost per hour of a job: their power, the purchase being sunk.

    power = card watts x cards x electricity USD per kWh / 1000 (the host's own draw left out, as above)
    """
    return power_watts * gpu_count * electricity_usd_per_kwh / 1000.0


def owned_gpu_counts(count: int, *, max_gpus: int) -> tuple[int, ...]:
    """Return the card counts a team's `count` cards are used in: 1, 2, 4, 8 up to it, and all of them."""
    counts = {n for n in ONPREM_GPU_COUNTS if n <= count} | {count}
    return tuple(sorted(n for n in counts if n <= max_gpus))


def onprem_gpu_counts(max_gpus: int) -> tuple[int, ...]:
    """Return the card counts a machine to buy is priced with: up to `max_gpus` and PURCHASE_MAX_GPUS."""
    return tuple(n for n in ONPREM_GPU_COUNTS if n <= min(max_gpus, PURCHASE_MAX_GPUS))


def onprem_instance_type(gpu: str, gpu_count: int) -> str:
    """Return the name an owned machine goes by in the options, e.g. "onprem-4x-rtx-3090"."""
    return f"onprem-{gpu_count}x-{gpu}"


def cheapest_cards(cards: Iterable[OnPremCard]) -> Mapping[str, OnPremCard]:
    """Return the cheapest listed card of each GPU model (ties by source, so the choice is stable)."""
    best: dict[str, OnPremCard] = {}
    for c in cards:
        known = best.get(c.gpu)
        if known is None or (c.price_usd, c.source) < (known.price_usd, known.source):
            best[c.gpu] = c
    return best
