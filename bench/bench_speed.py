"""Benchmark what needs no server, each figure beside its floor, in one run: the CLI, the task, big models, reloads.

Run by hand (no Redis needed):

    PYTHONPATH=. .venv/bin/python bench/bench_speed.py [--repeat 7]

Prints medians and ratios against issue 17's targets:
- `gpugauge --help` and `gpugauge estimate` on a preset, beside `python -c pass` (wall time of a fresh
  process): <= 0.3 s and <= 0.8 s;
- the recommendation task in-process (build the API's loaded spec, rank, dump; CPU time) for each
  example, warm (the same spec again: its strategy searches remembered) and cold (forgotten): <= 5 ms;
- a 10,000-layer model: the sizing core's estimate (<= 50 ms), and end to end (schema, build, estimate,
  dump; <= 50 ms), beside the same for a 10-layer model, with the end to end's parts (the schema, the
  layer builder, the estimate of a model object not seen before);
- a catalog reload when the version has not changed, beside a full load.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("resnet50-imagenet", "bert-finetune", "gpt2-pretrain", "dcgan-faces", "vae-mnist", "dqn-atari")


def _median_s(step: Callable[[], object], *, repeat: int, clock: Callable[[], float] = time.process_time) -> float:
    times = []
    for _ in range(repeat):
        started = clock()
        step()
        times.append(clock() - started)
    return statistics.median(times)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process_s(argv: list[str], *, repeat: int) -> tuple[float, float]:
    """Return the median (wall, CPU) seconds of a fresh process running argv."""
    def run() -> None:
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run()  # warm the file cache
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), _children_cpu_s()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(_children_cpu_s() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def cli_figures(*, repeat: int) -> dict[str, tuple[float, float]]:
    """Return the (wall, CPU) seconds of `python -c pass`, `gpugauge --help`, `gpugauge estimate SPEC`.

    On a shared machine the wall time is mostly waiting for a core; the CPU time is the process's own.
    """
    spec = ROOT / "bench" / ".preset-spec.json"
    spec.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}))
    gpugauge = [sys.executable, "-m", "service.cli"]
    try:
        return {"python -c pass": _process_s([sys.executable, "-c", "pass"], repeat=repeat),
                "gpugauge --help": _process_s([*gpugauge, "--help"], repeat=repeat),
                "gpugauge estimate (preset)": _process_s([*gpugauge, "estimate", str(spec)], repeat=repeat)}
    finally:
        spec.unlink(missing_ok=True)


def task_figures(*, repeat: int, cold: bool = False, vary: str = "") -> dict[str, float]:
    """Return the CPU ms of the recommendation task's work per example (what the worker runs).

    The same spec again and again finds its strategy searches remembered (strategies/search.py: a later
    job on the same model and training); `cold` forgets them before every task. Identical specs share
    one job at the API, so a worker sees new ones: `vary="epochs"` changes the epochs every task (what
    bench_api's jobs do; per-step work is shared), `vary="batch"` the batch size (nothing is shared).
    """
    from catalog.loader import load_catalog
    from workers.ranking.catalog_index import catalog_index
    from workers.ranking.recommend import PER_GPU_OPTIONS, recommend
    from workers.schemas import JobSpecSchema, dump_recommendation
    from workers.sizing.strategies import search
    from workers.tasks.recommend import built_job

    catalog = load_catalog()
    # A worker readies itself before its first job (workers.tasks.runtime.settle): the ranking's catalog
    # index built, the heap frozen so that no full collection walks what is alive now. The same here.
    catalog_index(catalog)
    gc.freeze()
    out = {}
    for name in EXAMPLES:
        raw = json.loads((ROOT / "examples" / f"{name}.json").read_text())
        data, training = JobSpecSchema().load(raw), raw["training"]
        # the loaded specs a varied run takes in turn (the API loads a spec; the task is what follows)
        variants = iter([JobSpecSchema().load({**raw, "training": {**training, **(
            {"epochs": training.get("epochs", 1) + i / 1000} if vary == "epochs" else
            {"batch_size": max(1, training["batch_size"] - 20 + i % 41)})}}) for i in range(repeat + 5)] if vary
            else [])

        def task(data: dict[str, Any] = data, variants: Any = variants) -> None:
            if cold:
                search._SEARCHES.clear()
            job = built_job(next(variants) if vary else data)
            dump_recommendation(recommend(job, catalog, per_gpu_rows=PER_GPU_OPTIONS))

        for _ in range(5):  # a worker that has run a few jobs: the first of a process ran up to 1.7x slower
            task()
        out[name] = _median_s(task, repeat=repeat) * 1000
    return out


def _layers(count: int) -> list[dict[str, Any]]:
    block = [{"type": "linear", "out_features": 512}, {"type": "relu"}]
    return (block * (count // 2 + 1))[:count]


def big_model_figures(*, repeat: int) -> dict[str, float]:
    """Return CPU ms of a 10,000-layer estimate (core; end to end) beside a 10-layer one."""
    from catalog.loader import load_catalog
    from workers.schemas import EstimateRequestSchema, RequirementsSchema
    from workers.schemas.specs import build_job
    from workers.sizing.estimate import estimate_requirements

    known = {g.slug: g for g in load_catalog().gpus}
    out = {}
    for count in (10, 10_000):
        raw = {"model": {"input_shape": [512], "layers": _layers(count)}, "training": {"batch_size": 32}}
        data = EstimateRequestSchema().load(raw)
        job = build_job(data)
        out[f"{count} layers: sizing core"] = _median_s(
            lambda job=job: estimate_requirements(job, known_gpus=known), repeat=repeat) * 1000

        def end_to_end(raw: dict[str, Any] = raw) -> None:
            loaded = EstimateRequestSchema().load(raw)
            RequirementsSchema().dump(estimate_requirements(build_job(loaded), known_gpus=known))

        out[f"{count} layers: schema, build, estimate, dump"] = _median_s(end_to_end, repeat=repeat) * 1000
        if count > 10:  # its parts: the schema, the layer builder, the estimate of a model not seen before
            out[f"{count} layers: schema"] = _median_s(lambda raw=raw: EstimateRequestSchema().load(raw),
                                                       repeat=repeat) * 1000
            out[f"{count} layers: build"] = _median_s(lambda data=data: build_job(data), repeat=repeat) * 1000
            cold = []
            for _ in range(repeat):  # a model object not seen before: none of the sizing core's memos know it
                fresh = build_job(data)
                started = time.process_time()
                estimate_requirements(fresh, known_gpus=known)
                cold.append(time.process_time() - started)
            out[f"{count} layers: estimate, new model"] = statistics.median(cold) * 1000
    return out


def reload_figures(*, repeat: int) -> dict[str, float]:
    """Return CPU ms of a catalog reload with the version unchanged, beside a full load."""
    from catalog.loader import current_version_name, load_catalog
    from workers.tasks.runtime import CatalogCache

    now = [0.0]
    cache = CatalogCache(load_catalog, reload_s=1.0, current_name=current_version_name, clock=lambda: now[0])
    cache.get()

    def unchanged() -> None:
        now[0] += 2.0  # past the reload interval: the cache looks again
        cache.get()

    return {"full load": _median_s(load_catalog, repeat=repeat) * 1000,
            "reload, version unchanged": _median_s(unchanged, repeat=repeat) * 1000}


def main() -> int:
    """Measure and print every figure with its floor and target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = cli_figures(repeat=args.repeat)
    floor_wall, floor_cpu = cli["python -c pass"]
    for name, target in (("gpugauge --help", 0.3), ("gpugauge estimate (preset)", 0.8)):
        wall, cpu = cli[name]
        print(f"{name:28s} wall {wall:6.3f} s, CPU {cpu:6.3f} s  (python -c pass: wall {floor_wall:.3f} s, CPU "
              f"{floor_cpu:.3f} s)  target <= {target} s: wall {'met' if wall <= target else 'MISSED'}, "
              f"CPU {'met' if cpu <= target else 'MISSED'}")
    for cold, vary, label in ((False, "", "warm (the same spec again)"), (True, "", "cold (searches forgotten)"),
                              (False, "epochs", "new spec (its epochs differ)"),
                              (False, "batch", "new batch size (nothing shared)")):
        for name, ms in task_figures(repeat=args.repeat * 3, cold=cold, vary=vary).items():
            print(f"recommendation task, {label}, {name:18s} {ms:6.2f} ms CPU  target <= 5 ms: "
                  f"{'met' if ms <= 5 else 'MISSED'}")
    print(f"load average before the in-process figures: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    # A serving process freezes its heap once warm (workers.tasks.runtime.settle, in `gpugauge serve` and
    # `gpugauge worker`): the collector never scans what is alive now. The figures below run as they do there.
    gc.freeze()
    big = big_model_figures(repeat=args.repeat)
    for name, ms in big.items():
        target = " target <= 50 ms: " + ("met" if ms <= 50 else "MISSED") if name.startswith("10000") and \
            name.endswith(("core", "dump")) else ""
        print(f"estimate, {name:40s} {ms:8.2f} ms CPU{target}")
    reload = reload_figures(repeat=args.repeat)
    print(f"catalog full load {reload['full load']:.2f} ms CPU; reload with the version unchanged "
          f"{reload['reload, version unchanged']:.3f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
