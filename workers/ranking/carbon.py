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
from workers.ranking.candidates import Span
from workers.ranking.energy import Energy, GridFactor, grid_factor, option_energy
from workers.ranking.shapes import Shape
from workers.sizing.spec import JobSpec


def annotate_energy(shapes: Sequence[Shape], *, job: JobSpec, table: EnergyTable,
                    tdp_watts: Mapping[str, float]) -> None:
    """Work out the energy of every shape that can run the job, and the grid factor of each of its regions."""
    onprem = job.constraints.onprem
    cache: dict[tuple[str, str], GridFactor | None] = {}
    for s in shapes:
        if s.reject is not None or s.per_gpu is None or s.hours <= 0:
            continue
        m = s.m
        factors: dict[str, GridFactor] = {}
        if m.provider_name != "onprem" and m.grid_cache is not None and m.grid_cache[0] is table:
            factors = m.grid_cache[1]  # a cloud region's factor depends on no job: worked out once per machine
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
        s.grid_factors = factors  # shared with the machine: read only
        if not factors:
            continue
        any_factor = next(iter(factors.values()))
        e = option_energy(s.per_gpu, tdp_watts=tdp_watts.get(m.gpu, 0.0), gpu_count=m.gpu_count, hours=s.hours,
                          iteration_ms=s.iteration_ms, vcpus=m.vcpus, host_memory_bytes=m.host_memory_bytes,
                          provider=m.provider_name, factor=any_factor, table=table)
        s.it_kwh = e.energy_kwh / any_factor.pue
        s.gpu_watts, s.host_watts = e.gpu_watts, e.host_watts


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
        co2 = [offer_co2e_kg(s, o.region) for o in span.offers]
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
        kept.append(span)
    return kept
