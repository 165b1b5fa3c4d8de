"""The array form of the step walk's peak (walk_arrays.py) equals the walk's own, moment for moment."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from sizing_fixtures import training

from workers.sizing import walk_arrays
from workers.sizing.layers.attention import Attention
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.loss import with_loss
from workers.sizing.presets.registry import preset_names, preset_stats
from workers.sizing.spec import Framework, Loss, Optimizer, Precision
from workers.sizing.stats import ModelStats
from workers.sizing.step_walk import Shards, peak_moment, walk_step
from workers.sizing.walk_arrays import step_peak_moment

SETTINGS = [  # (precision, gpu count, shards, kept share, attention, optimizer, framework, batch, update interval)
    (Precision.FP32, 1, Shards(), 1.0, Attention.MATH, Optimizer.ADAMW, Framework.PYTORCH, 64, 1),
    (Precision.BF16_MIXED, 1, Shards(), 1.0, Attention.FLASH, Optimizer.ADAM, Framework.PYTORCH, 7, 1),
    (Precision.FP16_MIXED, 8, Shards(), 0.37, Attention.EFFICIENT, Optimizer.SGD, Framework.PYTORCH, 3, 1),
    (Precision.BF16_MIXED, 8, Shards(8, 8, 8), 1.0, Attention.MATH, Optimizer.ADAMW, Framework.PYTORCH, 16, 1),
    (Precision.FP32, 4, Shards(1, 4, 4), 0.5, Attention.MATH, Optimizer.MOMENTUM, Framework.TENSORFLOW, 33, 1),
    (Precision.FP32, 1, Shards(), 1.0, Attention.MATH, Optimizer.SGD, Framework.PYTORCH, 2, 4),
    (Precision.BF16_MIXED, 8, Shards(1, 8, 8), 1.0, Attention.FLASH, Optimizer.ADAMW, Framework.PYTORCH, 5, 8),
]


def _models() -> list[ModelStats]:
    models = [preset_stats(name) for name in preset_names()]
    rng = random.Random(17)  # a custom net with dropout, norms and a loss row that keeps the output
    layers: list[dict[str, object]] = []
    for _ in range(40):
        kind = rng.choice(["linear", "relu", "dropout", "layernorm", "gelu"])
        layers.append({"type": kind, "out_features": rng.choice([64, 256, 1000])} if kind == "linear"
                      else {"type": kind, "p": 0.1} if kind == "dropout" else {"type": kind})
    custom = compute_model_stats(layers, input_shape=[128], sequence_length=None)
    models += [with_loss(custom, Loss.CROSS_ENTROPY), with_loss(custom, Loss.MSE),
               with_loss(preset_stats("resnet50"), Loss.CROSS_ENTROPY),
               # the fused linear cross-entropy's one row: a tied head (GPT-2) and an untied one (Llama 3)
               with_loss(preset_stats("gpt2"), Loss.FUSED_LINEAR_CROSS_ENTROPY),
               with_loss(preset_stats("llama3-8b", sequence_length=512), Loss.FUSED_LINEAR_CROSS_ENTROPY),
               # the fused cross-entropy: its gradient in the logits' dtype, not fp32
               with_loss(preset_stats("gpt2"), Loss.FUSED_CROSS_ENTROPY),
               with_loss(custom, Loss.FUSED_CROSS_ENTROPY)]
    return models


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0].value}-{s[1]}gpu-{s[4].value}-x{s[8]}")
def test_the_arrays_peak_at_the_walks_moment_for_every_preset_and_setting(
        setting: tuple[Precision, int, Shards, float, Attention, Optimizer, Framework, int, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    precision, count, shards, share, attention, optimizer, framework, batch, interval = setting
    monkeypatch.setattr(walk_arrays, "ARRAY_ROWS", 0)  # every model through the arrays
    monkeypatch.setattr(walk_arrays, "IMPORT_ROWS", 0)
    job = training(batch_size=batch, optimizer=optimizer, framework=framework, precision=precision,
                   update_interval=interval)
    for model in _models():
        walked = peak_moment(walk_step(model, job, precision=precision, gpu_count=count, shards=shards,
                                       kept_share=share, attention=attention))
        assert step_peak_moment(model, job, precision=precision, gpu_count=count, shards=shards,
                                kept_share=share, attention=attention) == walked, model.name


def test_a_model_of_many_rows_takes_the_arrays_and_peaks_where_the_walk_does() -> None:
    gpt2 = preset_stats("gpt2")  # its tied head: an embedding whose gradient a later row made
    deep = replace(gpt2, layers=tuple(replace(row, name=f"{row.name}#{i}") for i in range(20) for row in gpt2.layers))
    assert len(deep.layers) >= walk_arrays.IMPORT_ROWS
    for precision in Precision:
        job = training(batch_size=4, precision=precision)
        assert step_peak_moment(deep, job, precision=precision) == peak_moment(walk_step(deep, job,
                                                                                        precision=precision))


@pytest.mark.parametrize(("field", "value"), [("saved_values", -1), ("parameters", 10**30), ("neurons", True),
                                              ("multiply_adds", 2.5)])
def test_a_row_out_of_range_is_refused_naming_the_first_wrong_row_and_field(field: str, value: object) -> None:
    from workers.sizing.checks import check_model
    from workers.sizing.errors import SpecError

    gpt2 = preset_stats("gpt2")
    rows = list(gpt2.layers)
    rows[7] = replace(rows[7], **{field: value})
    rows[9] = replace(rows[9], saved_mask_bytes=-5)  # a later wrong row is not the one named
    with pytest.raises(SpecError) as refused:
        check_model(replace(gpt2, layers=tuple(rows)))
    assert refused.value.field == f"model.layers[7].{field}"
    check_model(gpt2)  # the preset itself passes


def test_jobs_that_differ_only_in_how_long_they_train_share_their_memory_work(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.sizing import memory

    calls: list[int] = []
    real = memory.allocator_slack_share

    def counted(*args: object, **kwargs: object) -> float:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(memory, "allocator_slack_share", counted)
    model = preset_stats("resnet18")
    first = memory.step_peak(model, training(batch_size=24, epochs=1.0))
    later = memory.step_peak(model, training(batch_size=24, epochs=90.0, learning_rate=0.1, eval_every_epochs=5,
                                             checkpoint_every_hours=2.0))
    assert later == first and len(calls) == 1
    other = memory.step_peak(model, training(batch_size=25, epochs=90.0))  # a batch of its own: walked again
    assert other != first and len(calls) == 2


def test_the_heaviest_rows_over_arrays_are_nlargests_with_ties_by_position(monkeypatch: pytest.MonkeyPatch) -> None:
    import heapq
    import operator

    monkeypatch.setattr(walk_arrays, "ARRAY_ROWS", 0)
    monkeypatch.setattr(walk_arrays, "IMPORT_ROWS", 0)
    by_parameters = operator.attrgetter("parameters")
    for model in _models():  # repeated blocks: many ties among the heaviest
        for count in (1, 3, 10):
            positions = walk_arrays.heaviest_rows(model, count)
            assert positions is not None
            assert [model.layers[i] for i in positions] == heapq.nlargest(count, model.layers, key=by_parameters)
    monkeypatch.setattr(walk_arrays, "ARRAY_ROWS", 10_000)
    monkeypatch.setattr(walk_arrays, "IMPORT_ROWS", 10_000)
    assert walk_arrays.heaviest_rows(preset_stats("gpt2"), 3) is None  # below it: the caller's heapq


def test_training_flops_over_distinct_rows_equal_the_per_row_sum() -> None:
    import operator

    from workers.sizing.timing import training_flops

    job = training(batch_size=8)
    for model in _models():
        # a frozen row (a DQN's target network) runs its forward only
        per_row = sum(row.multiply_adds * row.passes * (1.0 if row.frozen else 3.0) for row in model.layers)
        assert training_flops(model, job) == 2.0 * per_row * 8, model.name
    # a row with a fractional figure (an import's) is summed row by row, in order
    layers = tuple(replace(row, multiply_adds=row.multiply_adds + 0.1) for row in preset_stats("resnet18").layers)
    odd = replace(preset_stats("resnet18"), layers=layers)
    assert training_flops(odd, job) == 2.0 * sum(map(operator.attrgetter("multiply_adds"), layers)) * 8 * 3.0
