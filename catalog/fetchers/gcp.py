"""Google Cloud fetcher: GPU machine shapes (Compute Engine) priced from Cloud Billing Catalog SKUs.

Google bills an accelerator machine as vCPUs x the family's core SKU + GiB x its RAM SKU + GPUs x the GPU SKU
(on-demand and spot alike); this module composes each price that way. GPU memory is not in the API
(ecosystem notes §0.12): it comes from our GPU table through the accelerator-id -> slug map below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from catalog.cpu_scores import score_for
from catalog.fetchers.result import CredentialsError, FetchError, FetchResult, Progress, no_progress, one_line
from catalog.types import InstanceType, Offer, Pricing, Provider

COMPUTE_SERVICE = "services/6F81-5844-456A"  # Compute Engine's id in the Cloud Billing Catalog
SOURCE = "Google Compute Engine API: machineTypes / acceleratorTypes aggregatedList"
PRICE_SOURCE = "Google Cloud Billing Catalog API (Compute Engine SKUs): vCPU + RAM + GPU list prices"
CREDENTIALS_HELP = (
    "no Google Cloud credentials found: run `gcloud auth application-default login` "
    "or set GOOGLE_APPLICATION_CREDENTIALS, and pass a project"
)

# accelerator type id -> (our slug, regex of its billing SKU description, less any "Spot Preemptible")
ACCELERATORS: dict[str, tuple[str, str]] = {
    "nvidia-tesla-k80": ("k80", r"Nvidia Tesla K80 GPU"),
    "nvidia-tesla-p4": ("p4", r"Nvidia Tesla P4 GPU"),
    "nvidia-tesla-p100": ("p100-16gb", r"Nvidia Tesla P100 GPU"),
    "nvidia-tesla-v100": ("v100-16gb", r"Nvidia Tesla V100 GPU"),
    "nvidia-tesla-t4": ("t4", r"Nvidia Tesla T4 GPU"),
    "nvidia-l4": ("l4", r"Nvidia L4 GPU"),
    "nvidia-tesla-a100": ("a100-40gb", r"Nvidia Tesla A100 GPU"),
    "nvidia-a100-80gb": ("a100-80gb", r"Nvidia A100 80GB GPU"),
    "nvidia-h100-80gb": ("h100-sxm", r"Nvidia H100 80GB GPU"),
    "nvidia-h100-mega-80gb": ("h100-sxm", r"Nvidia H100 80GB Mega GPU"),
    "nvidia-h200-141gb": ("h200", r"Nvidia H200 141GB GPU"),
    "nvidia-b200": ("b200", r"Nvidia B200 GPU"),
}
# machine family -> (SKU description stem of its core/RAM SKUs, host CPU model)
FAMILIES: dict[str, tuple[str, str]] = {
    "n1": ("N1 Predefined Instance", "Intel Xeon (Skylake) @ 2.0 GHz"),
    "a2": ("A2 Instance", "Intel Xeon (Cascade Lake) @ 2.2 GHz"),
    "a3": ("A3 Instance", "Intel Xeon Platinum 8481C (Sapphire Rapids)"),
    "g2": ("G2 Instance", "Intel Xeon (Cascade Lake) @ 2.2 GHz"),
    "a4": ("A4 Instance", "Intel Xeon Platinum 8581C (Emerald Rapids)"),
}
N1_HOSTS = {1: "n1-standard-8", 2: "n1-standard-16", 4: "n1-standard-32", 8: "n1-standard-64"}
ATTACHABLE = (
    "nvidia-tesla-k80",
    "nvidia-tesla-p4",
    "nvidia-tesla-p100",
    "nvidia-tesla-v100",
    "nvidia-tesla-t4",
)
LOCAL_SSD_PARTITION_GB = 375  # a bundled local SSD partition on GCP (Local SSD docs)
_SPOT = re.compile(r"^(Spot Preemptible|Preemptible)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Shape:
    """A machine type seen in a zone, with the GPUs it carries (bundled, or attached for N1)."""

    name: str
    region: str
    vcpus: int
    memory_mib: int
    accelerator: str
    gpu_count: int
    local_ssd_gb: int = 0


def money(unit_price: Any) -> Decimal:
    """Return a google.type.Money as an exact Decimal: units + nanos / 1e9."""
    return Decimal(int(unit_price.units)) + Decimal(int(unit_price.nanos)) / Decimal(10**9)


def sku_price(sku: Any) -> Decimal | None:
    """Return a SKU's list price per usage unit: the latest pricing, the tier that starts at zero."""
    if not sku.pricing_info:
        return None
    rates = sku.pricing_info[-1].pricing_expression.tiered_rates
    base = [r for r in rates if float(r.start_usage_amount) == 0.0]
    return money(base[-1].unit_price) if base else None


