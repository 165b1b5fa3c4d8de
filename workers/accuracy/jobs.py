"""A public measurement record (workers/accuracy/data/measurements.json) turned into the core's JobSpec.

A record names a preset (`resnet50`, `bert-large`, ...) or carries `stats` for a model outside the
presets. Where the record's architecture fields pin the layers down (decoder LLMs with `layers`,
`d_model`, `vocab`; the MNIST DCGANs), the model is rebuilt as a layer list so that the per-layer
time and memory models apply; a model given only as totals falls back to a single generic row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from workers.sizing.layers.attention import Attention
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.presets.registry import PRESETS, preset_stats
from workers.sizing.presets.transformer import MASKED_LM, gpt2_layers
from workers.sizing.spec import (
    Framework,
    GradientClipping,
    JobSpec,
    Optimizer,
    OptimizerImplementation,
    Precision,
    Training,
)
from workers.sizing.stats import LayerKind, ModelStats

Layer = dict[str, object]

# Records whose runs shard parameters, gradients and optimizer state over the GPUs (FSDP FULL_SHARD,
# ZeRO-3 style), by id prefix: MosaicML llm-foundry and torchtitan (validation/README.md sources 7, 8).
FULLY_SHARDED_PREFIXES = ("mpt-", "titan-")
# Lua Torch (2016-17) is compared as PyTorch, as validation/README.md says.
FRAMEWORK_ALIASES = {"torch7": Framework.PYTORCH}
# Decoder LLMs given as `stats` with architecture fields: heads, feed-forward width and layer details
# read in the record's `derivation` / `notes` (per model name prefix).
# - mpt-*: llm-foundry yamls: n_heads = d_model / 64, 4x MLP with GELU, no biases, LayerNorm, learned
#   positions (MPT's default `learned_pos_emb`), tied LM head, no dropout.
# - llama3-8b: torchtitan TransformerModelArgs: 32 heads, SwiGLU 14336, RMSNorm, untied head. Grouped
#   K/V (8 KV heads) is not in the layer vocabulary: the block keeps full K/V projections, which
#   counts about 10% more parameters (and their multiply-adds) than the real model.
# - gpt-llmfs-163m: LLMs-from-scratch GPTModel: 12 heads, GELU 4x, LayerNorm, qkv without bias,
#   dropout 0.1, learned positions, untied head without bias. Its GELU (the tanh form) and LayerNorm
#   are written from primitive ops (ch04), which keep their pieces: `gelu_new`, `layernorm_parts`.
_DECODERS: dict[str, dict[str, Any]] = {
    "mpt-": {"head_dim": 64, "activation": "gelu", "norm_type": "layernorm", "bias": False, "dropout": 0.0,
             "positions": True, "tied": True},
    "llama3-": {"head_dim": 128, "activation": "swiglu", "norm_type": "rmsnorm", "bias": False, "dropout": 0.0,
                "ffn": 14336, "positions": False, "tied": False},
    # LLaMA-style decoders of workers/accuracy/data/strategies.json: heads, K/V heads and the SwiGLU
    # width are read from the record's stats (grouped K/V as the model has them).
    "llama1-": {"head_dim": 128, "activation": "swiglu", "norm_type": "rmsnorm", "bias": False, "dropout": 0.0,
                "positions": False, "tied": False},
    "llama2-": {"head_dim": 128, "activation": "swiglu", "norm_type": "rmsnorm", "bias": False, "dropout": 0.0,
                "positions": False, "tied": False},
    "mistral-": {"head_dim": 128, "activation": "swiglu", "norm_type": "rmsnorm", "bias": False, "dropout": 0.0,
                 "positions": False, "tied": False},
    "gpt-llmfs-": {"head_dim": 64, "activation": "gelu_new", "norm_type": "layernorm_parts", "bias": True,
                   "dropout": 0.1, "positions": True, "tied": False},
}
# Runs whose attention is FlashAttention (MosaicML's triton/flash attention, torchtitan's SDPA): the
# attention core keeps no s x s probabilities and moves none through memory (FlashAttention's defining
# property, estimation-methods.md §2).
FLASH_ATTENTION_PREFIXES = ("mpt-", "titan-")
# BERT runs trained as masked language models (HF BertForMaskedLM, run_language_modeling.py): the
# fine-tuning head is replaced by the MLM head (dense + GELU + LayerNorm + a vocabulary projection tied
# to the word embedding) whose logits cover every token (records' notes).
MASKED_LM_PREFIXES = ("apex773-", "flagperf-bertl-")
# Records of the GPT-2 presets' shapes run in Megatron-LM (FlagPerf's megatron-gpt2-345m, records' notes):
# its MLP applies GELU as one kernel (bias_gelu_fusion, or F.gelu), not Hugging Face's gelu_new of
# primitive ops, so the block's activation is the fused "gelu" (keeps its input only, one read and write).
MEGATRON_GPT2_PREFIXES = ("flagperf-gpt2m-",)
# Passes over each network in one znxlwm DCGAN iteration (pytorch_MNIST_DCGAN.py): the D step runs D on
# the real batch and on G's output without detaching it, so backward also runs through G; the G step
# runs G and D again. D: 3 forward + 3 backward; G: 2 forward + 2 backward.
ZNXLWM_DCGAN_PASSES = {"generator": 2, "discriminator": 3}


@dataclass(frozen=True)
class MeasuredJob:
    """A record as the core sees it, plus what the comparison needs to know about the run."""

    job: JobSpec
    gpu: str
    gpu_count: int
    fully_sharded: bool  # FSDP FULL_SHARD: parameters, gradients and optimizer state split n ways
    model_note: str  # how the model was built from the record
    # what the run recomputed, as the strategies name it: the record's `checkpointing` where it says
    # (torchtitan's op-level "selective" is `selective_ops`), else `full` for recompute, `none` without
    checkpointing: str = "none"


def _decoder_layers(record: Mapping[str, Any], style: Mapping[str, Any]) -> list[Layer]:
    """Return a decoder LLM's layer list from a record's `stats` architecture fields."""
    stats = record["stats"]
    hidden, depth, vocab = int(stats["d_model"]), int(stats["layers"]), int(stats["vocab"])
    heads = int(stats.get("heads") or hidden // int(style["head_dim"]))
    block: Layer = {
        "type": "transformer_block", "heads": heads, "norm": "pre",
        "norm_type": style["norm_type"], "activation": style["activation"], "dropout": style["dropout"],
        "bias": style["bias"], "causal": True,
    }
    if "kv_heads" in stats:
        block["kv_heads"] = int(stats["kv_heads"])
    if "ffn" in stats or "ffn" in style:
        block["ffn"] = int(stats.get("ffn") or style["ffn"])
    layers: list[Layer] = [{"type": "embedding", "name": "wte", "vocab": vocab, "dim": hidden}]
    if style["positions"]:
        layers.append({"type": "position_embedding", "name": "wpe",
                       "max_positions": int(record["sequence_length"])})
    layers += [{**block, "name": f"h{i}"} for i in range(depth)]
    layers += [
        {"type": "layernorm", "name": "ln_f", "parts": True} if style["norm_type"] == "layernorm_parts"
        else {"type": style["norm_type"], "name": "ln_f"},
        {"type": "dense", "name": "lm_head", "out_features": vocab, "bias": False,
         "shared_weights": bool(style["tied"])},
        {"type": "log_softmax", "name": "loss"},
    ]
    return layers


def _dcgan_mnist_layers(width: int) -> list[Layer]:
    """Return znxlwm's MNIST DCGAN (1-channel 64x64, biases on), each network tagged with its passes."""
    g_passes, d_passes = ZNXLWM_DCGAN_PASSES["generator"], ZNXLWM_DCGAN_PASSES["discriminator"]
    layers: list[Layer] = []
    widths = (8 * width, 4 * width, 2 * width, width)
    for i, out in enumerate(widths):
        layers += [
            {"type": "conv_transpose2d", "name": f"G.deconv{i + 1}", "out_channels": out, "kernel": 4,
             "stride": 1 if i == 0 else 2, "padding": 0 if i == 0 else 1, "passes": g_passes},
            {"type": "batchnorm", "name": f"G.bn{i + 1}", "passes": g_passes},
            {"type": "relu", "name": f"G.relu{i + 1}", "passes": g_passes},
        ]
    layers += [
        {"type": "conv_transpose2d", "name": "G.deconv5", "out_channels": 1, "kernel": 4, "stride": 2,
         "padding": 1, "passes": g_passes},
        {"type": "tanh", "name": "G.image", "passes": g_passes},
    ]
    for i, out in enumerate(reversed(widths)):
        layers.append({"type": "conv2d", "name": f"D.conv{i + 1}", "out_channels": out, "kernel": 4,
                       "stride": 2, "padding": 1, "passes": d_passes})
        if i:
            layers.append({"type": "batchnorm", "name": f"D.bn{i + 1}", "passes": d_passes})
        layers.append({"type": "leaky_relu", "name": f"D.lrelu{i + 1}", "negative_slope": 0.2,
                       "passes": d_passes})
    return [*layers,
            {"type": "conv2d", "name": "D.conv5", "out_channels": 1, "kernel": 4, "passes": d_passes},
            {"type": "sigmoid", "name": "D.probability", "passes": d_passes}]


