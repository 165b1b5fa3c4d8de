"""Composite patterns and views in hand-built ONNX graphs (onnx.helper; nothing downloaded)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.onnx_builders import model_bytes, output, weight
from workers.modelimport.onnx_import import onnx_model_stats

ROWS, WIDTH = 4, 8


def scalar(name: str, value: float) -> TensorProto:
    return numpy_helper.from_array(np.array(value, dtype=np.float32), name)


def dense_in() -> tuple[list, list]:
    """x [N, ROWS, WIDTH] -> MatMul -> h (the pattern's input)."""
    return ([helper.make_node("MatMul", ["x", "w"], ["h"])],
            [weight("w", WIDTH, WIDTH)])


def inputs() -> list:
    return [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", ROWS, WIDTH])]


def gelu_erf() -> tuple[list, list]:
    nodes = [helper.make_node("Div", ["h", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["h", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["g"])]
    return nodes, [scalar("sqrt2", 2 ** 0.5), scalar("one", 1.0), scalar("half", 0.5)]


def gelu_tanh() -> tuple[list, list]:  # as torch.onnx writes nn.GELU(approximate="tanh") before opset 20
    nodes = [helper.make_node("Mul", ["h", "h"], ["p2"]), helper.make_node("Mul", ["p2", "h"], ["p3"]),
             helper.make_node("Mul", ["p3", "c"], ["t1"]), helper.make_node("Add", ["h", "t1"], ["t2"]),
             helper.make_node("Mul", ["t2", "k"], ["t3"]), helper.make_node("Tanh", ["t3"], ["t4"]),
             helper.make_node("Add", ["t4", "one"], ["t5"]), helper.make_node("Mul", ["h", "t5"], ["t6"]),
             helper.make_node("Mul", ["t6", "half"], ["g"])]
    return nodes, [scalar("c", 0.044715), scalar("k", 0.79788456), scalar("one", 1.0), scalar("half", 0.5)]


def layernorm_parts() -> tuple[list, list]:  # LayerNorm before opset 17, affine
    nodes = [helper.make_node("ReduceMean", ["h"], ["mu"], axes=[-1]),
             helper.make_node("Sub", ["h", "mu"], ["dev"]),
             helper.make_node("Pow", ["dev", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
             helper.make_node("Add", ["var", "eps"], ["ve"]), helper.make_node("Sqrt", ["ve"], ["sd"]),
             helper.make_node("Div", ["dev", "sd"], ["n"]), helper.make_node("Mul", ["n", "gamma"], ["s"]),
             helper.make_node("Add", ["s", "beta"], ["g"])]
    return nodes, [scalar("two", 2.0), scalar("eps", 1e-5), weight("gamma", WIDTH), weight("beta", WIDTH)]


def build(pattern: tuple[list, list], *, opset: int = 14) -> bytes:
    head, head_weights = dense_in()
    nodes, constants = pattern
    tail = [helper.make_node("MatMul", ["g", "w2"], ["y"])]
    return model_bytes([*head, *nodes, *tail], inputs(), output(), [*head_weights, *constants, weight("w2", WIDTH, 4)],
                       opset=opset)


@pytest.mark.parametrize(("pattern", "name"), [(gelu_erf, "gelu"), (gelu_tanh, "gelu-tanh")])
def test_gelu_written_as_primitives_keeps_its_input_once(pattern, name) -> None:  # type: ignore[no-untyped-def]
    model = onnx_model_stats(build(pattern()), batch_size=2)
    rows = [r for r in model.layers if r.pattern == name]
    assert len(rows) == len(pattern()[0])
    assert [r.saved_values for r in rows] == [0] * (len(rows) - 1) + [ROWS * WIDTH]
    assert sum(r.neurons for r in rows) == ROWS * WIDTH  # one output, as the fused op
    # the second MatMul keeps GELU's output: two tensors in all, as PyTorch keeps them
    assert model.layers[-1].saved_values == ROWS * WIDTH


def test_layernorm_in_parts_counts_as_the_fused_op() -> None:
    parts = onnx_model_stats(build(layernorm_parts()), batch_size=2)
    rows = [r for r in parts.layers if r.pattern == "layernorm"]
    assert len(rows) == 9
    assert rows[-1].saved_values == ROWS * WIDTH + 2 * ROWS  # input, a mean and an inverse std per row
    assert sum(r.saved_values for r in rows[:-1]) == 0
    assert parts.parameters == WIDTH * WIDTH + 2 * WIDTH + WIDTH * 4


def test_unmatched_primitives_keep_what_autograd_keeps() -> None:
    nodes = [helper.make_node("Sigmoid", ["h"], ["s"]), helper.make_node("Mul", ["s", "h2"], ["g"]),
             helper.make_node("Relu", ["h"], ["h2"])]
    nodes = [nodes[0], nodes[2], nodes[1]]  # x * sigmoid(x) it is not: the product reads relu(h)
    model = onnx_model_stats(build((nodes, [])), batch_size=2)
    assert not any(r.pattern for r in model.layers)
    by_type = {r.type: r.saved_values for r in model.layers}
    assert by_type["Sigmoid"] == ROWS * WIDTH and by_type["Relu"] == ROWS * WIDTH


def test_a_kept_select_of_a_packed_projection_keeps_the_whole_projection() -> None:
    # h [N, 4, 8] -> [N, 4, 2, 4] -> transpose to [2, N, 4, 4] -> Gather index 1 (a "v"), transposed,
    # times relu(x): the product keeps v, a view of a [2, N, 4, 4] copy of the projection
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Reshape", ["h", "shape"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[2, 0, 1, 3]),
             helper.make_node("Gather", ["t", "one"], ["v"], axis=0),
             helper.make_node("Relu", ["x"], ["q"]),
             helper.make_node("MatMul", ["v_t", "q"], ["y"]),
             helper.make_node("Transpose", ["v"], ["v_t"], perm=[0, 2, 1])]
    nodes = [nodes[0], nodes[1], nodes[2], nodes[3], nodes[6], nodes[4], nodes[5]]
    shape = numpy_helper.from_array(np.array([2, ROWS, 2, 4], dtype=np.int64), "shape")
    index = numpy_helper.from_array(np.array(1, dtype=np.int64), "one")
    x = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, ROWS, WIDTH])]
    data = model_bytes(nodes, x, output(), [weight("w", WIDTH, WIDTH), shape, index])
    model = onnx_model_stats(data)
    product = model.layers[-1]
    # keeps q (counted at the Relu, which keeps it already) and v, whose storage is the size of the
    # whole projection (4 x 8 per sample), not v's own 4 x 4
    assert product.saved_values == ROWS * WIDTH
