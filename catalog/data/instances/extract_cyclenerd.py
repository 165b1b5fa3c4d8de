"""Author's tool: copy the GCP machine families SkyPilot's rows lack out of Cyclenerd's pricing.yml.

    python -m catalog.data.instances.extract_cyclenerd PRICING_YML [--commit SHA]

PRICING_YML is Cyclenerd/google-cloud-pricing-cost-calculator's `pricing.yml` (generated from Google's Cloud
Billing Catalog SKU prices), e.g. `git show 889627bc46779da784cd279552664f232431313a:pricing.yml`. For each
machine type of FAMILIES it copies, unchanged, the shape (`cpu`, `ram`, the GPU key and count) and per region
`hour` (on-demand) and `hour_spot`; it writes cyclenerd-gcp.json beside this file, which build_snapshot.py
reads. The file's own `about.generated` date is the date its prices were true.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "cyclenerd-gcp.json"
REPOSITORY = "Cyclenerd/google-cloud-pricing-cost-calculator"
# machine-type prefix -> the pricing.yml key that counts its GPUs. G4 (RTX PRO 6000) is not in SkyPilot's v8
# rows; the A2/A3/G2 families are: their prices here date SkyPilot's undated ones, or stand in where a
# plausibility check left SkyPilot's out (catalog/cyclenerd.py)
FAMILIES = {"g4-standard-": "rtx6000", "a2-highgpu-": "a100", "a2-megagpu-": "a100", "a2-ultragpu-": "a100-80gb",
            "a3-highgpu-": "h100-80gb", "a3-megagpu-": "h100-80gb-mega", "g2-standard-": "l4"}


def extract(doc: dict[str, Any], *, commit: str) -> dict[str, Any]:
    """Return the rows of FAMILIES from a parsed pricing.yml, with where and when they come from."""
    generated = str(doc["about"]["generated"])
    as_of = datetime.strptime(" ".join(generated.split()), "%a %b %d %H:%M:%S %Y").date().isoformat()
    machines: dict[str, Any] = {}
    for name, row in sorted(doc["compute"]["instance"].items()):
        gpu_key = next((key for prefix, key in FAMILIES.items() if name.startswith(prefix)), None)
        if gpu_key is None or gpu_key not in row:
            continue
        prices = {region: {k: cost[k] for k in ("hour", "hour_spot") if k in cost}
                  for region, cost in sorted(row.get("cost", {}).items())}
        machines[name] = {"cpu": row["cpu"], "ram": row["ram"], "gpu": gpu_key, "gpus": row[gpu_key],
                          "prices": prices}
    return {
        "source": f"https://github.com/{REPOSITORY}/blob/{commit}/pricing.yml",
        "generated": generated,
        "as_of": as_of,
        "machines": machines,
    }


def main(argv: list[str] | None = None) -> int:
    """Write cyclenerd-gcp.json from a pricing.yml."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pricing_yml", type=Path)
    parser.add_argument("--commit", default="889627bc46779da784cd279552664f232431313a")
    args = parser.parse_args(argv)
    doc = yaml.safe_load(args.pricing_yml.read_text(encoding="utf-8"))
    data = extract(doc, commit=args.commit)
    OUTPUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{OUTPUT.name}: {len(data['machines'])} machine types, prices as of {data['as_of']}")
    return 0


if __name__ == "__main__":
    if __package__ in (None, ""):
        sys.path.insert(0, str(HERE.parents[2]))
    raise SystemExit(main())
