"""A fit answer's largest batch: the batch at which the job still fits a card with headroom, one more not; and the
questions that ask for it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from catalog.gpus import load_gpus
from tests.test_slack_phrases import parse
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.largest_batch import MAX_BATCH, largest_batch
from workers.slack.blocks import render_fit

GPUS = load_gpus()


def _fits(job: object, slug: str, batch: int) -> bool:
    trial = replace(job, training=replace(job.training, batch_size=batch))  # type: ignore[attr-defined]
    return bool(estimate_on_gpus(trial, GPUS, slugs=[slug]).per_gpu[0].fits)


@pytest.mark.parametrize(("spec", "slug"), [
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 32}}, "v100-16gb"),
    ({"model": {"preset": "bert-base"}, "training": {"batch_size": 32, "sequence_length": 128}}, "t4"),
    ({"model": {"preset": "llama3-8b"}, "training": {"batch_size": 8, "sequence_length": 1024, "recompute": True,
      "precision": "bf16-mixed", "from_pretrained": True, "parallelism": {"adapter": {"kind": "qlora"}}}}, "rtx-4090"),
])
def test_the_largest_batch_fits_and_one_more_does_not(spec: dict[str, object], slug: str) -> None:
    _, job = load_job(spec)
    most = largest_batch(job, GPUS, slug=slug)
    assert 1 <= most < MAX_BATCH
    assert _fits(job, slug, most) and not _fits(job, slug, most + 1)


def test_a_job_not_fitting_at_batch_one_has_no_largest_batch() -> None:
    _, job = load_job({"model": {"preset": "llama3-70b"}, "training": {"batch_size": 1, "precision": "bf16-mixed"}})
    assert largest_batch(job, GPUS, slug="t4") == 0


@pytest.mark.parametrize("text", ["what batch size can i use for resnet50 on a v100-16gb",
                                  "max batch size for resnet50 on a v100-16gb",
                                  "largest batch for resnet50 on v100-16gb",
                                  "what batch size fits resnet50 on a v100-16gb",
                                  "what's the max batch size that will fit resnet50 on a v100-16gb?"])
def test_a_question_about_the_largest_batch_is_a_fit(text: str) -> None:
    # "what batch size can i use for resnet50 on a v100" was refused: "unknown word 'batch'", "unknown preset 'size'"
    command = parse(text)
    assert command.kind == "fit" and command.gpus == ("v100-16gb",)
    assert command.spec["model"]["preset"] == "resnet50"
    # "what batch size fits llama 3 8b lora on a 4090" was refused the same way: "fits" made it a fit question with
    # "what batch size" left in its words


@pytest.mark.parametrize(("text", "count"), [("largest batch for resnet50 on my v100-16gb", 1),
                                             ("does resnet50 fit on our 2 v100-16gb?", 2)])
def test_a_fit_question_on_the_teams_own_cards_fits_on_them(text: str, count: int) -> None:
    # "largest batch for bert-large on my 3090" was refused: "name a GPU to fit on", the card read as owned_gpus
    command = parse(text)
    assert (command.kind, command.gpus, command.gpu_count) == ("fit", ("v100-16gb",), count)
    assert "constraints" not in command.spec


def test_the_fit_answer_says_each_cards_largest_batch() -> None:
    requirements = {"gpu_memory_bytes": 2**32, "per_gpu": [{"gpu": "t4", "gpu_count": 1, "fits": True,
                                                            "gpu_memory_bytes": 2**32, "iteration_ms": 10.0}]}
    text = str(render_fit(requirements, title="bert on a t4", largest={"t4": 155}))
    assert "fits, 4.0 GiB per GPU; the largest batch that fits is 155 per GPU, all else as given" in text
