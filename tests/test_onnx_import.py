"""ONNX files (built here with onnx.helper) give the same statistics as the equivalent layer lists."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_builders import (
    MLP_LAYERS,
    RESIDUAL_CNN_LAYERS,
    image_input,
    mlp_onnx,
    model_bytes,
    output,
    residual_cnn_onnx,
    totals,
    weight,
)

from workers.modelimport.onnx_import import onnx_model_stats
from workers.sizing.errors import OnnxError, SpecError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.stats import LayerKind


def test_residual_cnn_gives_the_same_totals_as_its_layer_list() -> None:
    from_onnx = onnx_model_stats(residual_cnn_onnx())
    from_layers = compute_model_stats(RESIDUAL_CNN_LAYERS, input_shape=[3, 16, 16], sequence_length=None)
    assert totals(from_onnx) == totals(from_layers)
    assert [r.saved_values for r in from_onnx.layers] == [r.saved_values for r in from_layers.layers]
    assert [r.output_shape for r in from_onnx.layers] == [r.output_shape for r in from_layers.layers]
    assert from_onnx.unknown_operators == ()


def test_batchnorm_running_statistics_are_not_parameters() -> None:
    m = onnx_model_stats(residual_cnn_onnx())
    assert [r.parameters for r in m.layers if r.type == "BatchNormalization"] == [32, 32]


def test_a_fixed_batch_is_divided_out() -> None:
    assert totals(onnx_model_stats(residual_cnn_onnx(batch=8))) == totals(onnx_model_stats(residual_cnn_onnx()))


@pytest.mark.parametrize("gemm", [True, False])
def test_mlp_gives_the_same_totals_as_its_layer_list(gemm: bool) -> None:
    from_onnx = onnx_model_stats(mlp_onnx(gemm=gemm))
    from_layers = compute_model_stats(MLP_LAYERS, input_shape=[1, 28, 28], sequence_length=None)
    assert totals(from_onnx) == totals(from_layers)
    assert [r.kind for r in from_onnx.layers] == [r.kind for r in from_layers.layers]


def test_transposed_conv_matches_the_layer_rule() -> None:
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1])
    ]
    data = model_bytes(nodes, image_input(channels=8, side=4), output(), [weight("w", 8, 4, 4, 4)])
    layers = [{"type": "conv_transpose2d", "out_channels": 4, "kernel": 4, "stride": 2, "padding": 1, "bias": False}]
    assert totals(onnx_model_stats(data)) == totals(
        compute_model_stats(layers, input_shape=[8, 4, 4], sequence_length=None)
    )


def lstm_onnx() -> bytes:
    hidden, features = 20, 10
    weights = [
        weight("W", 1, 4 * hidden, features),
        weight("R", 1, 4 * hidden, hidden),
        weight("B", 1, 8 * hidden),
    ]
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["y"], hidden_size=hidden)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", "N", features])]
    return model_bytes(nodes, inputs, output(), weights)


def test_lstm_matches_the_layer_rule_once_the_sequence_length_is_known() -> None:
    m = onnx_model_stats(lstm_onnx(), sequence_length=7)
    layers = compute_model_stats([{"type": "lstm", "hidden": 20}], input_shape=[10], sequence_length=7)
    assert (m.parameters, m.multiply_adds) == (layers.parameters, layers.multiply_adds)
    assert m.layers[0].kind is LayerKind.RECURRENT


def test_a_symbolic_sequence_without_a_sequence_length_asks_for_one() -> None:
    with pytest.raises(SpecError) as caught:
        onnx_model_stats(lstm_onnx())
    assert caught.value.field == "training.sequence_length"


def test_matmul_between_activations_counts_as_attention() -> None:
    s, d = 32, 16
    nodes = [
        helper.make_node("Transpose", ["x"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["x", "kt"], ["scores"]),
        helper.make_node("Softmax", ["scores"], ["y"], axis=-1),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", s, d])]
    m = onnx_model_stats(model_bytes(nodes, inputs, output(), []))
    scores = next(r for r in m.layers if r.type == "MatMul")
    assert scores.kind is LayerKind.ATTENTION
    assert scores.multiply_adds == s * s * d
    assert m.parameters == 0


def test_a_weight_shared_by_two_nodes_counts_once() -> None:
    vocab, dim, s = 100, 8, 5
    nodes = [
        helper.make_node("Gather", ["table", "x"], ["e"]),
        helper.make_node("Transpose", ["table"], ["table_t"], perm=[1, 0]),
        helper.make_node("MatMul", ["e", "table_t"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.INT64, ["N", s])]
    m = onnx_model_stats(model_bytes(nodes, inputs, output(), [weight("table", vocab, dim)]))
    assert m.parameters == vocab * dim
    assert m.layers[0].kind is LayerKind.EMBEDDING
    assert m.multiply_adds == s * dim * vocab


def test_unknown_operators_are_listed_not_ignored() -> None:
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("CumSum", ["r", "axis"], ["y"])]
    axis = numpy_helper.from_array(np.array(1, dtype=np.int64), "axis")
    m = onnx_model_stats(model_bytes(nodes, image_input(), output(), [axis]))
    assert m.unknown_operators == ("CumSum",)
    assert [r.type for r in m.layers] == ["Relu", "CumSum"]
    assert m.neurons == 2 * 3 * 16 * 16


def test_custom_domain_operators_are_listed_with_their_domain() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Fancy", ["r"], ["y"], domain="com.example"),
    ]
    graph = helper.make_graph(nodes, "t", image_input(), output())
    data = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]
    ).SerializeToString()
    m = onnx_model_stats(data)
    assert "com.example.Fancy" in m.unknown_operators
    assert m.neurons == 3 * 16 * 16  # the Relu still counts


@pytest.mark.parametrize("data", [b"\x00\xff garbage \x12\x34", b"hello, this is not an onnx file"])
def test_corrupt_bytes_raise_onnx_error(data: bytes) -> None:
    with pytest.raises(OnnxError) as caught:
        onnx_model_stats(data)
    assert caught.value.field == "model.onnx"


def test_empty_and_oversized_files_raise_onnx_error() -> None:
    with pytest.raises(OnnxError, match="empty"):
        onnx_model_stats(b"")
    with pytest.raises(OnnxError, match="limit"):
        onnx_model_stats(residual_cnn_onnx(), max_bytes=1000)


def test_a_model_with_external_weights_is_sized_from_its_graph_alone(tmp_path: Path) -> None:
    proto = onnx.load_model_from_string(residual_cnn_onnx())
    onnx.save_model(
        proto,
        tmp_path / "model.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        size_threshold=0,
        location="weights.bin",
    )
    graph_only = (tmp_path / "model.onnx").read_bytes()
    assert len(graph_only) < (tmp_path / "weights.bin").stat().st_size
    assert totals(onnx_model_stats(graph_only)) == totals(onnx_model_stats(residual_cnn_onnx()))
