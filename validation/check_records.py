"""Check workers/accuracy/data/measurements.json and strategies.json: fields, slugs, enums, numbers, stats."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RECORDS_PATH = Path(__file__).resolve().parent.parent / "workers" / "accuracy" / "data" / "measurements.json"
# Runs bigger than one GPU (sharding, adapters, checkpointing, several machines): the same record
# format plus a `strategy` object, and `measured.fits` for "ran" / "out of memory" rows.
STRATEGIES_PATH = RECORDS_PATH.with_name("strategies.json")
DATA_PARALLEL = frozenset({"plain", "zero1", "zero2", "zero3", "hybrid_shard", "parameter_server"})
CHECKPOINTING = frozenset({"none", "selective", "selective_ops", "full"})  # strategies/types.py Checkpointing
ADAPTERS = frozenset({"lora", "qlora"})
LORA_TARGETS = frozenset({"q", "k", "v", "o", "mlp"})

# The fixed GPU slugs every gpugauge part uses (helper brief, "GPU slugs (fixed; everyone uses these)").
GPU_SLUGS = frozenset({
    "gtx-970", "gtx-980-ti", "titan-x-maxwell", "gtx-1050-ti", "gtx-1060-3gb", "gtx-1060-6gb",
    "gtx-1070", "gtx-1070-ti", "gtx-1080", "gtx-1080-ti", "titan-x-pascal", "titan-xp", "titan-v",
    "rtx-2080-ti", "rtx-3090", "rtx-4090", "k80", "m60", "p4", "p100-16gb", "v100-16gb", "v100-32gb",
    "t4", "a10", "a10g", "l4", "l40s", "a100-40gb", "a100-80gb", "h100-sxm", "h100-pcie", "h200", "b200",
})
# Model presets named in the validation brief; any other model must carry a "stats" object.
MODEL_PRESETS = frozenset({
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "vgg16", "alexnet", "bert-base",
    "bert-large", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "llama-7b", "vit-b16", "dcgan",
    "vae-mnist", "dqn-atari", "lstm-meta-learner",
})
PRECISIONS = frozenset({"fp32", "fp16-mixed", "bf16-mixed", "fp8-mixed"})  # workers/sizing/spec.py Precision
OPTIMIZERS = frozenset({"sgd", "momentum", "adam", "adamw", "rmsprop"})  # workers/sizing/spec.py Optimizer
OPTIMIZER_IMPLEMENTATIONS = frozenset({"foreach", "per_tensor", "fused"})  # spec.py OptimizerImplementation
GRADIENT_CLIPPINGS = frozenset({"none", "global", "per_tensor"})  # spec.py GradientClipping
ATTENTIONS = frozenset({"auto", "math", "efficient", "flash"})  # layers/attention.py Attention
# workers/sizing/spec.py Framework plus "torch7" (Lua Torch, 2016-2017 sources; compare it as pytorch).
FRAMEWORKS = frozenset({"pytorch", "tensorflow", "jax", "cntk", "torch7"})
# "intrinsic_live_tensors": the largest sum of live tensor bytes over the step, measured here
# (step_measurements.json); no CUDA context, workspace or allocator cache in it.
MEMORY_KINDS = frozenset({"nvidia-smi", "max_memory_allocated", "max_memory_reserved", "intrinsic_live_tensors",
                          "unknown"})
# Training steps measured here by validation/measure/ (CPU, torch 2.13.0): the same record format
# plus a `method`, the device and these fields.
STEP_RECORDS_PATH = RECORDS_PATH.with_name("step_measurements.json")
STEP_REQUIRED = ("method", "device", "family", "input_shape")
STEP_MEASURED = frozenset({"peak_phase", "phase_peak_bytes", "peak_by_category", "tracker_peak_bytes",
                           "tracker_peak_phase", "kept_bytes", "parameters", "trainable_parameters"})
PHASES = frozenset({"forward", "backward", "optimizer_step"})
SPLITS = frozenset({"fit", "holdout"})
REQUIRED = (
    "id", "model", "gpu", "gpu_count", "batch_size", "sequence_length", "update_interval", "recompute",
    "precision", "optimizer", "framework", "measured", "source", "quote", "source_date", "notes", "split",
)
MEASURED_NUMBERS = (
    "peak_memory_bytes", "throughput_samples_per_s", "iteration_ms", "max_batch_size",
    "throughput_tokens_per_s", "throughput_tokens_per_s_per_gpu", "epoch_seconds",
)
# Throughput and step time of one record must agree this well (timm rounds both to 2-3 decimals).
STEP_CONSISTENCY_TOLERANCE = 0.05


def load_records(path: Path = RECORDS_PATH) -> list[dict[str, Any]]:
    """Read the measurement records from a JSON file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: top level must be a list of records")
    return data


