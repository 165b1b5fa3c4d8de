"""Author's tool: generate the bundled catalog snapshot from SkyPilot's published catalog rows, reproducibly.

    python -m catalog.data.instances.build_snapshot [--skypilot DIR] [--check]

DIR defaults to ../shared/data/skypilot-catalog-v8 beside the repository: the GPU rows of SkyPilot's v8 AWS and
GCP catalogs at the commits its PROVENANCE.md names. Every offer is read from those rows (catalog/skypilot/),
checked for plausibility (catalog/plausibility.py) and, where a check fails, left out with the reason kept
under "excluded". The same input always writes the same bytes: nothing here reads the clock. `--check`
writes nothing and exits 1 when the committed snapshot differs from what the input builds.

GCP machine families SkyPilot's rows lack (G4, RTX PRO 6000), and stand-ins for the on-demand prices of bundled
GCP machines a check left out, come from cyclenerd-gcp.json beside this file, copied out of Cyclenerd's
pricing.yml by extract_cyclenerd.py and dated by that file (catalog/cyclenerd.py).

Block storage prices have no machine-readable source and stay recalled or estimated, labelled as such. The
on-prem cards' launch prices are read (the Wikipedia-derived table gpus.json cites) for the cards in _READ_CARDS
and recalled, labelled so, for the rest.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from catalog.cyclenerd import cyclenerd_rows, dated_by_file, file_commit, stand_in_on_demand
from catalog.freshness import oldest_price_date
from catalog.payload import CatalogRows, rows_to_payload
from catalog.skypilot import import_skypilot
from catalog.types import BlockStoragePrice, OnPremCard, Pricing, Provider
from catalog.validate import screen_rows

HERE = Path(__file__).resolve().parent
DEFAULT_INPUT = HERE.parents[2].parent / "shared" / "data" / "skypilot-catalog-v8"

# Block storage: list prices recalled by the catalog author in the reference region (no machine-readable copy
# at hand); elsewhere an estimate: that price times the region's median on-demand GPU price ratio to the
# reference region over the instance types both list.
STORAGE = {
    Provider.AWS: ("us-east-1", "gp3", 0.08, "AWS EBS pricing page, gp3 per GB-month in us-east-1, recalled"),
    Provider.GCP: ("us-central1", "pd-balanced", 0.10, "Google Cloud disk pricing, pd-balanced, us-central1, recalled"),
}
_MSRP = "NVIDIA launch price (US MSRP or list) as announced at launch, recalled; power = NVIDIA board power"
# (slug, launch price USD, board power W, launch month): the price was true in that month
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
    ("titan-rtx", 2499, 280, "2018-12"),
    ("rtx-3080", 699, 320, "2020-09"),
    ("rtx-3090", 1499, 350, "2020-09"),
    ("rtx-4080", 1199, 320, "2022-11"),
    ("rtx-4090", 1599, 450, "2022-10"),
    ("rtx-5090", 1999, 575, "2025-01"),
    ("rtx-2060", 349, 160, "2019-01"),
    ("rtx-2060-super", 399, 175, "2019-07"),
    ("rtx-2070", 499, 175, "2018-10"),
    ("rtx-2070-super", 499, 215, "2019-07"),
    ("rtx-2080", 699, 215, "2018-09"),
    ("rtx-2080-super", 699, 250, "2019-07"),
    ("rtx-3060", 329, 170, "2021-02"),
    ("rtx-3060-ti", 399, 200, "2020-12"),
    ("rtx-3070", 499, 220, "2020-10"),
    ("rtx-3070-ti", 599, 290, "2021-06"),
    ("rtx-3080-ti", 1199, 350, "2021-06"),
    ("rtx-3090-ti", 1999, 450, "2022-03"),
    ("rtx-4060", 299, 115, "2023-06"),
    ("rtx-4060-ti", 399, 160, "2023-05"),
    ("rtx-4060-ti-16gb", 499, 160, "2023-07"),
    ("rtx-4070", 599, 200, "2023-04"),
    ("rtx-4070-super", 599, 220, "2024-01"),
    ("rtx-4070-ti", 799, 285, "2023-01"),
    ("rtx-4070-ti-super", 799, 285, "2024-01"),
    ("rtx-4080-super", 999, 320, "2024-01"),
    ("rtx-5070", 549, 250, "2025-03"),
    ("rtx-5070-ti", 749, 300, "2025-02"),
    ("rtx-5080", 999, 360, "2025-01"),
    ("rtx-a6000", 4649, 300, "2020-10"),
    ("rtx-6000-ada", 6799, 300, "2022-12"),
    ("rtx-pro-6000", 8565, 600, "2025-03"),
)
# Cards whose launch price, board power and launch month were read (not recalled): the Wikipedia-derived
# voidful/gpu-info-api gpu.json that catalog/data/gpus.json cites for each of them.
_READ = ("NVIDIA launch price (US MSRP or list) and board power as read in voidful/gpu-info-api@03a6b34:gpu.json "
         "(Wikipedia 'List of Nvidia graphics processing units', scraped 2025-06-16)")
_READ_CARDS = frozenset({
    "rtx-2080-ti", "rtx-3080", "rtx-3090", "rtx-4080", "rtx-4090", "rtx-5090", "titan-rtx", "rtx-a6000",
    "rtx-6000-ada", "rtx-pro-6000",
    "rtx-2060", "rtx-2060-super", "rtx-2070", "rtx-2070-super", "rtx-2080", "rtx-2080-super",
    "rtx-3060", "rtx-3060-ti", "rtx-3070", "rtx-3070-ti", "rtx-3080-ti", "rtx-3090-ti",
    "rtx-4060", "rtx-4060-ti", "rtx-4060-ti-16gb", "rtx-4070", "rtx-4070-super", "rtx-4070-ti",
    "rtx-4070-ti-super", "rtx-4080-super", "rtx-5070", "rtx-5070-ti", "rtx-5080",
})


def _regional_ratios(rows: CatalogRows, provider: Provider, reference: str) -> dict[str, float]:
    """Return region -> median on-demand price ratio to the reference region, over the types both list."""
    prices: dict[tuple[str, str], float] = {
        (o.instance_type, o.region): o.price_per_hour_usd
        for o in rows.offers
        if o.provider is provider and o.pricing is Pricing.ON_DEMAND
    }
    regions = sorted({r for _, r in prices})
    ratios: dict[str, float] = {}
    for region in regions:
        pairs = [p / prices[(t, reference)] for (t, r), p in prices.items() if r == region and (t, reference) in prices]
        if pairs:
            ratios[region] = float(statistics.median(pairs))
    return ratios


def block_storage(rows: CatalogRows) -> tuple[BlockStoragePrice, ...]:
    """Return a block storage price for every region with offers: recalled there, estimated elsewhere."""
    out: list[BlockStoragePrice] = []
    for provider, (reference, kind, price, source) in STORAGE.items():
        ratios = _regional_ratios(rows, provider, reference)
        for region in sorted({o.region for o in rows.offers if o.provider is provider}):
            if region == reference:
                out.append(BlockStoragePrice(provider, region, kind, price, source, None))
                continue
            ratio = ratios.get(region, 1.0)
            note = (
                f"estimate: {source} x {ratio:.3f}, the region's median on-demand GPU price ratio to {reference}"
            )
            out.append(BlockStoragePrice(provider, region, kind, round(price * ratio, 4), note, None))
    return tuple(out)


def cards() -> tuple[OnPremCard, ...]:
    """Return the on-prem cards with their launch prices, dated by launch month."""
    return tuple(
        OnPremCard(gpu, float(price), watts, f"{_READ if gpu in _READ_CARDS else _MSRP} (launched {month})", month)
        for gpu, price, watts, month in ONPREM
    )


def build(directory: Path = DEFAULT_INPUT) -> CatalogRows:
    """Read the SkyPilot rows under `directory` and assemble the checked snapshot rows."""
    read = import_skypilot(directory)
    extra = cyclenerd_rows()
    commits = [line.split("@", 1)[1][:8] for line in read.files if "@" in line]
    version = ("skypilot-v8-" + "-".join(commits) if commits else "skypilot-v8") + f"-cyclenerd-{file_commit()}"
    offers = tuple(sorted((*read.offers, *extra.offers),
                          key=lambda o: (o.provider.value, o.instance_type, o.region, o.pricing.value)))
    rows = CatalogRows(
        version=version,
        prices_as_of=oldest_price_date(offers),
        sources=(),
        instances=tuple(sorted((*read.instances, *extra.instances), key=lambda i: (i.provider.value, i.instance_type))),
        offers=offers,
        block_storage=(),
        onprem_cards=cards(),
        excluded=read.excluded,
    )
    # the dated and stand-in prices are checked like the rest
    rows = screen_rows(stand_in_on_demand(dated_by_file(screen_rows(rows))))
    storage = block_storage(rows)
    sources = sorted(
        {i.source for i in rows.instances}
        | {o.source for o in rows.offers}
        | {b.source for b in storage}
        | {c.source for c in rows.onprem_cards}
        | {f"input {line}" for line in read.files}
        | {f"skipped {line}" for line in (*read.skipped, *extra.skipped)}
        | {extra.source}
    )
    return CatalogRows(
        version=rows.version,
        prices_as_of=rows.prices_as_of,
        sources=tuple(sources),
        instances=rows.instances,
        offers=rows.offers,
        block_storage=storage,
        onprem_cards=rows.onprem_cards,
        excluded=rows.excluded,
    )


def dump(payload: dict[str, Any]) -> str:
    """Render the payload as JSON with one row per line (diffs stay readable at thousands of rows)."""
    parts = []
    for key, value in payload.items():
        if isinstance(value, list):
            body = ",\n".join("  " + json.dumps(v, sort_keys=True) for v in value)
            parts.append(f" {json.dumps(key)}: [\n{body}\n ]" if value else f" {json.dumps(key)}: []")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main(argv: list[str] | None = None) -> int:
    """Write the snapshot file and point the manifest at it (or, with --check, compare only)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skypilot", type=Path, default=DEFAULT_INPUT, help="SkyPilot catalog rows directory")
    parser.add_argument("--check", action="store_true", help="compare with the committed snapshot, write nothing")
    args = parser.parse_args(argv)
    rows = build(args.skypilot)
    name = f"snapshot-{rows.version}.json"
    text = dump(rows_to_payload(rows))
    manifest = {
        "current": rows.version,
        "file": name,
        "note": "Bundled catalog snapshot, built by catalog/data/instances/build_snapshot.py; a refresh writes "
        "newer versions to the store, never here.",
    }
    manifest_text = json.dumps(manifest, indent=1) + "\n"
    if args.check:
        same = (HERE / name).is_file() and (HERE / name).read_text(encoding="utf-8") == text
        same = same and (HERE / "manifest.json").read_text(encoding="utf-8") == manifest_text
        print(f"{name}: {'matches' if same else 'DIFFERS from'} what {args.skypilot} builds")
        return 0 if same else 1
    for old in HERE.glob("snapshot-*.json"):
        if old.name != name:
            old.unlink()
    (HERE / name).write_text(text, encoding="utf-8")
    (HERE / "manifest.json").write_text(manifest_text, encoding="utf-8")
    print(
        f"{name}: {len(rows.instances)} instance types, {len(rows.offers)} offers, {len(rows.excluded)} prices "
        f"left out, {len(rows.block_storage)} storage prices, {len(rows.onprem_cards)} on-prem cards"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
