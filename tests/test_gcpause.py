"""The builder pauses the cyclic collector for a big model and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

from workers.sizing.gcpause import collection_paused
from workers.sizing.layers import build
from workers.sizing.layers.build import compute_model_stats


def test_a_big_model_is_built_with_the_collector_paused_and_left_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    real = build._model_stats

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_model_stats", spy)
    block: list[dict[str, object]] = [{"type": "linear", "out_features": 16}, {"type": "relu"}]
    layers = block * (build.PAUSED_FROM // 2)
    big = compute_model_stats(layers, input_shape=[16], sequence_length=None)
    small = compute_model_stats(layers[:10], input_shape=[16], sequence_length=None)
    assert seen == [False, True] and gc.isenabled()
    assert len(big.layers) == build.PAUSED_FROM and big.layers[:10] == small.layers


def test_the_pause_leaves_a_collector_someone_turned_off_off_and_restores_on_error() -> None:
    gc.disable()
    try:
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("a spec error inside the build")
    assert gc.isenabled()
