"""The rows grouped by their figures (sizing/row_table.py) count every row once and agree with reading each row."""

from __future__ import annotations

import operator
import random
from collections import Counter

import pytest

from workers.sizing import checks, memory, timing
from workers.sizing.errors import SpecError
from workers.sizing.layers.attention import matrix_traffic_values
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.loss import with_loss
from workers.sizing.presets.registry import preset_names, preset_stats
from workers.sizing.row_table import FIGURES, row_table
from workers.sizing.spec import Loss
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.strategies.adapters import transformer_shape


def _models() -> list[ModelStats]:
    models = [preset_stats(name) for name in preset_names()]
    rng = random.Random(23)  # a long net of a few kinds of block, with a residual stage
    layers: list[dict[str, object]] = [{"type": "conv2d", "out_channels": 8, "kernel": 3, "padding": 1, "name": "s0"}]
    for stage in range(1, 300):
        block = rng.choice([
            [{"type": "conv2d", "out_channels": 8, "kernel": [3, 3], "padding": 1}, {"type": "batchnorm"}],
            [{"type": "relu"}, {"type": "dropout", "p": 0.1}],
            [{"type": "gelu"}, {"type": "add", "from": f"s{stage - 1}"}],
        ])
        layers += [*block, {"type": "relu", "name": f"s{stage}"}]
    layers += [{"type": "flatten"}, {"type": "linear", "out_features": 10}]
    models.append(with_loss(compute_model_stats(layers, input_shape=[3, 8, 8], sequence_length=None),
                            Loss.CROSS_ENTROPY))
    return models


@pytest.mark.parametrize("model", _models(), ids=lambda m: f"{m.name}-{len(m.layers)}")
def test_each_row_is_counted_once_under_its_own_figures(model: ModelStats) -> None:
    table = row_table(model)
    figures = [operator.attrgetter(*FIGURES)(row) for row in model.layers]
    assert list(table.distinct) == list(dict.fromkeys(figures))  # in the order each first appears
    assert list(table.counts) == [Counter(figures)[f] for f in table.distinct]
    assert [table.distinct[i] for i in table.index()] == figures


@pytest.mark.parametrize("model", _models(), ids=lambda m: f"{m.name}-{len(m.layers)}")
def test_the_readers_of_the_table_see_what_reading_each_row_gives(model: ModelStats) -> None:
    work = operator.attrgetter("kind", "multiply_adds", "traffic_values", "parameters", "neurons", "passes",
                               "kernel_positions", "saved_values", "fused_saved_values", "saved_mask_bytes",
                               "fused_multiply_adds", "shared_parameters", "frozen", "frozen_parameters")
    by_row: dict[tuple[object, ...], int] = {}
    dense = [i for i, r in enumerate(model.layers) if r.kind is LayerKind.DENSE]
    head = model.layers[dense[-1]] if dense else None
    head_figures = operator.attrgetter(*FIGURES)(head) if head is not None else None
    alone = head is not None and sum(operator.attrgetter(*FIGURES)(r) == head_figures for r in model.layers) == 1
    for row, (kind, macs, traffic, parameters, neurons, passes, positions, saved, fused, mask, fused_macs, shared, \
            frozen, frozen_weights) in zip(model.layers, map(work, model.layers), strict=True):
        weights = parameters + shared + frozen_weights
        key = (kind, macs, max(traffic - weights, 0) if traffic else 2 * neurons, weights, passes,
               positions in timing.WINOGRAD_KERNEL_POSITIONS,
               matrix_traffic_values(kind is LayerKind.ATTENTION, saved, fused, mask), fused_macs, frozen,
               alone and operator.attrgetter(*FIGURES)(row) == head_figures)
        by_row[key] = by_row.get(key, 0) + 1
    assert list(timing._distinct_layers(model).items()) == list(by_row.items())
    assert memory._has_conv(model) == (not model.layers or any(r.kind is LayerKind.CONV for r in model.layers))
    has_attention = any(r.kind is LayerKind.ATTENTION for r in model.layers)
    assert transformer_shape(model) is None or has_attention


def test_a_wrong_count_in_a_repeated_row_is_still_named_at_its_first_row() -> None:
    model = compute_model_stats([{"type": "linear", "out_features": 16}, {"type": "relu"}] * 50, input_shape=[16],
                                sequence_length=None)
    rows = list(model.layers)
    rows[37] = rows[37].__class__(**{**rows[37].__dict__, "traffic_values": -1})
    broken = ModelStats(name="broken", neurons=model.neurons, parameters=model.parameters,
                        multiply_adds=model.multiply_adds, layers=tuple(rows))
    with pytest.raises(SpecError) as raised:
        checks.check_model(broken)
    assert raised.value.field == "model.layers[37].traffic_values"
