"""The ranking's carbon step: each shape's energy, each offer's CO2e, the `carbon` objective and `max_co2e_kg`.

Energy depends on the machine and the job only (energy.py), so it is worked out once per shape; an
offer's CO2e is that energy times its region's kg CO2e per kWh (PUE included). An offer in a region
the energy table does not know has no CO2e estimate: it ranks last under the carbon objective and
cannot be shown to meet `max_co2e_kg`, so that limit rejects it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from catalog.energy import EnergyTable
from catalog.types import Offer
from workers.ranking.candidates import Span
from workers.ranking.energy import ONPREM_VCPUS_PER_GPU, Energy, GridFactor, grid_factor, host_watts, it_energy_kwh
from workers.ranking.shapes import Shape
from workers.sizing.spec import JobSpec


def annotate_energy(shapes: Sequence[Shape], *, job: JobSpec, table: EnergyTable,
                    tdp_watts: Mapping[str, float]) -> None:
    """Work out the energy of every shape that can run the job, and the grid factor of each of its regions."""
    onprem = job.constraints.onprem
    cache: dict[tuple[str, str], GridFactor | None] = {}
    hosts: dict[tuple[str, int, int], float] = {}
    for s in shapes:
        if s.reject is not None or s.per_gpu is None or s.hours <= 0:
            continue
        m = s.m
        factors: dict[str, GridFactor] = {}
        if m.provider_name != "onprem" and m.grid_cache is not None and m.grid_cache[0] is table:
            factors = m.grid_cache[1]  # a cloud region's factor depends on no job: worked out once per machine
            if len(m.co2_factors) != len(m.offers):
                m.co2_factors = _per_offer(m.offers, factors)
        else:
            for region in m.regions:
                key = (m.provider_name, region)
                if key not in cache:
                    cache[key] = grid_factor(m.provider_name, region, table=table, onprem=onprem)
                found = cache[key]
                if found is not None:
                    factors[region] = found
            if m.provider_name != "onprem":
                m.grid_cache = (table, factors)
            m.co2_factors = _per_offer(m.offers, factors)
        s.grid_factors = factors  # shared with the machine: read only
        if not factors:
            continue
        vcpus = m.vcpus if m.provider_name != "onprem" or m.vcpus else ONPREM_VCPUS_PER_GPU * m.gpu_count
        host_key = (m.provider_name, vcpus, m.host_memory_bytes)
        host = hosts.get(host_key)
        if host is None:  # the same for every machine of this shape of host: once per ranking
            host = hosts[host_key] = host_watts(vcpus=vcpus, host_memory_bytes=m.host_memory_bytes,
                                                provider=m.provider_name, table=table)
        # The IT energy alone: each region's PUE and grid factor multiply it (offer_co2e_kg, offer_energy).
        s.it_kwh, s.gpu_watts = it_energy_kwh(s.per_gpu, tdp_watts=tdp_watts.get(m.gpu, 0.0), gpu_count=m.gpu_count,
                                              hours=s.hours, iteration_ms=s.iteration_ms, host_watts_total=host)
        s.host_watts = host


def _per_offer(offers: Sequence[Offer], factors: Mapping[str, GridFactor]) -> tuple[float, ...]:
    """Return each offer's kg CO2e per IT kWh (inf where its region has no factor)."""
    found = {r: f.kg_co2e_per_it_kwh for r, f in factors.items()}
    return tuple(found.get(o.region, math.inf) for o in offers)


def span_co2e_kg(span: Span) -> list[float]:
    """Return the CO2e of each offer of a span, in one pass over the machine's per-offer factors."""
    s = span.shape
    it_kwh = s.it_kwh
    if it_kwh <= 0 or not s.grid_factors:
        return [math.inf] * len(span.offers)
    m = s.m
    if span.offers is m.offers and len(m.co2_factors) == len(m.offers):
        return [it_kwh * f for f in m.co2_factors]
    return [offer_co2e_kg(s, o.region) for o in span.offers]


def offer_co2e_kg(shape: Shape, region: str) -> float:
    """Return the CO2e of running the job on this shape in this region (inf when unknown)."""
    factor = shape.grid_factors.get(region)
    if factor is None or shape.it_kwh <= 0:
        return math.inf
    return shape.it_kwh * factor.kg_co2e_per_it_kwh


def offer_energy(shape: Shape, region: str) -> Energy | None:
    """Return the option's energy and emissions in this region, or None when the table lacks the region."""
    factor = shape.grid_factors.get(region)
    if factor is None or shape.it_kwh <= 0:
        return None
    return Energy(energy_kwh=shape.it_kwh * factor.pue, co2e_kg=shape.it_kwh * factor.kg_co2e_per_it_kwh,
                  gpu_watts=shape.gpu_watts, host_watts=shape.host_watts, factor=factor)


def apply_carbon(spans: list[Span], *, max_co2e_kg: float | None, by_carbon: bool) -> list[Span]:
    """Drop the offers over `max_co2e_kg` (noting the least emitting one per shape); key spans by CO2e."""
    kept: list[Span] = []
    for span in spans:
        s = span.shape
        co2 = span_co2e_kg(span)
        if max_co2e_kg is not None:
            over = [(c, o.region, o.pricing) for c, o in zip(co2, span.offers, strict=True) if c > max_co2e_kg]
            if over:
                least = min(over)
                if s.over_co2e is None or least < s.over_co2e:
                    s.over_co2e = least
                within = [i for i, c in enumerate(co2) if c <= max_co2e_kg]
                if not within:
                    s.best_cost = math.inf
                    continue
                span.costs = [span.costs[i] for i in within]
                span.offers = [span.offers[i] for i in within]
                co2 = [co2[i] for i in within]
                span.rekey()  # the cheapest offer, and the objective's key, of the offers kept
        if by_carbon:
            span.min_key = min(co2)
            span.co2 = co2
        kept.append(span)
    return kept
