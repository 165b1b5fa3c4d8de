"""Per-operator rules for ONNX nodes: kind, multiply-adds, which inputs are weights, what backward keeps.

The rules mirror the layer-list rules of `workers.sizing` (a Conv node counts as a conv2d layer,
Gemm as dense, MatMul between two activations as attention), so that a layer list and its ONNX
export give the same totals.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import onnx
from onnx import NodeProto

from workers.sizing.layers.seq import GATES, KEPT_PER_UNIT
from workers.sizing.stats import LayerKind

Dims = tuple[int, ...]
INDEX_BYTES = 8  # int64 indices (max-pool) and token ids (embedding look-ups), as PyTorch keeps them


@dataclass(frozen=True)
class NodeContext:
    """What a rule may read about one node: tensor types and dims, per-sample sizes, what is an activation."""

    node: NodeProto
    types: dict[str, tuple[int, Dims | None]]
    active: set[str]
    batch: int

    def dims(self, index: int) -> Dims:
        """Return the dims of the node's index-th input (empty when unknown)."""
        if index >= len(self.node.input):
            return ()
        return self.types.get(self.node.input[index], (0, None))[1] or ()

    def values(self, tensor: str) -> int:
        """Return a tensor's values for one sample (0 when its shape is unknown)."""
        dims = self.types.get(tensor, (0, None))[1]
        if dims is None:
            return 0
        total = math.prod(dims)
        return total // self.batch if self.batch > 1 and total % self.batch == 0 else total

    def attr(self, name: str, default: int) -> int:
        """Return an integer attribute of the node."""
        for a in self.node.attribute:
            if a.name == name:
                value = onnx.helper.get_attribute_value(a)
                return int(value) if isinstance(value, int) else default
        return default

    def active_inputs(self) -> list[str]:
        """Return the node's inputs that carry activations (derived from the model's inputs)."""
        return [n for n in self.node.input if n in self.active]


Count = Callable[[NodeContext, str], int]  # (context, output tensor) -> a count


@dataclass(frozen=True)
class OpRule:
    """How one operator type is counted."""

    kind: LayerKind
    keeps: str = ""  # "input", "output", "inputs" (every activation input) or "" (nothing)
    weights: frozenset[int] | None = None  # explicit weight positions; None: constants of size > 1
    params: bool = True  # False: constant inputs are settings (scales, pads), not weights
    macs: Count | None = None
    extra_kept: Count | None = None
    mask_bytes: Count | None = None


def _conv_macs(c: NodeContext, out: str) -> int:
    """Each output value costs (in_channels / groups) * kernel multiply-adds (W is [M, C/g, k...])."""
    return c.values(out) * math.prod(c.dims(1)[1:])


def _conv_transpose_macs(c: NodeContext, out: str) -> int:
    """Each input value is scattered to (out_channels / groups) * kernel outputs (W is [C, M/g, k...])."""
    return c.values(c.node.input[0]) * math.prod(c.dims(1)[1:])


def _gemm_macs(c: NodeContext, out: str) -> int:
    """Each output value is a dot product over the shared dimension K."""
    a = c.dims(0)
    k = (a[0] if c.attr("transA", 0) else a[-1]) if a else 0
    return c.values(out) * k


def _matmul_macs(c: NodeContext, out: str) -> int:
    """Each output value is a dot product over A's last dimension."""
    a = c.dims(0)
    return c.values(out) * (a[-1] if a else 0)