def _positive(value: Any) -> bool:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and value > 0


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _check_measured(rid: str, rec: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    measured = rec["measured"]
    if not isinstance(measured, dict):
        return [f"{rid}.measured: must be an object"]
    main_keys = {"peak_memory_bytes", "throughput_samples_per_s", "iteration_ms", "max_batch_size", "fits"}
    if not main_keys & measured.keys():
        problems.append(f"{rid}.measured: needs one of {sorted(main_keys)}")
    for key in MEASURED_NUMBERS:
        if key not in measured:
            continue
        value = measured[key]
        if key == "max_batch_size":
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
                problems.append(f"{rid}.measured.max_batch_size: must be an integer >= 0, got {value!r}")
        elif not _positive(value):
            problems.append(f"{rid}.measured.{key}: must be a positive finite number, got {value!r}")
    if "peak_memory_bytes" in measured and measured.get("memory_kind") not in MEMORY_KINDS:
        problems.append(f"{rid}.measured.memory_kind: must be one of {sorted(MEMORY_KINDS)}")
    if "fits" in measured and not isinstance(measured["fits"], bool):
        problems.append(f"{rid}.measured.fits: must be true or false")
    step = "method" in rec
    unknown = set(measured) - set(MEASURED_NUMBERS) - {"memory_kind", "fits"} - (STEP_MEASURED if step else set())
    if step:
        if measured.get("memory_kind") != "intrinsic_live_tensors":
            problems.append(f"{rid}.measured.memory_kind: a step record measures intrinsic_live_tensors")
        if measured.get("peak_phase") not in PHASES:
            problems.append(f"{rid}.measured.peak_phase: must be one of {sorted(PHASES)}")
        if not _positive(measured.get("tracker_peak_bytes")):
            problems.append(f"{rid}.measured.tracker_peak_bytes: the second method's peak is required")
    if unknown:
        problems.append(f"{rid}.measured: unknown keys {sorted(unknown)}")
    thr, step = measured.get("throughput_samples_per_s"), measured.get("iteration_ms")
    if _positive(thr) and _positive(step) and _positive_int(rec.get("batch_size")):
        implied = rec["batch_size"] * rec.get("gpu_count", 1) * 1000.0 / step
        if abs(implied - thr) / thr > STEP_CONSISTENCY_TOLERANCE:
            problems.append(f"{rid}.measured: throughput {thr} disagrees with batch/step ({implied:.1f})")
    return problems


def _check_scalars(rid: str, rec: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if "method" in rec:  # measured here, on this machine's CPU
        if rec["gpu"] is not None or rec.get("device") != "cpu":
            problems.append(f"{rid}.gpu: a CPU step record has gpu null and device 'cpu'")
        if not str(rec.get("source", "")).startswith("measured here, torch "):
            problems.append(f"{rid}.source: must read 'measured here, torch <version> CPU, <date>'")
    elif rec["gpu"] not in GPU_SLUGS:
        problems.append(f"{rid}.gpu: unknown slug {rec['gpu']!r}")
    for key in ("gpu_count", "batch_size", "update_interval"):
        if not _positive_int(rec[key]):
            problems.append(f"{rid}.{key}: must be a positive integer, got {rec[key]!r}")
    seq = rec["sequence_length"]
    if seq is not None and not _positive_int(seq):
        problems.append(f"{rid}.sequence_length: must be null or a positive integer, got {seq!r}")
    if not isinstance(rec["recompute"], bool):
        problems.append(f"{rid}.recompute: must be true or false")
    for key, allowed in (("precision", PRECISIONS), ("optimizer", OPTIMIZERS), ("framework", FRAMEWORKS),
                         ("split", SPLITS)):
        if rec[key] not in allowed:
            problems.append(f"{rid}.{key}: {rec[key]!r} not in {sorted(allowed)}")
    implementation = rec.get("optimizer_implementation", "foreach")
    if implementation not in OPTIMIZER_IMPLEMENTATIONS:
        problems.append(f"{rid}.optimizer_implementation: {implementation!r} "
                        f"not in {sorted(OPTIMIZER_IMPLEMENTATIONS)}")
    attention = rec.get("attention", "auto")
    if attention not in ATTENTIONS:
        problems.append(f"{rid}.attention: {attention!r} not in {sorted(ATTENTIONS)}")
    checkpointing = rec.get("checkpointing")  # what was recomputed, where `recompute` alone would mislead
    agrees = rec["recompute"] == (checkpointing != "none")
    if checkpointing is not None and (checkpointing not in CHECKPOINTING or not agrees):
        problems.append(f"{rid}.checkpointing: {checkpointing!r} must be one of {sorted(CHECKPOINTING)} and agree "
                        "with recompute (none without it)")
    clipping = rec.get("gradient_clipping", "none")
    if clipping not in GRADIENT_CLIPPINGS:
        problems.append(f"{rid}.gradient_clipping: {clipping!r} not in {sorted(GRADIENT_CLIPPINGS)}")
    for key in ("source", "quote", "source_date"):
        if not (isinstance(rec[key], str) and rec[key].strip()):
            problems.append(f"{rid}.{key}: must be a non-empty string")
    if isinstance(rec.get("hf_config"), dict):  # sized from its config.json, as a user's model.hf_config is
        if not isinstance(rec["hf_config"].get("model_type"), str):
            problems.append(f"{rid}.hf_config: a config needs its model_type")
    elif rec["model"] not in MODEL_PRESETS:
        stats = rec.get("stats")
        if not (isinstance(stats, dict) and _positive(stats.get("parameters"))):
            problems.append(f"{rid}.stats: a model outside the presets needs stats.parameters")
        elif stats.get("multiply_adds") is not None and not _positive(stats["multiply_adds"]):
            problems.append(f"{rid}.stats.multiply_adds: must be positive when given")
    return problems


def check_strategy(rid: str, strategy: Any) -> list[str]:
    """List the problems of a record's `strategy` object (data-parallel kind, adapter, network)."""
    if not isinstance(strategy, dict):
        return [f"{rid}.strategy: must be an object"]
    problems: list[str] = []
    if strategy.get("data_parallel") not in DATA_PARALLEL:
        kind = strategy.get("data_parallel")
        problems.append(f"{rid}.strategy.data_parallel: {kind!r} not in {sorted(DATA_PARALLEL)}")
    if strategy.get("checkpointing") not in CHECKPOINTING:
        problems.append(f"{rid}.strategy.checkpointing: must be one of {sorted(CHECKPOINTING)}")
    if not _positive_int(strategy.get("gpus_per_node")):
        problems.append(f"{rid}.strategy.gpus_per_node: must be a positive integer")
    network = strategy.get("network_gbit_per_s")
    if network is not None and not _positive(network):
        problems.append(f"{rid}.strategy.network_gbit_per_s: must be null or positive")
    adapter = strategy.get("adapter")
    if adapter is not None:
        if not isinstance(adapter, dict) or adapter.get("kind") not in ADAPTERS:
            problems.append(f"{rid}.strategy.adapter.kind: must be one of {sorted(ADAPTERS)}")
        elif not (_positive_int(adapter.get("rank")) and set(adapter.get("targets", [])) <= LORA_TARGETS
                  and adapter.get("targets")):
            problems.append(f"{rid}.strategy.adapter: needs a positive rank and targets among {sorted(LORA_TARGETS)}")
    unknown = set(strategy) - {"data_parallel", "checkpointing", "gpus_per_node", "network_gbit_per_s", "adapter",
                               "tensor_parallel", "pipeline_stages", "offload"}
    if unknown:
        problems.append(f"{rid}.strategy: unknown keys {sorted(unknown)}")
    return problems


def check_record(rec: Any) -> list[str]:
    """List every problem with one record (an empty list when it is valid)."""
    if not isinstance(rec, dict):
        return [f"record {rec!r}: must be an object"]
    rid = str(rec.get("id", "<no id>"))
    missing = [key for key in REQUIRED if key not in rec]
    if "method" in rec:
        missing += [key for key in STEP_REQUIRED if key not in rec]
    if missing:
        return [f"{rid}: missing fields {missing}"]
    strategy = check_strategy(rid, rec["strategy"]) if "strategy" in rec else []
    return _check_scalars(rid, rec) + _check_measured(rid, rec) + strategy


def check_records(records: Sequence[Any]) -> list[str]:
    """List every problem in a list of records, including duplicate ids."""
    problems: list[str] = []
    seen: set[str] = set()
    for rec in records:
        problems.extend(check_record(rec))
        rid = rec.get("id") if isinstance(rec, dict) else None
        if isinstance(rid, str):
            if rid in seen:
                problems.append(f"{rid}: duplicate id")
            seen.add(rid)
    return problems


Stat = tuple[int, int, int]


def dcgan_mnist_stats(width: int) -> tuple[Stat, Stat]:
    """Return (params, multiply-adds, neurons) of the znxlwm MNIST DCGAN generator and discriminator."""
    def layer(cin: int, cout: int, size_in: int, size_out: int, transposed: bool, bn: bool) -> Stat:
        params = cin * cout * 16 + cout + (2 * cout if bn else 0)  # 4x4 kernels with bias, BN scale+shift
        macs = cin * cout * 16 * (size_in * size_in if transposed else size_out * size_out)
        outputs = cout * size_out * size_out * (3 if bn else 2)  # conv, [batchnorm], activation
        return params, macs, outputs

    d = width
    gen = [(100, 8 * d, 1, 4, True), (8 * d, 4 * d, 4, 8, True), (4 * d, 2 * d, 8, 16, True),
           (2 * d, d, 16, 32, True), (d, 1, 32, 64, False)]
    dis = [(1, d, 64, 32, False), (d, 2 * d, 32, 16, True), (2 * d, 4 * d, 16, 8, True),
           (4 * d, 8 * d, 8, 4, True), (8 * d, 1, 4, 1, False)]
    g = [layer(ci, co, si, so, True, bn) for ci, co, si, so, bn in gen]
    dd = [layer(ci, co, si, so, False, bn) for ci, co, si, so, bn in dis]

    def total(layers: list[Stat]) -> Stat:
        return sum(x[0] for x in layers), sum(x[1] for x in layers), sum(x[2] for x in layers)

    return total(g), total(dd)


def llama3_8b_parameters() -> int:
    """Return the Llama 3 8B parameter count from its architecture (dim 4096, 32 layers, GQA 8, ffn 14336)."""
    dim, layers, kv_dim, ffn, vocab = 4096, 32, 1024, 14336, 128256
    per_layer = 2 * dim * dim + 2 * dim * kv_dim + 3 * dim * ffn + 2 * dim
    return layers * per_layer + dim + 2 * vocab * dim


def llmfs_gpt_stats(seq: int) -> tuple[int, int]:
    """Return (params, multiply-adds per sequence) of the LLMs-from-scratch GPT (GPT-2 small, untied head)."""
    vocab, ctx, d, layers = 50257, 1024, 768, 12
    # qkv without bias, out_proj with bias, two FF linears with bias, two LayerNorms (scale + shift)
    per_layer = 3 * d * d + d * d + d + 2 * 4 * d * d + 4 * d + d + 2 * 2 * d
    params = vocab * d + ctx * d + layers * per_layer + 2 * d + d * vocab
    macs = (params - vocab * d - ctx * d) * seq + layers * 2 * d * seq * seq
    return params, macs


def llama_style_parameters(stats: dict[str, Any]) -> int:
    """Return a LLaMA-style decoder's parameters (SwiGLU, RMSNorm, grouped K/V, untied head) from its shape."""
    dim, layers, vocab, ffn = stats["d_model"], stats["layers"], stats["vocab"], stats["ffn"]
    kv_dim = dim * stats["kv_heads"] // stats["heads"]
    return layers * (2 * dim * dim + 2 * dim * kv_dim + 3 * dim * ffn + 2 * dim) + dim + 2 * vocab * dim


def check_derivations(records: Sequence[dict[str, Any]]) -> list[str]:
    """Recompute the derived model statistics stored in the records and report mismatches."""
    problems: list[str] = []
    for rec in records:
        stats, model = rec.get("stats"), rec.get("model", "")
        if not isinstance(stats, dict):
            continue
        if model.startswith("dcgan-mnist-d"):
            g, d = dcgan_mnist_stats(int(model.rsplit("d", 1)[1]))
            want = {"parameters": g[0] + d[0], "multiply_adds": g[1] + d[1], "neurons": g[2] + d[2]}
        elif "kv_heads" in stats:
            seq, params = rec["sequence_length"], llama_style_parameters(stats)
            embedding = stats["vocab"] * stats["d_model"]
            want = {"parameters": params,
                    "multiply_adds": (params - embedding) * seq + stats["layers"] * 2 * stats["d_model"] * seq * seq}
            if model == "llama3-8b":
                want["parameters"] = llama3_8b_parameters()
        elif model == "llama3-8b":
            want = {"parameters": llama3_8b_parameters()}
        elif model == "gpt-llmfs-163m":
            params, macs = llmfs_gpt_stats(rec["sequence_length"])
            want = {"parameters": params, "multiply_adds": macs}
        elif model.startswith("mpt-"):
            seq, layers, d_model = rec["sequence_length"], stats["layers"], stats["d_model"]
            want = {"multiply_adds": stats["parameters"] * seq + layers * 2 * d_model * seq * seq}
        else:
            continue
        for key, value in want.items():
            if stats.get(key) != value:
                problems.append(f"{rec['id']}.stats.{key}: stored {stats.get(key)}, recomputed {value}")
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Check the records file given (or the shipped one) and print the problems; exit 1 if any."""
    args = list(sys.argv[1:] if argv is None else argv)
    paths = [Path(arg) for arg in args] or [RECORDS_PATH, STRATEGIES_PATH, STEP_RECORDS_PATH]
    failed = 0
    for path in paths:
        records = load_records(path)
        problems = check_records(records) + check_derivations(records)
        for problem in problems:
            print(problem)
        print(f"{path.name}: {len(records)} records, {len(problems)} problems")
        failed += len(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
