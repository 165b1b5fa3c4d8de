"""ONNX files as PyTorch really exports them, checked against what one training step keeps.

The fixtures in tests/fixtures/onnx/ are ten small networks (validation/measure/onnx_nets.py)
exported by `torch.onnx.export(..., dynamo=False)` four ways, and measured.json holds what one
CPU training step of each keeps once the loss is computed (validation/measure/onnx_kept.py).
"""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path

import pytest

from workers.modelimport.onnx_import import onnx_model_stats
from workers.sizing.layers.attention import Attention, kept_for_backward
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.stats import ModelStats

FIXTURES = Path(__file__).parent / "fixtures" / "onnx"
MEASURED = json.loads((FIXTURES / "measured.json").read_text())["records"]
NAMES = [r["model"] for r in MEASURED]
SEQUENCE = {"lstm-lm": 32, "transformer-encoder": 32}
BATCH = 8


@cache
def stats(name: str, kind: str, batch_size: int = BATCH) -> ModelStats:
    data = gzip.decompress((FIXTURES / f"{name}.{kind}.onnx.gz").read_bytes())
    return onnx_model_stats(data, sequence_length=SEQUENCE.get(name), batch_size=batch_size)


def kept_bytes(model: ModelStats, attention: Attention = Attention.MATH) -> int:
    """fp32 bytes per sample kept for backward, the loss included."""
    rows = with_loss(model, Loss.CROSS_ENTROPY).layers
    return sum(values * 4 + mask for values, mask in (kept_for_backward(r, attention) for r in rows))


def test_training_preserving_exports_predict_the_measured_step_within_5_percent() -> None:
    errors = {}
    for record in MEASURED:
        measured = record["gpu_kept_bytes"] / record["batch_size"]
        errors[record["model"]] = kept_bytes(stats(record["model"], "train.fixed")) / measured - 1
    print({name: f"{error:+.1%}" for name, error in errors.items()})
    assert len(errors) == 10
    assert all(abs(e) <= 0.05 for e in errors.values()), errors


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_fixed_and_dynamic_batch_exports_give_the_same_figures(name: str, mode: str) -> None:
    fixed, dynamic = stats(name, f"{mode}.fixed"), stats(name, f"{mode}.dynamic")
    assert not dynamic.unknown_operators
    assert (fixed.neurons, fixed.parameters, fixed.multiply_adds) == (
        dynamic.neurons, dynamic.parameters, dynamic.multiply_adds)
    assert [(r.saved_values, r.saved_mask_bytes, r.fused_saved_values) for r in fixed.layers] == [
        (r.saved_values, r.saved_mask_bytes, r.fused_saved_values) for r in dynamic.layers]


def test_a_dynamic_batch_is_bound_to_the_jobs_batch_and_counted_per_sample() -> None:
    small, large = stats("transformer-encoder", "train.dynamic", 2), stats("transformer-encoder", "train.dynamic", 16)
    assert kept_bytes(small) == kept_bytes(large)


@pytest.mark.parametrize(("name", "pattern"), [
    ("efficientnet-b0", "silu"), ("groupnorm-resnet", "groupnorm"), ("transformer-encoder", "layernorm"),
    ("transformer-encoder", "attention"),
])
def test_composite_patterns_are_named_on_their_rows(name: str, pattern: str) -> None:
    rows = [r for r in stats(name, "train.fixed").layers if r.pattern == pattern]
    assert rows
    if pattern != "attention":  # a fused op: what it keeps sits on its last node
        ends = {i for i, r in enumerate(rows) if i + 1 == len(rows) or r.type in ("Mul", "Add")}
        assert all(r.saved_values == 0 for i, r in enumerate(rows) if i not in ends)


def test_silu_counts_its_input_once() -> None:
    rows = stats("efficientnet-b0", "train.fixed").layers
    sigmoids = [r for r in rows if r.pattern == "silu" and r.type == "Sigmoid"]
    products = [r for r in rows if r.pattern == "silu" and r.type == "Mul"]
    assert sigmoids and len(sigmoids) == len(products)
    assert all(r.saved_values == 0 and r.neurons == 0 for r in sigmoids)
    assert all(r.saved_values == r.neurons for r in products)  # the input, the size of the output


