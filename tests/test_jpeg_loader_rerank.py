"""`jpeg-loader-ranks`: the first option a JPEG loader would give, where a photograph model's job states none."""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommendation import RankedOption
from workers.ranking.run_words import hours_text, usd_text
from workers.sizing.image_input import IMAGE_PIPELINE_MS

CODE = "jpeg-loader-ranks"


def _spec(preset: str, *, batch: int, precision: str, preprocess: float | None = None) -> dict[str, Any]:
    dataset: dict[str, Any] = {"samples": 1281167}
    if preprocess is not None:
        dataset["preprocess_ms_per_sample"] = preprocess
    return {"model": {"preset": preset}, "training": {"batch_size": batch, "precision": precision, "epochs": 10},
            "dataset": dataset}


def _machine(option: RankedOption) -> tuple[str, str, str, str, int]:
    return option.provider, option.instance_type, option.region, option.pricing.value, option.nodes


def _codes(rec: Any) -> list[str]:
    return [w.code for w in rec.requirements.warnings]


def test_alexnet_without_a_loader_cost_is_told_the_answer_a_jpeg_loader_gives(shipped: Catalog) -> None:
    rec = recommend_spec(_spec("alexnet", batch=256, precision="fp32"), shipped)
    [warning] = [w for w in rec.requirements.warnings if w.code == CODE]
    decoded = recommend_spec(_spec("alexnet", batch=256, precision="fp32", preprocess=IMAGE_PIPELINE_MS), shipped)
    first, top = decoded.options[0], rec.options[0]
    assert _machine(first) != _machine(top)  # the loader's CPU changes the answer
    assert f"becomes {first.instance_type} ({first.provider} {first.region}" in warning.message
    assert f"at {IMAGE_PIPELINE_MS} ms an image on a reference core" in warning.message  # the JPEG loader, per image
    assert f"{first.vcpus} vCPUs): {hours_text(first.training_hours)} for {usd_text(first.training_cost_usd)}" \
        in warning.message
    # the first option here under that loader: far slower than as ranked (its few vCPUs decode the images)
    same = recommend_spec({**_spec("alexnet", batch=256, precision="fp32", preprocess=IMAGE_PIPELINE_MS),
                           "constraints": {"providers": [top.provider], "regions": [top.region],
                                           "pricing": [top.pricing.value]}, "limit": 1000}, shipped)
    slowed = next(o for o in same.options if _machine(o) == _machine(top))
    assert slowed.training_hours > 2 * top.training_hours
    assert f"would take {hours_text(slowed.training_hours)} for {usd_text(slowed.training_cost_usd)}" in warning.message
    # the ranked options stay those of the job as given
    assert rec.options[0].training_hours < slowed.training_hours


def test_no_warning_where_the_job_gives_its_loader_or_the_model_reads_no_photographs(shipped: Catalog) -> None:
    given = recommend_spec(_spec("alexnet", batch=256, precision="fp32", preprocess=0.5), shipped)
    assert CODE not in _codes(given)
    text = recommend_spec({"model": {"preset": "bert-base"}, "training": {"batch_size": 32, "sequence_length": 128,
                                                                          "precision": "fp16-mixed"},
                           "dataset": {"samples": 100000}}, shipped)
    assert CODE not in _codes(text)


def test_no_warning_where_the_loader_leaves_the_first_option_in_place(shipped: Catalog) -> None:
    """ViT-B/16 in bf16: its first option (one H100 with 26 vCPUs) keeps up with a JPEG loader."""
    rec = recommend_spec(_spec("vit-b16", batch=128, precision="bf16-mixed"), shipped)
    decoded = recommend_spec(_spec("vit-b16", batch=128, precision="bf16-mixed", preprocess=IMAGE_PIPELINE_MS),
                             shipped)
    assert _machine(rec.options[0]) == _machine(decoded.options[0])
    assert CODE not in _codes(rec)
