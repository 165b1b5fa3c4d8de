"""AWS Reserved Instance rates read from the Price List API's `terms.Reserved` (1 and 3 years, no upfront).

GetProducts answers one product per SKU; the SKU the on-demand filters select (Linux, shared tenancy, no
pre-installed software, capacitystatus Used) carries its reserved terms beside its on-demand one. Each
term has `termAttributes` {LeaseContractLength "1yr"/"3yr", PurchaseOption "No Upfront"/"Partial
Upfront"/"All Upfront", OfferingClass "standard"/"convertible"}, an `effectiveDate` and `priceDimensions`;
a No Upfront term has exactly one dimension, unit "Hrs", its hourly rate in `pricePerUnit.USD` (the
upfront options add a "Quantity" dimension, the upfront fee). We keep standard, no-upfront terms only: the
hourly rate is what is paid for every hour of the term, used or not (as for GCP's committed use).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any

from catalog.types import Pricing

RESERVED_SOURCE = ("AWS Price List API GetProducts terms.Reserved (Linux, shared tenancy, standard, "
                   "no upfront; the Hrs rate)")
LEASES = {"1yr": Pricing.COMMITTED_1Y, "3yr": Pricing.COMMITTED_3Y}


def _hourly(term: dict[str, Any]) -> Decimal | None:
    dims = list((term.get("priceDimensions") or {}).values())
    if len(dims) != 1 or dims[0].get("unit") != "Hrs":
        return None
    try:
        price = Decimal(str(dims[0]["pricePerUnit"]["USD"]))
    except (KeyError, TypeError, InvalidOperation):
        return None
    return price if price.is_finite() and price > 0 else None


def _effective(term: dict[str, Any]) -> str | None:
    text = str(term.get("effectiveDate") or "")[:10]
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def parse_reserved(item: dict[str, Any]) -> tuple[dict[Pricing, tuple[Decimal, str | None]], list[str]]:
    """Return {committed kind: (hourly USD, effective date or None)} of one price item, and what was skipped.

    A term that matches (standard, No Upfront, 1yr or 3yr) but is not one positive Hrs rate is skipped
    and named; two matching terms for one lease length are ambiguous and both are dropped.
    """
    attrs = item.get("product", {}).get("attributes", {})
    name = str(attrs.get("instanceType", "?"))
    found: dict[Pricing, list[tuple[Decimal, str | None]]] = {}
    problems: list[str] = []
    for code, term in ((item.get("terms") or {}).get("Reserved") or {}).items():
        t = term.get("termAttributes") or {}
        pricing = LEASES.get(str(t.get("LeaseContractLength")))
        if pricing is None or t.get("PurchaseOption") != "No Upfront" or t.get("OfferingClass") != "standard":
            continue
        price = _hourly(term)
        if price is None:
            problems.append(f"{name}: reserved term {code} ({pricing.value}) is not one positive Hrs rate; skipped")
            continue
        found.setdefault(pricing, []).append((price, _effective(term)))
    out: dict[Pricing, tuple[Decimal, str | None]] = {}
    for pricing, rates in found.items():
        if len(rates) == 1:
            out[pricing] = rates[0]
        else:
            problems.append(f"{name}: {len(rates)} standard no-upfront {pricing.value} terms; none kept")
    return out, problems
