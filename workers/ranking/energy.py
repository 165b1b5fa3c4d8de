"""Energy and carbon of one option: board power under this job's load, the host's share, PUE, grid intensity.

    GPU watts  = board power x (share by what bounds the iteration: compute, memory traffic, waiting)
    host watts = vCPUs x (idle + utilisation x (full - idle)) + host memory GB x watts per GB
    IT kWh     = (GPU watts x GPUs x training hours at load + idle GPU watts x GPUs x start-up hours
                  + host watts x all hours) / 1000
    kWh        = IT kWh x PUE (the data centre's cooling and power losses)
    kg CO2e    = kWh x grid g CO2e per kWh / 1000

The iteration's split comes from the sizing core's roofline (PerGpu.compute_ms, memory_ms): a layer
bound by arithmetic runs the card near its board power, one bound by memory traffic below it, and
the rest of the iteration (kernel dispatch, all-reduce not hidden, a CPU that cannot keep up) and
the run's start-up leave the card idling. Host power and memory coefficients, PUE and grid
intensities are catalog data with their sources (catalog/data/energy.json); on-prem options use the
team's own grid intensity when given, else their country's. Every figure is an estimate of
location-based emissions (no renewable-energy certificates), as Cloud Carbon Footprint's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from catalog.energy import Coefficient, EnergyTable
from workers.sizing.requirements import PerGpu
from workers.sizing.schedule import MS_PER_HOUR, startup_ms
from workers.sizing.spec import OnPremAssumptions

# Share of the board power (TDP/TGP) a GPU draws, by what bounds the work it is doing.
# [rule of thumb] compute-bound training kernels hold a card close to its power limit (MLPerf
# training submissions run A100/H100 boards at 85-100% of TDP); memory-bound kernels leave the SMs
# partly idle (about 0.6); a card waiting on the host or on the network draws about its idle power,
# which the Teads/TechPowerUp GPU figures Cloud Carbon Footprint uses put near 10-15% of the maximum.
POWER_SHARE_COMPUTE = 0.85
POWER_SHARE_MEMORY = 0.60
POWER_SHARE_IDLE = 0.15

# Owned machines are bought to the job (vcpus 0 in the catalog index): their host is counted as
# this many vCPUs per GPU [rule of thumb: the clouds' GPU shapes give 4-12 vCPUs per GPU, e.g.
# g4dn.xlarge 4 per T4, p3.2xlarge 8 per V100, p4d 12 per A100].
ONPREM_VCPUS_PER_GPU = 4

BYTES_PER_GB = 1e9


@dataclass(frozen=True)
class GridFactor:
    """Where an option's electricity comes from: PUE and grid intensity, each with its source."""

    pue: float
    pue_source: str
    grid_g_co2e_per_kwh: float
    grid_source: str
    data_year: int | None = None

    @property
    def kg_co2e_per_it_kwh(self) -> float:
        """Return kg CO2e per kWh drawn by the machine (PUE included)."""
        return self.pue * self.grid_g_co2e_per_kwh / 1000.0


@dataclass(frozen=True)
class Energy:
    """One option's energy and emissions, and what they were worked out from."""

    energy_kwh: float  # at the data centre's meter: IT kWh x PUE
    co2e_kg: float
    gpu_watts: float  # per GPU, averaged over training
    host_watts: float
    factor: GridFactor


def gpu_watts_under_load(pg: PerGpu, *, tdp_watts: float, iteration_ms: float) -> float:
    """Return one GPU's average draw over an iteration of `iteration_ms` (stretched by a slow CPU or not)."""
    if iteration_ms <= 0:
        return tdp_watts * POWER_SHARE_IDLE
    compute = min(pg.compute_ms, iteration_ms)
    memory = min(pg.memory_ms, iteration_ms - compute)
    waiting = iteration_ms - compute - memory
    joules_ms = tdp_watts * (POWER_SHARE_COMPUTE * compute + POWER_SHARE_MEMORY * memory
                             + POWER_SHARE_IDLE * waiting)
    return joules_ms / iteration_ms


