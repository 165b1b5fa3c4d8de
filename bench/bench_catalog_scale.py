"""Time a whole recommendation over the bundled catalog at 1x, 4x and 16x its offers.

Run: `PYTHONPATH=. .venv/bin/python bench/bench_catalog_scale.py [--repeat R] [--json] [SPEC ...]`.
Target (issue 14): a recommendation over the full catalog takes at most 20 ms in-process (median, on this
2-core machine). The 4x and 16x catalogs copy every cloud offer into 3 or 15 more regions (named
`REGION~k`, with block storage priced there too), so they show how the work per offer grows; the per
(GPU model, count) estimates do not grow with offers. Times are CPU seconds of this process
(time.process_time), medians of `--repeat` runs after one warm-up: on a machine shared with other
work, wall time measures the neighbours as much as the code; the wall median is printed beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.loader import load_catalog
from catalog.types import Catalog, Provider
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEFAULT_SPECS = ("bert-finetune.json", "resnet50-imagenet.json", "gpt2-pretrain.json")


def scaled(catalog: Catalog, factor: int) -> Catalog:
    """Return the catalog with every cloud offer (and storage price) copied into factor - 1 more regions."""
    if factor == 1:
        return catalog
    offers = list(catalog.offers)
    storage = list(catalog.block_storage)
    for k in range(1, factor):
        offers += [dataclasses.replace(o, region=f"{o.region}~{k}") for o in catalog.offers
                   if o.provider is not Provider.ONPREM]
        storage += [dataclasses.replace(b, region=f"{b.region}~{k}") for b in catalog.block_storage]
    return dataclasses.replace(catalog, offers=tuple(offers), block_storage=tuple(storage))


def measure(spec: Path, catalog: Catalog, *, repeat: int) -> dict[str, float]:
    """Return the median CPU and wall milliseconds of one recommendation for the spec."""
    _, job = load_job(json.loads(spec.read_text(encoding="utf-8")))
    recommend(job, catalog)  # warm-up: builds the catalog's index, kept for later calls
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        recommend(job, catalog)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return {"cpu_ms": statistics.median(cpu), "wall_ms": statistics.median(wall)}


def main() -> None:
    """Print the medians per spec and catalog scale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", default=list(DEFAULT_SPECS))
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    base = load_catalog()
    rows = []
    for factor in (1, 4, 16):
        catalog = scaled(base, factor)
        cloud = sum(1 for o in catalog.offers if o.provider is not Provider.ONPREM)
        for name in args.specs:
            path = Path(name) if Path(name).is_file() else EXAMPLES / name
            timing = measure(path, catalog, repeat=args.repeat)
            rows.append({"scale": factor, "offers": cloud, "spec": path.name, **timing})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        print(f"{r['scale']:>2}x {r['offers']:>6} offers  {r['spec']:<24} cpu {r['cpu_ms']:6.1f} ms  "
              f"wall {r['wall_ms']:6.1f} ms")


if __name__ == "__main__":
    main()
