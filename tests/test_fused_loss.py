"""The fused linear cross-entropy (training.loss: fused_linear_cross_entropy): the walk against our measured steps,
the rows it builds, and the `fused-loss` advice where a language model's logits set much of the peak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from marshmallow import ValidationError

from catalog.gpus import gpus_by_slug
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.layers.loss import FUSED_TYPE, Loss, with_loss
from workers.sizing.presets.registry import preset_stats

RECORDS = Path(__file__).resolve().parent.parent / "workers" / "accuracy" / "data" / "fused_loss_steps.json"


def test_the_walk_matches_the_measured_steps_with_and_without_the_fused_loss() -> None:
    from validation.measure.fused_loss import predicted

    rows = json.loads(RECORDS.read_text())["rows"]
    assert len(rows) == 8
    errors = []
    for r in rows:
        size, phase = predicted(fused=r["loss"] == FUSED_TYPE, precision=r["precision"], optimizer=r["optimizer"])
        error = (size - r["measured_peak_bytes"]) / r["measured_peak_bytes"]
        errors.append(error)
        print(f"{r['optimizer']} {r['precision']} {r['loss']}: {error:+.1%} "
              f"({phase}; measured {r['measured_peak_phase']})")
        assert abs(error) < 0.10
        assert (phase == "optimizer_step") == (r["measured_peak_phase"] == "update")
    saved = {(r["optimizer"], r["precision"]): 0 for r in rows}
    for r in rows:  # the fused loss's saving, measured: what the advice promises must be real
        saved[(r["optimizer"], r["precision"])] += r["measured_peak_bytes"] * (-1 if r["loss"] == FUSED_TYPE else 1)
    assert all(v > 100 * 2**20 for v in saved.values())


def test_the_head_and_its_loss_become_one_row_with_the_heads_weights_and_work() -> None:
    plain = with_loss(preset_stats("llama3-8b", sequence_length=1024), Loss.CROSS_ENTROPY)
    fused = with_loss(preset_stats("llama3-8b", sequence_length=1024), Loss.FUSED_LINEAR_CROSS_ENTROPY)
    head = next(row for row in plain.layers if row.name == "output")
    row = fused.layers[-1]
    assert row.type == FUSED_TYPE and len(fused.layers) == len(plain.layers) - 2  # head, log-softmax, loss -> one
    assert (row.parameters, row.multiply_adds) == (head.parameters, head.multiply_adds)
    assert row.saved_values == 1024 * 4096 and row.saved_mask_bytes == 8 * 1024  # grad_input; int64 targets
    assert sum(r.multiply_adds for r in fused.layers) == sum(r.multiply_adds for r in plain.layers)


def test_a_model_that_does_not_end_in_a_projection_is_refused_naming_the_loss() -> None:
    spec = {"model": {"input_shape": [16], "layers": [{"type": "dense", "out_features": 8}, {"type": "relu"}]},
            "training": {"batch_size": 4, "loss": "fused_linear_cross_entropy"}}
    with pytest.raises(ValidationError) as caught:
        load_job(spec)
    [reason] = caught.value.messages["training.loss"]  # type: ignore[call-overload,index]
    assert "'relu'" in reason and "not a dense layer" in reason


def _warning(spec: dict[str, Any], *, gpu_count: int = 1) -> str | None:
    job = load_job(spec)[1]
    gpus = gpus_by_slug()
    req = estimate_requirements(job, gpus=[gpus["b200"]], gpu_count=gpu_count, known_gpus=gpus)
    found = [w.message for w in req.warnings if w.code == "fused-loss"]
    return found[0] if found else None


def test_long_context_advice_names_the_fused_loss_with_both_figures_and_only_where_it_matters() -> None:
    long = {"model": {"preset": "llama3-8b"},
            "training": {"batch_size": 1, "sequence_length": 131_072, "precision": "bf16-mixed",
                         "parallelism": {"data_parallel": "zero3", "checkpointing": "full"}}}
    message = _warning(long, gpu_count=8)
    assert message is not None and "training.loss: fused_linear_cross_entropy" in message
    given, fused = (float(part.split(" GiB")[0].rsplit(" ", 1)[-1]) for part in message.split("per GPU")[:2])
    assert fused < given / 2  # 128k tokens x 128,256 logits dominate: the fused loss needs under half
    long["training"]["loss"] = "fused_linear_cross_entropy"
    assert _warning(long, gpu_count=8) is None  # already fused: nothing to say
    resnet = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}
    assert _warning(resnet) is None  # 1,000 logits a sample: the loss is not where the memory is


def test_the_cli_takes_the_loss_as_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main

    figures = {}
    for loss in ("cross_entropy", "fused_linear_cross_entropy"):
        code = main(["estimate", "llama3-8b", "--batch", "1", "--seq", "8192", "--precision", "bf16-mixed",
                     "--optimizer", "sgd", "--loss", loss, "--gpu", "h100-sxm", "--json"])
        assert code == 0
        figures[loss] = json.loads(capsys.readouterr().out)["gpu_memory_bytes"]
    # 8,192 tokens x 128,256 logits: the plain loss's fp32 values and gradients are gigabytes the fused one never holds
    assert figures["cross_entropy"] - figures["fused_linear_cross_entropy"] > 8 * 2**30


def test_when_nothing_fits_the_answer_says_which_option_the_fused_loss_opens() -> None:
    from catalog.loader import load_catalog
    from workers.ranking.recommend import recommend

    spec = {"model": {"preset": "llama3-8b"},
            "training": {"batch_size": 1, "sequence_length": 131_072, "precision": "bf16-mixed",
                         "from_pretrained": True},
            "dataset": {"samples": 1000}, "limit": 3}
    catalog = load_catalog()
    plain = recommend(load_job(spec)[1], catalog)
    assert not plain.options
    [opens] = [w.message for w in plain.requirements.warnings if w.code == "fused-loss-opens"]
    spec["training"]["loss"] = "fused_linear_cross_entropy"
    fused = recommend(load_job(spec)[1], catalog)
    assert fused.options and not any(w.code == "fused-loss-opens" for w in fused.requirements.warnings)
    top = fused.options[0]
    assert f"the first is {top.instance_type} ({top.provider} {top.region}" in opens  # the same first option


def test_the_out_of_memory_plan_offers_the_fused_loss_first_with_the_fused_jobs_own_peak() -> None:
    """QLoRA Llama 3 8B at 2,048 tokens on a 24 GB card: its logits tip it over; the fused loss fits, same work."""
    from workers.sizing.memory import fits
    from workers.sizing.oom_plan import out_of_memory_plan
    from workers.sizing.requirements import MitigationKind

    gpus = gpus_by_slug()
    card = gpus["rtx-4090"]
    spec: dict[str, Any] = {"model": {"preset": "llama3-8b"},
                            "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                                         "parallelism": {"adapter": {"kind": "qlora"}}}}
    job = load_job(spec)[1]
    plan = out_of_memory_plan(job, card)
    kinds = [m.kind for m in plan.mitigations]
    assert MitigationKind.FUSED_LOSS in kinds and kinds.index(MitigationKind.FUSED_LOSS) < kinds.index(
        MitigationKind.SMALLER_BATCH)
    step = plan.mitigations[kinds.index(MitigationKind.FUSED_LOSS)]
    fused = load_job({**spec, "training": {**spec["training"], "loss": "fused_linear_cross_entropy"}})[1]
    peak = estimate_requirements(fused, gpus=[card], known_gpus=gpus).per_gpu[0].gpu_memory_bytes
    assert step.gpu_memory_bytes == peak and fits(peak, card)
    assert 0.9 < step.time_factor < 1.1  # the same loss and work
    # a classifier's 1,000 logits are not where its memory is: no such step
    resnet = load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 512}})[1]
    assert MitigationKind.FUSED_LOSS not in [m.kind for m in out_of_memory_plan(resnet, gpus["t4"]).mitigations]


@pytest.mark.parametrize(("preset", "batch", "seq", "precision"), [
    ("gpt2", 8, 1024, "bf16-mixed"), ("gpt2", 4, 1024, "fp32"), ("llama3-8b", 1, 8192, "bf16-mixed"),
    ("qwen2.5-0.5b", 4, 4096, "bf16-mixed"), ("llama3.2-1b", 2, 2048, "fp32"),
])
def test_what_the_fused_loss_saves_never_exceeds_the_bound_that_skips_its_walk(
        preset: str, batch: int, seq: int, precision: str) -> None:
    """The advice skips walking the fused job where the logits' tensors (fused_loss_saving_bound) are under a tenth
    of the peak (a classifier's: ResNet-50's 1,000 logits); that is only sound if no saving can exceed the bound."""
    from workers.sizing.loss_advice import FUSED_LOSS_SAVING, fused_loss_job, fused_loss_saving_bound
    from workers.sizing.memory import step_peak

    job = load_job({"model": {"preset": preset}, "training": {"batch_size": batch, "sequence_length": seq,
                                                               "precision": precision}})[1]
    fused = fused_loss_job(job)
    assert fused is not None
    plain = step_peak(job.model, job.training, gpu=None).breakdown.total_bytes
    saved = plain - step_peak(fused.model, fused.training, gpu=None).breakdown.total_bytes
    assert 0 < saved <= fused_loss_saving_bound(job)
    resnet = load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 256}})[1]
    peak = step_peak(resnet.model, resnet.training, gpu=None).breakdown.total_bytes
    assert fused_loss_saving_bound(resnet) < FUSED_LOSS_SAVING * peak  # so its advice walks nothing


def test_a_models_fused_form_is_built_once_so_its_walks_are_remembered() -> None:
    """Jobs of one model (a queue's specs differ in epochs) share its fused form: the same object, whose step
    peak memory.step_peak remembers, instead of a new model walked and replayed every task."""
    from dataclasses import replace

    from workers.sizing.loss_advice import fused_loss_job

    job = load_job({"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "precision": "bf16-mixed"}})[1]
    again = replace(job, training=replace(job.training, epochs=7))
    first, second = fused_loss_job(job), fused_loss_job(again)
    assert first is not None and second is not None and first.model is second.model
    other = load_job({"model": {"preset": "gpt2-medium"}, "training": {"batch_size": 8}})[1]
    fused_other = fused_loss_job(other)
    assert fused_other is not None and fused_other.model is not first.model
