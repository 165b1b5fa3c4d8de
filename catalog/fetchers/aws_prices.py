"""The AWS Price List API's GetProducts: the filters for one region's GPU instances and one item's on-demand price."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any


def price_filters(region: str) -> list[dict[str, str]]:
    """Return the GetProducts filters for Linux, shared-tenancy, on-demand GPU instances in one region."""
    terms = {
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "preInstalledSw": "NA",
        "capacitystatus": "Used",
        "licenseModel": "No License required",
        "marketoption": "OnDemand",
        "instanceFamily": "GPU instance",
        "regionCode": region,
    }
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in terms.items()]


def parse_price_item(item: dict[str, Any]) -> tuple[str, Decimal | None, str]:
    """Return (instance type, on-demand $/h or None when not exactly one priced term, physical processor)."""
    attrs = item.get("product", {}).get("attributes", {})
    terms = list((item.get("terms", {}).get("OnDemand") or {}).values())
    price: Decimal | None = None
    if len(terms) == 1:
        dims = list((terms[0].get("priceDimensions") or {}).values())
        if len(dims) == 1 and dims[0].get("unit") == "Hrs":
            try:
                price = Decimal(str(dims[0]["pricePerUnit"]["USD"]))
            except (KeyError, InvalidOperation):
                price = None
    return str(attrs.get("instanceType", "")), price, str(attrs.get("physicalProcessor", ""))
