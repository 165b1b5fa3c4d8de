"""The strategy core against public runs bigger than one GPU (workers/accuracy/data/strategies.json).

Each record names its strategy (data-parallel kind, adapter, checkpointing, machines); it is predicted
with that strategy fixed (strategies/footprint.py, steptime.py) and yields rows like accuracy.py's:
`memory` (relative error of the peak, compared as the record's tool saw it), `throughput` (samples/s
of the whole job) and `fits` (agreement with "ran" / "out of memory"). Rows are summarised per
strategy family, e.g. "lora", "qlora", "zero3 x1 machine", "zero3 x8 machines".

Beside each memory row stand the two published estimators the issue names, reimplemented from their
documented formulas (neither is a dependency), which count model states only:
- DeepSpeed `estimate_zero2_model_states_mem_needs` (no offload): 4 x params + 16 x params / GPUs;
  `estimate_zero3_model_states_mem_needs` (no offload): 4 x largest layer + 18 x params / GPUs
  (microsoft/DeepSpeed docs/code-docs/source/memory.rst, read at 077e6740);
- Hugging Face `accelerate estimate-memory`, "Training using Adam": 4 x the model's size in the
  load dtype, "1x for the model, 1x for the gradients, and 2x for the optimizer"
  (huggingface.co/docs/accelerate/usage_guides/model_size_estimator).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from catalog.types import GpuSpec
from workers.accuracy.accuracy import compared_memory_bytes, percentile, relative_error
from workers.accuracy.jobs import FLASH_ATTENTION_PREFIXES, record_checkpointing, record_job, without_attention_matrix
from workers.accuracy.sharded import SHARDED_GPUS_PER_NODE, network_gbit_per_s
from workers.sizing.efficiency import NVLINK_EFFICIENCY
from workers.sizing.layers.attention import Attention
from workers.sizing.memory import fits
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.collectives import node_links
from workers.sizing.strategies.footprint import layout_memory
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.steptime import layout_time
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel

STRATEGIES_PATH = Path(__file__).resolve().parent / "data" / "strategies.json"
# Runs whose attention keeps no s x s matrix: LitGPT (torch SDPA), llm-foundry (flash/triton),
# torchtitan (SDPA). The QLoRA paper's 2023 Hugging Face run used eager attention.
EAGER_ATTENTION_PREFIXES = ("qlora-paper-",)


@dataclass(frozen=True)
class StrategyRow:
    """One measured figure of a strategy record beside our prediction and the two published estimators."""

    id: str
    strategy: str  # the family the summary groups by
    metric: str  # "memory", "throughput" or "fits"
    predicted: float
    measured: float
    error: float
    deepspeed_bytes: float = 0.0  # model states only (memory rows)
    accelerate_bytes: float = 0.0
    agrees: bool | None = None
    split: str = ""


@dataclass(frozen=True)
class StrategySummary:
    """Errors of one metric over one strategy family."""

    strategy: str
    metric: str
    count: int
    median_abs_error: float
    median_error: float
    deepspeed_median_abs_error: float | None = None
    accelerate_median_abs_error: float | None = None
    agreement: float | None = None


def load_strategy_records(path: Path = STRATEGIES_PATH) -> list[dict[str, Any]]:
    """Read the strategy records."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def sharded_memory_records(measurements: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the FSDP peak-memory records of measurements.json as strategy records, for the side-by-side.

    They are torchtitan's FSDP2 runs (validation README source 8: selective activation checkpointing,
    machines of 8 GPUs), kept there for the plain model's checks. torchtitan's "selective" is its
    op-level policy (train_configs/llama3_8b.toml `selective_ac_option = 'op'`), not Megatron's
    attention-only recomputation: `selective_ops` (strategies/retention.py).
    """
    found: list[dict[str, Any]] = []
    for rec in measurements:
        if str(rec["id"]).startswith("titan-") and "peak_memory_bytes" in rec["measured"]:
            found.append({**rec, "strategy": {"data_parallel": "zero3", "gpus_per_node": SHARDED_GPUS_PER_NODE,
                                              "checkpointing": record_checkpointing(rec),
                                              "network_gbit_per_s": 3200.0}})
    return found


def record_layout(record: Mapping[str, Any]) -> Layout:
    """Return the record's strategy as a Layout."""
    s = record["strategy"]
    adapter = s.get("adapter")
    return Layout(
        DataParallel(s["data_parallel"]), gpu_count=int(record["gpu_count"]), gpus_per_node=int(s["gpus_per_node"]),
        tensor_parallel=int(s.get("tensor_parallel") or 1), pipeline_stages=int(s.get("pipeline_stages") or 1),
        adapter=Adapter(kind=AdapterKind(adapter["kind"]), rank=int(adapter["rank"]), targets=tuple(adapter["targets"]),
                        double_quantization=bool(adapter.get("double_quantization", True)),
                        quantized_inputs_kept=bool(adapter.get("quantized_inputs_kept", False))) if adapter else None,
        checkpointing=Checkpointing(s["checkpointing"]),
    )


