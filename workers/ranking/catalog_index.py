"""A catalog arranged for ranking: machines in a fixed order, each with its offers; built once per catalog."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping
from typing import Any

from catalog.commitments import TERM_HOURS
from catalog.cpu_scores import is_arm, threads_per_core
from catalog.providers import instance_family
from catalog.types import Catalog, InstanceType, Offer, OnPremCard, Pricing, Provider
from workers.ranking.costing import block_storage_price_table, cheapest_cards
from workers.ranking.machine_table import MachineTable
from workers.ranking.on_sale import current_generation_cards
from workers.ranking.runcost import boot_seconds
from workers.ranking.spot import InterruptionRate, interruption_rate
from workers.ranking.transfer import Transfer

PROVIDER_NAMES = {p: p.value for p in Provider}  # Enum.value is a slow descriptor; this is a dict look-up

BlockTable = Mapping[Provider, tuple[dict[str, float], float | None]]


class Machine:
    """One instance type of the catalog under one pricing kind, with its offers: what no job changes.

    An instance type's on-demand and spot offers are two machines: a run on spot takes longer (its
    restarts) and is checked on a percentile, so the two are judged apart. Its spot offers are one
    machine per interruption band (spot.interruption_rate: the regions differ), each with its `rate`.
    """

    __slots__ = ("arm_host", "block_rates", "block_rates_complete", "card_memory_bytes", "co2_factors", "cpu_score",
                 "family", "gpu", "gpu_count", "grid_cache", "host_memory_bytes", "instance_type", "listing_key",
                 "network_gbit_per_s", "offers", "plan_group", "prices", "pricing", "provider", "provider_name", "rate",
                 "regions", "rejected_group", "storage_bytes", "term_hours", "threads_per_core", "transfer", "vcpus")

    def __init__(self, *, provider: Provider, instance_type: str, gpu: str, gpu_count: int, vcpus: int,
                 host_memory_bytes: int, storage_bytes: int, cpu_score: float, card_memory_bytes: int,
                 offers: tuple[Offer, ...], pricing: Pricing = Pricing.ON_DEMAND,
                 network_gbit_per_s: float = 0.0, rate: InterruptionRate | None = None,
                 threads_per_core: int = 1, arm_host: str = "") -> None:
        self.provider = provider
        self.provider_name = PROVIDER_NAMES[provider]
        self.instance_type = instance_type
        self.family = instance_family(instance_type, gpu=gpu, provider=provider)
        # How the ranking lists a machine it rejects: grouped by (provider, family, GPU), smallest first.
        self.rejected_group = (self.provider_name, self.family, gpu)
        self.listing_key = (gpu_count, vcpus, host_memory_bytes, instance_type)
        self.gpu = gpu
        self.gpu_count = gpu_count
        self.vcpus = vcpus
        self.threads_per_core = threads_per_core  # vCPUs per physical core (cpu_scores.threads_per_core)
        self.arm_host = arm_host  # the Arm host CPU's name; "" on x86 and on the team's own machines
        self.host_memory_bytes = host_memory_bytes
        self.storage_bytes = storage_bytes
        self.cpu_score = cpu_score
        self.card_memory_bytes = card_memory_bytes
        self.offers = offers
        self.pricing = pricing
        self.term_hours = TERM_HOURS.get(pricing)  # a commitment's term (paid whether used or not); None else
        self.network_gbit_per_s = network_gbit_per_s  # between machines (instance specifications)
        self.rate = rate  # spot: the interruption figure of every offer of this machine
        # Machines alike in what a run's plan reads of them (runplan.machine_parts) share a number.
        self.plan_group = plan_group(provider, self.family, pricing, network_gbit_per_s, rate, gpu_count=gpu_count)
        self.prices = tuple(o.price_per_hour_usd for o in offers)
        self.regions = tuple(dict.fromkeys(o.region for o in offers))  # each once, in offer order
        # (energy table, region -> grid factor) of a cloud machine: no job changes it (carbon.py)
        self.grid_cache: tuple[object, dict[str, Any]] | None = None
        # Per offer, kg CO2e per IT kWh of its region (inf where unknown), for the same energy table.
        self.co2_factors: tuple[float, ...] = ()
        # Per offer, the USD per GB-month of block storage in its region (set by the index).
        self.block_rates: tuple[float, ...] = ()
        self.block_rates_complete = False
        # Moving the job's data set into the offers' regions (transfer.py): set on a job's copy only.
        self.transfer: Transfer | None = None

    def price_origin(self, region: str) -> dict[str, Any]:
        """Return an option's price_source and price_as_of: the source and date of this machine's offer in `region`."""
        offer = next((o for o in self.offers if o.region == region), None)
        return {"price_source": offer.source, "price_as_of": offer.as_of} if offer is not None else {}

    def subset(self, keep: list[int], transfer: Transfer) -> Machine:
        """Return this machine with only the offers at `keep`, for one job, its data set moved by `transfer`."""
        m = Machine(provider=self.provider, instance_type=self.instance_type, gpu=self.gpu, gpu_count=self.gpu_count,
                    vcpus=self.vcpus, host_memory_bytes=self.host_memory_bytes, storage_bytes=self.storage_bytes,
                    cpu_score=self.cpu_score, card_memory_bytes=self.card_memory_bytes,
                    offers=tuple(self.offers[i] for i in keep), pricing=self.pricing,
                    network_gbit_per_s=self.network_gbit_per_s, rate=self.rate,
                    threads_per_core=self.threads_per_core, arm_host=self.arm_host)
        m.family, m.rejected_group = self.family, self.rejected_group
        m.block_rates = tuple(self.block_rates[i] for i in keep) if self.block_rates else ()
        m.block_rates_complete = self.block_rates_complete
        m.transfer = transfer
        m.grid_cache = self.grid_cache  # a region's factor depends on no job
        if self.co2_factors:
            m.co2_factors = tuple(self.co2_factors[i] for i in keep)
        return m


_PLAN_GROUPS: dict[tuple[Provider, float, float, InterruptionRate | None], int] = {}
_PLAN_GROUP_NUMBERS = itertools.count()


def plan_group(provider: Provider, family: str, pricing: Pricing, network_gbit_per_s: float,
               rate: InterruptionRate | None, *, gpu_count: int) -> int:
    """Return the number of the machines whose run plans are alike: equal numbers, equal plans, in any catalog.

    What runplan.machine_parts reads of a machine: its provider, its boot time (family and GPU count), its
    network, and its interruption rate on spot (the rate is unused off spot).
    """
    key = (provider, boot_seconds(family, gpu_count), network_gbit_per_s,
           rate if pricing is Pricing.SPOT else None)
    found = _PLAN_GROUPS.get(key)
    if found is None:
        found = _PLAN_GROUPS.setdefault(key, next(_PLAN_GROUP_NUMBERS))
    return found


class CatalogIndex:
    """The catalog's machines sorted by provider and instance type, with what ranking looks up."""

    def __init__(self, catalog: Catalog) -> None:
        self.gpu_memory = {g.slug: g.memory_bytes for g in catalog.gpus}
        self.gpu_power = {g.slug: (g.tdp_watts, g.source, g.source_date) for g in catalog.gpus}
        self.block_table: BlockTable = block_storage_price_table(catalog.block_storage)
        self.cards: Mapping[str, OnPremCard] = cheapest_cards(catalog.onprem_cards)
        self.current_cards = current_generation_cards(self.cards, {g.slug: g.architecture for g in catalog.gpus})
        by_name: dict[str, list[Offer]] = {}
        for o in catalog.offers:
            group = by_name.get(o.instance_type)
            if group is None:
                by_name[o.instance_type] = [o]
            else:
                group.append(o)
        self.regions = tuple(sorted({o.region for o in catalog.offers}))
        self.regions_by_provider = {p: tuple(sorted({o.region for o in catalog.offers if o.provider is p}))
                                    for p in Provider}
        insts: dict[tuple[str, str], InstanceType] = {}
        for inst in catalog.instances:
            insts[(PROVIDER_NAMES[inst.provider], inst.instance_type)] = inst
        machines: list[Machine] = []
        for _, inst in sorted(insts.items()):
            offers = [o for o in by_name.get(inst.instance_type, ()) if o.provider is inst.provider]
            for pricing in sorted({o.pricing for o in offers}) or [Pricing.ON_DEMAND]:
                for rate, kept in _by_rate(inst, [o for o in offers if o.pricing is pricing], pricing):
                    machines.append(Machine(
                        provider=inst.provider, instance_type=inst.instance_type, gpu=inst.gpu,
                        gpu_count=inst.gpu_count, vcpus=inst.vcpus, host_memory_bytes=inst.host_memory_bytes,
                        storage_bytes=inst.local_storage_bytes, cpu_score=inst.cpu_single_thread_score,
                        card_memory_bytes=self.gpu_memory.get(inst.gpu, 0), pricing=pricing,
                        network_gbit_per_s=inst.network_gbit_per_s, offers=kept, rate=rate,
                        threads_per_core=threads_per_core(inst.cpu_model),
                        arm_host=inst.cpu_model if is_arm(inst.cpu_model) else ""))
        self.machines = tuple(machines)
        self.sells_owned = any(m.pricing is Pricing.OWNED for m in machines)  # the team's own boxes come from the job
        for m in self.machines:
            regions, fallback = self.block_table.get(m.provider, ({}, None))
            rates = [regions.get(o.region, fallback) for o in m.offers]
            m.block_rates = tuple(r or 0.0 for r in rates)
            m.block_rates_complete = None not in rates
        self._scoped: dict[tuple[frozenset[Provider], int, tuple[Pricing, ...], frozenset[str]], MachineTable] = {}

    def cards_for_purchase(self, named: frozenset[str]) -> dict[str, OnPremCard]:
        """Return the cards the purchase question prices: the newest generations' (on_sale.py) and those named."""
        return {gpu: card for gpu, card in self.cards.items() if gpu in self.current_cards or gpu in named}

    def scoped(self, *, providers: frozenset[Provider], max_gpus: int, pricing: tuple[Pricing, ...],
               gpus: frozenset[str] = frozenset()) -> MachineTable:
        """Return the table of the machines a scope keeps (its providers, 1 to max_gpus GPUs, its pricing kinds,
        its GPUs where it names them), built on first use."""
        key = (providers, max_gpus, pricing, gpus)
        table = self._scoped.get(key)
        if table is None:
            if len(self._scoped) >= _SCOPES_KEPT:
                self._scoped.clear()
            table = self._scoped[key] = MachineTable([
                m for m in self.machines if m.provider in providers and 0 < m.gpu_count <= max_gpus
                and m.pricing in pricing and (not gpus or m.gpu in gpus)])
        return table


