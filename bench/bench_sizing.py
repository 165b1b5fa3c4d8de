"""Time `estimate_on_gpu` the way ranking calls it: every GPU of the table x 1, 2, 4, 8 GPUs, one job.

Run: `PYTHONPATH=. .venv/bin/python bench/bench_sizing.py [--layers N] [--repeat R] [--json]`.
Target (issue 3 brief): under about 0.2 ms per call for a 200-layer model. The first pass over a job
fills the per-model caches (layer work, activations, one-GPU times); it is reported apart from the
median of later passes, which a ranking request over one job does not see either (one job: one pass).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from sizing_fixtures import resnet50, tiny_layers, totals

from catalog.gpus import gpus_by_slug
from workers.sizing.estimate import estimate_on_gpu
from workers.sizing.spec import Dataset, JobSpec, Training

COUNTS = (1, 2, 4, 8)


def _job(layers: int) -> JobSpec:
    """Return a job whose model has about `layers` rows (ResNet-50 rows, topped up with dense rows)."""
    base = resnet50()
    rows = list(base.layers[:layers])
    if len(rows) < layers:
        rows += tiny_layers(layers - len(rows), width=1024).layers
    return JobSpec(totals("bench", rows), Training(batch_size=64), Dataset(samples=1_281_167,
                                                                          preprocess_ms_per_sample=1.0))


def _pass(job: JobSpec) -> float:
    """Run one ranking-shaped pass; return milliseconds per call."""
    known = gpus_by_slug()
    start = time.perf_counter()
    for gpu in known.values():
        for count in COUNTS:
            estimate_on_gpu(job, gpu, gpu_count=count, known_gpus=known)
    return (time.perf_counter() - start) * 1000 / (len(known) * len(COUNTS))


def main() -> None:
    """Print the first-pass and median per-call times."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    job = _job(args.layers)
    first_ms = _pass(job)
    fresh = [_pass(replace(job, model=replace(job.model))) for _ in range(args.repeat)]  # new model object
    result = {"layers": len(job.model.layers), "calls_per_pass": len(gpus_by_slug()) * len(COUNTS),
              "first_pass_ms_per_call": round(first_ms, 4),
              "median_fresh_model_ms_per_call": round(statistics.median(fresh), 4)}
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:32s} {value}")


if __name__ == "__main__":
    main()