def _recurrent(cell: str) -> tuple[Count, Count]:
    """Return the multiply-add and kept-value counts of an ONNX LSTM or GRU node (layout 0 or 1)."""

    def shape(c: NodeContext) -> tuple[int, int, int, int]:
        x, w = c.dims(0), c.dims(1)
        steps = (x[1] if c.attr("layout", 0) else x[0]) if x else 0
        hidden = c.attr("hidden_size", w[1] // GATES[cell] if w else 0)
        return steps, (w[0] if w else 1), hidden, (x[-1] if x else 0)

    def macs(c: NodeContext, out: str) -> int:
        steps, dirs, hidden, features = shape(c)
        return steps * dirs * GATES[cell] * hidden * (features + hidden)

    def kept(c: NodeContext, out: str) -> int:
        steps, dirs, hidden, _ = shape(c)
        return steps * dirs * KEPT_PER_UNIT[cell] * hidden

    return macs, kept


def _indices(c: NodeContext, out: str) -> int:
    """Count the bytes of max-pool's int64 argmax indices."""
    return INDEX_BYTES * c.values(out)


def _token_ids(c: NodeContext, out: str) -> int:
    """Count the bytes of an embedding look-up's int64 token ids."""
    return INDEX_BYTES * c.values(c.node.input[1]) if len(c.node.input) > 1 else 0


def _mask(c: NodeContext, out: str) -> int:
    """Count dropout's 1-byte mask."""
    return c.values(out)


LSTM_MACS, LSTM_KEPT = _recurrent("lstm")
GRU_MACS, GRU_KEPT = _recurrent("gru")
NORM = OpRule(LayerKind.NORM, keeps="input", weights=frozenset({1, 2}))
KEEPS_OUTPUT = OpRule(LayerKind.ELEMENTWISE, keeps="output")
KEEPS_INPUT = OpRule(LayerKind.ELEMENTWISE, keeps="input")
PLUMBING = OpRule(LayerKind.ELEMENTWISE)
SETTINGS = OpRule(LayerKind.ELEMENTWISE, params=False)

RULES: dict[str, OpRule] = {
    "Conv": OpRule(LayerKind.CONV, keeps="input", weights=frozenset({1, 2}), macs=_conv_macs),
    "ConvTranspose": OpRule(LayerKind.CONV, keeps="input", weights=frozenset({1, 2}), macs=_conv_transpose_macs),
    "Gemm": OpRule(LayerKind.DENSE, keeps="input", weights=frozenset({1, 2}), macs=_gemm_macs),
    "LSTM": OpRule(
        LayerKind.RECURRENT, keeps="input", weights=frozenset({1, 2, 3}), macs=LSTM_MACS, extra_kept=LSTM_KEPT
    ),
    "GRU": OpRule(LayerKind.RECURRENT, keeps="input", weights=frozenset({1, 2, 3}), macs=GRU_MACS, extra_kept=GRU_KEPT),
    "BatchNormalization": NORM,
    "LayerNormalization": NORM,
    "InstanceNormalization": NORM,
    "GroupNormalization": NORM,
    "RMSNormalization": NORM,
    "MaxPool": OpRule(LayerKind.POOL, keeps="input", mask_bytes=_indices),
    "AveragePool": OpRule(LayerKind.POOL, keeps="input"),
    # Pooling to 1x1 is a mean (PyTorch's adaptive_avg_pool2d to size 1 calls mean): backward needs
    # only the input's shape.
    "GlobalAveragePool": OpRule(LayerKind.POOL),
    "GlobalMaxPool": OpRule(LayerKind.POOL, keeps="input"),
    "Dropout": OpRule(LayerKind.ELEMENTWISE, params=False, mask_bytes=_mask),
    "Gather": OpRule(LayerKind.EMBEDDING, weights=frozenset({0}), mask_bytes=_token_ids),
    "PRelu": OpRule(LayerKind.ELEMENTWISE, keeps="input", weights=frozenset({1})),
    **dict.fromkeys(("Relu", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Exp", "Sqrt", "Reciprocal"), KEEPS_OUTPUT),
    **dict.fromkeys(
        (
            "LeakyRelu",
            "Elu",
            "Selu",
            "Celu",
            "Gelu",
            "Softplus",
            "Softsign",
            "HardSigmoid",
            "HardSwish",
            "Mish",
            "Erf",
            "Log",
            "Pow",
            "Abs",
            "Sin",
            "Cos",
            "ThresholdedRelu",
        ),
        KEEPS_INPUT,
    ),
    "Clip": OpRule(LayerKind.ELEMENTWISE, keeps="input", params=False),
    **dict.fromkeys(
        (
            "Add",
            "Sub",
            "Neg",
            "Concat",
            "Flatten",
            "Transpose",
            "Squeeze",
            "Unsqueeze",
            "Identity",
            "Split",
            "Where",
            "Max",
            "Min",
            "Sum",
            "Mean",
            "ReduceMean",
            "ReduceSum",
            "ReduceMax",
            "ReduceMin",
            "DepthToSpace",
            "SpaceToDepth",
            "Cast",
            "CastLike",
            "Floor",
            "Ceil",
            "Round",
            "Sign",
            "Equal",
            "Less",
            "Greater",
            "LessOrEqual",
            "GreaterOrEqual",
            "Not",
            "And",
            "Or",
            "Xor",
            "Trilu",
            "Shape",
            "Size",
            "ConstantOfShape",
            "Range",
            "Constant",
        ),
        PLUMBING,
    ),
    **dict.fromkeys(("Reshape", "Resize", "Upsample", "Pad", "Expand", "Tile", "Slice"), SETTINGS),
}


def matmul_rule(context: NodeContext) -> OpRule:
    """Return MatMul's rule: dense against a constant weight, attention between two activations."""
    if len(context.active_inputs()) >= 2:  # Q K^T or probabilities x V
        return OpRule(LayerKind.ATTENTION, keeps="inputs", params=False, macs=_matmul_macs)
    return OpRule(LayerKind.DENSE, keeps="input", weights=frozenset({0, 1}), macs=_matmul_macs)


def product_rule(context: NodeContext) -> OpRule:
    """Return Mul's or Div's rule: a product keeps each factor the other's gradient needs.

    Between two activations both are kept; against a weight (a constant of more than one value:
    a norm's scale, a layer scale) the activation is kept for the weight's gradient; against a
    scalar constant (a scale of 1/sqrt(d), a GELU's 0.5) nothing is kept.
    """
    active = context.active_inputs()
    if len(active) >= 2:
        return OpRule(LayerKind.ELEMENTWISE, keeps="inputs")
    others = [i for i, n in enumerate(context.node.input) if n and n not in context.active]
    if any(math.prod(context.dims(i) or (1,)) > 1 for i in others):
        return OpRule(LayerKind.ELEMENTWISE, keeps="input")
    return OpRule(LayerKind.ELEMENTWISE)


def gather_rule(rule: OpRule, context: NodeContext) -> OpRule:
    """Return Gather's rule: an embedding look-up when the table is a weight, a slice otherwise."""
    if context.node.op_type == "Gather" and context.node.input[0] in context.active:
        return PLUMBING
    return rule


def rule_for(context: NodeContext) -> OpRule | None:
    """Return the counting rule of a node's operator, or None when gpugauge has none."""
    op = context.node.op_type
    if context.node.domain not in ("", "ai.onnx"):
        return None
    if op == "MatMul":
        return matmul_rule(context)
    if op in ("Mul", "Div"):
        return product_rule(context)
    rule = RULES.get(op)
    return None if rule is None else gather_rule(rule, context)