def without_attention_matrix(model: ModelStats, *, heads: int, causal: bool) -> ModelStats:
    """Return the model with FlashAttention: attention rows keep and move no s x s probabilities.

    With a causal mask FlashAttention also skips the blocks above the diagonal: half the multiply-adds. A
    row that carries its fused count (`fused_multiply_adds`, a causal transformer_block's core) keeps its
    multiply-adds: the core takes the fused count itself under a fused kernel; only rows without one
    (ONNX imports) are halved here.
    """
    seq = model.sequence_length or 0
    probs = heads * seq * seq
    share = 2 if causal else 1
    layers = tuple(
        replace(layer, saved_values=max(layer.saved_values - probs, 0), saved_mask_bytes=0,
                traffic_values=max(layer.traffic_values - 4 * probs, 0), neurons=max(layer.neurons - 2 * probs, 0),
                multiply_adds=layer.multiply_adds if layer.fused_multiply_adds >= 0 else layer.multiply_adds // share)
        if layer.kind is LayerKind.ATTENTION else layer
        for layer in model.layers
    )
    return replace(model, layers=layers, neurons=sum(layer.neurons for layer in layers),
                   multiply_adds=sum(layer.multiply_adds for layer in layers))


def record_model(record: Mapping[str, Any]) -> tuple[ModelStats, str]:
    """Return the model statistics of a record and a note on how they were built."""
    stats, note = _record_model(record)
    if str(record["id"]).startswith(FLASH_ATTENTION_PREFIXES):
        given = record["stats"]
        head_dim = int(_decoder_style(str(record["model"]))["head_dim"])
        heads = int(given.get("heads") or int(given["d_model"]) // head_dim)
        stats, note = without_attention_matrix(stats, heads=heads, causal=True), note + ", FlashAttention"
    return stats, note


def _decoder_style(name: str) -> dict[str, Any]:
    """Return the layer details of a decoder LLM named in a record."""
    return next(style for prefix, style in _DECODERS.items() if name.startswith(prefix))


def _record_model(record: Mapping[str, Any]) -> tuple[ModelStats, str]:
    """Build the model statistics of a record."""
    name = str(record["model"])
    raw_seq = record.get("sequence_length")
    seq = int(raw_seq) if raw_seq is not None else None
    if str(record["id"]).startswith(MASKED_LM_PREFIXES):
        return preset_stats(name, sequence_length=seq, head=MASKED_LM), f"preset {name} with its masked-LM head"
    if name.startswith("gpt2-") and str(record["id"]).startswith(MEGATRON_GPT2_PREFIXES):
        layers = [{**layer, "activation": "gelu"} if layer["type"] == "transformer_block" else layer
                  for layer in gpt2_layers(name)]
        stats = compute_model_stats(layers, input_shape=None, sequence_length=seq, name=name)
        return stats, f"preset {name}, Megatron-LM's fused GELU"
    if name in PRESETS:
        stats = preset_stats(name, sequence_length=seq) if PRESETS[name].input_shape is None else preset_stats(name)
        return stats, f"preset {name}"
    given = record["stats"]
    for prefix, style in _DECODERS.items():
        if name.startswith(prefix):
            built = compute_model_stats(_decoder_layers(record, style), input_shape=None,
                                        sequence_length=seq, name=name)
            share = built.parameters / int(given["parameters"])
            return built, f"decoder layers from stats ({share:.0%} of the record's parameters)"
    if name.startswith("dcgan-mnist-d"):
        width = int(name.rsplit("d", 1)[1])
        built = compute_model_stats(_dcgan_mnist_layers(width), input_shape=(100, 1, 1), sequence_length=None,
                                    name=name)
        return built, "znxlwm DCGAN layers (D 3 passes, G 2 per step)"
    neurons = int(given.get("neurons") or 0)
    return (ModelStats(name=name, neurons=neurons, parameters=int(given["parameters"]),
                       multiply_adds=int(given["multiply_adds"]), sequence_length=seq),
            "totals from stats")


def record_job(record: Mapping[str, Any]) -> MeasuredJob:
    """Return the record as a JobSpec, with its GPU, count and sharding."""
    model, note = record_model(record)
    loss = Loss(record.get("loss", Loss.CROSS_ENTROPY.value))
    if loss is not Loss.CROSS_ENTROPY:  # a record that names its recipe's loss (MosaicML's fused cross-entropy)
        model, note = with_loss(model, loss), f"{note}, loss {loss.value}"
    framework_name = str(record["framework"])
    framework = FRAMEWORK_ALIASES.get(framework_name) or Framework(framework_name)
    training = Training(
        batch_size=int(record["batch_size"]), sequence_length=record.get("sequence_length"),
        precision=Precision(record["precision"]), optimizer=Optimizer(record["optimizer"]),
        optimizer_implementation=OptimizerImplementation(record.get("optimizer_implementation", "foreach")),
        gradient_clipping=GradientClipping(record.get("gradient_clipping", "none")),
        update_interval=int(record.get("update_interval") or 1), recompute=bool(record.get("recompute")),
        framework=framework, tf32_matmul=record.get("tf32_matmul"),
        attention=Attention(record.get("attention", "auto")), loss=loss,
    )
    return MeasuredJob(
        job=JobSpec(model=model, training=training), gpu=str(record["gpu"]),
        gpu_count=int(record.get("gpu_count") or 1),
        fully_sharded=str(record["id"]).startswith(FULLY_SHARDED_PREFIXES), model_note=note,
        checkpointing=record_checkpointing(record),
    )


def record_checkpointing(record: Mapping[str, Any]) -> str:
    """Return what the record's run recomputed, as a strategies Checkpointing value."""
    stated = record.get("checkpointing")
    if stated:
        return str(stated)
    return "full" if record.get("recompute") else "none"
