"""Mixture-of-experts feed-forwards (`experts`, `experts_per_token` on transformer_block) and the Mixtral preset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from marshmallow import ValidationError

from catalog.gpus import gpus_by_slug
from catalog.loader import load_catalog
from tests.recommending import recommend_spec
from tests.test_slack_phrases import parse
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.memory import step_peak
from workers.sizing.presets.registry import preset_stats
from workers.sizing.strategies.adapters import lora_parameters, quantized_parameters, transformer_shape

MEASURED = json.loads((Path(__file__).resolve().parents[1] / "validation" / "moe_step.json").read_text())
H, FFN, S, E, K = 256, 512, 64, 8, 2


def _model(**block: Any) -> Any:
    layers = [{"type": "embedding", "vocab": 1000, "dim": H},
              {"type": "transformer_block", "heads": 4, "ffn": FFN, "norm_type": "rmsnorm", "activation": "swiglu",
               "dropout": 0.0, "bias": False, "causal": True, **block},
              {"type": "dense", "out_features": 1000, "bias": False}]
    _, job = load_job({"model": {"layers": layers}, "training": {"batch_size": 2, "sequence_length": S}})
    return job.model


def test_a_mixture_holds_every_experts_weights_and_does_each_tokens_work_top_k_times() -> None:
    dense, moe = _model(), _model(experts=E, experts_per_token=K)
    ffn_weights, ffn_macs = 3 * H * FFN, 3 * S * H * FFN  # SwiGLU: gate, up, down
    router_weights, router_macs = H * E, S * H * E
    assert moe.parameters - dense.parameters == (E - 1) * ffn_weights + router_weights
    assert moe.multiply_adds - dense.multiply_adds == (K - 1) * ffn_macs + router_macs
    rows = {r.name.rsplit(".", 1)[-1]: r for r in moe.layers}
    assert rows["gate"].output_shape == (K * S, FFN) and rows["scatter"].output_shape == (S, H)
    # kept for backward beyond the dense block: the router's probabilities, the dispatched copies (which the
    # experts' first matrices keep), top_k x the experts' activations, and each expert's output to weight
    dense_kept = sum(r.saved_values for r in dense.layers)
    ffn_kept = 4 * S * FFN  # gate's output (silu's input), silu's output and up's output (the product), down's input
    extra = S * E + K * S * H + (K - 1) * ffn_kept + K * S * H
    assert sum(r.saved_values for r in moe.layers) - dense_kept == extra


def test_shared_experts_see_every_token_beside_the_routed_ones() -> None:
    routed, both = _model(experts=E, experts_per_token=K), _model(experts=E, experts_per_token=K, shared_experts=2)
    wide = 2 * FFN  # DeepSeekMoE's shared experts as one feed-forward twice as wide
    assert both.parameters - routed.parameters == 3 * H * wide
    assert both.multiply_adds - routed.multiply_adds == 3 * S * H * wide
    # they read the router's input, which is kept already: only their own activations are added
    assert sum(r.saved_values for r in both.layers) - sum(r.saved_values for r in routed.layers) == 4 * S * wide
    shape, routed_shape = transformer_shape(both), transformer_shape(routed)
    assert shape is not None and routed_shape is not None
    assert lora_parameters(shape, rank=4, targets=("mlp",)) - lora_parameters(routed_shape, rank=4, targets=("mlp",)) \
        == 4 * 3 * (H + wide)


def test_the_measured_mixture_and_its_dense_twin() -> None:
    """validation/moe_step.json: a decoder LM with Mixtral's sparse block (transformers' eager loop) against
    the same LM with a dense SwiGLU, one fp32 step each on torch 2.13.0's CPU build."""
    predicted, measured = {}, {}
    for r in MEASURED["records"]:
        _, job = load_job({"model": {"layers": r["layers"]},
                           "training": {"batch_size": r["batch_size"], "sequence_length": r["sequence_length"],
                                        "precision": r["precision"], "optimizer": r["optimizer"],
                                        "attention": "flash"}})
        assert job.model.parameters == r["parameters"]  # the layers are the measured module's
        peak = step_peak(job.model, job.training)
        assert peak.phase.value == r["peak_phase"]
        predicted[r["id"]] = peak.breakdown.total_bytes - peak.breakdown.framework_reserve_bytes
        measured[r["id"]] = r["peak_bytes"]
        print(f"{r['id']}: {predicted[r['id']] / measured[r['id']] - 1:+.1%}")
    for optimizer in ("sgd", "adamw"):
        extra = predicted[f"moe-{optimizer}"] - predicted[f"dense-{optimizer}"]
        seen = measured[f"moe-{optimizer}"] - measured[f"dense-{optimizer}"]
        print(f"the experts' extra, {optimizer}: {extra / seen - 1:+.1%} ({extra:,} against {seen:,} bytes)")
        assert abs(extra / seen - 1) <= 0.10
        assert abs(predicted[f"moe-{optimizer}"] / measured[f"moe-{optimizer}"] - 1) <= 0.10


