"""Parallel-residual decoders from their config.json: GPT-NeoX (Pythia) and Phi (model.hf_config)."""

from __future__ import annotations

from typing import Any

import pytest

from validation.step_compare import compare_step_record, load_step_records
from workers.modelimport.models import resolve_model
from workers.sizing.errors import SpecError

# EleutherAI/pythia-1.4b's config.json (the fields that set the model; the Hub's file has a few more)
PYTHIA_14B: dict[str, Any] = {
    "architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox", "hidden_act": "gelu", "hidden_size": 2048,
    "intermediate_size": 8192, "num_attention_heads": 16, "num_hidden_layers": 24, "vocab_size": 50304,
    "max_position_embeddings": 2048, "rotary_pct": 0.25, "rotary_emb_base": 10000, "use_parallel_residual": True,
    "tie_word_embeddings": False, "layer_norm_eps": 1e-05, "attention_dropout": 0.0, "hidden_dropout": 0.0,
}
# microsoft/phi-2's config.json (the fields that set the model)
PHI_2: dict[str, Any] = {
    "architectures": ["PhiForCausalLM"], "model_type": "phi", "hidden_act": "gelu_new", "hidden_size": 2560,
    "intermediate_size": 10240, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": None,
    "vocab_size": 51200, "max_position_embeddings": 2048, "partial_rotary_factor": 0.4, "qk_layernorm": False,
    "resid_pdrop": 0.1, "embd_pdrop": 0.0, "attention_dropout": 0.0, "tie_word_embeddings": False,
    "layer_norm_eps": 1e-05,
}


def stats(config: dict[str, Any], sequence_length: int | None = None) -> Any:
    return resolve_model({"hf_config": config}, sequence_length=sequence_length)


def test_the_published_parameter_counts_to_the_weight() -> None:
    # Pythia-1.4B: 1,414,647,808 parameters, 1,208,602,624 without the embeddings (Biderman et al. 2023,
    # Pythia, Table 1); Phi-2: 2,779,683,840 (the Hub's safetensors total for microsoft/phi-2)
    pythia = stats(PYTHIA_14B)
    assert pythia.parameters == 1_414_647_808
    embeddings = 2 * 50304 * 2048  # embed_in and the untied embed_out
    assert pythia.parameters - embeddings == 1_208_602_624
    assert stats(PHI_2).parameters == 2_779_683_840


def test_the_measured_modules_have_the_cores_parameters_and_tensor_memory() -> None:
    # validation/measure/nets_hf_parallel.py, measured before the core read these types (unseen set 5)
    records = [r for r in load_step_records() if r.get("unseen_set") == 5]
    assert {r["hf_config"]["model_type"] for r in records} == {"gpt_neox", "phi"}
    for record in records:
        model = resolve_model({"hf_config": record["hf_config"]}, sequence_length=record["sequence_length"])
        assert model.parameters + model.frozen_parameters == record["measured"]["parameters"], record["id"]
        row = compare_step_record(record)
        error = row.predicted_bytes / row.measured_bytes - 1
        print(f"{record['id']:40s} tensor memory {error:+.1%}")
        # the misses are below 6%: Phi's q, k, v and fc1 each keep their own 16-bit cast of the LayerNorm's
        # fp32 output under autocast, which the core counts once (-5.6% in bf16)
        assert abs(error) < 0.08, record["id"]
        assert row.predicted_phase == row.measured_phase


def test_the_parallel_block_keeps_the_input_once_and_gpt_neox_keeps_its_fused_qkv() -> None:
    pythia = stats(PYTHIA_14B, 2048)
    block = {row.name.split(".", 2)[-1]: row for row in pythia.layers if row.name.startswith("layers.0.")}
    # ln2 reads the block's input, which ln1 already keeps: one tensor, counted at ln1
    assert block["ln1"].saved_values == 2048 * 2048 and block["ln2"].saved_values == 0
    assert block["fc1"].saved_values == 2048 * 2048  # ln2's output, its own tensor
    # V is a view of the [q | k | v] output: the fused kernel keeps all of it beside the rotated Q and K
    sequential = stats({**PYTHIA_14B, "use_parallel_residual": False}, 2048)
    plain = next(r for r in sequential.layers if r.name == "layers.0.attn")
    assert block["attn"].fused_saved_values == plain.fused_saved_values
    assert block["attn"].fused_saved_values - stats_without_fused_qkv(2048) == 2 * 2048 * 2048
    # Phi: one norm feeds both branches, so fc1 keeps nothing the projections do not
    phi = {row.name.split(".", 2)[-1]: row for row in stats(PHI_2, 2048).layers if row.name.startswith("layers.0.")}
    assert "ln2" not in phi and phi["fc1"].saved_values == 0 and phi["ln1"].saved_values == 2048 * 2560
    # the add of three: the block's output only, read from three tensors
    assert phi["add"].saved_values == 0 and phi["add"].traffic_values == 4 * 2048 * 2560


def stats_without_fused_qkv(sequence: int) -> int:
    layers = [{"type": "embedding", "vocab": 50304, "dim": 2048},
              {"type": "transformer_block", "heads": 16, "ffn": 8192, "norm": "parallel", "dropout": 0.0,
               "causal": True}]
    model = resolve_model({"layers": layers}, sequence_length=sequence)
    return next(r for r in model.layers if r.name.endswith(".attn")).fused_saved_values


@pytest.mark.parametrize(("change", "field", "words"), [
    ({**PHI_2, "qk_layernorm": True}, "model.hf_config.qk_layernorm", "not modelled"),
    ({**PYTHIA_14B, "hidden_act": "swish"}, "model.hf_config.hidden_act", "not an activation"),
    ({**PHI_2, "resid_pdrop": 1.5}, "model.hf_config.resid_pdrop", "from 0 up to 1"),
])
def test_a_config_the_builder_cannot_read_names_the_field(change: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(SpecError) as caught:
        stats(change)
    assert caught.value.field == field and words in caught.value.reason
