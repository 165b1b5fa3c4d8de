"""Committed-use prices: published per-family discount rates applied to the on-demand offers.

Only Google Cloud resource-based committed use discounts (1 and 3 years, no upfront) are here, and
only for the machine families whose committed figures a public, machine-readable source carries:
Cyclenerd/google-cloud-pricing-cost-calculator `pricing.yml` (generated from Google's Cloud Billing
Catalog SKU prices) lists, per machine type and region, `month` (on-demand) and `month_1y`/`month_3y`
(committed). The rate kept per family is `month_1y / month` and `month_3y / month` of the family's
1-GPU machine in us-central1 (the 2-GPU machine gives the same ratio to 4 decimals). The committed
hourly price of an offer is `on-demand hourly x rate`: an effective rate paid for every hour of the
term (8,760 hours a year) whether the machine is used or not.

Not covered (no public figures found offline): AWS Reserved Instances and Savings Plans, GCP A2
ultra/mega, A3 mega/ultra/edge, A4, G2, G4 and N1 + GPU commitments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from catalog.types import Offer, Pricing, Provider

HOURS_PER_YEAR = 8760
TERM_HOURS = {Pricing.COMMITTED_1Y: HOURS_PER_YEAR, Pricing.COMMITTED_3Y: 3 * HOURS_PER_YEAR}
COMMITTED = frozenset(TERM_HOURS)

_SOURCE = ("https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/"
           "0166a59ebba7c36f2cc8c931d9f258dcebc44776/pricing.yml")
_AS_OF = "2025-03-06"  # the file's `about.generated: Thu Mar  6 03:53:56 2025` (timestamp 1741233236)


@dataclass(frozen=True)
class CommitmentRate:
    """The committed price of one machine family as a fraction of its on-demand price."""

    provider: Provider
    family: str  # instance type prefix, e.g. "a2-highgpu-"
    pricing: Pricing
    fraction_of_on_demand: float
    source: str
    as_of: str | None


# a2-highgpu-1g us-central1: month 2681.57105, month_1y 1689.3711392, month_3y 938.56707798.
# a3-highgpu-1g us-central1: month 8074.71249111, month_1y 5601.26008308, month_3y 3546.37477674.
RATES: tuple[CommitmentRate, ...] = (
    CommitmentRate(Provider.GCP, "a2-highgpu-", Pricing.COMMITTED_1Y, 1689.3711392 / 2681.57105,
                   f"{_SOURCE} (a2-highgpu-1g us-central1 month_1y / month)", _AS_OF),
    CommitmentRate(Provider.GCP, "a2-highgpu-", Pricing.COMMITTED_3Y, 938.56707798 / 2681.57105,
                   f"{_SOURCE} (a2-highgpu-1g us-central1 month_3y / month)", _AS_OF),
    CommitmentRate(Provider.GCP, "a3-highgpu-", Pricing.COMMITTED_1Y, 5601.26008308 / 8074.71249111,
                   f"{_SOURCE} (a3-highgpu-1g us-central1 month_1y / month)", _AS_OF),
    CommitmentRate(Provider.GCP, "a3-highgpu-", Pricing.COMMITTED_3Y, 3546.37477674 / 8074.71249111,
                   f"{_SOURCE} (a3-highgpu-1g us-central1 month_3y / month)", _AS_OF),
)


def _older(a: str | None, b: str | None) -> str | None:
    return None if a is None or b is None else min(a, b)


def committed_offers(offers: Iterable[Offer], rates: Iterable[CommitmentRate] = RATES) -> list[Offer]:
    """Return a committed offer for each on-demand offer a rate covers, dated by the older of the two."""
    rates = tuple(rates)
    out: list[Offer] = []
    for o in offers:
        if o.pricing is not Pricing.ON_DEMAND:
            continue
        for r in rates:
            if r.provider is o.provider and o.instance_type.startswith(r.family):
                out.append(Offer(
                    provider=o.provider, instance_type=o.instance_type, region=o.region, pricing=r.pricing,
                    price_per_hour_usd=round(o.price_per_hour_usd * r.fraction_of_on_demand, 5),
                    source=f"on-demand row ({o.source}) x committed/on-demand {r.fraction_of_on_demand:.4f} "
                           f"from {r.source}",
                    as_of=_older(o.as_of, r.as_of),
                ))
    return out


def term_commitment_usd(pricing: Pricing, price_per_hour_usd: float) -> float:
    """Return what a commitment costs over its whole term for one machine at this hourly rate."""
    return price_per_hour_usd * TERM_HOURS[pricing]
