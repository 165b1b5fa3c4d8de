"""What the unseen architectures (issue 11's holdout step records) showed the importer and the walk got wrong.

Each test names the mechanism, checked on the architecture's own ONNX fixture (tests/fixtures/onnx/,
exported by validation/measure/) or on a small layer list.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from validation.step_compare import compare_step_record, load_step_records
from workers.modelimport.onnx_import import onnx_model_stats
from workers.modelimport.onnx_shapes import per_sample_shape
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.spec import Optimizer, Precision, Training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.step_walk import Phase, walk_step

FIXTURES = Path(__file__).parent / "fixtures" / "onnx"


def _fixture(net: str, export: str = "train", *, batch: int, sequence: int | None = None) -> ModelStats:
    return onnx_model_stats((FIXTURES / f"{net}.{export}.onnx").read_bytes(), name=net, batch_size=batch,
                            sequence_length=sequence)


@pytest.mark.parametrize("net", ["convnext-64", "conv-ae-64", "vit-t8-64"])
def test_biased_convolutions_without_batchnorm_are_not_taken_for_a_folded_eval_export(net: str) -> None:
    model = _fixture(net, batch=8)
    assert "onnx-eval-export" not in [code for code, _ in model.import_warnings]
    assert not any(r.name.endswith("/folded_batchnorm") for r in model.layers)


def test_an_eval_export_of_a_batchnorm_net_is_still_unfolded() -> None:
    model = _fixture("googlenet-64", "eval", batch=8)
    assert [code for code, _ in model.import_warnings] == ["onnx-eval-export"]
    assert sum(r.name.endswith("/folded_batchnorm") for r in model.layers) >= 50


@pytest.mark.parametrize(("dims", "batch", "sample"), [
    ((16, 64, 256), 16, (64, 256)),  # batch first
    ((64, 1, 16, 256), 16, (64, 1, 256)),  # an ONNX GRU's [sequence, directions, batch, hidden]
    ((65, 24, 64), 8, (65, 3, 64)),  # nn.MultiheadAttention's [sequence, batch x heads, head size]
    ((520, 192), 8, (65, 192)),  # [batch x sequence, features]
    ((1, 10), 1, (10,)),
    ((3, 7), 4, (3, 7)),  # no batch in it: left as it is
])
def test_one_samples_shape_takes_the_batch_out_wherever_it_stands(
        dims: tuple[int, ...], batch: int, sample: tuple[int, ...]) -> None:
    assert per_sample_shape(dims, batch) == sample


@pytest.mark.parametrize(("net", "batch", "sequence"), [("gru-s64", 16, 64), ("vit-t8-64", 8, None),
                                                        ("tinygpt-s128", 8, 128), ("shufflenetv2-64", 16, None)])
def test_each_rows_shape_holds_one_samples_values(net: str, batch: int, sequence: int | None) -> None:
    model = _fixture(net, batch=batch, sequence=sequence)
    wrong = [(r.name, r.output_shape, r.neurons) for r in model.layers
             if r.neurons and r.type != "Split" and math.prod(r.output_shape) != r.neurons]
    assert not wrong


def test_a_gru_keeps_seven_values_per_unit_and_step_besides_its_input() -> None:
    gru = [r for r in _fixture("gru-s64", batch=16, sequence=64).layers if r.type == "GRU"]
    steps, hidden = 64, 256
    assert [r.saved_values for r in gru] == [steps * (128 + 7 * hidden), steps * (hidden + 7 * hidden)]


def test_a_tied_head_reads_the_embedding_as_a_shared_weight() -> None:
    model = _fixture("tinygpt-s128", batch=8, sequence=128)
    record = next(r for r in load_step_records() if r["id"] == "here-tinygpt-s128-b8-fp32-adamw")
    assert model.parameters == record["measured"]["trainable_parameters"]  # the tied table once
    head = model.layers[-1]
    assert head.kind is LayerKind.DENSE and head.parameters == 0 and head.shared_parameters == 4096 * 256


def test_autocast_keeps_a_16_bit_copy_of_a_tied_heads_shared_weight_until_its_backward() -> None:
    layers = [{"type": "embedding", "vocab": 1000, "dim": 64}, {"type": "layernorm"},
              {"type": "dense", "out_features": 1000, "bias": False, "shared_weights": True}]
    model = compute_model_stats(layers, input_shape=None, sequence_length=16)
    training = Training(batch_size=2, sequence_length=16, precision=Precision.BF16_MIXED, optimizer=Optimizer.SGD)
    moments = walk_step(model, training, precision=Precision.BF16_MIXED)
    fp32_weights = model.parameters * 4
    head_forward = moments[2]
    assert head_forward.phase is Phase.FORWARD and head_forward.parameters == fp32_weights + 1000 * 64 * 2
    last_backward = [m for m in moments if m.phase is Phase.BACKWARD][-1]  # the embedding's, after the head's
    assert last_backward.parameters == fp32_weights


@pytest.mark.parametrize("record_id", ["here-gru-s64-b16-fp32-adam", "here-vit-t8-64-b8-fp32-adamw",
                                       "here-lstm-lm-s35-b16-fp32-sgd-native-cell"])
def test_the_fixed_mechanisms_bring_these_steps_within_5_percent(record_id: str) -> None:
    row = compare_step_record(next(r for r in load_step_records() if r["id"] == record_id))
    assert abs(row.error) <= 0.05, row.error
