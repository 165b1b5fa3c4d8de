"""training.mean_sequence_length: padded-to-longest or binned batches are timed at their mean length, sized at
sequence_length; a mean above sequence_length (or without it) is refused naming the field."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from catalog.gpus import gpus_by_slug
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpu

GPUS = gpus_by_slug()


def _spec(**training: object) -> dict[str, object]:
    return {"model": {"preset": "bert-large"},
            "training": {"batch_size": 16, "sequence_length": 512, "precision": "fp16-mixed", **training}}


def _row(**training: object):  # type: ignore[no-untyped-def]
    _, job = load_job(_spec(**training))
    return job, estimate_on_gpu(job, GPUS["a100-80gb"], gpu_count=1, known_gpus=GPUS)


def test_time_follows_the_mean_length_and_memory_the_longest() -> None:
    full_job, full = _row()
    binned_job, binned = _row(mean_sequence_length=288)
    assert full_job.timed_model is None and binned_job.timed_model is not None
    assert binned_job.timed_model.sequence_length == 288 and binned_job.model.sequence_length == 512
    assert binned.gpu_memory_bytes == full.gpu_memory_bytes
    # fewer tokens per sample (and a smaller s x s attention): at most 288/512 of the time plus fixed costs
    assert binned.iteration_ms < full.iteration_ms * 0.7
    _, shorter = _row(sequence_length=288)
    assert binned.iteration_ms == pytest.approx(shorter.iteration_ms)
    assert shorter.gpu_memory_bytes < binned.gpu_memory_bytes


def test_a_mean_equal_to_the_length_changes_nothing() -> None:
    job, row = _row(mean_sequence_length=512)
    assert job.timed_model is None
    assert row.iteration_ms == _row()[1].iteration_ms


@pytest.mark.parametrize(("training", "words"), [
    ({"mean_sequence_length": 600}, "exceeds sequence_length 512"),
    ({"mean_sequence_length": 0}, ""),
])
def test_a_mean_above_the_length_is_refused_naming_the_field(training: dict[str, object], words: str) -> None:
    with pytest.raises(ValidationError) as info:
        load_job(_spec(**training))
    messages = info.value.messages
    assert isinstance(messages, dict) and "training.mean_sequence_length" in messages
    assert words in " ".join(messages["training.mean_sequence_length"])


def test_a_mean_without_a_sequence_length_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        load_job({"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "mean_sequence_length": 100}})
    assert "training.mean_sequence_length" in info.value.messages


def test_the_document_lists_the_rule_it_cannot_state() -> None:
    from service.openapi_rules import MEAN_SEQUENCE_LENGTH, UNSTATED_RULES

    assert MEAN_SEQUENCE_LENGTH in UNSTATED_RULES[("/v1/estimate", "post")]
    assert MEAN_SEQUENCE_LENGTH.names("training.mean_sequence_length", "mean_sequence_length 600 exceeds "
                                                                       "sequence_length 512")
    assert MEAN_SEQUENCE_LENGTH.names("jobs[2].spec.training.mean_sequence_length",
                                      "mean_sequence_length needs sequence_length (the longest sample)")
    assert not MEAN_SEQUENCE_LENGTH.names("training.mean_sequence_length", "Must be greater than or equal to 1.")