def price_table(skus: Iterable[Any], regions: Sequence[str]) -> dict[tuple[str, str, str], Decimal]:
    """Index Compute SKUs as (description less spot prefix, kind, region) -> price, filtered client-side."""
    table: dict[tuple[str, str, str], Decimal] = {}
    for sku in skus:
        category = sku.category
        if category.resource_family != "Compute" or category.usage_type not in ("OnDemand", "Preemptible"):
            continue
        price = sku_price(sku)
        if price is None:
            continue
        description = _SPOT.sub("", sku.description)
        kind = "spot" if category.usage_type == "Preemptible" else "on_demand"
        for region in sku.service_regions:
            if region in regions:
                table[(description, kind, region)] = price
    return table


def _lookup(
    table: dict[tuple[str, str, str], Decimal], pattern: str, kind: str, region: str
) -> Decimal | None:
    for (description, k, r), price in table.items():
        if k == kind and r == region and re.match(pattern, description):
            return price
    return None


def compose_price(table: dict[tuple[str, str, str], Decimal], shape: Shape, kind: str) -> Decimal | None:
    """Return vCPUs x core SKU + GiB x RAM SKU + GPUs x GPU SKU, or None when a part is missing."""
    stem = FAMILIES[shape.name.split("-")[0]][0]
    core = _lookup(table, rf"{stem} Core running in", kind, shape.region)
    ram = _lookup(table, rf"{stem} Ram running in", kind, shape.region)
    gpu = _lookup(table, ACCELERATORS[shape.accelerator][1] + r" running in", kind, shape.region)
    if core is None or ram is None or gpu is None:
        return None
    return core * shape.vcpus + ram * Decimal(shape.memory_mib) / 1024 + gpu * shape.gpu_count


def _region(zone: str) -> str:
    return zone.rsplit("/", 1)[-1].rsplit("-", 1)[0]


def _shapes(
    machine_pages: Iterable[tuple[str, Any]],
    accel_pages: Iterable[tuple[str, Any]],
    regions: Sequence[str],
    problems: list[str],
) -> dict[tuple[str, str], Shape]:
    """Collect GPU shapes per region from aggregated machine-type and accelerator-type listings."""
    hosts: dict[tuple[str, str], Any] = {}
    shapes: dict[tuple[str, str], Shape] = {}
    for scope, scoped in machine_pages:
        region = _region(scope)
        if region not in regions:
            continue  # includes scopes that carry only a warning (NO_RESULTS_ON_PAGE)
        for mt in scoped.machine_types:
            family = mt.name.split("-")[0]
            if mt.name in N1_HOSTS.values():
                hosts[(mt.name, region)] = mt
            for acc in mt.accelerators:
                if acc.guest_accelerator_type not in ACCELERATORS:
                    problems.append(f"{mt.name}: unknown GPU {acc.guest_accelerator_type!r} skipped")
                    continue
                if family not in FAMILIES:
                    problems.append(f"{mt.name}: machine family {family!r} has no billing SKU map; skipped")
                    continue
                ssd = int(mt.bundled_local_ssds.partition_count or 0) * LOCAL_SSD_PARTITION_GB
                shapes[(mt.name, region)] = Shape(
                    mt.name,
                    region,
                    mt.guest_cpus,
                    mt.memory_mb,
                    acc.guest_accelerator_type,
                    acc.guest_accelerator_count,
                    ssd,
                )
    for scope, scoped in accel_pages:
        region = _region(scope)
        if region not in regions:
            continue
        for at in scoped.accelerator_types:
            if at.name not in ATTACHABLE:
                if at.name not in ACCELERATORS and not at.name.endswith("-vws"):
                    problems.append(f"accelerator {at.name!r} in {region} is not in our GPU map; skipped")
                continue
            for count, host in N1_HOSTS.items():
                mt = hosts.get((host, region))
                if mt is not None and count <= at.maximum_cards_per_instance:
                    name = f"{host}+{count}x{at.name}"
                    shapes[(name, region)] = Shape(name, region, mt.guest_cpus, mt.memory_mb, at.name, count)
    return shapes


