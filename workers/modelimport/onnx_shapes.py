"""Concrete shapes for every tensor of an ONNX graph: symbolic input dims bound, shape arithmetic folded.

Exporters write a dynamic batch axis as a symbolic input dimension, and compute reshape targets at
run time from `Shape` (PyTorch's packed query/key/value split: `Shape`, `Gather`, `Mod`, `Concat`,
`Reshape`). ONNX's shape inference propagates such values through a few operators only, so with a
dynamic batch it loses every tensor behind a `Mod`. Here the input dims are bound first (the
batch axis to the job's batch, other symbolic axes to the sequence length), then inference and
constant folding alternate: a `Shape` of a tensor whose dims are known becomes a constant, and any
node whose inputs are all small constants is evaluated with ONNX's reference implementation
(`onnx.reference`) and replaced by its result, until nothing changes. A dynamic and a fixed export
of one model then give the same shapes.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import NodeProto, TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from workers.sizing.errors import OnnxError, SpecError

FIELD = "model.onnx"
BATCH_NAMES = frozenset({"n", "b", "bs", "batch", "batch_size", "batchsize"})
FOLD_MAX_VALUES = 4096  # fold only small tensors: shape arithmetic, scales; never activations
MAX_ROUNDS = 32
# Operators whose result is not a function of their inputs' values alone.
NOT_FOLDED = frozenset({"Dropout", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Multinomial", "Bernoulli", "Loop", "If", "Scan", "Constant"})


def batch_axis(dims: list[onnx.TensorShapeProto.Dimension]) -> int:
    """Return the axis that holds the batch: one named like a batch ("N", "batch_size"), else the first."""
    for axis, dim in enumerate(dims):
        label = dim.dim_param.lower()
        if label in BATCH_NAMES or "batch" in label:
            return axis
    return 0


def bind_inputs(model: onnx.ModelProto, *, batch_size: int, sequence_length: int | None) -> tuple[set[str], int]:
    """Make every input dimension concrete (the batch axis `batch_size`, others `sequence_length`).

    Returns the activation inputs and the batch the graph now runs at (a fixed export keeps its own).
    """
    initializers = {t.name for t in model.graph.initializer}
    inputs: set[str] = set()
    batch = 0
    for value in model.graph.input:
        if value.name in initializers:  # old exporters list the weights as inputs too
            continue
        inputs.add(value.name)
        dims = list(value.type.tensor_type.shape.dim)
        axis_of_batch = batch_axis(dims)
        for axis, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                batch = batch or (dim.dim_value if axis == axis_of_batch else 0)
                continue
            label = dim.dim_param or f"axis {axis}"
            if axis != axis_of_batch and sequence_length is None:
                raise SpecError(
                    "training.sequence_length",
                    f"the ONNX input {value.name!r} has a symbolic dimension {label!r} besides the batch; "
                    "give the sequence length (or export the model with fixed sizes)",
                )
            dim.Clear()
            if axis == axis_of_batch:
                dim.dim_value = batch_size
                batch = batch or batch_size
            else:
                dim.dim_value = int(sequence_length or 1)
    if not inputs:
        raise OnnxError(FIELD, "the graph has no inputs besides its weights")
    # Intermediate shapes the exporter wrote carry the old symbols: let inference recompute them.
    del model.graph.value_info[:]
    for value in model.graph.output:
        value.type.tensor_type.ClearField("shape")
    return inputs, batch or batch_size


def infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """Run ONNX shape inference, turning its failures into OnnxError."""
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as error:
        raise OnnxError(FIELD, f"shape inference failed: {error}") from error


def _known_dims(model: onnx.ModelProto) -> dict[str, tuple[int, tuple[int, ...] | None]]:
    """Map each typed tensor to its element type and dims (None where any dim is unknown)."""
    found: dict[str, tuple[int, tuple[int, ...] | None]] = {}
    for value in (*model.graph.input, *model.graph.value_info, *model.graph.output):
        tensor = value.type.tensor_type
        dims = None
        if tensor.HasField("shape"):
            sizes = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
            dims = None if any(s < 0 for s in sizes) else tuple(sizes)
        found[value.name] = (tensor.elem_type, dims)
    return found


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Return the small constant tensors of the graph: Constant nodes, integer and scalar initializers.

    Floating-point initializers of more than one value are weights: what derives from them stays as it
    is, so that the weights are still counted once, at the nodes that read them.
    """
    values: dict[str, np.ndarray] = {}
    for init in model.graph.initializer:
        size = np.prod(init.dims, dtype=np.int64)
        if size <= FOLD_MAX_VALUES and (not float_type(init.data_type) or size <= 1):
            values[init.name] = numpy_helper.to_array(init)
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].type == onnx.AttributeProto.TENSOR:
            t = node.attribute[0].t
            if np.prod(t.dims, dtype=np.int64) <= FOLD_MAX_VALUES:
                values[node.output[0]] = numpy_helper.to_array(t)
    return values


