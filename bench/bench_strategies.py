"""Time strategy recommendations (jobs bigger than one GPU) over the bundled catalog: the issue-12 scenarios.

Run: `PYTHONPATH=. .venv/bin/python bench/bench_strategies.py [--repeat R] [--json]`.
Each run ranks with a fresh copy of the model (a new object: no per-model memo is warm), as a worker
sees a new job; CPU seconds of this process (time.process_time), medians of `--repeat` runs after one
warm-up (which loads the catalog and builds its index). Wall time is printed beside it: on a shared
machine it measures the neighbours too.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from catalog.loader import load_catalog
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job

BF16_ADAMW = {"precision": "bf16-mixed", "optimizer": "adamw"}
CLOUDS = {"providers": ["aws", "gcp"], "pricing": ["on_demand"]}
SCENARIOS: dict[str, dict[str, Any]] = {
    "full-ft-llama7b": {"model": {"preset": "llama-7b"},
                        "training": {"batch_size": 4, "sequence_length": 2048, **BF16_ADAMW},
                        "dataset": {"samples": 50_000}, "constraints": CLOUDS},
    "lora-llama7b": {"model": {"preset": "llama-7b"},
                     "training": {"batch_size": 4, "sequence_length": 2048, **BF16_ADAMW,
                                  "parallelism": {"adapter": {"kind": "lora", "rank": 16}}},
                     "dataset": {"samples": 20_000}, "constraints": CLOUDS},
    "qlora-llama7b": {"model": {"preset": "llama-7b"},
                      "training": {"batch_size": 2, "sequence_length": 1024, **BF16_ADAMW,
                                   "parallelism": {"adapter": {"kind": "qlora", "rank": 16}}},
                      "dataset": {"samples": 10_000}, "constraints": CLOUDS},
    "lora-llama70b": {"model": {"preset": "llama2-70b"},
                      "training": {"batch_size": 1, "sequence_length": 4096, **BF16_ADAMW,
                                   "parallelism": {"adapter": {"kind": "lora", "rank": 16}}},
                      "dataset": {"samples": 10_000}, "constraints": CLOUDS},
    "pretrain-8b-64gpu": {"model": {"preset": "llama3-8b"},
                          "training": {"batch_size": 2, "sequence_length": 8192, **BF16_ADAMW},
                          "dataset": {"samples": 2_000_000}, "constraints": {**CLOUDS, "max_gpus": 64},
                          "objective": "time"},
}


def measure(spec: dict[str, Any], *, repeat: int) -> dict[str, float]:
    """Return the median CPU and wall milliseconds of one recommendation, each with a fresh model object."""
    _, job = load_job(spec)
    catalog = load_catalog()
    recommend(dataclasses.replace(job, model=dataclasses.replace(job.model)), catalog)  # warm-up
    cpu, wall = [], []
    for _ in range(repeat):
        fresh = dataclasses.replace(job, model=dataclasses.replace(job.model))
        c0, w0 = time.process_time(), time.perf_counter()
        recommend(fresh, catalog)
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - w0) * 1000)
    return {"cpu_ms": statistics.median(cpu), "wall_ms": statistics.median(wall)}


def main() -> None:
    """Print the medians per scenario."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("names", nargs="*", help="scenarios to time (default: all)")
    args = parser.parse_args()
    results = {name: measure(SCENARIOS[name], repeat=args.repeat) for name in (args.names or SCENARIOS)}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        print(f"{name:20s} cpu {r['cpu_ms']:9.1f} ms   wall {r['wall_ms']:9.1f} ms")


if __name__ == "__main__":
    main()
