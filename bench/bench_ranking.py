"""Time `rank_offers` on a synthetic catalog of 100,000 offers: median of repeated runs, and per offer.

Run: `PYTHONPATH=. .venv/bin/python bench/bench_ranking.py [--offers N] [--repeat R] [--json]`.
Target (issue 5): ranking 100,000 offers in-process takes under 50 ms. The first call on a catalog
also builds the catalog's index (offers grouped by machine), kept for later calls; it is reported apart.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from ranking_builders import (
    block_price,
    card,
    catalog,
    gpu,
    instance,
    job,
    offer,
    per_gpu,
    requirements,
)

from catalog.types import Catalog, Pricing, Provider
from workers.ranking.ranking import rank_offers
from workers.sizing.requirements import PerGpu
from workers.sizing.spec import Objective

GPU_SLUGS = ("gtx-1080-ti", "titan-xp", "rtx-3090", "rtx-4090", "k80", "m60", "p4", "p100-16gb",
             "v100-16gb", "v100-32gb", "t4", "a10", "a10g", "l4", "l40s", "a100-40gb", "a100-80gb",
             "h100-sxm",
             "h100-pcie", "h200", "b200")
REGIONS = 40  # about the regions of AWS or Google Cloud
PRICINGS = (Pricing.ON_DEMAND, Pricing.SPOT)


def synthetic(n_offers: int, seed: int = 1) -> tuple[Catalog, dict[tuple[str, int], PerGpu]]:
    """Return a catalog of about `n_offers` offers (40 regions, two pricing kinds) and its per-GPU table."""
    rng = random.Random(seed)
    gpus = [gpu(slug, rng.choice([8, 12, 16, 24, 32, 40, 48, 80, 141])) for slug in GPU_SLUGS]
    regions = [f"region-{i:02d}" for i in range(REGIONS)]
    n_instances = max(1, n_offers // (REGIONS * len(PRICINGS)))
    insts = []
    for i in range(n_instances):
        provider = Provider.AWS if i % 2 else Provider.GCP
        g = rng.choice(gpus)
        count = rng.choice([1, 1, 2, 4, 8])
        # Families as the clouds name them: one GPU model per family, a few generations of each.
        insts.append(instance(provider, f"{g.slug}-gen{i % 4}.{count}x-size{i}", g.slug, count,
                              host_gib=rng.choice([16, 64, 256]), disk_gb=rng.choice([0, 250, 4000]),
                              cpu_score=rng.choice([900.0, 1300.0, 1800.0])))
    offers = [offer(inst.provider, inst.instance_type, r, round(rng.uniform(0.1, 40.0), 3), p)
              for inst in insts for r in regions for p in PRICINGS]
    blocks = [block_price(p, r, rng.choice([0.08, 0.1, 0.12])) for p in (Provider.AWS, Provider.GCP)
              for r in regions]
    cards = [card(slug, rng.uniform(300, 30000), 300) for slug in GPU_SLUGS[:6]]
    table = {}
    for g in gpus:
        for count in (1, 2, 4, 8):
            table[(g.slug, count)] = per_gpu(g.slug, count, need_gib=20.0, fits=g.memory_bytes > 24 * 2**30,
                                             hours=rng.uniform(2.0, 200.0) / count, speedup=count * 0.9)
    return catalog(gpus, insts, offers, block=blocks, cards=cards), table


def _measure(cat: Catalog, table: dict[tuple[str, int], PerGpu], *, scenario: str,
             repeat: int) -> dict[str, dict[str, float]]:
    """Time every objective in one scenario: wall-clock median and min, and the CPU-time median."""
    results: dict[str, dict[str, float]] = {}
    if scenario == "all-fit":  # the worst case: every machine fits, no budget or deadline cuts an offer
        table = {key: replace(row, fits=True) for key, row in table.items()}
        req, limits = requirements(need_gib=4.0, host_gib=8.0), {}
    else:  # about a third of the machines fit; budget and deadline cut some of their offers
        req, limits = requirements(need_gib=20.0, host_gib=32.0), {"budget_usd": 2000.0, "deadline_hours": 150.0}
    for objective in Objective:
        j = job(objective=objective, limit=10, preprocess_ms=0.5, **limits)
        wall_ms, cpu_ms = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            rec = rank_offers(j, requirements=req, per_gpu=table, catalog=cat)
            wall_ms.append((time.perf_counter() - wall) * 1000)
            cpu_ms.append((time.process_time() - cpu) * 1000)
        median_ms = statistics.median(wall_ms)
        results[objective.value] = {
            "offers": len(cat.offers), "median_ms": round(median_ms, 2), "min_ms": round(min(wall_ms), 2),
            "cpu_median_ms": round(statistics.median(cpu_ms), 2),
            "per_offer_ns": round(median_ms * 1e6 / len(cat.offers), 1), "options": len(rec.options),
            "rejected_rows": len(rec.rejected),
        }
    return results


def main() -> None:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--offers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cat, table = synthetic(args.offers)
    start = time.perf_counter()
    rank_offers(job(), requirements=requirements(), per_gpu=table, catalog=cat)
    cold_ms = (time.perf_counter() - start) * 1000  # includes building the catalog's index, once per catalog
    scenarios = {name: _measure(cat, table, scenario=name, repeat=args.repeat) for name in ("mixed", "all-fit")}
    if args.json:
        print(json.dumps({"first_call_ms": round(cold_ms, 2), "scenarios": scenarios}, indent=2))
        return
    print(f"first call on a new catalog (builds its index once): {cold_ms:.1f} ms")
    for name, results in scenarios.items():
        for objective, r in results.items():
            print(f"{name:8} {objective:9} {r['offers']:>7} offers: median {r['median_ms']:6.2f} ms "
                  f"(min {r['min_ms']:.2f}, CPU {r['cpu_median_ms']:.2f}), {r['per_offer_ns']:.0f} ns per offer; "
                  f"{r['options']} options, {r['rejected_rows']} rejected rows")


if __name__ == "__main__":
    main()
