"""Time `preset_stats` for the largest presets: median of repeated runs, in milliseconds.

Run: `PYTHONPATH=. .venv/bin/python bench/bench_model_stats.py [--repeat R] [--json]`.
Target (issue 2): computing the statistics of the largest preset takes under 50 ms. "Largest" is
measured two ways, by parameters (llama-7b) and by rows (the preset with the most layer rows);
every preset is timed and the slowest is reported against the target. Nothing is cached: each
run builds the layer list and walks it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from workers.sizing.presets.registry import preset_names, preset_stats

TARGET_MS = 50.0


def time_preset(name: str, repeat: int) -> float:
    """Return the median wall time of `preset_stats(name)` over `repeat` runs, in milliseconds."""
    preset_stats(name)  # warm imports and caches of the interpreter, not of gpugauge
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        preset_stats(name)
        runs.append((time.perf_counter() - start) * 1e3)
    return statistics.median(runs)


def main() -> int:
    """Time every preset and report the largest ones against the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = {}
    for name in preset_names():
        stats = preset_stats(name)
        results[name] = {
            "median_ms": round(time_preset(name, args.repeat), 3),
            "parameters": stats.parameters,
            "rows": len(stats.layers),
        }
    by_params = max(results, key=lambda n: results[n]["parameters"])
    by_rows = max(results, key=lambda n: results[n]["rows"])
    slowest = max(results, key=lambda n: results[n]["median_ms"])
    summary = {
        "largest_by_parameters": by_params,
        "largest_by_rows": by_rows,
        "slowest": slowest,
        "slowest_ms": results[slowest]["median_ms"],
        "target_ms": TARGET_MS,
        "meets_target": results[slowest]["median_ms"] < TARGET_MS,
        "presets": results,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for name, r in results.items():
            print(f"{name:20} {r['median_ms']:8.2f} ms  {r['rows']:5d} rows  {r['parameters']:>15,} params")
        print(
            f"largest by parameters: {by_params} {results[by_params]['median_ms']:.2f} ms; "
            f"by rows: {by_rows} {results[by_rows]['median_ms']:.2f} ms; "
            f"slowest: {slowest} {results[slowest]['median_ms']:.2f} ms (target < {TARGET_MS:.0f} ms)"
        )
    return 0 if summary["meets_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
