"""The part of a catalog a job's constraints let it use: providers, regions, pricing kinds, GPU counts.

Two kinds of constraint act differently (what a procurement list expects):
- scope constraints (`providers`, `regions`, `pricing`, `max_gpus`) say what the user is willing to
  buy at all; offers outside them are left out silently, neither ranked nor listed as rejected;
- limit constraints (`budget_usd`, `deadline_hours`) are judged per option; an option over the
  budget or past the deadline is rejected with the figure that fails (see ranking.py).
Regions select cloud offers only: an owned machine has no region and is selected by `providers`
(`onprem`) and `pricing` (`owned`).
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from dataclasses import dataclass

from catalog.gpu_names import gpu_name_matches, model_word
from catalog.types import Catalog, OnPremCard, Pricing, Provider
from workers.ranking.catalog_index import CatalogIndex, catalog_index
from workers.ranking.costing import ONPREM_REGION, onprem_gpu_counts, owned_gpu_counts
from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.estimate import unknown_gpu_error
from workers.sizing.spec import Constraints, Dataset, JobSpec


@dataclass(frozen=True)
class Scope:
    """The validated scope constraints, as sets the ranking loop tests offers against."""

    providers: frozenset[Provider]
    regions: frozenset[str]  # empty: every region; else includes ONPREM_REGION for owned machines
    pricing: tuple[Pricing, ...]
    max_gpus: int
    gpus: frozenset[str] = frozenset()  # empty: every GPU; else the slugs constraints.gpus names

    def allows(self, gpu: str) -> bool:
        """Whether a machine with this GPU is in scope."""
        return not self.gpus or gpu in self.gpus


def _unknown(field: str, kind: str, bad: str, valid: list[str]) -> UnknownNameError:
    suggestions = tuple(difflib.get_close_matches(bad, valid, n=3))
    return UnknownNameError(field, f"unknown {kind} {bad!r}; valid: {', '.join(valid)}", suggestions)


def resolve_scope(constraints: Constraints, catalog: Catalog) -> Scope:
    """Return the scope the constraints allow; raise SpecError naming the field for an unknown name."""
    valid_providers = [p.value for p in Provider]
    providers: set[Provider] = set()
    for name in constraints.providers:
        if name not in valid_providers:
            raise _unknown("constraints.providers", "provider", name, valid_providers)
        providers.add(Provider(name))
    valid_pricing = [p.value for p in Pricing]
    pricing: list[Pricing] = []
    for name in constraints.pricing:
        if name not in valid_pricing:
            raise _unknown("constraints.pricing", "pricing kind", name, valid_pricing)
        if Pricing(name) not in pricing:
            pricing.append(Pricing(name))
    regions: set[str] = set()
    if constraints.regions:
        valid_regions = list(catalog_index(catalog).regions)
        for name in constraints.regions:
            # "eu-*": every region the name's prefix starts (a continent, as Slack's "in europe" says it)
            matched = [r for r in valid_regions if (r.startswith(name[:-1]) if name.endswith("*") else r == name)]
            if not matched:
                raise _unknown("constraints.regions", "region", name, valid_regions)
            regions.update(matched)
        regions.add(ONPREM_REGION)
    if constraints.max_gpus < 1:
        raise SpecError("constraints.max_gpus", f"must be at least 1, got {constraints.max_gpus}")
    check_owned_gpus(constraints, catalog)
    return Scope(frozenset(providers), frozenset(regions), tuple(pricing), constraints.max_gpus,
                 allowed_gpus(constraints, catalog))


def allowed_gpus(constraints: Constraints, catalog: Catalog) -> frozenset[str]:
    """Return the slugs constraints.gpus names (a family is each member); raise naming an unknown entry."""
    known = {g.slug: g for g in catalog.gpus}
    allowed: set[str] = set()
    for i, name in enumerate(constraints.gpus):
        matches = gpu_name_matches(name, known)
        if not matches:
            raise unknown_gpu_error(name, known, field=f"constraints.gpus[{i}]")
        allowed.update(matches)
    return frozenset(allowed)


_PAIRS: OrderedDict[tuple[int, Constraints], tuple[Catalog, tuple[tuple[str, int], ...]]] = OrderedDict()


def gpu_counts_in_scope(constraints: Constraints, catalog: Catalog) -> tuple[tuple[str, int], ...]:
    """Return the (GPU model, count) pairs of the machines in scope, sorted; estimate each once.

    Remembered per (catalog, constraints) for the last 64: a ranking asks twice, and a queue's jobs
    mostly share their constraints; a constraint the catalog refuses raises every time.
    """
    key = (id(catalog), constraints)
    found = _PAIRS.get(key)
    if found is not None and found[0] is catalog:
        return found[1]
    pairs = _gpu_counts_in_scope(constraints, catalog)
    _PAIRS[key] = (catalog, pairs)
    if len(_PAIRS) > 64:
        _PAIRS.popitem(last=False)
    return pairs


def cards_on_sale(index: CatalogIndex, scope: Scope) -> dict[str, OnPremCard]:
    """Return the cards the purchase question prices: those on sale (on_sale.py) whose GPU the scope allows."""
    return {gpu: card for gpu, card in index.cards_for_purchase(scope.gpus).items() if scope.allows(gpu)}


def _gpu_counts_in_scope(constraints: Constraints, catalog: Catalog) -> tuple[tuple[str, int], ...]:
    scope = resolve_scope(constraints, catalog)
    index = catalog_index(catalog)
    pairs: set[tuple[str, int]] = set()
    for m in index.machines:
        if (m.provider in scope.providers and 0 < m.gpu_count <= scope.max_gpus and scope.allows(m.gpu)
                and any(o.pricing in scope.pricing and (not scope.regions or o.region in scope.regions)
                        for o in m.offers)):
            pairs.add((m.gpu, m.gpu_count))
    if Provider.ONPREM in scope.providers:  # the purchase question: every card on sale
        for gpu in cards_on_sale(index, scope):
            pairs.update((gpu, n) for n in onprem_gpu_counts(scope.max_gpus))
    if Pricing.OWNED in scope.pricing:
        for owned in constraints.owned_gpus:
            if scope.allows(owned.gpu):
                pairs.update((owned.gpu, n) for n in owned_gpu_counts(owned.count, max_gpus=scope.max_gpus))
    return tuple(sorted(pairs))


def check_data_location(dataset: Dataset, catalog: Catalog) -> None:
    """Raise SpecError naming dataset.location.region where the data set's cloud has no such region."""
    if dataset.location is None or dataset.location[0] not in ("aws", "gcp"):
        return
    provider, region = Provider(dataset.location[0]), dataset.location[1]
    valid = list(catalog_index(catalog).regions_by_provider.get(provider, ()))
    if region not in valid:
        raise _unknown("dataset.location.region", f"{provider.value} region", region, valid)


