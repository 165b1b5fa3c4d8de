"""The sizing core against the step measurements made here (workers/accuracy/data/step_measurements.json).

Each record is predicted with the core as a user would ask: a preset at the measured input shape
or sequence length, or the exported ONNX file through the importer. The compared figure is tensor
memory, the predicted peak minus `framework_reserve` (what only a GPU adds: CUDA context, library
workspaces, allocator slack), against the measured intrinsic peak of live tensor bytes.

    .venv/bin/python validation/step_compare.py [--export train|train-dynamic|eval|eval-dynamic]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workers.accuracy.accuracy import percentile  # noqa: E402
from workers.modelimport.onnx_import import onnx_model_stats  # noqa: E402
from workers.sizing.layers.attention import Attention  # noqa: E402
from workers.sizing.layers.loss import Loss, with_loss  # noqa: E402
from workers.sizing.memory import estimate_memory  # noqa: E402
from workers.sizing.presets.registry import preset_stats  # noqa: E402
from workers.sizing.requirements import MemoryBreakdown  # noqa: E402
from workers.sizing.spec import Optimizer, OptimizerImplementation, Precision, Training  # noqa: E402
from workers.sizing.stats import ModelStats  # noqa: E402

RECORDS_PATH = ROOT / "workers" / "accuracy" / "data" / "step_measurements.json"


@dataclass(frozen=True)
class StepRow:
    """One record's measured and predicted tensor memory."""

    id: str
    family: str
    measured_bytes: int
    predicted_bytes: int
    measured_phase: str
    predicted: MemoryBreakdown
    predicted_phase: str = ""
    tracker_bytes: int = 0  # the storage tracker's peak: tensors only, no kernel's internal buffers
    split: str = "fit"  # "holdout": an architecture added after the core was built ("unseen")
    unseen_set: int = 0  # 1: the first unseen set (its misses led to fixes), 2: measured after them; 3, 4: likewise
    # for Hugging Face decoders (3 led to the composed-RMSNorm and K/V-repeat rows, 4 measured after them)

    @property
    def error(self) -> float:
        """Return (predicted - measured) / measured."""
        return (self.predicted_bytes - self.measured_bytes) / self.measured_bytes

    @property
    def tracker_error(self) -> float:
        """Return (predicted - tracker) / tracker (0 when the record has no tracker peak)."""
        return (self.predicted_bytes - self.tracker_bytes) / self.tracker_bytes if self.tracker_bytes else 0.0


def load_step_records(path: Path = RECORDS_PATH) -> list[dict[str, Any]]:
    """Read the step measurement records."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def record_model(record: Mapping[str, Any], *, export: str = "train") -> ModelStats:
    """Return the model statistics the core computes for a record (preset, or its ONNX fixture),
    with the loss row the job builder appends (the record's `loss`, cross-entropy by default)."""
    return with_loss(_record_network(record, export=export), Loss(record.get("loss", "cross_entropy")))


def _record_network(record: Mapping[str, Any], *, export: str) -> ModelStats:
    """Return the network's statistics without the loss."""
    seq, shape = record.get("sequence_length"), record.get("input_shape")
    if "hf_config" in record:
        from workers.modelimport.models import resolve_model

        return resolve_model({"hf_config": record["hf_config"]}, sequence_length=seq)
    if "onnx" in record:
        data = (ROOT / record["onnx"][export]).read_bytes()
        return onnx_model_stats(data, name=record["model"], sequence_length=seq, batch_size=record["batch_size"])
    if record["model"] in ("dcgan", "vae-mnist", "dqn-atari", "lstm-meta-learner"):
        return preset_stats(record["model"])
    if shape is not None:
        return preset_stats(record["model"], input_shape=shape)
    return preset_stats(record["model"], sequence_length=seq)


def record_training(record: Mapping[str, Any]) -> Training:
    """Return the run of a record as the core's Training."""
    return Training(batch_size=record["batch_size"], sequence_length=record.get("sequence_length"),
                    precision=Precision(record["precision"]), optimizer=Optimizer(record["optimizer"]),
                    loss=Loss(record.get("loss", "cross_entropy")),
                    attention=Attention(record.get("attention", "auto")),
                    update_interval=int(record.get("update_interval") or 1),
                    optimizer_implementation=OptimizerImplementation(record.get("optimizer_implementation",
                                                                                "foreach")))


def compare_step_record(record: Mapping[str, Any], *, export: str = "train") -> StepRow:
    """Predict one record and pair it with its measurement."""
    model, training = record_model(record, export=export), record_training(record)
    measured = record["measured"]
    try:
        from workers.sizing.memory import step_peak
    except ImportError:  # the core before the step walk: no phase
        memory, phase = estimate_memory(model, training), ""
    else:
        peak = step_peak(model, training)
        memory, phase = peak.breakdown, peak.phase.value
    return StepRow(record["id"], record["family"], measured["peak_memory_bytes"],
                   memory.total_bytes - memory.framework_reserve_bytes, measured["peak_phase"], memory, phase,
                   int(measured.get("tracker_peak_bytes") or 0), record.get("split", "fit"),
                   int(record.get("unseen_set") or 0))


def summarise_errors(rows: Sequence[StepRow]) -> dict[str, tuple[int, float, float]]:
    """Return (count, median |error|, 90th percentile |error|) per family, for "all", and for the
    architectures the core was built on ("seen", split fit) and those added after ("unseen", holdout;
    "unseen-1" the set whose misses led to fixes, "unseen-2" the set measured after them)."""
    groups: dict[str, list[float]] = {"all": []}
    for row in rows:
        groups.setdefault(row.family, []).append(abs(row.error))
        groups["all"].append(abs(row.error))
        groups.setdefault("unseen" if row.split == "holdout" else "seen", []).append(abs(row.error))
        if row.unseen_set:
            groups.setdefault(f"unseen-{row.unseen_set}", []).append(abs(row.error))
    return {name: (len(v), percentile(v, 50), percentile(v, 90)) for name, v in groups.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Print each record's error and the per-family summary."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--export", default="train", choices=["train", "train-dynamic", "eval", "eval-dynamic"])
    parser.add_argument("--split", default="all", choices=["all", "fit", "holdout"],
                        help="holdout: only the architectures added after the core was built")
    args = parser.parse_args(argv)
    rows = [compare_step_record(r, export=args.export) for r in load_step_records()
            if args.split in ("all", r.get("split", "fit"))]
    for row in rows:
        print(f"{row.id:55s} measured {row.measured_bytes / 2**20:9.1f} MiB ({row.measured_phase:14s}) "
              f"predicted {row.predicted_bytes / 2**20:9.1f} MiB ({row.predicted_phase or '-':14s}) "
              f"{row.error:+7.1%}  (tracker {row.tracker_error:+7.1%})")
    print()
    for name, (n, median, p90) in sorted(summarise_errors(rows).items()):
        print(f"{name:14s} n={n:3d}  median |error| {median:6.1%}  p90 {p90:6.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
