"""GCP prices SkyPilot's rows lack or get wrong, from Cyclenerd's pricing.yml extract (dated by the file).

catalog/data/instances/cyclenerd-gcp.json is copied unchanged out of Cyclenerd/google-cloud-pricing-cost-
calculator's pricing.yml (extract_cyclenerd.py): per machine type its vCPUs, memory, GPU key and count, and per
region the on-demand `hour` and `hour_spot` price, both true on the file's generation date. Two uses:
- new families (NEW_GPU_KEYS: G4, RTX PRO 6000): shapes and offers. Only whole-GPU shapes become instances; a
  share of one GPU (g4-standard-6/12/24: 1/8, 1/4, 1/2 of an RTX PRO 6000) has no slice in our GPU table and is
  skipped with the reason;
- stand-ins (`stand_in_on_demand`): where a plausibility check left out the GPU or host part of a bundled
  SkyPilot machine (A100 in europe-west4 at half the US price, H100 at $4.20/GPU in us-central1, ...), the
  file's on-demand price of that machine in that region, its own source and date; it is checked like the rest.
  Over the kept A2/A3/G2 rows SkyPilot's on-demand prices are 0.991-1.001x the file's, so the two agree where
  both are sane;
- dates (`dated_by_file`): SkyPilot's rows carry no date. Where the file prices the same bundled machine in the
  same region, an on-demand row it agrees with (within AGREE) keeps SkyPilot's price and takes the file's date,
  both sources named; any other row (a spot row: GCP moves spot prices, and the two files were read on
  different days) takes the file's dated price in place of the undated one, which its source quotes.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.cpu_scores import score_for
from catalog.payload import CatalogRows
from catalog.skypilot.shapes import G4_CPU, GCP_BUNDLED, SPEC_DATE
from catalog.types import InstanceType, Offer, Pricing, Provider

EXTRACT = Path(__file__).resolve().parent / "data" / "instances" / "cyclenerd-gcp.json"
NEW_GPU_KEYS = {"rtx6000": "rtx-pro-6000"}  # pricing.yml's GPU key -> our slug, for families SkyPilot lacks
FAMILY_CPU = {"g4-standard": G4_CPU}
GIB = 2**30
_NETWORK_GBIT = 10.0  # not in the file; the smallest figure Google publishes for GPU machines (recalled)


@dataclass(frozen=True)
class CyclenerdRows:
    """The extract's shapes and offers, what it skipped, and its source line."""

    instances: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    skipped: tuple[str, ...]
    source: str


def _shape(name: str, row: dict[str, Any], slug: str, spec: str) -> InstanceType | str:
    family = name.rsplit("-", 1)[0]
    cpu = FAMILY_CPU.get(family)
    score = score_for(cpu) if cpu else None
    if cpu is None or score is None:
        return f"no host CPU model known for family {family}"
    return InstanceType(
        provider=Provider.GCP, instance_type=name, gpu=slug, gpu_count=int(row["gpus"]), vcpus=int(row["cpu"]),
        host_memory_bytes=round(float(row["ram"]) * GIB), local_storage_bytes=0, cpu_model=cpu,
        cpu_single_thread_score=score.single_thread_score, network_gbit_per_s=_NETWORK_GBIT,
        source=spec, source_date=SPEC_DATE,
    )


def cyclenerd_rows(path: Path = EXTRACT) -> CyclenerdRows:
    """Read the extract into GCP instance shapes and their on-demand and spot offers."""
    data = json.loads(path.read_text(encoding="utf-8"))
    origin = _origin(data)
    spec = (f"{origin}: vCPUs, memory (GiB) and GPUs; host CPU recalled (Google's G4 machine series page), "
            "no local SSD counted, network not in the file (10 Gbit/s assumed)")
    instances: list[InstanceType] = []
    offers: list[Offer] = []
    skipped: list[str] = []
    for name, row in sorted(data["machines"].items()):
        if row["gpu"] not in NEW_GPU_KEYS:
            continue  # a family SkyPilot's rows carry: its prices are stand-ins only
        slug = NEW_GPU_KEYS.get(row["gpu"])
        count = float(row["gpus"])
        if slug is None or count < 1 or count != int(count):
            skipped.append(f"gcp {name}: {count:g} of a {row['gpu']} GPU has no slice in our GPU table")
            continue
        built = _shape(name, row, slug, spec)
        if isinstance(built, str):
            skipped.append(f"gcp {name}: {built}")
            continue
        instances.append(built)
        for region, cost in sorted(row["prices"].items()):
            for pricing, key in ((Pricing.ON_DEMAND, "hour"), (Pricing.SPOT, "hour_spot")):
                if cost.get(key):
                    offers.append(Offer(Provider.GCP, name, region, pricing, float(cost[key]),
                                        f"{origin} ({key})", data["as_of"]))
    return CyclenerdRows(tuple(instances), tuple(offers), tuple(skipped), f"input {path.name}: {origin}")


