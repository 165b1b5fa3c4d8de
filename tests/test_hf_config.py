"""A model given as its Hugging Face config.json (`model.hf_config`), and the presets built from such configs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.cli import main
from tests.service_helpers import contract_check
from workers.modelimport.models import resolve_model
from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.presets.hf_config import MAX_DEFAULT_SEQUENCE, hf_config_layers
from workers.sizing.presets.hf_presets import CONFIG_PRESETS, preset_config
from workers.sizing.presets.registry import find_preset, preset_stats

# Llama-3.2-1B's config.json as the Hub serves it (every field, not only those the builder reads)
LLAMA_32_1B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 128000, "eos_token_id": 128001, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2048,
    "initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 131072, "mlp_bias": False,
    "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 16, "num_key_value_heads": 8,
    "pretraining_tp": 1, "rms_norm_eps": 1e-05,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
    "transformers_version": "4.45.0.dev0", "use_cache": True, "vocab_size": 128256,
}


def stats(config: dict[str, Any], sequence_length: int | None = None) -> Any:
    return resolve_model({"hf_config": config}, sequence_length=sequence_length)


def kept_values(model: Any, suffix: str) -> int:
    return sum(row.saved_values for row in model.layers if row.name.endswith(suffix))


def kept_bytes(model: Any, suffix: str) -> int:
    return sum(row.saved_mask_bytes for row in model.layers if row.name.endswith(f".{suffix}"))


@pytest.mark.parametrize("name", [n for n, entry in CONFIG_PRESETS.items() if "safetensors.total" in entry[3]])
def test_config_presets_have_the_hubs_parameter_count_to_the_weight(name: str) -> None:
    assert preset_stats(name).parameters == find_preset(name).published.parameters


def test_a_config_gives_the_layers_its_preset_has() -> None:
    model = stats(LLAMA_32_1B)
    preset = preset_stats("llama3.2-1b")
    assert (model.parameters, model.multiply_adds, model.sequence_length) == (
        preset.parameters, preset.multiply_adds, preset.sequence_length)
    assert model.sequence_length == MAX_DEFAULT_SEQUENCE  # its 131,072-token context is not the default
    assert stats(LLAMA_32_1B, 2048).sequence_length == 2048


def test_the_builder_reproduces_the_presets_written_as_layer_lists() -> None:
    llama3 = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
              "max_position_embeddings": 8192}
    assert stats(llama3).parameters == preset_stats("llama3-8b").parameters == 8_030_261_248
    mixtral = {**llama3, "model_type": "mixtral", "vocab_size": 32000, "num_local_experts": 8,
               "num_experts_per_tok": 2}
    built, preset = stats(mixtral), preset_stats("mixtral-8x7b")
    assert (built.parameters, built.multiply_adds) == (preset.parameters, preset.multiply_adds)
    qwen = {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
            "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064}
    assert stats(qwen).parameters == preset_stats("qwen2.5-7b").parameters == 7_615_616_512


def test_tied_embeddings_hold_one_matrix() -> None:
    untied = stats({**LLAMA_32_1B, "tie_word_embeddings": False})
    assert untied.parameters - stats(LLAMA_32_1B).parameters == 128256 * 2048
    gemma = {"model_type": "gemma", "hidden_size": 2048, "num_hidden_layers": 2, "num_attention_heads": 8,
             "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 16384, "vocab_size": 256000}
    # Gemma ties by default (Transformers' GemmaConfig); Llama does not
    assert stats(gemma).parameters < stats({**gemma, "tie_word_embeddings": False}).parameters


def test_gemma2s_sandwich_norms_and_soft_capped_logits_keep_what_they_read() -> None:
    gemma2 = preset_config("gemma2-2b")
    assert gemma2 is not None
    gemma1 = {k: v for k, v in gemma2.items() if k != "final_logit_softcapping"} | {"model_type": "gemma"}
    two, one = stats(gemma2, 512), stats(gemma1, 512)
    hidden, layers, vocab = 2304, 26, 256000
    assert two.parameters - one.parameters == 2 * hidden * layers  # post-attention and post-feed-forward norms
    # Transformers' Gemma RMSNorm keeps its float32 input and product: 8 bytes a value in any precision
    assert kept_bytes(two, "post_ln1") == kept_bytes(two, "post_ln2") == 8 * layers * 512 * hidden
    assert kept_bytes(two, "ln1") == 8 * layers * 512 * hidden
    assert kept_bytes(one, "post_ln1") == 0
    # tanh keeps its output: one more [sequence, vocabulary] tensor beside the loss's
    assert kept_values(two, "logit_softcap") == 512 * vocab


def test_qwen3s_norm_on_q_and_k_keeps_their_values_and_adds_head_dim_weights() -> None:
    qwen3 = preset_config("qwen3-8b")
    assert qwen3 is not None
    as_qwen2 = {**qwen3, "model_type": "llama"}  # the same block without the Q/K norm (no biases either)
    with_norm, without = stats(qwen3, 256), stats(as_qwen2, 256)
    assert with_norm.parameters - without.parameters == 36 * 2 * 128
    normed = 36 * 256 * (32 * 128 + 8 * 128)
    # Qwen3RMSNorm keeps a float32 copy of Q and K (4 bytes a value) and the normalised values cast back
    assert kept_values(with_norm, "qk_norm") == normed and kept_bytes(with_norm, "qk_norm") == 4 * normed


def test_grouped_kv_heads_are_kept_as_their_copies_to_every_head() -> None:
    grouped = stats(LLAMA_32_1B, 256)  # 32 heads, 8 K/V heads of 64
    attention = [row for row in grouped.layers if row.name.endswith(".attn")]
    plain = stats({**LLAMA_32_1B, "num_key_value_heads": 32}, 256)
    assert grouped.parameters < plain.parameters  # fewer K/V weights...
    # ...but the copies are what a K/V head-count of 32 keeps in K and V: the same kept values as full heads
    assert sum(r.saved_values for r in attention) == sum(
        r.saved_values for r in plain.layers if r.name.endswith(".attn"))


def test_a_qwen3_moe_config_keeps_dense_the_layers_it_names() -> None:
    moe = {"model_type": "qwen3_moe", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 64, "intermediate_size": 1024, "moe_intermediate_size": 128,
           "num_experts": 16, "num_experts_per_tok": 2, "vocab_size": 1000, "mlp_only_layers": [0]}
    blocks = [layer for layer in hf_config_layers(moe) if layer["type"] == "transformer_block"]
    assert [b.get("experts") for b in blocks] == [None, 16, 16, 16]
    assert blocks[0]["ffn"] == 1024 and blocks[1]["ffn"] == 128
    every_other = [b.get("experts") for b in hf_config_layers({**moe, "mlp_only_layers": [], "decoder_sparse_step": 2})
                   if b["type"] == "transformer_block"]
    assert every_other == [None, 16, None, 16]


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"model_type": "mbart"}, "model.hf_config.model_type", "supported: llama"),
    ({"model_type": "mllama", "text_config": {"model_type": "llama"}}, "model.hf_config.model_type", "multimodal"),
    ({"hidden_size": None}, "model.hf_config.hidden_size", "required"),
    ({"num_key_value_heads": 5}, "model.hf_config.num_key_value_heads", "must divide"),
    ({"hidden_act": "relu"}, "model.hf_config.hidden_act", "not a gated activation"),
    ({"tie_word_embeddings": "yes"}, "model.hf_config.tie_word_embeddings", "true or false"),
    ({"num_hidden_layers": 10**7}, "model.hf_config.num_hidden_layers", "at most"),
])
def test_a_config_the_builder_cannot_read_names_the_field(change: dict[str, Any], field: str, words: str) -> None:
    config = {k: v for k, v in {**LLAMA_32_1B, **change}.items() if v is not None}
    with pytest.raises(SpecError) as caught:
        stats(config)
    assert caught.value.field == field and words in caught.value.reason
    if change.get("model_type") == "mbart":
        assert isinstance(caught.value, UnknownNameError)


def test_the_api_sizes_a_config_as_its_preset_and_refuses_a_bad_one(embedded_client: FlaskClient) -> None:
    training = {"batch_size": 2, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw"}
    body = {"training": training, "dataset": {"samples": 1000}, "gpus": ["l4"]}
    by_config = embedded_client.post("/v1/estimate", json={**body, "model": {"hf_config": LLAMA_32_1B}})
    by_preset = embedded_client.post("/v1/estimate", json={**body, "model": {"preset": "llama3.2-1b"}})
    assert by_config.status_code == by_preset.status_code == 200
    assert contract_check().contract_requirements(by_config.get_json()) == []
    assert by_config.get_json()["gpu_memory_bytes"] == by_preset.get_json()["gpu_memory_bytes"]
    assert by_config.get_json()["per_gpu"][0]["iteration_ms"] == by_preset.get_json()["per_gpu"][0]["iteration_ms"]
    bad = embedded_client.post("/v1/estimate", json={**body, "model": {"hf_config": {**LLAMA_32_1B,
                                                                                       "model_type": "mbart"}}})
    assert bad.status_code == 422 and bad.mimetype == "application/problem+json"
    assert "model.hf_config.model_type" in bad.get_json()["errors"]
    both = embedded_client.post("/v1/estimate", json={**body, "model": {"hf_config": LLAMA_32_1B, "preset": "gpt2"}})
    assert both.status_code == 422


def test_the_cli_takes_a_config_json_as_the_model_named_by_its_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "Llama-3.2-1B"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_32_1B), encoding="utf-8")
    code = main(["estimate", str(folder / "config.json"), "--batch", "2", "--seq", "1024", "--gpu", "l4", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    answer = json.loads(out)
    code = main(["estimate", "llama3.2-1b", "--batch", "2", "--seq", "1024", "--gpu", "l4", "--json"])
    preset_answer = json.loads(capsys.readouterr()[0])
    assert code == 0 and answer["gpu_memory_bytes"] == preset_answer["gpu_memory_bytes"]
    main(["estimate", str(folder / "config.json"), "--batch", "2", "--seq", "1024", "--gpu", "l4"])
    assert "Llama-3.2-1B, batch 2" in capsys.readouterr()[0]
    (folder / "config.json").write_text(json.dumps({**LLAMA_32_1B, "model_type": "mbart"}), encoding="utf-8")
    code = main(["estimate", str(folder / "config.json"), "--batch", "2"])
    assert code == 2 and "model.hf_config.model_type" in capsys.readouterr()[1]


@pytest.mark.parametrize(("written", "preset"), [
    ("meta-llama/Llama-3.2-3B-Instruct", "llama3.2-3b"),
    ("Llama 3.2 1B", "llama3.2-1b"),
    ("google/gemma-2-9b-it", "gemma2-9b"),
    ("microsoft/Phi-3-mini-4k-instruct", "phi3-mini"),
    ("microsoft/Phi-3.5-mini-instruct", "phi3-mini"),
    ("Qwen/Qwen2.5-1.5B-Instruct", "qwen2.5-1.5b"),
    ("Qwen/Qwen3-8B", "qwen3-8b"),
    ("mistralai/Mistral-7B-Instruct-v0.2", "mistral-7b"),  # v0.2 has v0.1's layers
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),  # v0.3's vocabulary is larger
])
def test_the_models_teams_fine_tune_most_are_presets_by_their_repository_names(written: str, preset: str) -> None:
    assert find_preset(written).name == preset
