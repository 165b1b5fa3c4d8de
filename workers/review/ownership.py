"""Buy or rent: how many hours of use make owning an on-prem card cheaper than renting a comparable cloud GPU.

domain.md §6: cloud GPUs cost nothing up front, scale to the job and need no server room; owning
pays off when a card is busy long enough. For each card a team could buy, as one card in a host
of its own (the owned 1-GPU machine the ranking prices, workers/ranking/costing.py):

    owning H hours  = card price + host price + H x card watts / 1000 x electricity USD per kWh
    renting H hours = H x the cloud's price of the work one card-hour does
    break-even H    = (card price + host price) / (rent per card-hour - power rate)

The work is the review's own: where the cloud offers the same GPU model, one card-hour is one
GPU-hour of it. Otherwise every cloud GPU that holds all of the review's jobs that fit the card is
priced at what those jobs cost on it: its GPU-hour price x its hours for them / the card's hours
(an L40S that runs them in 0.6 of the 3090's time rents a 3090-hour's work for 0.6 of its price), and
the cheapest is the comparison. Without those hours (a review stored before they were kept), the
GPU with at least the card's memory and memory bandwidth (memory first, then bandwidth: domain.md §6)
that is cheapest per GPU-hour, one card-hour for one GPU-hour. A multi-GPU instance counts at its
price divided by its GPUs. Spot prices are left out: a spot GPU can be taken back, an owned one cannot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from catalog.types import Catalog, GpuSpec, OnPremCard, Pricing, Provider
from workers.ranking.catalog_index import catalog_index
from workers.ranking.costing import HOURS_PER_YEAR, onprem_price_per_hour_usd
from workers.sizing.spec import OnPremAssumptions

NO_CLOUD_GPU = "no-cloud-gpu"  # no cloud GPU in the catalog matches the card's memory and bandwidth
NEVER = "cloud-cheaper-than-power"  # renting costs less per hour than the card's electricity alone


@dataclass(frozen=True)
class CloudRate:
    """The cheapest on-demand price of one GPU-hour of a cloud GPU, and the offer it comes from."""

    gpu: str
    provider: str
    instance_type: str
    region: str
    gpu_count: int
    price_per_gpu_hour_usd: float


@dataclass(frozen=True)
class ReviewUse:
    """How long a review's jobs would keep one card of a GPU model busy, and the same jobs on other models."""

    hours: float
    jobs: int
    # The same jobs' hours on one GPU of each other model that holds every one of them (a model that
    # misses one is left out); None where not recorded.
    other_hours: dict[str, float] | None = None


def add_use(known: ReviewUse | None, more: ReviewUse) -> ReviewUse:
    """Return the use of two sets of jobs together: hours and jobs added, other models kept where both hold."""
    if known is None:
        return more
    other = None
    if known.other_hours is not None and more.other_hours is not None:
        other = {g: h + more.other_hours[g] for g, h in known.other_hours.items() if g in more.other_hours}
    return ReviewUse(known.hours + more.hours, known.jobs + more.jobs, other)


@dataclass(frozen=True)
class BuyVsRent:
    """One card bought and run against the same hours rented in the cloud."""

    gpu: str
    card_price_usd: float
    host_price_usd: float
    purchase_usd: float
    power_watts: int
    power_usd_per_hour: float
    owned_price_per_hour_usd: float  # purchase amortised at the assumed lifetime and use, plus power
    cloud: CloudRate | None
    same_gpu: bool  # the cloud rents the very same GPU model
    break_even_hours: float | None  # None: renting never costs more (see reason)
    busy_hours_per_year: float  # at the assumed utilisation
    break_even_years: float | None  # at the assumed utilisation
    pays_off_within_lifetime: bool
    review_hours: float  # hours the review's jobs would keep one such card busy
    review_jobs: int  # the review's jobs that fit on one such card
    pays_off_for_review: bool  # the review's hours alone reach the break-even
    reason: str = ""  # NO_CLOUD_GPU or NEVER when there is no break-even
    cloud_hours_per_card_hour: float = 1.0  # the cloud GPU's hours for one card-hour of the review's work
    rent_per_card_hour_usd: float = 0.0  # its GPU-hour price x those hours


def cloud_gpu_rates(catalog: Catalog, *, providers: Sequence[str]) -> dict[str, CloudRate]:
    """Return, per GPU model, the cheapest on-demand GPU-hour among the allowed cloud providers."""
    allowed = {Provider(p) for p in providers if p != Provider.ONPREM.value}
    shapes = {(i.provider, i.instance_type): i for i in catalog.instances
              if i.provider in allowed and i.gpu_count > 0}
    best: dict[str, CloudRate] = {}
    for o in catalog.offers:
        shape = shapes.get((o.provider, o.instance_type))
        if shape is None or o.pricing is not Pricing.ON_DEMAND:
            continue
        rate = CloudRate(gpu=shape.gpu, provider=o.provider.value, instance_type=o.instance_type,
                         region=o.region, gpu_count=shape.gpu_count,
                         price_per_gpu_hour_usd=o.price_per_hour_usd / shape.gpu_count)
        known = best.get(shape.gpu)
        if known is None or _rate_key(rate) < _rate_key(known):
            best[shape.gpu] = rate
    return best


