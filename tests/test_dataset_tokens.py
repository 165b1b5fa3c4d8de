"""dataset.tokens: a language model's corpus said in tokens is made samples of the training's tokens a sample,
told back (samples-from-tokens); refused with samples beside it or for a model that reads no sequences."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from marshmallow import ValidationError

from catalog.gpus import gpus_by_slug
from service.cli import main
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpu

GPUS = gpus_by_slug()


def _job(dataset: dict[str, object], **training: object):  # type: ignore[no-untyped-def]
    _, job = load_job({"model": {"preset": "llama3.2-1b"},
                       "training": {"batch_size": 16, "precision": "bf16-mixed", **training}, "dataset": dataset})
    return job


@pytest.mark.parametrize(("training", "per_sample"), [
    ({"sequence_length": 2048}, 2048),
    ({"sequence_length": 2048, "mean_sequence_length": 1000}, 1000),  # binned or padded-to-longest batches
    ({}, None),  # the preset's context
])
def test_tokens_become_samples_of_the_tokens_a_sample(training: dict[str, object], per_sample: int | None) -> None:
    job = _job({"tokens": 10**11}, **training)
    per = per_sample or job.model.sequence_length
    assert job.dataset.tokens == 10**11 and job.dataset.samples == math.ceil(10**11 / per)
    # the same job said in samples is timed the same
    same = _job({"samples": job.dataset.samples}, **training)
    gpu = GPUS["h100-sxm"]
    said_tokens = estimate_on_gpu(job, gpu, gpu_count=1, known_gpus=GPUS)
    said_samples = estimate_on_gpu(same, gpu, gpu_count=1, known_gpus=GPUS)
    assert said_tokens.training_hours == pytest.approx(said_samples.training_hours) and said_tokens.training_hours > 0


@pytest.mark.parametrize(("spec", "words"), [
    ({"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024},
      "dataset": {"tokens": 10**9, "samples": 5}}, "not both"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 8}, "dataset": {"tokens": 10**9}},
     "reads no token sequences"),
    ({"model": {"preset": "gpt2"}, "training": {"batch_size": 8}, "dataset": {"tokens": 0}}, ""),
])
def test_tokens_that_cannot_be_samples_are_refused_naming_the_field(spec: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError) as info:
        load_job(spec)
    assert list(info.value.messages) == ["dataset.tokens"]
    assert words in " ".join(info.value.messages["dataset.tokens"])  # type: ignore[call-overload]


def test_the_api_tells_the_samples_back_and_refuses_both(embedded_client: FlaskClient) -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024},
            "dataset": {"tokens": 9 * 10**9}, "gpus": ["a100-80gb"]}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 200
    told = [w["message"] for w in answer.get_json()["warnings"] if w["code"] == "samples-from-tokens"]
    assert told == ["dataset.tokens 9,000,000,000 at 1,024 tokens a sample (training.sequence_length): "
                    "8,789,063 samples an epoch."]
    spec["dataset"] = {"tokens": 9 * 10**9, "samples": 100}
    refused = embedded_client.post("/v1/estimate", json=spec)
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"
    assert "dataset.tokens" in refused.get_json()["errors"]


def test_the_cli_takes_tokens_in_human_units(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["estimate", "gpt2", "--batch", "8", "--seq", "1024", "--tokens", "9B", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    answer = json.loads(out)
    assert answer["iterations_per_epoch"] == math.ceil(8_789_063 / 8)
    path = tmp_path / "job.yaml"
    path.write_text("model: {preset: gpt2}\ntraining: {batch_size: 8, sequence_length: 1024}\n"
                    "dataset: {tokens: 9B}\n", encoding="utf-8")
    assert main(["estimate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr()[0])["iterations_per_epoch"] == answer["iterations_per_epoch"]
    assert main(["estimate", "gpt2", "--batch", "8", "--tokens", "lots"]) == 2
    assert "dataset.tokens" in capsys.readouterr()[1]
