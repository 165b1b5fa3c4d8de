"""An ONNX file turned into the same per-layer statistics as a layer list (shape inference by `onnx`).

Each computing node becomes one row: its output values per sample (neurons), the weights it reads
(initializers, each counted once; batchnorm running statistics excluded), its multiply-adds and
what autograd would keep for backward (rules in `workers.modelimport.onnx_ops`). A MatMul followed by the Add
of a constant bias counts as one dense layer, as a layer list writes it. Constant folding and
shape arithmetic on integer tensors give no rows. Operators without a rule still give a row
(their output values) and are listed in `ModelStats.unknown_operators`.

The batch: the input axis named like a batch ("N", "batch_size"), else the first, is the batch; set
to 1 when symbolic, and a fixed size N divides every count by N. Other symbolic dimensions take
`sequence_length`.
"""

from __future__ import annotations

import math

import onnx
from google.protobuf.message import DecodeError
from onnx import NodeProto, TensorProto

from workers.modelimport.onnx_ops import PLUMBING, Dims, NodeContext, OpRule, rule_for
from workers.sizing.errors import OnnxError, SpecError
from workers.sizing.layers.build import count_kept_values
from workers.sizing.layers.fields import Part
from workers.sizing.stats import LayerStats, ModelStats

FIELD = "model.onnx"
# The default upload limit. Only the graph and the weights' dims are read, so a large model fits
# when exported with its weights as external data (onnx.save_model(..., save_as_external_data=True)).
MAX_ONNX_BYTES = 64 * 1024 * 1024
FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE})
TensorTypes = dict[str, tuple[int, Dims | None]]
BATCH_NAMES = frozenset({"n", "b", "bs", "batch", "batch_size", "batchsize"})


def _parse(data: bytes, max_bytes: int) -> onnx.ModelProto:
    """Parse the bytes as an ONNX model, refusing empty, oversized and corrupt files."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise OnnxError(FIELD, f"must be the bytes of an ONNX file, got {type(data).__name__}")
    if len(data) == 0:
        raise OnnxError(FIELD, "the file is empty")
    if len(data) > max_bytes:
        raise OnnxError(FIELD, f"the file is {len(data):,} bytes; the limit is {max_bytes:,}")
    try:
        model = onnx.load_model_from_string(bytes(data))
    except DecodeError as error:
        raise OnnxError(FIELD, f"not an ONNX file: the protobuf is corrupt ({error})") from error
    if not model.graph.node:
        raise OnnxError(FIELD, "not an ONNX model, or an empty one: the file holds no graph nodes")
    return model


def _batch_axis(dims: list[onnx.TensorShapeProto.Dimension]) -> int:
    """Return the axis that holds the batch: one named like a batch ("N", "batch_size"), else the first."""
    for axis, dim in enumerate(dims):
        label = dim.dim_param.lower()
        if label in BATCH_NAMES or "batch" in label:
            return axis
    return 0


def _fix_inputs(model: onnx.ModelProto, sequence_length: int | None) -> tuple[set[str], int]:
    """Make every input dimension concrete (batch 1, others `sequence_length`); return inputs and batch."""
    initializers = {t.name for t in model.graph.initializer}
    inputs: set[str] = set()
    batch = 0
    for value in model.graph.input:
        if value.name in initializers:  # old exporters list the weights as inputs too
            continue
        inputs.add(value.name)
        dims = list(value.type.tensor_type.shape.dim)
        batch_axis = _batch_axis(dims)
        for axis, dim in enumerate(dims):
            if dim.HasField("dim_value") and dim.dim_value > 0:
                batch = batch or (dim.dim_value if axis == batch_axis else 0)
                continue
            label = dim.dim_param or f"axis {axis}"
            if axis != batch_axis and sequence_length is None:
                raise SpecError(
                    "training.sequence_length",
                    f"the ONNX input {value.name!r} has a symbolic dimension {label!r} besides the batch; "
                    "give the sequence length (or export the model with fixed sizes)",
                )
            dim.Clear()
            dim.dim_value = 1 if axis == batch_axis else int(sequence_length or 1)
    if not inputs:
        raise OnnxError(FIELD, "the graph has no inputs besides its weights")
    return inputs, batch or 1


def _infer(model: onnx.ModelProto) -> onnx.ModelProto:
    """Run ONNX shape inference, turning its failures into OnnxError."""
    try:
        return onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError) as error:
        raise OnnxError(FIELD, f"shape inference failed: {error}") from error


def _tensor_types(model: onnx.ModelProto) -> TensorTypes:
    """Map each typed tensor to its element type and dims (None when not all are known)."""
    found: TensorTypes = {}
    graph = model.graph
    for value in (*graph.input, *graph.value_info, *graph.output):
        tensor = value.type.tensor_type
        dims: Dims | None = None
        if tensor.HasField("shape"):
            sizes = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
            dims = None if any(s < 0 for s in sizes) else tuple(sizes)
        found[value.name] = (tensor.elem_type, dims)
    for init in graph.initializer:
        found[init.name] = (init.data_type, tuple(init.dims))
    for node in graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].type == onnx.AttributeProto.TENSOR:
            t = node.attribute[0].t
            found[node.output[0]] = (t.data_type, tuple(t.dims))
    return found


def _weight_roots(model: onnx.ModelProto, inputs: set[str]) -> tuple[set[str], dict[str, frozenset[str]]]:
    """Split tensors into activations and constants; map each constant to the weights it derives from."""
    roots: dict[str, frozenset[str]] = {t.name: frozenset({t.name}) for t in model.graph.initializer}
    active = set(inputs)
    for node in model.graph.node:  # nodes are topologically sorted (ONNX spec)
        if any(n in active for n in node.input if n):
            active.update(node.output)
        else:
            below = frozenset().union(*(roots.get(n, frozenset()) for n in node.input if n))
            for out in node.output:
                roots[out] = below or frozenset({out})
    return active, roots


def _bias_fusions(nodes: list[NodeProto], constants: dict[str, frozenset[str]]) -> dict[int, int]:
    """Pair each MatMul on a constant weight with the Add of a constant bias that alone consumes it."""
    consumers: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for name in node.input:
            consumers.setdefault(name, []).append(i)
    fused: dict[int, int] = {}
    for i, node in enumerate(nodes):
        if node.op_type != "MatMul" or not any(n in constants for n in node.input):
            continue
        users = consumers.get(node.output[0], [])
        if len(users) == 1 and nodes[users[0]].op_type == "Add":
            others = [n for n in nodes[users[0]].input if n != node.output[0]]
            if len(others) == 1 and others[0] in constants:
                fused[i] = users[0]
    return fused


class _Weights:
    """Counts each weight tensor once, however many nodes read it (tied embeddings)."""

    def __init__(self, types: TensorTypes, roots: dict[str, frozenset[str]]) -> None:
        self.types, self.roots, self.counted = types, roots, set[str]()

    def take(self, names: list[str], *, explicit: bool) -> int:
        """Return the not-yet-counted floating-point weights behind these constant inputs."""
        total = 0
        for name in names:
            for root in sorted(self.roots.get(name, ())):
                elem, dims = self.types.get(root, (0, None))
                n = math.prod(dims) if dims is not None else 0
                if root in self.counted or elem not in FLOAT_TYPES or (n <= 1 and not explicit):
                    continue  # scalars of generic ops (an epsilon, an exponent) are settings
                self.counted.add(root)
                total += n
        return total


def _weight_inputs(node: NodeProto, rule: OpRule, roots: dict[str, frozenset[str]]) -> list[str]:
    """Return the node's constant inputs that are weights under its rule."""
    if not rule.params:
        return []
    return [n for j, n in enumerate(node.input) if n in roots and (rule.weights is None or j in rule.weights)]


