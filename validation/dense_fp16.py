"""Fault 9 of issue 11: do fp16 dense layers on Volta run well below the tensor-core factor of other cards?

Takes every single-GPU mixed-precision BERT/GPT throughput record (workers/accuracy/data/measurements.json
and the one-GPU figures of NVIDIA DeepLearningExamples' tables in scaling.json), predicts it, and prints
per GPU generation the error and the whole-step utilisation (training FLOPs / time / the card's fp16
tensor peak) measured and predicted. `--volta F` re-runs with Volta's tensor-core factor set to F
(efficiency.ARCHITECTURE_FACTOR) to show what a per-generation change would do.

    .venv/bin/python validation/dense_fp16.py [--volta 0.6]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from catalog.gpus import gpus_by_slug  # noqa: E402
from workers.accuracy.accuracy import load_measurements, measured_samples_per_s, percentile  # noqa: E402
from workers.accuracy.jobs import record_job  # noqa: E402
from workers.accuracy.scaling import load_scaling, timed_sequence_length  # noqa: E402
from workers.sizing import efficiency  # noqa: E402
from workers.sizing.efficiency import MathUnit  # noqa: E402
from workers.sizing.presets.registry import preset_stats  # noqa: E402
from workers.sizing.spec import Framework, Optimizer, Precision, Training  # noqa: E402
from workers.sizing.stats import ModelStats  # noqa: E402
from workers.sizing.timing import estimate_iteration_ms, training_flops  # noqa: E402

FAMILIES = ("bert", "gpt")


def _cases() -> list[tuple[str, ModelStats, Training, str, float]]:
    """Return (id, model, training, gpu, measured samples/s) of every mixed-precision BERT/GPT one-GPU run."""
    cases = []
    for record in load_measurements():
        rate = measured_samples_per_s(record)
        if (rate is None or (record.get("gpu_count") or 1) != 1 or record["precision"] == "fp32"
                or not str(record["model"]).startswith(FAMILIES)):
            continue
        job = record_job(record)
        cases.append((str(record["id"]), job.job.model, job.job.training, job.gpu, rate))
    for record in load_scaling():
        if record["precision"] == "fp32" or not str(record["model"]).startswith(FAMILIES):
            continue
        seq = timed_sequence_length(record)  # binned phase-2 runs: the mean padded length
        training = Training(batch_size=record["batch_size"], sequence_length=seq,
                            precision=Precision(record["precision"]), optimizer=Optimizer(record["optimizer"]),
                            framework=Framework(record["framework"]), update_interval=record["update_interval"])
        cases.append((str(record["id"])[:-2] + "-1", preset_stats(record["model"], sequence_length=seq), training,
                      str(record["gpu"]), float(record["measured"]["single_gpu_samples_per_s"])))
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    """Print each run's error and utilisation, and the median error per generation."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--volta", type=float, default=None, help="Volta's tensor-core factor to try")
    args = parser.parse_args(argv)
    if args.volta is not None:
        efficiency.ARCHITECTURE_FACTOR[("volta", MathUnit.TENSOR)] = args.volta
    gpus = gpus_by_slug()
    errors: dict[str, list[float]] = {}
    for case_id, model, training, slug, measured in _cases():
        gpu = gpus[slug]
        time = estimate_iteration_ms(model, training, gpu)
        predicted = training.batch_size * 1000.0 / time.total_ms
        flops = training_flops(model, training) / training.batch_size  # per sample
        peak = gpu.fp16_tflops * 1e12
        error = predicted / measured - 1
        errors.setdefault(gpu.architecture, []).append(error)
        used, expected = measured * flops / peak, predicted * flops / peak
        print(f"{case_id:36s} {slug:12s} b{training.batch_size:<4d} predicted {predicted:7.1f} measured {measured:7.1f}"
              f" {error:+7.1%}  utilisation measured {used:5.1%} predicted {expected:5.1%}")
    print()
    for arch, values in sorted(errors.items()):
        print(f"{arch:10s} n={len(values):2d} median error {percentile(values, 50):+6.1%}"
              f"  median |error| {percentile([abs(v) for v in values], 50):6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
