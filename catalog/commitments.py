"""Committed-use prices: published per-family discount rates applied to the on-demand offers.

Only Google Cloud resource-based committed use discounts (1 and 3 years, no upfront) are here, and
only for the machine families whose committed figures a public, machine-readable source carries:
Cyclenerd/google-cloud-pricing-cost-calculator `pricing.yml` (generated from Google's Cloud Billing
Catalog SKU prices) lists, per machine type and region, `month` (on-demand) and `month_1y`/`month_3y`
(committed). The rate kept per family is `month_1y / month` and `month_3y / month` of one machine of
the family in one region (us-central1, or us-east4 where the family is not in us-central1); the spread
of that ratio over the family's machines and regions in the file is given with each rate. The committed
hourly price of an offer is `on-demand hourly x rate`: an effective rate paid for every hour of the
term (8,760 hours a year) whether the machine is used or not.

Read at the file generated 2026-07-30 (commit 889627bc); the A2 High and A3 High figures below are the
same, digit for digit, in the file generated 2025-03-06 (commit 0166a59e) the first rates were read from.

Not covered, and why (the file has no committed figures for them; looked for again on 2026-12-01 in every
stored version of the file, the newest readable being 2026-07-30, the three later ones of 2026-08-06/13/20
not stored): GCP A2 Ultra (listed on demand only since the tool's v2.3.0, commit d45989c8 of 2024-08-17,
which drops a machine's committed price when one of its CPU, RAM or GPU commitment SKUs is missing in the
region, "the price would then be calculated without a GPU and would be far too low"; the versions before
it, checked back to 2023-02, list A2 Ultra's month_1y and month_3y equal to its month, e.g. 1.000 x on-demand
in us-central1, europe-west4 and asia-southeast1 in the file of 2024-08-15: no commitment figure), A3 Ultra,
A3 Edge, A4, A4X (not in the file at all: the machine list build/gcp.yml has none of them up to its
newest commit of 2026-08-20), N1 + GPU (the file prices N1 hosts' commitments, 0.855-0.900 / 0.611-0.643
of on-demand, but not the attached GPUs': its mapping.csv maps Google's GPU commitment SKUs, "Commitment v1:
Nvidia Tesla T4 ... 1 Year" and the like, yet pricing.yml carries prices only per machine type, so no whole
machine can be priced). Cyclenerd/google-cloud-compute-machine-types builds its prices from the same file.
AWS Reserved Instances are not derived here: the AWS fetcher reads them from the live Price List
(catalog/fetchers/aws_reserved.py), so only a refresh brings them; no machine-readable offline copy of
AWS's reserved or Savings Plans terms for GPU families was found for the bundled snapshot (searched:
ec2instances.info data, stored Price List offer files, infracost/vantage/Cyclenerd AWS repositories; on
2026-12-01 again: exact-string searches of the stored public repositories for "yrTerm1Standard.noUpfront",
"yrTerm1Savings.noUpfront" (ec2instances.info's keys), "BoxUsage:p4d.24xlarge", "BoxUsage:p5.48xlarge",
"p4d.24xlarge" and '"p5.48xlarge": {', and meaning searches for reserved and Savings Plans rates of P4/P5:
only UI code, tests with m6a rows, hand-typed tables without a date or source, and Cyclenerd/aws-pricing,
which commits its build scripts but not its data; see notes/catalog.md of issue 14). AWS EC2 Instance Savings
Plans likewise come only from a refresh (catalog/fetchers/aws_savings.py), as kinds of their own
(savings_plan_1y/3y), costed like a commitment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from catalog.types import Offer, Pricing, Provider

HOURS_PER_YEAR = 8760
# every kind paid for each hour of a term, used or not: commitments (Reserved Instances, committed use) and
# AWS EC2 Instance Savings Plans (catalog/fetchers/aws_savings.py), a kind of their own
TERM_HOURS = {Pricing.COMMITTED_1Y: HOURS_PER_YEAR, Pricing.COMMITTED_3Y: 3 * HOURS_PER_YEAR,
              Pricing.SAVINGS_PLAN_1Y: HOURS_PER_YEAR, Pricing.SAVINGS_PLAN_3Y: 3 * HOURS_PER_YEAR}
COMMITTED = frozenset(TERM_HOURS)
ONE_YEAR = (Pricing.COMMITTED_1Y, Pricing.SAVINGS_PLAN_1Y)  # what a budget review may buy for a year

_SOURCE = ("https://github.com/Cyclenerd/google-cloud-pricing-cost-calculator/blob/"
           "889627bc46779da784cd279552664f232431313a/pricing.yml")
_AS_OF = "2026-07-30"  # the file's `about.generated: Thu Jul 30 06:13:17 2026` (timestamp 1785391997)


@dataclass(frozen=True)
class CommitmentRate:
    """The committed price of one machine family as a fraction of its on-demand price."""

    provider: Provider
    family: str  # instance type prefix, e.g. "a2-highgpu-"
    pricing: Pricing
    fraction_of_on_demand: float
    source: str
    as_of: str | None


# (family prefix, machine read, region read, month, month_1y, month_3y, spread over the family in the file)
_READ: tuple[tuple[str, str, str, float, float, float, str], ...] = (
    ("a2-highgpu-", "a2-highgpu-1g", "us-central1", 2681.57105, 1689.3711392, 938.56707798,
     "1y 0.624-0.636, 3y 0.338-0.351 over 4 machines, 39 regions"),
    ("a2-megagpu-", "a2-megagpu-16g", "us-central1", 40689.83792, 25634.2950272, 14241.71597664,
     "1y 0.624-0.636, 3y 0.338-0.351 over 39 regions"),
    ("a3-highgpu-", "a3-highgpu-1g", "us-central1", 8074.71249111, 5601.26008308, 3546.37477674,
     "1y 0.694-0.695, 3y 0.439-0.440 over 4 machines, 40 regions"),
    ("a3-megagpu-", "a3-megagpu-8g", "us-east4", 67844.4393504, 46678.66370976, 29555.25790768,
     "1y 0.688, 3y 0.436 over its 9 regions (none is us-central1)"),
    ("g2-standard-", "g2-standard-4", "us-central1", 515.98754615, 325.07215214, 232.19438719,
     "1y 0.630, 3y 0.450-0.464 over 8 machines, 40 regions"),
    ("g4-standard-", "g4-standard-48", "us-central1", 3284.9489, 2266.65, 1444.9985,
     "1y 0.690, 3y 0.440 over 7 machines, 20 regions"),
)
RATES: tuple[CommitmentRate, ...] = tuple(
    CommitmentRate(Provider.GCP, family, pricing, committed / month,
                   f"{_SOURCE} ({machine} {region} {term} / month; {spread})", _AS_OF)
    for family, machine, region, month, one, three, spread in _READ
    for pricing, committed, term in ((Pricing.COMMITTED_1Y, one, "month_1y"), (Pricing.COMMITTED_3Y, three, "month_3y"))
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
