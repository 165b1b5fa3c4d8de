"""training.loss: fused_cross_entropy (flash-attn's CrossEntropyLoss, llm-foundry's default): one row in place of the
log-softmax and the cross-entropy, the logits' gradient in their own dtype; the MosaicML runs it sizes fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from catalog.gpus import gpus_by_slug
from workers.accuracy.accuracy import compare_record
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpu
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.presets.registry import preset_stats

GPUS = gpus_by_slug()
RECORDS = Path(__file__).resolve().parent.parent / "workers" / "accuracy" / "data" / "measurements.json"


def _peak(loss: str, precision: str) -> int:
    _, job = load_job({"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024,
                                                                  "precision": precision, "loss": loss}})
    return estimate_on_gpu(job, GPUS["a100-80gb"], gpu_count=1, known_gpus=GPUS).gpu_memory_bytes


def test_the_log_softmax_and_the_loss_become_one_row_keeping_targets_and_a_log_sum_exp() -> None:
    gpt2 = preset_stats("gpt2", sequence_length=1024)
    fused = with_loss(gpt2, Loss.FUSED_CROSS_ENTROPY)
    assert gpt2.layers[-1].type == "log_softmax" and fused.layers[:-1] == gpt2.layers[:-1]
    row, head = fused.layers[-1], fused.layers[-2]
    assert row.name == "loss.fused_cross_entropy" and row.saved_values == 0
    assert row.neurons == 1024 * 50257 == head.output_shape[0] * head.output_shape[1]
    assert row.saved_mask_bytes == (8 + 4) * 1024  # an int64 target and an fp32 log-sum-exp a position
    custom = with_loss(preset_stats("resnet50"), Loss.FUSED_CROSS_ENTROPY)  # an image classifier: appended
    assert custom.layers[:-1] == preset_stats("resnet50").layers and custom.layers[-1].neurons == 1000


def test_it_saves_the_fp32_copies_of_the_logits_most_under_mixed_precision() -> None:
    logits_fp32 = 8 * 1024 * 50257 * 4
    plain, fused, chunked = (_peak(loss, "bf16-mixed") for loss in
                             ("cross_entropy", "fused_cross_entropy", "fused_linear_cross_entropy"))
    assert plain > fused > chunked  # the chunked kernel never holds the logits at all
    print(f"gpt2 8 x 1,024 bf16: {plain / 2**30:.2f} / {fused / 2**30:.2f} / {chunked / 2**30:.2f} GiB")
    assert 1.5 * logits_fp32 < plain - fused < 2.5 * logits_fp32  # the fp32 log-softmax and one fp32 gradient
    assert 0 < _peak("cross_entropy", "fp32") - _peak("fused_cross_entropy", "fp32") < plain - fused


def test_the_mosaicml_runs_fit_the_cards_they_ran_on_with_their_recipes_loss() -> None:
    records = {r["id"]: r for r in json.loads(RECORDS.read_text()) if r["id"].startswith("mpt-")}
    assert records and all(r["loss"] == "fused_cross_entropy" for r in records.values())
    for record in records.values():
        [runs] = [row for row in compare_record(record, GPUS) if row.metric == "runs"]
        assert runs.agrees, record["id"]
    plain = compare_record({**records["mpt-125m-a100-40"], "loss": "cross_entropy"}, GPUS)
    assert not next(row for row in plain if row.metric == "runs").agrees  # the fp32 logits would not have fit


def test_the_api_and_the_cli_name_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, job = load_job({"model": {"preset": "llama3-8b"}, "training": {"batch_size": 1, "sequence_length": 2048,
                                                                       "loss": "fused_cross_entropy"}})
    assert job.training.loss is Loss.FUSED_CROSS_ENTROPY and job.model.layers[-1].type == "fused_cross_entropy"
    from service.cli import main
    peaks = {}
    for loss in ("cross_entropy", "fused_cross_entropy"):
        assert main(["estimate", "gpt2", "--batch", "2", "--seq", "512", "--precision", "bf16-mixed",
                     "--loss", loss, "--json"]) == 0
        peaks[loss] = json.loads(capsys.readouterr().out)["gpu_memory_bytes"]
    assert peaks["fused_cross_entropy"] < peaks["cross_entropy"]


def test_the_loss_advice_names_the_fused_kernel_with_its_figure_between_the_two() -> None:
    from workers.sizing.estimate import estimate_requirements

    _, job = load_job({"model": {"preset": "llama3-8b"},
                       "training": {"batch_size": 4, "sequence_length": 8192, "precision": "bf16-mixed"}})
    [message] = [w.message for w in estimate_requirements(job, known_gpus=GPUS).warnings if w.code == "fused-loss"]
    figures = [float(part.split(" GiB")[0].rsplit(" ", 1)[-1]) for part in message.split(" per GPU")[:3]]
    given, linear, kernel = figures
    assert linear < kernel < given and "say training.loss: fused_cross_entropy" in message