AGREE = 0.01  # an undated on-demand price within 1% of the file's is the same list price, true on its date
_KEYS = {Pricing.ON_DEMAND: "hour", Pricing.SPOT: "hour_spot"}


def dated_by_file(rows: CatalogRows, path: Path = EXTRACT) -> CatalogRows:
    """Date SkyPilot's undated GCP rows of the bundled machines the file prices (A2, A3, G2) in their regions."""
    data = json.loads(path.read_text(encoding="utf-8"))
    origin = _origin(data)
    machines = data["machines"]
    offers: list[Offer] = []
    for o in rows.offers:
        key = _KEYS.get(o.pricing)
        row = machines.get(o.instance_type) if o.provider is Provider.GCP and o.as_of is None else None
        price = row["prices"].get(o.region, {}).get(key) if row is not None and key is not None else None
        if not price:
            offers.append(o)
        elif o.pricing is Pricing.ON_DEMAND and abs(o.price_per_hour_usd / float(price) - 1.0) <= AGREE:
            offers.append(dataclasses.replace(
                o, source=f"{o.source}; the same list price (within 1%) in {origin} ({key})", as_of=data["as_of"]))
        else:
            was = "median over zones " if o.pricing is Pricing.SPOT else ""
            offers.append(dataclasses.replace(
                o, price_per_hour_usd=float(price), as_of=data["as_of"],
                source=f"{origin} ({key}), in place of SkyPilot's undated {o.pricing.value} row "
                       f"({was}${o.price_per_hour_usd:.4f}/h)"))
    return dataclasses.replace(rows, offers=tuple(offers))


def file_commit(path: Path = EXTRACT) -> str:
    """Return the first 8 hex digits of the pricing.yml commit the extract was copied from (in catalog versions)."""
    source = json.loads(path.read_text(encoding="utf-8"))["source"]
    return str(source.split("/blob/", 1)[1][:8])


def _origin(data: dict[str, Any]) -> str:
    return f"{data['source']} (generated {data['generated']}, from Google's Cloud Billing Catalog SKU prices)"


def stand_in_on_demand(rows: CatalogRows, path: Path = EXTRACT) -> CatalogRows:
    """Add the file's on-demand price where a check left out a part of a bundled GCP machine's own price."""
    data = json.loads(path.read_text(encoding="utf-8"))
    origin = _origin(data)
    known = {i.instance_type for i in rows.instances if i.provider is Provider.GCP}
    have = {(o.instance_type, o.region) for o in rows.offers
            if o.provider is Provider.GCP and o.pricing is Pricing.ON_DEMAND}
    left_out: dict[tuple[str, str], str] = {}
    for e in rows.excluded:
        if e.provider is Provider.GCP and e.pricing is Pricing.ON_DEMAND:
            left_out.setdefault((e.item, e.region), e.check)
    added: list[Offer] = []
    for name, row in sorted(data["machines"].items()):
        if name not in known or name not in GCP_BUNDLED:
            continue
        accelerator, count = GCP_BUNDLED[name]
        for region, cost in sorted(row["prices"].items()):
            check = left_out.get((f"accelerator {accelerator} x{count}", region)) or left_out.get(
                (f"host {name}", region))
            if check is None or (name, region) in have or not cost.get("hour"):
                continue
            added.append(Offer(Provider.GCP, name, region, Pricing.ON_DEMAND, float(cost["hour"]),
                               f"{origin} (hour), in place of SkyPilot's on-demand row ({check})", data["as_of"]))
    offers = tuple(sorted((*rows.offers, *added),
                          key=lambda o: (o.provider.value, o.instance_type, o.region, o.pricing.value)))
    return dataclasses.replace(rows, offers=offers)