def _instance(shape: Shape, today: str) -> InstanceType:
    cpu = FAMILIES[shape.name.split("-")[0]][1]
    score = score_for(cpu)
    return InstanceType(
        provider=Provider.GCP,
        instance_type=shape.name,
        gpu=ACCELERATORS[shape.accelerator][0],
        gpu_count=shape.gpu_count,
        vcpus=shape.vcpus,
        host_memory_bytes=shape.memory_mib * 2**20,
        local_storage_bytes=shape.local_ssd_gb * 10**9,
        cpu_model=cpu,
        cpu_single_thread_score=score.single_thread_score if score else 0.0,
        network_gbit_per_s=min(
            2.0 * shape.vcpus, 32.0
        ),  # per-VM egress cap: 2 Gbit/s per vCPU, 32 max (default tier)
        source=SOURCE,
        source_date=today,
    )


def fetch(
    *,
    client: Any = None,
    project: str | None = None,
    regions: Sequence[str] = ("us-central1",),  # the registry (catalog/providers.py) passes its default regions
    machine_types_client: Any = None,
    accelerator_types_client: Any = None,
    progress: Progress = no_progress,
    now: datetime | None = None,
    credentials: Any = None,
) -> FetchResult:
    """Read GCP GPU shapes in `regions`, priced from billing SKUs; `client` is the billing client."""
    today = (now or datetime.now(UTC)).date().isoformat()
    problems: list[str] = []
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as auth_exc

    try:
        progress("gcp: machine and accelerator types", 0, 3)
        if project is None:
            import google.auth

            credentials, project = google.auth.default()
            if not project:
                raise CredentialsError("no Google Cloud project: pass --project or set GOOGLE_CLOUD_PROJECT")
        machines, accels, billing = _clients(
            client, machine_types_client, accelerator_types_client, credentials
        )
        from google.cloud import compute_v1

        shapes = _shapes(
            machines.aggregated_list(request=compute_v1.AggregatedListMachineTypesRequest(project=project)),
            accels.aggregated_list(request=compute_v1.AggregatedListAcceleratorTypesRequest(project=project)),
            regions,
            problems,
        )
        progress("gcp: billing SKUs", 1, 3)
        table = price_table(billing.list_skus(parent=COMPUTE_SERVICE), regions)
    except auth_exc.DefaultCredentialsError as exc:
        raise CredentialsError(CREDENTIALS_HELP) from exc
    except (gexc.GoogleAPIError, auth_exc.GoogleAuthError) as exc:
        raise FetchError(f"gcp: {one_line(exc)}") from exc
    progress("gcp: composing prices", 2, 3)
    offers: list[Offer] = []
    instances: dict[str, InstanceType] = {}
    for (name, region), shape in sorted(shapes.items()):
        instances.setdefault(name, _instance(shape, today))
        for kind, pricing in (("on_demand", Pricing.ON_DEMAND), ("spot", Pricing.SPOT)):
            price = compose_price(table, shape, kind)
            if price is None:
                if kind == "on_demand":
                    problems.append(f"{name}: no complete {kind} price (core, RAM and GPU SKUs) in {region}")
                continue
            offers.append(Offer(Provider.GCP, name, region, pricing, float(price), PRICE_SOURCE, today))
    missing = [r for r in regions if not any(s.region == r for s in shapes.values())]
    progress("gcp: done", 3, 3)
    return FetchResult(
        Provider.GCP,
        tuple(instances.values()),
        tuple(offers),
        tuple(regions),
        today,
        tuple((r, "no GPU machine types listed in this region") for r in missing),
        tuple(problems),
    )


def _clients(billing: Any, machines: Any, accels: Any, credentials: Any) -> tuple[Any, Any, Any]:
    """Create the three Google clients that were not injected (inside the fetch, never at import)."""
    if machines is None or accels is None:
        from google.cloud import compute_v1

        machines = machines or compute_v1.MachineTypesClient(credentials=credentials)
        accels = accels or compute_v1.AcceleratorTypesClient(credentials=credentials)
    if billing is None:
        from google.cloud import billing_v1

        billing = billing_v1.CloudCatalogClient(credentials=credentials)
    return machines, accels, billing


def fetch_factory(**defaults: Any) -> Callable[..., FetchResult]:
    """Return `fetch` with some keyword arguments fixed (e.g. a project)."""
    return lambda **kwargs: fetch(**{**defaults, **kwargs})