def check_owned_gpus(constraints: Constraints, catalog: Catalog) -> None:
    """Raise SpecError naming the entry of `owned_gpus` whose GPU the catalog does not know."""
    known = sorted(catalog_index(catalog).gpu_memory)
    for i, owned in enumerate(constraints.owned_gpus):
        if owned.gpu not in known:
            raise _unknown(f"constraints.owned_gpus[{i}].gpu", "GPU", owned.gpu, known)


def unrented_gpus(job: JobSpec, catalog: Catalog) -> tuple[str, ...]:
    """Return the GPUs constraints.gpus names that the team does not own, where no cloud in the catalog rents any
    of them (a family some cloud rents, "h100", is no card to own: its rented members were ranked)."""
    rented = {instance.gpu for instance in catalog.instances}
    named = allowed_gpus(job.constraints, catalog)
    if named & rented:
        return ()
    return tuple(sorted(named - {o.gpu for o in job.constraints.owned_gpus}))


def unranked_gpus(job: JobSpec, catalog: Catalog) -> tuple[str, ...]:
    """Return the GPUs constraints.gpus names that the team does not own and no cloud in the catalog rents in any
    variant ("a100" names the A100 PCIe cards too, which no cloud rents: the SXM ones were ranked)."""
    if not job.constraints.gpus:
        return ()
    rented = {instance.gpu for instance in catalog.instances} | {o.gpu for o in job.constraints.owned_gpus}
    models = {model_word(slug) for slug in rented}
    return tuple(sorted(s for s in allowed_gpus(job.constraints, catalog) if model_word(s) not in models))
