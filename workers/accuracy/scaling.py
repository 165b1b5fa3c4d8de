"""Multi-GPU speed-up against NVIDIA DeepLearningExamples' published scaling tables (data/scaling.json).

Each record gives one model on 1 and on n GPUs of one DGX machine (ResNet-50 in PyTorch and
TensorFlow, BERT-large pre-training and SQuAD fine-tuning in PyTorch; 8 and 16 GPUs) with the
speed-up the table states. The core's speed-up is `speedup_vs_one_gpu` of the same job on n GPUs
(timing.estimate_iteration_ms), so its single-GPU error cancels out. Each row also carries what the
measured speed-up implies per iteration beyond one GPU's time (n x t1 / speed-up - t1, with t1 the
core's one-GPU time) beside the whole gradient exchange the core gives the links: a loss much larger
than the whole exchange is not communication.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog.types import GpuSpec
from workers.accuracy.accuracy import percentile
from workers.sizing.layers.attention import Attention
from workers.sizing.multigpu import allreduce_ms, ring_link
from workers.sizing.overheads import GRADIENT_BYTES
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Framework, Optimizer, Precision, Training
from workers.sizing.timing import estimate_iteration_ms

SCALING_PATH = Path(__file__).resolve().parent / "data" / "scaling.json"


@dataclass(frozen=True)
class ScalingRow:
    """One published speed-up beside the core's."""

    id: str
    model: str
    gpu: str
    gpu_count: int
    precision: str
    predicted: float
    measured: float
    single_gpu_ms: float  # the core's one-GPU iteration
    implied_loss_ms: float  # per iteration, beyond one GPU's time, that the measured speed-up implies
    exchange_ms: float  # the whole gradient exchange of one update, as the core times it

    @property
    def error(self) -> float:
        """Return (predicted - measured) / measured."""
        return (self.predicted - self.measured) / self.measured


def load_scaling(path: Path = SCALING_PATH) -> list[dict[str, Any]]:
    """Read the scaling records."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def timed_sequence_length(record: Mapping[str, Any]) -> int | None:
    """Return the length a record's steps compute: `timed_sequence_length` where its batches are padded
    to less than `sequence_length` (binned or dynamically padded runs, e.g. DLE's BERT phase 2), else that."""
    seq = record.get("timed_sequence_length") or record.get("sequence_length")
    return int(seq) if seq else None


def compare_scaling(record: Mapping[str, Any], gpus: Mapping[str, GpuSpec]) -> ScalingRow:
    """Predict one record's speed-up on its GPUs."""
    seq = timed_sequence_length(record)
    model = preset_stats(record["model"], sequence_length=seq) if seq else preset_stats(record["model"])
    training = Training(batch_size=record["batch_size"], sequence_length=seq,
                        precision=Precision(record["precision"]), optimizer=Optimizer(record["optimizer"]),
                        framework=Framework(record["framework"]), update_interval=record["update_interval"],
                        tf32_matmul=record.get("tf32_matmul"), attention=Attention(record.get("attention", "auto")))
    gpu, n = gpus[record["gpu"]], int(record["gpu_count"])
    one = estimate_iteration_ms(model, training, gpu).total_ms
    per_node = record.get("gpus_per_node")  # the machine, where the record names one (DGX-2: 16)
    many = estimate_iteration_ms(model, training, gpu, gpu_count=n, gpus_per_node=per_node)
    measured = float(record["measured"]["speedup"])
    link, bandwidth = ring_link(gpu, n, gpus_per_node=per_node)
    exchange = allreduce_ms(model.parameters * GRADIENT_BYTES, gpu_count=n, link_gb_per_s=bandwidth, link=link)
    return ScalingRow(id=str(record["id"]), model=str(record["model"]), gpu=gpu.slug, gpu_count=n,
                      precision=str(record["precision"]), predicted=many.speedup_vs_one_gpu, measured=measured,
                      single_gpu_ms=one, implied_loss_ms=n * one / measured - one, exchange_ms=exchange)


def summarise_scaling(rows: Sequence[ScalingRow]) -> dict[str, tuple[int, float, float]]:
    """Return (count, median |error|, 90th percentile |error|) for all rows, per model and GPU count."""
    groups: dict[str, list[float]] = {"all": []}
    for row in rows:
        for key in ("all", row.model, f"{row.gpu_count} GPUs", f"{row.model} {row.precision}"):
            groups.setdefault(key, []).append(abs(row.error))
    return {k: (len(v), percentile(v, 50), percentile(v, 90)) for k, v in groups.items()}