def onnx_model_stats(
    data: bytes, *, max_bytes: int = MAX_ONNX_BYTES, name: str = "onnx", sequence_length: int | None = None
) -> ModelStats:
    """Parse an ONNX file and compute per-node statistics per sample, listing operators it has no rule for."""
    model = _parse(data, max_bytes)
    inputs, batch = _fix_inputs(model, sequence_length)
    model = _infer(model)
    types = _tensor_types(model)
    nodes = list(model.graph.node)
    active, roots = _weight_roots(model, inputs)
    fused = _bias_fusions(nodes, roots)
    weights = _Weights(types, roots)
    kept: set[str] = set()
    rows: list[LayerStats] = []
    unknown: set[str] = set()
    for i, node in enumerate(nodes):
        if i in fused.values() or not any(n in active for n in node.input if n):
            continue
        if not any(o and types.get(o, (0, None))[0] in FLOAT_TYPES for o in node.output):
            continue  # shape arithmetic on integer tensors
        out = nodes[fused[i]].output[0] if i in fused else node.output[0]
        context = NodeContext(node, types, active, batch)
        rule = rule_for(context)
        if rule is None:
            unknown.add(node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}")
            rule = PLUMBING
        dims = types.get(out, (0, None))[1]
        if dims is None:
            unknown.add(f"{node.op_type} (output shape unknown)")
            continue
        neurons = sum(context.values(o) for o in node.output[1:] if node.op_type == "Split") + context.values(out)
        params = weights.take(_weight_inputs(node, rule, roots), explicit=rule.weights is not None)
        if i in fused:
            params += weights.take([n for n in nodes[fused[i]].input if n in roots], explicit=True)
        first = next(n for n in node.input if n in active)
        reads = sum(context.values(n) for n in context.active_inputs())
        part = Part(
            node.op_type,
            rule.kind,
            dims,
            parameters=params,
            multiply_adds=rule.macs(context, out) if rule.macs else 0,
            keeps_input=rule.keeps in ("input", "inputs"),
            keeps_output=rule.keeps == "output",
            extra_saved_values=rule.extra_kept(context, out) if rule.extra_kept else 0,
            saved_mask_bytes=rule.mask_bytes(context, out) if rule.mask_bytes else 0,
            traffic_values=reads + neurons + params,
        )
        saved = count_kept_values(part, first, (context.values(first),), out, kept, output_values=neurons)
        rows.append(
            LayerStats(
                name=node.name or f"{node.op_type}_{i}",
                type=node.op_type,
                output_shape=dims[1:] if dims[:1] == (batch,) else dims,
                neurons=neurons,
                parameters=params,
                multiply_adds=part.multiply_adds,
                kind=rule.kind,
                saved_values=saved,
                saved_mask_bytes=part.saved_mask_bytes,
                traffic_values=part.traffic_values,
            )
        )
    if not rows:
        raise OnnxError(FIELD, "no node of the graph computes on its inputs")
    return ModelStats(
        name=name,
        neurons=sum(r.neurons for r in rows),
        parameters=sum(r.parameters for r in rows),
        multiply_adds=sum(r.multiply_adds for r in rows),
        layers=tuple(rows),
        sequence_length=sequence_length,
        unknown_operators=tuple(sorted(unknown)),
    )
