"""model.hf_config for BERT-style encoders and GPT-2: the presets' layers, Transformers' parameter counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.cli import main
from workers.modelimport.models import resolve_model
from workers.schemas.specs import load_job
from workers.sizing.errors import SpecError
from workers.sizing.memory import step_peak
from workers.sizing.presets.hf_config import default_sequence, hf_config_layers
from workers.sizing.presets.transformer import bert_layers, distilbert_layers, gpt2_layers, roberta_layers

# The fields of the Hub's config.json files (stored public copies, read 2026-12-06); pad_token_id as published.
BERT_BASE = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1,
             "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "intermediate_size": 3072,
             "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
             "type_vocab_size": 2, "vocab_size": 30522, "pad_token_id": 0, "position_embedding_type": "absolute"}
BERT_LARGE = {**BERT_BASE, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
              "num_hidden_layers": 24}
ROBERTA_BASE = {**BERT_BASE, "model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "vocab_size": 50265,
                "max_position_embeddings": 514, "type_vocab_size": 1, "pad_token_id": 1}
XLMR_BASE = {**ROBERTA_BASE, "model_type": "xlm-roberta", "architectures": ["XLMRobertaForMaskedLM"],
             "vocab_size": 250002}
XLMR_LARGE = {**XLMR_BASE, **{k: BERT_LARGE[k] for k in ("hidden_size", "intermediate_size", "num_attention_heads",
                                                          "num_hidden_layers")}}
DISTILBERT = {"model_type": "distilbert", "activation": "gelu", "attention_dropout": 0.1, "dim": 768, "dropout": 0.1,
              "hidden_dim": 3072, "max_position_embeddings": 512, "n_heads": 12, "n_layers": 6, "pad_token_id": 0,
              "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "vocab_size": 30522}
GPT2 = {"model_type": "gpt2", "activation_function": "gelu_new", "attn_pdrop": 0.1, "embd_pdrop": 0.1, "n_ctx": 1024,
        "n_embd": 768, "n_head": 12, "n_inner": None, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1,
        "vocab_size": 50257}


def parameters(config: dict[str, Any]) -> int:
    stats = resolve_model({"hf_config": config}, sequence_length=None)
    return stats.parameters + stats.frozen_parameters


@pytest.mark.parametrize(("config", "preset_layers"), [
    (BERT_BASE, bert_layers("bert-base")),
    (BERT_LARGE, bert_layers("bert-large")),
    (ROBERTA_BASE, roberta_layers("bert-base")),
    (DISTILBERT, distilbert_layers()),
    (GPT2, gpt2_layers("gpt2")),
])
def test_a_config_of_a_presets_shape_gives_the_presets_layers(config: dict[str, Any],
                                                             preset_layers: list[dict[str, object]]) -> None:
    assert hf_config_layers(config) == preset_layers


@pytest.mark.parametrize(("config", "count"), [
    # Transformers 5.25.0: AutoModelForSequenceClassification (GPT-2: ForCausalLM) .from_config(config), its
    # parameters summed (counted here 2026-12-06); bert-base-uncased's 109,483,778 is also the bert-base preset's.
    (BERT_BASE, 109_483_778),
    ({**BERT_BASE, "vocab_size": 119547}, 177_854_978),  # bert-base-multilingual-cased
    (XLMR_BASE, 278_045_186),
    ({**XLMR_LARGE, "id2label": {"0": "neg", "1": "neutral", "2": "pos"}}, 559_893_507),  # 3 labels
    (DISTILBERT, 66_955_010),
    ({**GPT2, "n_layer": 6}, 81_912_576),  # distilgpt2
])
def test_parameters_match_transformers_modules_built_from_the_config(config: dict[str, Any], count: int) -> None:
    assert parameters(config) == count


def test_the_labels_are_num_labels_else_id2label_else_two() -> None:
    two = parameters(BERT_BASE)
    hidden = BERT_BASE["hidden_size"]
    assert parameters({**BERT_BASE, "num_labels": 5}) == two + 3 * (hidden + 1)
    assert parameters({**BERT_BASE, "id2label": {str(i): f"l{i}" for i in range(7)}}) == two + 5 * (hidden + 1)


def test_the_default_sequence_is_the_learned_positions_less_robertas_offset() -> None:
    assert default_sequence(BERT_BASE) == 512
    assert default_sequence(XLMR_BASE) == 512  # 514 positions start at pad_token_id + 1 = 2
    assert default_sequence(GPT2) == 1024
    assert default_sequence(DISTILBERT) == 512


@pytest.mark.parametrize(("change", "field", "words"), [
    ({"position_embedding_type": "relative_key"}, "position_embedding_type", "absolute"),
    ({"num_attention_heads": 7}, "num_attention_heads", "do not divide hidden_size"),
    ({"hidden_act": "mish"}, "hidden_act", "not an activation"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob", "from 0 up to 1"),
    ({"vocab_size": None}, "vocab_size", "required"),
    ({"id2label": []}, "id2label", "label ids"),
])
def test_a_field_the_encoder_reader_cannot_use_is_named(change: dict[str, Any], field: str, words: str) -> None:
    config = {k: v for k, v in {**BERT_BASE, **change}.items() if v is not None}
    with pytest.raises(SpecError) as caught:
        hf_config_layers(config)
    assert caught.value.field == f"model.hf_config.{field}" and words in caught.value.reason
    with pytest.raises(SpecError) as caught:
        hf_config_layers({**DISTILBERT, "sinusoidal_pos_embds": True})
    assert caught.value.field == "model.hf_config.sinusoidal_pos_embds"


def test_the_api_sizes_xlm_roberta_by_its_vocabulary(embedded_client: FlaskClient) -> None:
    """XLM-R base is BERT-base's encoder with a 250,002-token embedding: 2.5x the weights, so its adamw
    state and gradients need more memory than bert-base's at the same batch; a bad field is a 422."""
    training = {"batch_size": 16, "sequence_length": 128, "precision": "fp16-mixed", "optimizer": "adamw"}
    body = {"training": training, "dataset": {"samples": 10000}, "gpus": ["t4"]}
    xlmr = embedded_client.post("/v1/estimate", json={**body, "model": {"hf_config": XLMR_BASE}})
    bert = embedded_client.post("/v1/estimate", json={**body, "model": {"preset": "bert-base"}})
    assert xlmr.status_code == bert.status_code == 200
    extra = (278_045_186 - 109_483_778) * 12  # fp32 weight and two adamw moments per extra parameter, at least
    assert xlmr.get_json()["gpu_memory_bytes"] - bert.get_json()["gpu_memory_bytes"] > extra
    bad = embedded_client.post("/v1/estimate", json={**body, "model": {"hf_config": {**XLMR_BASE,
                                                                                       "hidden_act": "mish"}}})
    assert bad.status_code == 422 and "model.hf_config.hidden_act" in bad.get_json()["errors"]