def _by_rate(inst: InstanceType, offers: list[Offer], pricing: Pricing,
             ) -> list[tuple[InterruptionRate | None, tuple[Offer, ...]]]:
    """Return the offers as one group, or on spot one group per interruption figure, most reliable first."""
    if pricing is not Pricing.SPOT:
        return [(None, tuple(offers))]
    groups: dict[InterruptionRate | None, list[Offer]] = {}
    for o in offers:
        groups.setdefault(interruption_rate(inst.provider, inst.instance_type, o.region), []).append(o)
    return sorted(((r, tuple(g)) for r, g in groups.items()),
                  key=lambda rg: (rg[0].share_per_day, rg[0].basis) if rg[0] is not None else (0.0, ""))


_SCOPES_KEPT = 64  # scopes differ by providers, GPU limit and pricing kinds: a worker sees a few


_INDEXES: dict[int, tuple[Catalog, CatalogIndex]] = {}
_INDEXES_KEPT = 4  # a worker holds one catalog, and briefly the next while it reloads
_LOCK = threading.Lock()


def catalog_index(catalog: Catalog) -> CatalogIndex:
    """Return the catalog's index, building it on first use; a catalog is immutable, so it is kept."""
    cached = _INDEXES.get(id(catalog))
    if cached is not None and cached[0] is catalog:
        return cached[1]
    index = CatalogIndex(catalog)
    with _LOCK:
        while len(_INDEXES) >= _INDEXES_KEPT:
            del _INDEXES[next(iter(_INDEXES))]
        _INDEXES[id(catalog)] = (catalog, index)
    return index