def _evaluate(node: NodeProto, values: dict[str, np.ndarray], opsets: dict[str, int]) -> list[np.ndarray] | None:
    """Evaluate one node on constant inputs with ONNX's reference implementation (None if it cannot)."""
    try:
        evaluator = ReferenceEvaluator(node, opsets=opsets)
        feeds = {name: values[name] for name in node.input if name}
        results = evaluator.run(None, feeds)
    except Exception:
        return None
    arrays = [np.asarray(r) for r in results]
    if any(a.size > FOLD_MAX_VALUES or a.dtype == object for a in arrays):
        return None
    return arrays


def _shape_value(node: NodeProto, dims: tuple[int, ...]) -> np.ndarray:
    """Return what a Shape node outputs for an input of these dims (its start/end attributes applied)."""
    start, end = 0, len(dims)
    for a in node.attribute:
        if a.name == "start":
            start = a.i
        elif a.name == "end":
            end = a.i
    return np.array(dims[slice(start, end)], dtype=np.int64)


def _fold_once(model: onnx.ModelProto) -> bool:
    """Replace each node computable from constants (and known shapes) by Constant nodes; say if any was."""
    known = _known_dims(model)
    values = _constants(model)
    opsets = {o.domain or "": o.version for o in model.opset_import}
    changed = False
    nodes: list[NodeProto] = []
    for node in model.graph.node:
        results: list[np.ndarray] | None = None
        if node.domain in ("", "ai.onnx") and node.op_type not in NOT_FOLDED:
            if node.op_type in ("Shape", "Size"):
                dims = known.get(node.input[0], (0, None))[1]
                if dims is not None:
                    shape = _shape_value(node, dims)
                    results = [shape if node.op_type == "Shape" else np.array(np.prod(dims), dtype=np.int64)]
            elif node.input and all(not n or n in values for n in node.input):
                results = _evaluate(node, values, opsets)
        if results is None or len(results) != len(node.output):
            nodes.append(node)
            continue
        changed = True
        for name, array in zip(node.output, results, strict=True):
            values[name] = array
            tensor = numpy_helper.from_array(array, name=f"{name}__folded")
            nodes.append(helper.make_node("Constant", [], [name], value=tensor))
    if changed:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return changed


def concrete_shapes(model: onnx.ModelProto) -> onnx.ModelProto:
    """Alternate shape inference and folding until every computable shape is known."""
    inferred = infer(model)
    for _ in range(MAX_ROUNDS):
        if not _fold_once(inferred):
            break
        del inferred.graph.value_info[:]
        inferred = infer(inferred)
    return inferred


def float_type(elem_type: int) -> bool:
    """Say whether an element type is floating point (activations, weights)."""
    return elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE)


def per_sample_shape(dims: tuple[int, ...], batch: int) -> tuple[int, ...]:
    """Return one sample's shape: the dims with the batch taken out, wherever it stands.

    The batch leads in most tensors; a recurrent node's output is [sequence, directions, batch,
    hidden] (ONNX LSTM/GRU, layout 0), and attention code folds it into the heads ([sequence,
    batch x heads, head size]: nn.MultiheadAttention) or the rows ([batch x sequence, features]).
    The first axis of the batch's size goes; failing that, the first axis it divides is divided by
    it. The step walk sizes each row's output and gradient from this shape: left in, the batch
    counted those rows' values batch times over.
    """
    if batch <= 1:
        return dims[1:] if dims[:1] == (batch,) else dims
    if batch in dims:
        axis = dims.index(batch)
        return dims[:axis] + dims[axis + 1:]
    axis = next((a for a, size in enumerate(dims) if size % batch == 0), -1)
    if axis < 0:
        return dims
    return (*dims[:axis], dims[axis] // batch, *dims[axis + 1:])