def _rate_key(rate: CloudRate) -> tuple[float, str, str, str]:
    return (rate.price_per_gpu_hour_usd, rate.provider, rate.instance_type, rate.region)


def comparable_rate(card_gpu: GpuSpec, rates: Mapping[str, CloudRate], catalog: Catalog,
                    use: ReviewUse | None = None) -> tuple[CloudRate | None, float]:
    """Return the cloud rate a card is held against and the cloud hours one card-hour of work takes.

    Its own model's (one hour for one); else the cheapest for the review's own jobs on the cloud GPUs
    that hold them all; else, without those hours, the cheapest as big and fast, hour for hour.
    """
    if card_gpu.slug in rates:
        return rates[card_gpu.slug], 1.0
    if use is not None and use.other_hours and use.hours > 0:
        priced = [(rates[g].price_per_gpu_hour_usd * h / use.hours, _rate_key(rates[g]), g)
                  for g, h in use.other_hours.items() if g in rates and h > 0]
        if priced:
            gpu = min(priced)[2]
            return rates[gpu], use.other_hours[gpu] / use.hours
    return _as_big_and_fast(card_gpu, rates, catalog), 1.0


def _as_big_and_fast(card_gpu: GpuSpec, rates: Mapping[str, CloudRate], catalog: Catalog) -> CloudRate | None:
    """Return the cheapest GPU-hour of a cloud GPU with at least the card's memory and bandwidth."""
    known = {g.slug: g for g in catalog.gpus}
    matches = [r for r in rates.values() if r.gpu in known
               and known[r.gpu].memory_bytes >= card_gpu.memory_bytes
               and known[r.gpu].memory_bandwidth_gb_per_s >= card_gpu.memory_bandwidth_gb_per_s]
    return min(matches, key=_rate_key) if matches else None


def buy_vs_rent_card(card: OnPremCard, *, catalog: Catalog, rates: Mapping[str, CloudRate],
                     assumptions: OnPremAssumptions, use: ReviewUse) -> BuyVsRent:
    """Return the break-even of one card against renting a comparable cloud GPU."""
    cloud, ratio = comparable_rate(catalog.gpu(card.gpu), rates, catalog, use)
    rent_usd_per_hour = cloud.price_per_gpu_hour_usd * ratio if cloud is not None else 0.0
    purchase_usd = card.price_usd + assumptions.host_price_usd
    power_usd_per_hour = card.power_watts / 1000.0 * assumptions.electricity_usd_per_kwh
    busy_hours_per_year = HOURS_PER_YEAR * assumptions.utilisation
    break_even_hours: float | None = None
    reason = NO_CLOUD_GPU if cloud is None else ""
    if cloud is not None:
        margin_usd_per_hour = rent_usd_per_hour - power_usd_per_hour
        if margin_usd_per_hour > 0:
            break_even_hours = purchase_usd / margin_usd_per_hour
        else:
            reason = NEVER
    years = None if break_even_hours is None else break_even_hours / busy_hours_per_year
    return BuyVsRent(
        gpu=card.gpu, card_price_usd=card.price_usd, host_price_usd=assumptions.host_price_usd,
        purchase_usd=purchase_usd, power_watts=card.power_watts, power_usd_per_hour=power_usd_per_hour,
        owned_price_per_hour_usd=onprem_price_per_hour_usd(card, gpu_count=1, assumptions=assumptions),
        cloud=cloud, same_gpu=cloud is not None and cloud.gpu == card.gpu,
        break_even_hours=break_even_hours, busy_hours_per_year=busy_hours_per_year,
        break_even_years=years,
        pays_off_within_lifetime=years is not None and years <= assumptions.lifetime_years,
        review_hours=use.hours, review_jobs=use.jobs,
        pays_off_for_review=break_even_hours is not None and use.hours >= break_even_hours,
        reason=reason, cloud_hours_per_card_hour=ratio, rent_per_card_hour_usd=rent_usd_per_hour,
    )


def buy_vs_rent(catalog: Catalog, *, providers: Sequence[str], assumptions: OnPremAssumptions,
                use: Mapping[str, ReviewUse]) -> tuple[BuyVsRent, ...]:
    """Return buy-vs-rent for each on-prem card that runs one of the review's jobs, soonest break-even first.

    `use` maps a GPU model to the hours the review's jobs would keep one card busy. The cloud
    providers compared against are the review's; a review that allows none is compared against all.
    """
    clouds = [p for p in providers if p != Provider.ONPREM.value] or [p.value for p in Provider
                                                                      if p is not Provider.ONPREM]
    rates = cloud_gpu_rates(catalog, providers=clouds)
    known = {g.slug for g in catalog.gpus}
    on_sale = catalog_index(catalog).cards_for_purchase(frozenset())  # the newest generations (on_sale.py)
    rows = [buy_vs_rent_card(card, catalog=catalog, rates=rates, assumptions=assumptions, use=use[gpu])
            for gpu, card in sorted(on_sale.items())
            if gpu in known and gpu in use and use[gpu].jobs > 0]
    return tuple(sorted(rows, key=lambda r: (r.break_even_hours is None, r.break_even_hours or 0.0, r.gpu)))
