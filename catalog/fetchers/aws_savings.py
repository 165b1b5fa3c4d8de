"""AWS EC2 Instance Savings Plans rates (1 and 3 years, no upfront) from the Savings Plans API.

`DescribeSavingsPlansOfferingRates` (boto3 client `savingsplans`, one global endpoint, no paginator in
botocore: pages follow `nextToken`) answers one `searchResults` entry per (offering, usage type, operation):
`savingsPlanOffering` {planType, paymentOption, durationSeconds, currency, ...}, `rate` (a string, USD per
`unit`), `usageType` ("BoxUsage:p4d.24xlarge" in us-east-1, "USW2-BoxUsage:p4d.24xlarge" elsewhere),
`operation` ("RunInstances" is Linux/UNIX) and `properties` [{name, value}] with region, instanceType,
instanceFamily, productDescription and tenancy. The request filters on all of these; each entry is still
checked, and one that does not match is not used.

How they relate to the committed kinds: an EC2 Instance Savings Plan commits to a dollar amount per hour
for one instance family in one region for 1 or 3 years; committing exactly one machine's rate, the
machine costs that rate for every hour of the term, used or not, as a Reserved Instance or a Google
committed use does. They are their own pricing kinds (`savings_plan_1y`, `savings_plan_3y`), not
`committed_1y`/`committed_3y`, because AWS sells both for the same machines at different rates and
terms of purchase: a constraint names the one it means. Compute Savings Plans (any family, any region,
a higher rate) are not read: a ranking of one machine in one region cannot value their flexibility.

The API gives no date for a rate; it answers the rates on sale now, so a rate is dated the fetch day,
as the fetcher dates the Price List's on-demand price.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from catalog.types import Pricing

SAVINGS_SOURCE = ("AWS Savings Plans API DescribeSavingsPlansOfferingRates (EC2 Instance Savings Plan, "
                  "no upfront, Linux/UNIX RunInstances, shared tenancy; the Hrs rate)")
DURATIONS = {31_536_000: Pricing.SAVINGS_PLAN_1Y, 94_608_000: Pricing.SAVINGS_PLAN_3Y}  # 365 and 3 x 365 days
PLAN_TYPE = "EC2Instance"
PAYMENT = "No Upfront"
OPERATION = "RunInstances"  # Linux/UNIX; Windows is RunInstances:0002
PAGE_SIZE = 1000  # the model's PageSize maximum
_CHUNK = 100

SavingsRates = dict[str, dict[Pricing, Decimal]]  # instance type -> savings-plan kind -> hourly USD


def request(region: str, instance_types: Sequence[str], next_token: str | None = None) -> dict[str, Any]:
    """Return the DescribeSavingsPlansOfferingRates parameters for these instance types in one region."""
    params: dict[str, Any] = {
        "savingsPlanTypes": [PLAN_TYPE],
        "savingsPlanPaymentOptions": [PAYMENT],
        "products": ["EC2"],
        "serviceCodes": ["AmazonEC2"],
        "operations": [OPERATION],
        "filters": [
            {"name": "region", "values": [region]},
            {"name": "tenancy", "values": ["shared"]},
            {"name": "productDescription", "values": ["Linux/UNIX"]},
            {"name": "instanceType", "values": list(instance_types)},
        ],
        "maxResults": PAGE_SIZE,
    }
    if next_token:
        params["nextToken"] = next_token
    return params


def _pages(client: Any, region: str, instance_types: Sequence[str]) -> Iterable[dict[str, Any]]:
    for i in range(0, len(instance_types), _CHUNK):
        token: str | None = None
        while True:
            page = client.describe_savings_plans_offering_rates(
                **request(region, instance_types[i : i + _CHUNK], token))
            yield from page.get("searchResults") or []
            token = page.get("nextToken") or None
            if token is None:
                break


def parse_rate(entry: dict[str, Any], region: str) -> tuple[str, Pricing, Decimal] | str | None:
    """Return (instance type, kind, hourly USD) of one search result; None when it is not one we asked for;
    a reason when it is one we asked for but its rate cannot be used."""
    offering = entry.get("savingsPlanOffering") or {}
    props = {str(p.get("name")): str(p.get("value")) for p in entry.get("properties") or []}
    kind = DURATIONS.get(int(offering.get("durationSeconds") or 0))
    usage = str(entry.get("usageType", ""))
    if (kind is None or offering.get("planType") != PLAN_TYPE or offering.get("paymentOption") != PAYMENT
            or entry.get("operation") != OPERATION or entry.get("productType", "EC2") != "EC2"
            or props.get("region") != region or props.get("tenancy", "").lower() != "shared"
            or props.get("productDescription") != "Linux/UNIX"
            or usage.split(":", 1)[0].rsplit("-", 1)[-1] != "BoxUsage"):
        return None
    name = props.get("instanceType") or usage.split(":", 1)[-1]
    try:
        rate = Decimal(str(entry.get("rate")))
    except InvalidOperation:
        rate = Decimal("NaN")
    if offering.get("currency") != "USD" or entry.get("unit") != "Hrs" or not rate.is_finite() or rate <= 0:
        return (f"{name}: savings plan rate {entry.get('rate')!r} {offering.get('currency')}/{entry.get('unit')} "
                f"({kind.value}) is not a positive USD Hrs rate; skipped")
    return name, kind, rate


def savings_rates(client: Any, region: str, instance_types: Sequence[str],
                  problems: list[str]) -> SavingsRates:
    """Return the region's EC2 Instance Savings Plans rates (no upfront) of these types, naming what is skipped.

    Two different rates for one type and term are ambiguous: neither is kept. The SDK's errors propagate.
    """
    found: dict[tuple[str, Pricing], set[Decimal]] = {}
    wanted = set(instance_types)
    for entry in _pages(client, region, sorted(wanted)):
        parsed = parse_rate(entry, region)
        if isinstance(parsed, str):
            problems.append(f"{parsed} in {region}")
        elif parsed is not None and parsed[0] in wanted:
            found.setdefault(parsed[:2], set()).add(parsed[2])
    out: SavingsRates = {}
    for (name, kind), rates in sorted(found.items()):
        if len(rates) == 1:
            out.setdefault(name, {})[kind] = next(iter(rates))
        else:
            problems.append(f"{name}: {len(rates)} different {kind.value} savings plan rates in {region}; none kept")
    return out
