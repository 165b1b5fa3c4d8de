"""Author's tool: write the bundled catalog snapshot (JSON) and its manifest from the sourced tables below.

Run `python -m catalog.data.instances.build_snapshot` (or `python catalog/data/instances/build_snapshot.py`)
after editing a table; the JSON it writes is what the loader reads. Every price names its source: figures
read from SkyPilot's public catalog snapshot are marked as such, figures recalled from the providers' list
price pages are marked "recalled", and anything derived or guessed says "estimate". Spot prices exist only
where one was read (a spot price is a market price: refresh for live values).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from catalog.cpu_scores import score_for
from catalog.data.instances.gcp_tables import gcp_instances_and_offers
from catalog.payload import CatalogRows, rows_to_payload
from catalog.types import BlockStoragePrice, InstanceType, Offer, OnPremCard, Pricing, Provider

HERE = Path(__file__).resolve().parent
VERSION = "2026-11-29.1"
READ_ON = "2026-11-29"
GIB = 2**30
GB = 10**9

SKY_AWS = (
    "SkyPilot catalog skypilot-org/skypilot-catalog@001367d2 catalogs/v7/aws/vms.csv (AWS Price List "
    "and spot price history as collected by SkyPilot, before AWS's June 2025 P4/P5 price cut; collection "
    "date not recorded in the copy; read 2026-11-29)"
)
SKY_AWS_SPOT = SKY_AWS + "; spot = median over the region's availability zones"
AWS_LIST = "AWS EC2 On-Demand pricing page, Linux list price recalled by the catalog author (not re-read)"
AWS_HIST = "estimate: historical AWS list price; family retired (absent from the SkyPilot snapshot)"
AWS_SPEC = (
    "AWS EC2 accelerated-computing instance specifications (docs.aws.amazon.com/ec2/latest/instancetypes/"
    "ac.html), recalled; GPU, vCPU and memory cross-checked with the SkyPilot snapshot where read; "
    "'up to' network figures recorded as their burst value"
)
AWS_REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
GCP_REGIONS = ("us-central1", "europe-west4", "asia-east1")

# AWS shapes: type, gpu slug, gpus, vCPUs, GiB, local GB, Gbit/s, CPU
BDW, SKL, CLX, CLX3 = (
    "Intel Xeon E5-2686 v4 (Broadwell)",
    "Intel Xeon Platinum 8175M (Skylake)",
    "Intel Xeon Platinum 8259CL (Cascade Lake)",
    "Intel Xeon Platinum 8275CL (Cascade Lake)",
)
ROME, MILAN, SPR, EMR = (
    "AMD EPYC 7R32 (Zen 2)",
    "AMD EPYC 7R13 (Zen 3)",
    "Intel Xeon Platinum 8488C (Sapphire Rapids)",
    "Intel Xeon Platinum 8559C (Emerald Rapids)",
)
AWS_SHAPES: tuple[tuple[str, str, int, int, float, int, float, str], ...] = (
    ("p2.xlarge", "k80", 1, 4, 61, 0, 1.25, BDW),
    ("p2.8xlarge", "k80", 8, 32, 488, 0, 10, BDW),
    ("p2.16xlarge", "k80", 16, 64, 732, 0, 25, BDW),
    ("p3.2xlarge", "v100-16gb", 1, 8, 61, 0, 10, BDW),
    ("p3.8xlarge", "v100-16gb", 4, 32, 244, 0, 10, BDW),
    ("p3.16xlarge", "v100-16gb", 8, 64, 488, 0, 25, BDW),
    ("p3dn.24xlarge", "v100-32gb", 8, 96, 768, 1800, 100, SKL),
    ("g3s.xlarge", "m60", 1, 4, 30.5, 0, 10, BDW),
    ("g3.4xlarge", "m60", 1, 16, 122, 0, 10, BDW),
    ("g3.8xlarge", "m60", 2, 32, 244, 0, 10, BDW),
    ("g3.16xlarge", "m60", 4, 64, 488, 0, 25, BDW),
    ("g4dn.xlarge", "t4", 1, 4, 16, 125, 25, CLX),
    ("g4dn.2xlarge", "t4", 1, 8, 32, 225, 25, CLX),
    ("g4dn.4xlarge", "t4", 1, 16, 64, 225, 25, CLX),
    ("g4dn.8xlarge", "t4", 1, 32, 128, 900, 50, CLX),
    ("g4dn.12xlarge", "t4", 4, 48, 192, 900, 50, CLX),
    ("g4dn.16xlarge", "t4", 1, 64, 256, 900, 50, CLX),
    ("g4dn.metal", "t4", 8, 96, 384, 1800, 100, CLX),
    ("g5.xlarge", "a10g", 1, 4, 16, 250, 10, ROME),
    ("g5.2xlarge", "a10g", 1, 8, 32, 450, 10, ROME),
    ("g5.4xlarge", "a10g", 1, 16, 64, 600, 25, ROME),
    ("g5.8xlarge", "a10g", 1, 32, 128, 900, 25, ROME),
    ("g5.12xlarge", "a10g", 4, 48, 192, 3800, 40, ROME),
    ("g5.16xlarge", "a10g", 1, 64, 256, 1900, 25, ROME),
    ("g5.24xlarge", "a10g", 4, 96, 384, 3800, 50, ROME),
    ("g5.48xlarge", "a10g", 8, 192, 768, 7600, 100, ROME),
    ("g6.xlarge", "l4", 1, 4, 16, 250, 10, MILAN),
    ("g6.2xlarge", "l4", 1, 8, 32, 450, 10, MILAN),
    ("g6.4xlarge", "l4", 1, 16, 64, 600, 25, MILAN),
    ("g6.8xlarge", "l4", 1, 32, 128, 900, 25, MILAN),
    ("g6.12xlarge", "l4", 4, 48, 192, 3760, 40, MILAN),
    ("g6.16xlarge", "l4", 1, 64, 256, 1880, 25, MILAN),
    ("g6.24xlarge", "l4", 4, 96, 384, 3760, 50, MILAN),
    ("g6.48xlarge", "l4", 8, 192, 768, 7520, 100, MILAN),
    ("gr6.4xlarge", "l4", 1, 16, 128, 600, 25, MILAN),
    ("gr6.8xlarge", "l4", 1, 32, 256, 900, 25, MILAN),
    ("g6e.xlarge", "l40s", 1, 4, 32, 250, 20, MILAN),
    ("g6e.2xlarge", "l40s", 1, 8, 64, 450, 20, MILAN),
    ("g6e.4xlarge", "l40s", 1, 16, 128, 600, 20, MILAN),
    ("g6e.8xlarge", "l40s", 1, 32, 256, 900, 25, MILAN),
    ("g6e.12xlarge", "l40s", 4, 48, 384, 3800, 100, MILAN),
    ("g6e.16xlarge", "l40s", 1, 64, 512, 1900, 35, MILAN),
    ("g6e.24xlarge", "l40s", 4, 96, 768, 3800, 200, MILAN),
    ("g6e.48xlarge", "l40s", 8, 192, 1536, 7600, 400, MILAN),
    ("p4d.24xlarge", "a100-40gb", 8, 96, 1152, 8000, 400, CLX3),
    ("p4de.24xlarge", "a100-80gb", 8, 96, 1152, 8000, 400, CLX3),
    ("p5.48xlarge", "h100-sxm", 8, 192, 2048, 30720, 3200, MILAN),
    ("p5e.48xlarge", "h200", 8, 192, 2048, 30720, 3200, MILAN),
    ("p5en.48xlarge", "h200", 8, 192, 2048, 30720, 3200, SPR),
    ("p6-b200.48xlarge", "b200", 8, 192, 2048, 30720, 3200, EMR),
)

# (on-demand, spot) read from the SkyPilot snapshot, per region
AWS_READ: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "g4dn.xlarge": {"eu-west-1": (0.587, 0.2658), "us-east-1": (0.526, 0.1869), "us-west-2": (0.526, 0.1809)},
    "g5.12xlarge": {"eu-west-1": (6.33167, 2.7775), "us-east-1": (5.672, 2.5445)},
    "g6.12xlarge": {"us-east-1": (4.6016, None), "us-west-2": (4.6016, 1.6926)},
    "g6.16xlarge": {"us-east-1": (3.3968, 1.2454), "us-west-2": (3.3968, 1.1976)},
    "g6.24xlarge": {"us-east-1": (6.6752, 3.1203), "us-west-2": (6.6752, 2.6667)},
    "p3.2xlarge": {"eu-west-1": (3.305, 1.4515), "us-east-1": (3.06, 0.6929), "us-west-2": (3.06, 0.9724)},
    "p3.8xlarge": {"eu-west-1": (13.22, 6.1693), "us-east-1": (12.24, 1.936), "us-west-2": (12.24, 4.2929)},
    "p3.16xlarge": {
        "eu-west-1": (26.44, 11.8717),
        "us-east-1": (24.48, 4.2205),
        "us-west-2": (24.48, 8.1838),
    },
    "p3dn.24xlarge": {
        "eu-west-1": (33.711, 17.652),
        "us-east-1": (31.212, 3.5363),
        "us-west-2": (31.212, 9.7446),
    },
    "p4d.24xlarge": {
        "eu-west-1": (35.39655, 16.3182),
        "us-east-1": (32.7726, 6.7915),
        "us-west-2": (32.7726, 11.3278),
    },
    "p4de.24xlarge": {"us-east-1": (40.96575, 6.8234), "us-west-2": (40.96575, 7.107)},
    "p5.48xlarge": {"us-east-1": (98.32, 26.7861), "us-west-2": (98.32, 31.3566)},
    "p5e.48xlarge": {"us-west-2": (None, 15.7656)},  # capacity blocks only: no on-demand list price
    "p5en.48xlarge": {"us-east-1": (84.8, 24.2902), "us-west-2": (84.8, 25.5123)},
}
# us-east-1 list prices recalled; us-west-2 lists the same price for these families in the snapshot
AWS_RECALLED: dict[str, float] = {
    "g3s.xlarge": 0.75,
    "g3.4xlarge": 1.14,
    "g3.8xlarge": 2.28,
    "g3.16xlarge": 4.56,
    "g4dn.2xlarge": 0.752,
    "g4dn.4xlarge": 1.204,
    "g4dn.8xlarge": 2.176,
    "g4dn.12xlarge": 3.912,
    "g4dn.16xlarge": 4.352,
    "g4dn.metal": 7.824,
    "g5.xlarge": 1.006,
    "g5.2xlarge": 1.212,
    "g5.4xlarge": 1.624,
    "g5.8xlarge": 2.448,
    "g5.16xlarge": 4.096,
    "g5.24xlarge": 8.144,
    "g5.48xlarge": 16.288,
    "g6.xlarge": 0.8048,
    "g6.2xlarge": 0.9776,
    "g6.4xlarge": 1.3232,
    "g6.8xlarge": 2.0144,
    "g6.48xlarge": 13.3504,
    "gr6.4xlarge": 1.5392,
    "gr6.8xlarge": 2.4464,
    "g6e.xlarge": 1.861,
    "g6e.2xlarge": 2.24208,
    "g6e.4xlarge": 3.00424,
    "g6e.8xlarge": 4.52856,
    "g6e.12xlarge": 10.49264,
    "g6e.16xlarge": 7.57719,
    "g6e.24xlarge": 15.06559,
    "g6e.48xlarge": 30.13118,
}
AWS_HISTORICAL = {"p2.xlarge": (0.90, 0.972), "p2.8xlarge": (7.20, 7.776), "p2.16xlarge": (14.40, 15.552)}
AWS_G3_EU = {"g3.4xlarge": 1.21, "g3.8xlarge": 2.42, "g3.16xlarge": 4.84}  # eu-west-1, recalled
# eu-west-1 / us-east-1 ratio per family, from a type read in the snapshot; families absent: not offered there
AWS_EU_RATIO = {"g4dn": ("g4dn.xlarge", 0.587 / 0.526), "g5": ("g5.12xlarge", 6.33167 / 5.672)}


def _aws_offers() -> list[Offer]:
    offers: list[Offer] = []

    def add(itype: str, region: str, pricing: Pricing, price: float, source: str) -> None:
        offers.append(Offer(Provider.AWS, itype, region, pricing, round(price, 5), source, READ_ON))

    for itype, by_region in AWS_READ.items():
        for region, (on_demand, spot) in by_region.items():
            if on_demand is not None:
                add(itype, region, Pricing.ON_DEMAND, on_demand, SKY_AWS)
            if spot is not None:
                add(itype, region, Pricing.SPOT, spot, SKY_AWS_SPOT)
    for itype, price in AWS_RECALLED.items():
        read = AWS_READ.get(itype, {})
        for region in ("us-east-1", "us-west-2"):
            if region not in read:
                add(itype, region, Pricing.ON_DEMAND, price, AWS_LIST)
        family = itype.split(".")[0]
        if family in AWS_EU_RATIO:
            ref, ratio = AWS_EU_RATIO[family]
            add(
                itype,
                "eu-west-1",
                Pricing.ON_DEMAND,
                price * ratio,
                f"estimate: recalled us-east-1 list price x {ratio:.4f}, the eu-west-1/us-east-1 ratio "
                f"of {ref} "
                "in the SkyPilot snapshot",
            )
        if itype in AWS_G3_EU:
            add(itype, "eu-west-1", Pricing.ON_DEMAND, AWS_G3_EU[itype], AWS_LIST)
    for itype, (us_price, eu_price) in AWS_HISTORICAL.items():
        add(itype, "us-east-1", Pricing.ON_DEMAND, us_price, AWS_HIST)
        add(itype, "us-west-2", Pricing.ON_DEMAND, us_price, AWS_HIST)
        add(itype, "eu-west-1", Pricing.ON_DEMAND, eu_price, AWS_HIST)
    for itype in ("g5.12xlarge",):
        add(itype, "us-west-2", Pricing.ON_DEMAND, AWS_READ[itype]["us-east-1"][0] or 0.0, AWS_LIST)
    return offers


def _instance(
    provider: Provider,
    itype: str,
    gpu: str,
    count: int,
    vcpus: int,
    gib: float,
    local_gb: int,
    gbit: float,
    cpu: str,
    source: str,
) -> InstanceType:
    score = score_for(cpu)
    if score is None:
        raise SystemExit(f"no CPU score for {cpu!r}: add it to catalog/cpu_scores.py")
    return InstanceType(
        provider,
        itype,
        gpu,
        count,
        vcpus,
        round(gib * GIB),
        local_gb * GB,
        cpu,
        score.single_thread_score,
        float(gbit),
        source,
        READ_ON,
    )


EBS = (
    "AWS EBS pricing page, gp3 storage per GB-month, list price recalled by the catalog author (not re-read)"
)
PD = "Google Cloud disk pricing page, pd-balanced per GB-month, list price recalled by the catalog author"
BLOCK_STORAGE = (
    BlockStoragePrice(Provider.AWS, "us-east-1", "gp3", 0.08, EBS, READ_ON),
    BlockStoragePrice(Provider.AWS, "us-west-2", "gp3", 0.08, EBS, READ_ON),
    BlockStoragePrice(Provider.AWS, "eu-west-1", "gp3", 0.088, EBS, READ_ON),
    BlockStoragePrice(Provider.GCP, "us-central1", "pd-balanced", 0.10, PD, READ_ON),
    BlockStoragePrice(Provider.GCP, "europe-west4", "pd-balanced", 0.11, PD, READ_ON),
    BlockStoragePrice(Provider.GCP, "asia-east1", "pd-balanced", 0.11, PD, READ_ON),
)

_MSRP = "NVIDIA launch price (US MSRP) as announced at launch, recalled; power = NVIDIA board power (TGP/TDP)"
ONPREM: tuple[tuple[str, float, int, str], ...] = (
    ("gtx-970", 329, 145, "2014-09"),
    ("gtx-980-ti", 649, 250, "2015-06"),
    ("titan-x-maxwell", 999, 250, "2015-03"),
    ("gtx-1050-ti", 139, 75, "2016-10"),
    ("gtx-1060-3gb", 199, 120, "2016-08"),
    ("gtx-1060-6gb", 249, 120, "2016-07"),
    ("gtx-1070", 379, 150, "2016-06"),
    ("gtx-1070-ti", 449, 180, "2017-11"),
    ("gtx-1080", 599, 180, "2016-05"),
    ("gtx-1080-ti", 699, 250, "2017-03"),
    ("titan-x-pascal", 1200, 250, "2016-08"),
    ("titan-xp", 1200, 250, "2017-04"),
    ("titan-v", 2999, 250, "2017-12"),
    ("rtx-2080-ti", 999, 250, "2018-09"),
    ("rtx-3090", 1499, 350, "2020-09"),
    ("rtx-4090", 1599, 450, "2022-10"),
)


def build() -> CatalogRows:
    """Assemble the snapshot rows from the tables."""
    instances = [_instance(Provider.AWS, *shape, AWS_SPEC) for shape in AWS_SHAPES]
    offers = _aws_offers()
    gcp_instances, gcp_offers = gcp_instances_and_offers(make_instance=_instance, read_on=READ_ON)
    instances += gcp_instances
    offers += gcp_offers
    cards = [
        OnPremCard(gpu, float(price), watts, f"{_MSRP} (launched {month})", READ_ON)
        for gpu, price, watts, month in ONPREM
    ]
    sources = sorted(
        {i.source for i in instances}
        | {o.source for o in offers}
        | {b.source for b in BLOCK_STORAGE}
        | {c.source for c in cards}
    )
    return CatalogRows(
        VERSION, READ_ON, tuple(sources), tuple(instances), tuple(offers), BLOCK_STORAGE, tuple(cards)
    )


def main() -> None:
    """Write the snapshot file and point the manifest at it."""
    rows = build()
    name = f"snapshot-{rows.version}.json"
    (HERE / name).write_text(json.dumps(rows_to_payload(rows), indent=1) + "\n", encoding="utf-8")
    manifest = {
        "current": rows.version,
        "file": name,
        "note": "Bundled catalog snapshot; a refresh writes newer versions to the store, never here.",
    }
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(
        f"{name}: {len(rows.instances)} instance types, {len(rows.offers)} offers, "
        f"{len(rows.block_storage)} storage prices, {len(rows.onprem_cards)} on-prem cards"
    )


if __name__ == "__main__":
    main()