def test_the_cli_recommends_for_a_config_json_named_by_its_folder(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "xlm-roberta-large"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(XLMR_LARGE), encoding="utf-8")
    code = main(["estimate", str(folder / "config.json"), "--batch", "8", "--seq", "256", "--gpu", "a10g"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "xlm-roberta-large, batch 8" in out


def test_the_core_against_transformers_own_modules_measured_here() -> None:
    """validation/hf_encoder_steps.json (validation/measure/hf_transformers_check.py): XLM-RoBERTa, multilingual
    BERT, DistilBERT and DistilGPT-2 as Transformers builds them from these configs, one step each on torch
    2.13.0's CPU build, fp32 and bf16 autocast. Before the autocast rows (layers/autocast.py) multilingual BERT
    at batch 32 in bf16 read -10.1%: its LayerNorms keep the float32 stream, its query, key and value
    projections a cast each."""
    measured = json.loads((Path(__file__).resolve().parents[1] / "validation" / "hf_encoder_steps.json").read_text())
    errors = []
    for r in measured["records"]:
        model = {"hf_config": r["hf_config"], **({"head": r["head"]} if "head" in r else {})}
        stats = resolve_model(model, sequence_length=r["sequence_length"])
        # a masked-LM decoder's own bias (vocab_size values) is the one weight the core leaves out
        bias = r["hf_config"]["vocab_size"] if r.get("head") == "masked_lm" else 0
        assert stats.parameters + stats.frozen_parameters + bias == r["parameters"], r["id"]
        _, job = load_job({"model": model,
                           "training": {"batch_size": r["batch_size"], "sequence_length": r["sequence_length"],
                                        "precision": r["precision"], "optimizer": r["optimizer"],
                                        "attention": r["attention"]}})
        peak = step_peak(job.model, job.training)
        error = (peak.breakdown.total_bytes - peak.breakdown.framework_reserve_bytes) \
            / r["measured"]["peak_memory_bytes"] - 1
        print(f"{r['id']}: {error:+.1%} ({peak.phase.value} / measured {r['measured']['peak_phase']})")
        if "not_modelled" in r:  # a measured step the core does not size as it ran (the record says why)
            continue
        errors.append(abs(error))
        assert abs(error) <= 0.05, r["id"]
        if "head" in r:  # masked-LM: the logits' gradients at every position set the peak, in backward
            assert peak.phase.value == r["measured"]["peak_phase"] == "backward", r["id"]
        elif r["optimizer"] == "adamw":  # the optimizer step's peak is the weights' and their state's
            assert peak.phase.value == r["measured"]["peak_phase"] == "optimizer_step"
    assert len(errors) >= 10 and sorted(errors)[len(errors) // 2] <= 0.02
