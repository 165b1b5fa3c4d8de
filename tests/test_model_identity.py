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


def test_a_layer_list_built_twice_is_the_same_model_object_and_another_list_another() -> None:
    """A custom model's jobs (specs that differ in epochs) share one model, so the strategy searches and walks
    remembered per model hit: a U-Net no card holds as given searched again for every job before."""
    layers = [{"type": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1}, {"type": "relu"},
              {"type": "flatten"}, {"type": "dense", "out_features": 10}]
    spec = {"model": {"layers": layers, "input_shape": [3, 32, 32]}, "training": {"batch_size": 16}}
    _, first = load_job(spec)
    _, again = load_job({**spec, "training": {"batch_size": 16, "epochs": 7}})
    assert first.model is again.model
    _, wider = load_job({**spec, "model": {"layers": [{**layers[0], "out_channels": 16}, *layers[1:]],
                                           "input_shape": [3, 32, 32]}})
    _, larger = load_job({**spec, "model": {"layers": layers, "input_shape": [3, 64, 64]}})
    assert wider.model is not first.model and wider.model.parameters > first.model.parameters
    assert larger.model is not first.model and larger.model.multiply_adds > first.model.multiply_adds