def family(record: Mapping[str, Any]) -> str:
    """Return the strategy family a record's rows are summarised under."""
    s = record["strategy"]
    if s.get("adapter"):
        return str(s["adapter"]["kind"])
    nodes = -(-int(record["gpu_count"]) // int(s["gpus_per_node"]))
    name = f"{s['data_parallel']} x{nodes} machine{'s' if nodes > 1 else ''}" if nodes <= 1 else \
        f"{s['data_parallel']} several machines"
    return f"{name}, fp8" if record["precision"] == "fp8-mixed" else name


def deepspeed_model_states_bytes(*, parameters: int, largest_layer: int, gpus: int, stage: int) -> float:
    """Return DeepSpeed's documented per-GPU model-state estimate without offload (ZeRO-2 or ZeRO-3)."""
    if stage == 3:
        return 4 * largest_layer + 18 * parameters / gpus
    return 4 * parameters + 16 * parameters / gpus


def accelerate_training_bytes(*, parameters: int, dtype_bytes: int) -> float:
    """Return accelerate estimate-memory's "Training using Adam": 4 x the model's size in its dtype."""
    return 4.0 * parameters * dtype_bytes


def _job(record: Mapping[str, Any]) -> Any:
    """Return the record's job, with FlashAttention where the run had it."""
    case = record_job({**record, "recompute": False})
    model = case.job.model
    if str(record["id"]).startswith(EAGER_ATTENTION_PREFIXES):  # the math path: s x s probabilities kept
        return replace(case.job, training=replace(case.job.training, attention=Attention.MATH))
    if model.layers and not str(record["id"]).startswith(FLASH_ATTENTION_PREFIXES):  # record_model did those
        shape = transformer_shape(model)
        heads = shape.heads if shape is not None else 1
        model = without_attention_matrix(model, heads=heads, causal=True)
    return replace(case.job, model=model)


def compare_strategy_record(record: Mapping[str, Any], gpus: Mapping[str, GpuSpec]) -> list[StrategyRow]:
    """Return the rows of one strategy record: memory, throughput and fit where it measured them."""
    job = _job(record)
    gpu = gpus[str(record["gpu"])]
    layout = record_layout(record)
    batch = int(record["batch_size"])
    memory = layout_memory(job, layout, gpu=gpu, batch_size=batch)
    measured = record["measured"]
    rid, fam, split = str(record["id"]), family(record), str(record["split"])
    rows: list[StrategyRow] = []
    if "peak_memory_bytes" in measured:
        peak = float(compared_memory_bytes(memory.breakdown, kind=str(measured["memory_kind"]), gpu=gpu))
        value = float(measured["peak_memory_bytes"])
        shape = transformer_shape(job.model)
        largest = shape.largest_unit_parameters if shape is not None else job.model.parameters
        stage = 3 if layout.data_parallel in (DataParallel.ZERO3, DataParallel.HYBRID_SHARD) else 2
        rows.append(StrategyRow(
            id=rid, strategy=fam, metric="memory", predicted=peak, measured=value,
            error=relative_error(peak, value), split=split,
            deepspeed_bytes=deepspeed_model_states_bytes(parameters=job.model.parameters, largest_layer=largest,
                                                         gpus=layout.gpu_count, stage=stage),
            accelerate_bytes=accelerate_training_bytes(parameters=job.model.parameters, dtype_bytes=2)))
    if "fits" in measured:
        predicted_fit = fits(memory.breakdown.total_bytes, gpu)
        rows.append(StrategyRow(id=rid, strategy=fam, metric="fits", predicted=float(predicted_fit),
                                measured=float(bool(measured["fits"])), error=0.0 if predicted_fit ==
                                bool(measured["fits"]) else 1.0, agrees=predicted_fit == bool(measured["fits"]),
                                split=split))
    if "throughput_samples_per_s" in measured:
        network = network_gbit_per_s(gpu, record["strategy"].get("network_gbit_per_s"))
        links = node_links(nvlink_gb_per_s=gpu.nvlink_gb_per_s, pcie_gen=gpu.pcie_gen, network_gbit_per_s=network,
                           nvlink_efficiency=NVLINK_EFFICIENCY)
        time = layout_time(job, layout, gpu, links=links, batch_size=batch,
                           update_interval=int(record["update_interval"]),
                           trainable_parameters=memory.trainable_parameters)
        predicted = time.samples_per_iteration * 1000.0 / time.iteration_ms
        value = float(measured["throughput_samples_per_s"])
        rows.append(StrategyRow(id=rid, strategy=fam, metric="throughput", predicted=predicted, measured=value,
                                error=relative_error(predicted, value), split=split))
    return rows


def compare_strategies(records: Sequence[Mapping[str, Any]], gpus: Mapping[str, GpuSpec]) -> list[StrategyRow]:
    """Return every row of every strategy record."""
    return [row for record in records for row in compare_strategy_record(record, gpus)]


def summarise_strategies(rows: Sequence[StrategyRow]) -> list[StrategySummary]:
    """Return per (strategy family, metric) the median absolute and signed errors, estimators beside ours."""
    groups: dict[tuple[str, str], list[StrategyRow]] = {}
    for row in rows:
        groups.setdefault((row.strategy, row.metric), []).append(row)
    summaries: list[StrategySummary] = []
    for (fam, metric), members in sorted(groups.items()):
        errors = [r.error for r in members]
        summary = StrategySummary(strategy=fam, metric=metric, count=len(members),
                                  median_abs_error=percentile([abs(e) for e in errors], 50),
                                  median_error=percentile(errors, 50))
        if metric == "memory":
            summary = replace(summary,
                              deepspeed_median_abs_error=percentile(
                                  [abs(relative_error(r.deepspeed_bytes, r.measured)) for r in members], 50),
                              accelerate_median_abs_error=percentile(
                                  [abs(relative_error(r.accelerate_bytes, r.measured)) for r in members], 50))
        if metric == "fits":
            summary = replace(summary, agreement=sum(1 for r in members if r.agrees) / len(members))
        summaries.append(summary)
    return summaries
