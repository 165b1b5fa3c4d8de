"""Where no option is ranked because the catalog in use sells nothing the constraints name: say which pricing kinds it
does sell there, rather than "No option" alone ("resnet50 with a 3 year savings plan on aws": the bundled catalog
carries no AWS savings-plan or reserved prices; `gpugauge catalog refresh --provider aws` reads them)."""

from __future__ import annotations

from catalog.types import Catalog, Pricing, Provider
from workers.ranking.catalog_index import catalog_index
from workers.ranking.recommendation import Recommendation
from workers.ranking.scope import resolve_scope
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec

# Kinds a refresh of the provider reads where the bundled snapshot has none (docs/contract-additions.md).
_READ_BY_REFRESH = {Pricing.COMMITTED_1Y, Pricing.COMMITTED_3Y, Pricing.SAVINGS_PLAN_1Y, Pricing.SAVINGS_PLAN_3Y}


def no_offers_warning(job: JobSpec, rec: Recommendation, catalog: Catalog) -> CodedWarning | None:
    """Return `no-offers-in-scope` where no option is ranked and the machines of the providers, regions and GPUs in
    scope have offers, but none of the pricing kinds named, naming the kinds they have; None otherwise."""
    if rec.options or rec.purchase:
        return None
    scope = resolve_scope(job.constraints, catalog)
    rented = [p for p in scope.pricing if p is not Pricing.OWNED]
    clouds = sorted(p.value for p in scope.providers if p is not Provider.ONPREM)
    if not rented or not clouds:
        return None
    sold: set[Pricing] = set()
    for m in catalog_index(catalog).machines:
        if m.provider in scope.providers and m.provider is not Provider.ONPREM and scope.allows(m.gpu):
            sold.update(o.pricing for o in m.offers if not scope.regions or o.region in scope.regions)
    if not sold or sold & set(rented):  # nothing rented there at all (a card no cloud rents): other warnings say so
        return None
    said = job.constraints.regions  # as said ("eu-*"), not every region it matched
    where = f"{' or '.join(clouds)}{' in ' + ', '.join(said) if said else ''}"
    has = ", ".join(p.value for p in sorted(sold, key=lambda p: p.value))
    refresh = (f"; `gpugauge catalog refresh --provider {clouds[0]}` reads the provider's own terms"
               if set(rented) & _READ_BY_REFRESH else "")
    return CodedWarning("no-offers-in-scope", (
        f"The catalog in use has no {', '.join(p.value for p in rented)} offers on {where}, so no machine could be "
        f"ranked; it has {has} there. Name one of those in constraints.pricing{refresh}."))