def test_a_mixtures_time_is_said_to_assume_even_load() -> None:
    def codes(preset: str) -> set[str]:
        _, job = load_job({"model": {"preset": preset}, "training": {"batch_size": 1, "sequence_length": 512}})
        return {w.code for w in estimate_requirements(job, known_gpus=gpus_by_slug()).warnings}

    assert "mixture-of-experts-time" in codes("mixtral-8x7b")
    assert "mixture-of-experts-time" not in codes("mistral-7b")


def test_mixtral_has_its_papers_47b_parameters_and_13b_active() -> None:
    stats = preset_stats("mixtral-8x7b")
    assert abs(stats.parameters / 47e9 - 1) <= 0.01
    experts = sum(r.parameters for r in stats.layers if r.name.rsplit(".", 1)[-1] in ("gate", "up", "down"))
    active = stats.parameters - experts + experts * 2 // 8
    assert abs(active / 13e9 - 1) <= 0.01  # "only uses 13B active parameters" (Jiang et al. 2024)


def test_mixtral_8x22b_has_its_announcements_141b_parameters_and_39b_active() -> None:
    # "fine-tune mixtral 8x22b with lora" was refused ("unknown word '8x22b'"); Mistral AI: 141B, 39B active
    stats = preset_stats("mixtral-8x22b")
    experts = sum(r.parameters for r in stats.layers if r.name.rsplit(".", 1)[-1] in ("gate", "up", "down"))
    active = stats.parameters - experts + experts * 2 // 8
    assert abs(stats.parameters / 141e9 - 1) <= 0.01 and abs(active / 39e9 - 1) <= 0.01
    assert parse("fine-tune mixtral 8x22b with lora").spec["model"] == {"preset": "mixtral-8x22b"}


def test_adapters_and_quantisation_count_every_expert() -> None:
    moe, dense = _model(experts=E, experts_per_token=K), _model()
    shape, dense_shape = transformer_shape(moe), transformer_shape(dense)
    assert shape is not None and dense_shape is not None
    # one LoRA pair per expert's matrix: r x (d_in + d_out) for gate, up and down, times the experts
    assert lora_parameters(shape, rank=8, targets=("mlp",)) == 8 * E * 3 * (H + FFN)
    assert lora_parameters(shape, rank=8, targets=("q", "k", "v", "o")) \
        == lora_parameters(dense_shape, rank=8, targets=("q", "k", "v", "o"))
    assert quantized_parameters(shape) - quantized_parameters(dense_shape) == (E - 1) * 3 * H * FFN + H * E


@pytest.mark.parametrize(("block", "field", "words"), [
    ({"experts_per_token": 2}, "model.layers[1]", "experts_per_token and shared_experts need experts"),
    ({"shared_experts": 1}, "model.layers[1]", "experts_per_token and shared_experts need experts"),
    ({"experts": 4, "experts_per_token": 5}, "model.layers[1]", "experts_per_token 5 exceeds experts 4"),
    ({"experts": 1}, "model.layers[1].experts", "at least 2"),
    ({"experts": 5000}, "model.layers[1].experts", "at most 1024"),
])
def test_a_bad_mixture_is_refused_naming_the_field(block: dict[str, int], field: str, words: str) -> None:
    with pytest.raises(ValidationError) as raised:
        _model(**block)
    [(named, [reason])] = raised.value.messages_dict.items()
    assert named == field and words in reason


