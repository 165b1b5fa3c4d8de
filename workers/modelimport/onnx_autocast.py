"""Which tensors of an imported graph are float32 under torch.autocast, and what a node keeps beyond 2 bytes a value.

The layer builder follows the same rules (workers/sizing/layers/autocast.py, where the measurements are):
matrix products and convolutions give 16 bits; LayerNorm, GroupNorm, softmax, an embedding lookup in fp32
weights and a cast to float give float32; an add, product or concatenation is float32 when an activation or a
parameter it reads is (type promotion; a scalar constant does not promote); the rest keep their input's dtype.
A node that keeps a float32 tensor keeps 4 bytes a value; a matrix product keeps its own 16-bit cast of a float32
input, so a second product reading it (K beside Q) keeps another. Attention matched as one kernel is left as it is.
"""

from __future__ import annotations

import math

from onnx import NodeProto, TensorProto

from workers.modelimport.onnx_ops import NodeContext
from workers.sizing.layers.autocast import CAST_KINDS
from workers.sizing.stats import LayerKind

SIXTEEN_BIT_OPS = frozenset({"MatMul", "Gemm", "Conv", "ConvTranspose", "LSTM", "GRU", "RNN", "Einsum"})
FP32_OPS = frozenset({"LayerNormalization", "GroupNormalization", "InstanceNormalization", "Softmax", "LogSoftmax"})
PROMOTING_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Concat", "Where", "Max", "Min", "Sum", "Mean"})
NORM_PATTERNS = frozenset({"layernorm", "groupnorm"})  # composites of a norm op (onnx_patterns); float32 out
WIDER = 2  # bytes a float32 value takes beyond the 16-bit 2


class DtypeFlow:
    """The dtype under autocast of every tensor met so far: float32 or 16-bit."""

    def __init__(self, float_inputs: set[str], parameters: dict[str, tuple[int, ...]]) -> None:
        self.fp32: dict[str, bool] = dict.fromkeys(float_inputs, True)
        # parameters are float32 and promote what they touch, unless a single value (a scalar does not)
        self._promoting = {name for name, dims in parameters.items() if math.prod(dims) > 1}

    def parameter_derived(self, node: NodeProto, types: dict[str, tuple[int, tuple[int, ...] | None]]) -> None:
        """Mark the float outputs of a node that reads no activation (a weight sliced, a table reshaped) as
        parameters: float32, promoting what they touch unless a single value."""
        for name in node.output:
            elem, dims = types.get(name, (0, None))
            if elem == TensorProto.FLOAT and dims is not None and math.prod(dims) > 1:
                self._promoting.add(name)

    def _is32(self, name: str) -> bool:
        return self.fp32.get(name, False) or name in self._promoting

    def follow(self, node: NodeProto, kind: LayerKind, active: set[str], outputs: list[str],
               pattern: str | None) -> None:
        """Set the dtype of the node's outputs (`outputs`: with a bias fused into a product, its add's too)."""
        reads = [n for n in node.input if n in active]
        op = node.op_type
        if op in SIXTEEN_BIT_OPS or kind in CAST_KINDS:
            out = False
        elif op in FP32_OPS or pattern in NORM_PATTERNS:
            out = True
        elif op == "Gather":  # a lookup in a weight table (an embedding) reads float32 weights
            out = bool(node.input) and (node.input[0] not in active or self._is32(node.input[0]))
        elif op == "Cast":
            to = next((a.i for a in node.attribute if a.name == "to"), TensorProto.FLOAT)
            out = to in (TensorProto.FLOAT, TensorProto.DOUBLE)
        elif op in PROMOTING_OPS:
            out = any(self._is32(n) for n in node.input if n)
        else:
            out = bool(reads) and self._is32(reads[0])
        for name in outputs:
            self.fp32[name] = out

    def extra_bytes(self, context: NodeContext, kind: LayerKind, held: list[str], newly_kept: list[str]) -> int:
        """Return the bytes per sample the node keeps under autocast beyond 2 a value of what it counts.

        `held`: the storages it keeps; `newly_kept`: those no earlier node kept (counted in its saved values).
        """
        if kind in CAST_KINDS:  # its own cast of each float32 input an earlier node counted already
            return WIDER * sum(context.values(n) for n in held if n not in newly_kept and self._is32(n))
        return WIDER * sum(context.values(n) for n in newly_kept if self._is32(n))
