"""Building the same spec twice gives the same model object, so the core's per-model caches hit."""

from __future__ import annotations

from workers.schemas.specs import load_job


def test_a_preset_spec_built_twice_is_the_same_model_object() -> None:
    spec = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}
    _, first = load_job(spec)
    _, second = load_job(spec)
    assert first.model is second.model  # the loss row is appended once per (model, loss), not per request


def test_another_loss_is_another_model() -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 4, "sequence_length": 128}}
    _, plain = load_job(spec)
    _, other = load_job({**spec, "training": {**spec["training"], "loss": "mse"}})
    assert plain.model is not other.model