def test_a_mixtral_qlora_fine_tune_fits_one_48gb_card_not_a_24gb_one() -> None:
    spec = {"model": {"preset": "mixtral"},
            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                         "parallelism": {"adapter": {"kind": "qlora", "rank": 16, "targets": ["q", "k", "v", "o"]}}},
            "dataset": {"samples": 10000, "bytes": 50000000},
            "constraints": {"providers": ["aws"], "max_gpus": 1}, "objective": "cost"}
    rec = recommend_spec(spec, load_catalog())
    top = rec.options[0]
    # 46.7B weights in 4 bits are 22 GiB before one activation: a 24 GB card cannot hold them with the step
    assert top.parallelism is not None and top.parallelism.adapter == "qlora"
    # (with checkpointing where none does not fit 48 GB: Transformers' float32 RMSNorm keeps 8 bytes a value)
    assert 24 * 2**30 < top.parallelism.gpu_memory_per_gpu_bytes < 48 * 2**30
    assert not any(o.gpu in ("a10g", "l4", "t4") for o in rec.options)
    assert any(r.gpu == "a10g" for r in rec.rejected)


def _described(*, vocab: int, hidden: int, heads: int, blocks: list[dict[str, Any]]) -> Any:
    base = {"type": "transformer_block", "heads": heads, "norm_type": "rmsnorm", "activation": "swiglu",
            "dropout": 0.0, "bias": False, "causal": True}
    layers = [{"type": "embedding", "vocab": vocab, "dim": hidden}, *({**base, **b} for b in blocks),
              {"type": "rmsnorm"}, {"type": "dense", "out_features": vocab, "bias": False}]
    _, job = load_job({"model": {"layers": layers}, "training": {"batch_size": 1, "sequence_length": 1024}})
    return job.model


def _active(model: Any, top_k: int, experts: int) -> int:
    routed = sum(r.parameters for r in model.layers if r.type == "dense" and r.output_shape[0] != 1024)
    return int(model.parameters - routed + routed * top_k // experts)


@pytest.mark.parametrize(("name", "total", "active", "top_k", "experts", "model"), [
    # DeepSeekMoE 16B (Dai et al. 2024, arXiv 2401.06066: 16.4B total, 2.8B activated [recalled]); its config:
    # 28 layers of hidden 2048, 16 heads, the first dense (10,944), then 64 routed experts of 1,408, top 6, 2 shared
    ("deepseek-moe-16b", 16.4e9, 2.8e9, 6, 64, lambda: _described(
        vocab=102400, hidden=2048, heads=16,
        blocks=[{"ffn": 10944}, *({"ffn": 1408, "experts": 64, "experts_per_token": 6, "shared_experts": 2}
                                  for _ in range(27))])),
    # Qwen1.5-MoE-A2.7B (Qwen's announcement, 2024-03-28: 14.3B in total, 2.7B activated [recalled]); config.json
    # (stored public copies, read 2026-12-03): 24 layers of 2048, 16 heads, 60 experts of 1,408, top 4, a shared
    # expert of 5,632 (four experts' width), vocabulary 151,936, untied
    ("qwen1.5-moe-a2.7b", 14.3e9, 2.7e9, 4, 60, lambda: _described(
        vocab=151936, hidden=2048, heads=16,
        blocks=[{"ffn": 1408, "experts": 60, "experts_per_token": 4, "shared_experts": 4} for _ in range(24)])),
])
def test_published_mixtures_described_by_their_configs_have_their_published_sizes(
        name: str, total: float, active: float, top_k: int, experts: int, model: Any) -> None:
    stats = model()
    print(f"{name}: {stats.parameters / 1e9:.2f}B total, {_active(stats, top_k, experts) / 1e9:.2f}B active")
    assert abs(stats.parameters / total - 1) <= 0.01
    assert abs(_active(stats, top_k, experts) / active - 1) <= 0.02