def test_groupnorm_keeps_its_input_and_two_statistics_per_group() -> None:
    rows = stats("groupnorm-resnet", "train.fixed").layers
    ends = [r for r in rows if r.pattern == "groupnorm" and r.type == "Add"]
    assert ends
    first = ends[0]
    assert first.saved_values == first.neurons + 2 * 4  # 4 groups: a mean and an inverse std each


def test_global_average_pool_keeps_nothing() -> None:
    rows = [r for r in stats("mobilenetv2", "train.fixed").layers if r.type == "GlobalAveragePool"]
    assert rows and all(r.saved_values == 0 for r in rows)


def test_fused_attention_keeps_no_sequence_by_sequence_matrix() -> None:
    model = stats("transformer-encoder", "train.fixed")
    math, fused = kept_bytes(model, Attention.MATH), kept_bytes(model, Attention.EFFICIENT)
    heads, seq, layers = 4, 32, 2
    # math keeps softmax and dropped probabilities (4 bytes each) and a mask (1 byte) per score,
    # and the scaled q and k; fused keeps the unscaled q and k (views of the packed projection, kept
    # by v already), its output (the output projection keeps a contiguous copy of it besides) and
    # a float32 log-sum-exp per row.
    scores, hidden = layers * heads * seq * seq, 64
    scaled_qk, output = layers * 2 * seq * hidden * 4, layers * seq * hidden * 4
    assert math - fused == scores * 9 + scaled_qk - output - layers * heads * seq * 4


FOLDABLE = ["mobilenetv2", "efficientnet-b0", "unet", "m5", "densenet"]


@pytest.mark.parametrize("name", NAMES)
def test_an_eval_export_carries_a_warning_and_a_training_preserving_one_none_of_it(name: str) -> None:
    codes = [code for code, _ in stats(name, "eval.fixed").import_warnings]
    assert codes in (["onnx-eval-export"], ["onnx-training-mode-unknown"])
    assert "onnx-eval-export" not in [code for code, _ in stats(name, "train.fixed").import_warnings]


@pytest.mark.parametrize("name", FOLDABLE)
def test_a_recognisable_folded_batchnorm_is_counted_back(name: str) -> None:
    record = next(r for r in MEASURED if r["model"] == name)
    measured = record["gpu_kept_bytes"] / record["batch_size"]
    model = stats(name, "eval.fixed")
    (code, message), = model.import_warnings
    assert code == "onnx-eval-export" and "Counted back" in message and "TrainingMode.PRESERVE" in message
    assert any(r.type == "BatchNormalization" and r.name.endswith("/folded_batchnorm") for r in model.layers)
    assert abs(kept_bytes(model) / measured - 1) <= 0.05


def test_dropout_dropped_by_an_eval_export_is_warned_not_guessed() -> None:
    record = next(r for r in MEASURED if r["model"] == "mlp")
    model = stats("mlp", "eval.fixed")
    (code, message), = model.import_warnings
    assert code == "onnx-training-mode-unknown" and "Dropout" in message
    assert kept_bytes(model) < 0.9 * record["gpu_kept_bytes"] / record["batch_size"]  # the masks are missing


def test_gpugauge_model_names_patterns_and_prints_the_warning(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main

    path = tmp_path / "net.onnx"
    path.write_bytes(gzip.decompress((FIXTURES / "efficientnet-b0.eval.fixed.onnx.gz").read_bytes()))
    assert main(["model", str(path)]) == 0
    out = capsys.readouterr().out
    assert "pattern" in out and "silu" in out and "onnx-eval-export" in out
    assert main(["model", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["import_warnings"][0]["code"] == "onnx-eval-export"
    assert {row["pattern"] for row in data["layers"]} >= {"silu", ""}
