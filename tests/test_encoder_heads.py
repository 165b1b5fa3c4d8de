"""An encoder's head (`model.head`): a sentence classifier for fine-tuning, the masked-LM head for pre-training.

Pre-training BERT (or further pre-training it on a domain's text) is masked-language modelling: logits over
the vocabulary at every position, each step's largest tensors. Sized with the classifier, the steps measured
on Transformers' own ...ForMaskedLM modules (validation/hf_encoder_steps.json) read -11% to -46%.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.cli import main
from tests.test_hf_encoders import BERT_BASE, DISTILBERT, GPT2
from workers.modelimport.models import resolve_model
from workers.schemas.specs import load_job
from workers.sizing.errors import SpecError
from workers.sizing.memory import step_peak

# Transformers 5.25.0 from_config (validation/hf_encoder_steps.json): BertForMaskedLM 109,514,298 parameters,
# DistilBertForMaskedLM 66,985,530; less the decoder's own bias (vocab_size values), which the core leaves out.
BERT_MLM, DISTILBERT_MLM = 109_514_298 - 30_522, 66_985_530 - 30_522


def _job(model: dict[str, Any], **training: Any) -> Any:
    _, job = load_job({"model": model, "training": {"batch_size": 16, "sequence_length": 128, **training}})
    return job


def test_pretraining_an_encoder_preset_sizes_its_masked_lm_head() -> None:
    pretraining = _job({"preset": "bert-base"}, from_pretrained=False)
    fine_tuning = _job({"preset": "bert-base"}, from_pretrained=True)
    unsaid = _job({"preset": "bert-base"})
    assert pretraining.model.parameters == BERT_MLM
    decoder = next(layer for layer in pretraining.model.layers if layer.name == "mlm.decoder")
    assert decoder.output_shape == (128, 30522)
    assert fine_tuning.model is unsaid.model  # the classifier, one cached model
    assert all(layer.name != "mlm.decoder" for layer in fine_tuning.model.layers)
    # the head is what changes the memory: 16 x 128 x 30,522 logits, their log-softmax and gradients
    logits = 16 * 128 * 30522 * 4
    more = step_peak(pretraining.model, pretraining.training).breakdown.total_bytes \
        - step_peak(fine_tuning.model, fine_tuning.training).breakdown.total_bytes
    assert 2 * logits < more < 6 * logits


def test_a_head_given_wins_over_the_default() -> None:
    assert _job({"preset": "roberta-base", "head": "classifier"}, from_pretrained=False).model.parameters \
        == _job({"preset": "roberta-base"}).model.parameters
    assert _job({"preset": "distilbert", "head": "masked_lm"}).model.parameters == DISTILBERT_MLM


def test_an_hf_config_encoder_takes_the_head_as_a_preset_does() -> None:
    assert _job({"hf_config": BERT_BASE}, from_pretrained=False).model.parameters == BERT_MLM
    assert _job({"hf_config": DISTILBERT, "head": "masked_lm"}).model.parameters == DISTILBERT_MLM
    assert "masked_lm" in _job({"hf_config": BERT_BASE, "head": "masked_lm"}).model.name
    for act in ("gelu_new", "relu"):  # the transform runs the config's hidden_act
        built = _job({"hf_config": {**BERT_BASE, "hidden_act": act}}, from_pretrained=False).model
        assert built.parameters == BERT_MLM
    # GPT-2 has its LM head whatever from_pretrained says
    assert _job({"hf_config": GPT2}, from_pretrained=False).model.parameters == \
        _job({"hf_config": GPT2}).model.parameters


@pytest.mark.parametrize("model", [
    {"preset": "resnet50", "head": "masked_lm"},
    {"preset": "llama3-8b", "head": "classifier"},
    {"hf_config": GPT2, "head": "masked_lm"},
    {"stats": {"neurons": 1000, "parameters": 1000, "multiply_adds": 1000}, "head": "classifier"},
    {"preset": "bert-base", "head": "token_classifier"},
])
def test_a_head_the_model_cannot_take_is_named(model: dict[str, Any]) -> None:
    with pytest.raises(SpecError) as caught:
        resolve_model(model, sequence_length=128)
    assert caught.value.field == "model.head"


def test_the_api_answers_a_head_on_a_decoder_with_a_422_naming_it(embedded_client: FlaskClient) -> None:
    body = {"training": {"batch_size": 8, "sequence_length": 128}, "gpus": ["t4"]}
    ok = embedded_client.post("/v1/estimate", json={**body, "model": {"preset": "bert-base", "head": "masked_lm"}})
    assert ok.status_code == 200, ok.get_json()
    bad = embedded_client.post("/v1/estimate", json={**body, "model": {"preset": "gpt2", "head": "masked_lm"}})
    assert bad.status_code == 422 and "model.head" in bad.get_json()["errors"]
    typo = embedded_client.post("/v1/estimate", json={**body, "model": {"preset": "bert-base", "head": "mlm"}})
    assert typo.status_code == 422 and "model.head" in typo.get_json()["errors"]


def test_the_cli_takes_head_and_from_scratch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "bert-large", "--from-scratch", "--batch", "8", "--seq", "128"]) == 0
    assert "bert-large (masked_lm head), batch 8" in capsys.readouterr().out
    assert main(["estimate", "gpt2", "--head", "masked_lm", "--batch", "8"]) == 2
    assert "model.head" in capsys.readouterr().err


def test_the_fused_loss_advice_for_a_masked_lm_says_what_an_encoder_can_use(
        embedded_client: FlaskClient) -> None:
    """The Trainer's use_liger_kernel patches decoder models only: for BERT's masked-LM head the advice says so
    and names the encoder's own way out, the head at the masked positions only."""
    def fused(model: dict[str, Any], **training: Any) -> str:
        body = {"model": model, "training": {"batch_size": 64, "sequence_length": 128, "precision": "bf16-mixed",
                                             **training}}
        answer = embedded_client.post("/v1/estimate", json=body)
        assert answer.status_code == 200, answer.get_json()
        return next(w["message"] for w in answer.get_json()["warnings"] if w["code"] == "fused-loss")

    encoder = fused({"preset": "bert-base"}, from_pretrained=False)
    assert "patches decoder models only" in encoder and "masked positions only" in encoder
    decoder = fused({"preset": "gpt2"}, sequence_length=1024, batch_size=8)
    assert "use_liger_kernel=True" in decoder and "masked positions" not in decoder


def test_the_model_command_shows_the_masked_lm_head(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model", "bert-base", "--head", "masked_lm", "--sequence-length", "128", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["parameters"] == BERT_MLM
    assert [row["name"] for row in shown["layers"]][-2:] == ["mlm.decoder", "loss"]
    assert main(["model", "resnet50", "--head", "masked_lm"]) == 2
    assert "model.head" in capsys.readouterr().err