def host_watts(*, vcpus: int, host_memory_bytes: int, provider: str, table: EnergyTable) -> float:
    """Return the host's draw: its vCPUs at the table's utilisation plus its memory (Cloud Carbon Footprint)."""
    power = table.host.get(provider) or table.host.get("aws")
    cpu = 0.0
    if power is not None:
        util = table.cpu_utilisation.value
        cpu = vcpus * (power.min_watts_per_vcpu + util * (power.max_watts_per_vcpu - power.min_watts_per_vcpu))
    return cpu + host_memory_bytes / BYTES_PER_GB * table.memory_watts_per_gb.value


def grid_factor(provider: str, region: str, *, table: EnergyTable, onprem: OnPremAssumptions) -> GridFactor | None:
    """Return the PUE and grid intensity of a provider's region, or None when the table lacks either."""
    if provider == "onprem":
        return _onprem_factor(table, onprem)
    pue = table.pue_for(provider, region)
    grid = table.grid_for(provider, region)
    if pue is None or grid is None:
        return None
    return GridFactor(pue=pue.value, pue_source=pue.source, grid_g_co2e_per_kwh=grid.value,
                      grid_source=grid.source, data_year=grid.data_year)


def _onprem_factor(table: EnergyTable, onprem: OnPremAssumptions) -> GridFactor | None:
    """Return the team's own grid and PUE where given, else their country's grid and the industry PUE."""
    pue_row = table.pue_for("onprem", None)
    if onprem.pue is not None:
        pue, pue_source = onprem.pue, "the team's own figure (constraints.onprem.pue)"
    elif pue_row is not None:
        pue, pue_source = pue_row.value, pue_row.source
    else:
        return None
    if onprem.grid_co2e_g_per_kwh is not None:
        return GridFactor(pue=pue, pue_source=pue_source, grid_g_co2e_per_kwh=onprem.grid_co2e_g_per_kwh,
                          grid_source="the team's own figure (constraints.onprem.grid_co2e_g_per_kwh)")
    country = onprem.country or table.default_country
    row: Coefficient | None = table.country_g_per_kwh.get(country)
    if row is None:
        return None
    return GridFactor(pue=pue, pue_source=pue_source, grid_g_co2e_per_kwh=row.value,
                      grid_source=f"{country}: {row.source}", data_year=row.data_year)


def it_energy_kwh(pg: PerGpu, *, tdp_watts: float, gpu_count: int, hours: float, iteration_ms: float,
                  host_watts_total: float) -> tuple[float, float]:
    """Return (IT kWh, average watts per GPU): GPUs at load while training, idle through start-up; host throughout."""
    if hours <= 0:
        return 0.0, 0.0
    startup_hours = min(startup_ms(gpu_count=gpu_count) / MS_PER_HOUR, hours)
    per_gpu = gpu_watts_under_load(pg, tdp_watts=tdp_watts, iteration_ms=iteration_ms)
    gpu_wh = gpu_count * (per_gpu * (hours - startup_hours) + tdp_watts * POWER_SHARE_IDLE * startup_hours)
    return (gpu_wh + host_watts_total * hours) / 1000.0, per_gpu


def option_energy(pg: PerGpu, *, tdp_watts: float, gpu_count: int, hours: float, iteration_ms: float,
                  vcpus: int, host_memory_bytes: int, provider: str, factor: GridFactor,
                  table: EnergyTable) -> Energy:
    """Return one option's kWh (PUE included) and kg CO2e."""
    if provider == "onprem" and vcpus == 0:
        vcpus = ONPREM_VCPUS_PER_GPU * gpu_count
    host = host_watts(vcpus=vcpus, host_memory_bytes=host_memory_bytes, provider=provider, table=table)
    it_kwh, per_gpu = it_energy_kwh(pg, tdp_watts=tdp_watts, gpu_count=gpu_count, hours=hours,
                                    iteration_ms=iteration_ms, host_watts_total=host)
    return Energy(energy_kwh=it_kwh * factor.pue, co2e_kg=it_kwh * factor.kg_co2e_per_it_kwh,
                  gpu_watts=per_gpu, host_watts=host, factor=factor)


def region_factors(provider: str, regions: set[str], *, table: EnergyTable,
                   onprem: OnPremAssumptions) -> Mapping[str, GridFactor]:
    """Return the grid factor of each region of a provider that the table knows."""
    found: dict[str, GridFactor] = {}
    for region in regions:
        factor = grid_factor(provider, region, table=table, onprem=onprem)
        if factor is not None:
            found[region] = factor
    return found
