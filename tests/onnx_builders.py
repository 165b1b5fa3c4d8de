"""ONNX test models built with onnx.helper (nothing downloaded), and their equivalent layer lists."""

from __future__ import annotations

import numpy as np
from onnx import NodeProto, TensorProto, ValueInfoProto, helper, numpy_helper

from workers.sizing.stats import ModelStats


def weight(name: str, *shape: int) -> TensorProto:
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def model_bytes(
    nodes: list[NodeProto],
    inputs: list[ValueInfoProto],
    outputs: list[ValueInfoProto],
    weights: list[TensorProto],
    *,
    opset: int = 17,
) -> bytes:
    graph = helper.make_graph(nodes, "test", inputs, outputs, weights)
    data: bytes = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()
    return data


def image_input(batch: int | str = "N", channels: int = 3, side: int = 16) -> list[ValueInfoProto]:
    return [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels, side, side])]


def output(name: str = "y") -> list[ValueInfoProto]:
    return [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)]


def totals(m: ModelStats) -> tuple[int, int, int]:
    return m.neurons, m.parameters, m.multiply_adds


def residual_cnn_onnx(batch: int | str = "N") -> bytes:
    weights = [
        weight("w1", 16, 3, 3, 3),
        weight("b1", 16),
        *(weight(f"bn1.{k}", 16) for k in "sbmv"),
        weight("w2", 16, 16, 3, 3),
        weight("b2", 16),
        *(weight(f"bn2.{k}", 16) for k in "sbmv"),
        weight("fc.w", 10, 16 * 8 * 8),
        weight("fc.b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "bn1.s", "bn1.b", "bn1.m", "bn1.v"], ["n1"]),
        helper.make_node("Relu", ["n1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c2", "bn2.s", "bn2.b", "bn2.m", "bn2.v"], ["n2"]),
        helper.make_node("Add", ["n2", "r1"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["y"], transB=1),
    ]
    return model_bytes(nodes, image_input(batch), output(), weights)


RESIDUAL_CNN_LAYERS: list[dict[str, object]] = [
    {"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
    {"type": "batchnorm"},
    {"type": "relu", "name": "r1"},
    {"type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1},
    {"type": "batchnorm"},
    {"type": "add", "from": "r1"},
    {"type": "relu"},
    {"type": "maxpool2d", "kernel": 2},
    {"type": "flatten"},
    {"type": "dense", "out_features": 10},
]


MLP_LAYERS: list[dict[str, object]] = [
    {"type": "flatten"},
    {"type": "dense", "out_features": 64},
    {"type": "relu"},
    {"type": "dense", "out_features": 10},
    {"type": "softmax"},
]


def mlp_onnx(*, gemm: bool) -> bytes:
    weights = [weight("w1", 784, 64), weight("b1", 64), weight("w2", 64, 10), weight("b2", 10)]
    nodes = [helper.make_node("Flatten", ["x"], ["f"])]
    if gemm:
        nodes += [
            helper.make_node("Gemm", ["f", "w1", "b1"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["o"]),
        ]
    else:  # how PyTorch exports nn.Linear on inputs with more than two axes
        nodes += [
            helper.make_node("MatMul", ["f", "w1"], ["m1"]),
            helper.make_node("Add", ["m1", "b1"], ["h"]),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("MatMul", ["r", "w2"], ["m2"]),
            helper.make_node("Add", ["b2", "m2"], ["o"]),
        ]
    nodes.append(helper.make_node("Softmax", ["o"], ["y"]))
    return model_bytes(nodes, image_input(channels=1, side=28), output(), weights)
