"""An ONNX file turned into the same per-layer statistics as a layer list (shape inference by `onnx`).

Each computing node becomes one row: its output values per sample (neurons), the weights it reads
(initializers, each counted once; batchnorm running statistics excluded), its multiply-adds and
what autograd would keep for backward (rules in `workers.modelimport.onnx_ops`). A MatMul followed by the Add
of a constant bias counts as one dense layer, as a layer list writes it. Constant folding and
shape arithmetic on integer tensors give no rows. Operators without a rule still give a row
(their output values) and are listed in `ModelStats.unknown_operators`.

What the exporter writes for one PyTorch op as several nodes (SiLU, GELU, LayerNorm before opset
17, GroupNorm, scaled dot-product attention) is counted as that op (`onnx_patterns`); a kept view
keeps its whole storage; an eval-mode export is told from its signs, warned about and, where
BatchNorm was folded into convolutions, counted with the BatchNorm put back (`onnx_eval`). Rows
of attention carry what they keep under a fused kernel too (`LayerStats.fused_saved_values`).

The batch: the input axis named like a batch ("N", "batch_size"), else the first, is the batch; a
symbolic one is bound to the job's batch and a fixed size N is kept, and every count is divided by
the batch. Other symbolic dimensions take `sequence_length`. Shapes computed at run time are folded
to constants first (`workers.modelimport.onnx_shapes`), so dynamic and fixed exports agree.
"""

from __future__ import annotations

import math
from dataclasses import replace

import onnx
from google.protobuf.message import DecodeError
from onnx import NodeProto, TensorProto

from workers.modelimport.onnx_autocast import NORM_PATTERNS, DtypeFlow
from workers.modelimport.onnx_eval import eval_warnings, read_signs, unfold_batchnorm
from workers.modelimport.onnx_ops import PLUMBING, Dims, NodeContext, OpRule, rule_for
from workers.modelimport.onnx_patterns import STATS_PER_ROW, Graph, Match, find_attention, find_patterns
from workers.modelimport.onnx_shapes import bind_inputs, concrete_shapes, per_sample_shape
from workers.sizing.errors import OnnxError
from workers.sizing.layers.fields import Part
from workers.sizing.stats import BatchInput, LayerKind, LayerStats, ModelStats

FIELD = "model.onnx"
# The default upload limit. Only the graph and the weights' dims are read, so a large model fits
# when exported with its weights as external data (onnx.save_model(..., save_as_external_data=True)).
MAX_ONNX_BYTES = 64 * 1024 * 1024
FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE})
TensorTypes = dict[str, tuple[int, Dims | None]]


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
    """Counts each weight tensor once, however many nodes read it (tied embeddings).

    A node that reads a weight an earlier node counted gets it as `shared`: a tied LM head's
    embedding, whose gradient its backward makes first and whose 16-bit cast autocast keeps.
    """

    def __init__(self, types: TensorTypes, roots: dict[str, frozenset[str]]) -> None:
        self.types, self.roots, self.counted = types, roots, set[str]()
        self.shared = 0  # what the last take() found counted already

    def take(self, names: list[str], *, explicit: bool) -> int:
        """Return the not-yet-counted floating-point weights behind these constant inputs."""
        total = self.shared = 0
        for name in names:
            for root in sorted(self.roots.get(name, ())):
                elem, dims = self.types.get(root, (0, None))
                n = math.prod(dims) if dims is not None else 0
                if elem not in FLOAT_TYPES or (n <= 1 and not explicit):
                    continue  # scalars of generic ops (an epsilon, an exponent) are settings
                if root in self.counted:
                    self.shared += n
                    continue
                self.counted.add(root)
                total += n
        return total


def _weight_inputs(node: NodeProto, rule: OpRule, roots: dict[str, frozenset[str]]) -> list[str]:
    """Return the node's constant inputs that are weights under its rule."""
    if not rule.params:
        return []
    return [n for j, n in enumerate(node.input) if n in roots and (rule.weights is None or j in rule.weights)]


def _keep(graph: Graph, context: NodeContext, tensors: list[str], kept: set[str]) -> int:
    """Count the values of the storages behind these tensors that no earlier node keeps already."""
    total = 0
    for name in tensors:
        base = graph.storage(name)
        if base not in kept:
            kept.add(base)
            total += context.values(base)
    return total


def _fused_attention(graph: Graph, context: NodeContext, match: Match | None, i: int, part: Part,
                     tensors: list[str], kept: set[str]) -> tuple[int, int]:
    """Return a node's kept values and mask bytes when attention runs as a fused kernel.

    Outside attention the node keeps what it keeps anyway; inside, only the last node (the product
    with V) keeps anything: q, k and v as the kernel reads them, its output, and a float32
    log-sum-exp per softmax row (bytes, whatever the precision). No probabilities, no dropout mask.
    """
    if match is None:
        return part.extra_saved_values + _keep(graph, context, tensors, kept), part.saved_mask_bytes
    if i != match.nodes[-1]:
        return 0, 0
    rows = context.types.get(match.rows, (0, None))[1] or ()
    lse = math.prod(rows[:-1]) // max(context.batch, 1) if rows else 0
    return _keep(graph, context, [*match.inputs, match.output], kept), LSE_BYTES * lse


LSE_BYTES = 4  # fused attention's log-sum-exp is float32 in every precision


def _in_pattern(part: Part, match: Match, i: int, context: NodeContext, first: str) -> tuple[Part, str]:
    """Count a node of a recognised composite as the fused op: all it keeps sits on the last node.

    The other nodes keep nothing and produce no neurons of their own; the last keeps the fused op's
    input and, for a norm, its mean and inverse standard deviation per row (LayerNorm) or group.
    """
    if i != match.nodes[-1]:
        return replace(part, keeps_input=False, keeps_output=False, extra_saved_values=0, saved_mask_bytes=0,
                       neurons=0), first
    stats = 0
    x = context.types.get(match.input, (0, None))[1] or ()
    if match.pattern == "layernorm" and x:
        stats = STATS_PER_ROW * (context.values(match.input) // max(x[-1], 1))
    elif match.pattern == "groupnorm":
        grouped = context.types.get(match.grouped, (0, None))[1] or ()
        stats = STATS_PER_ROW * math.prod(grouped[:2]) // max(context.batch, 1) if len(grouped) >= 2 else 0
    kind = LayerKind.NORM if match.pattern in NORM_PATTERNS else LayerKind.ELEMENTWISE
    return replace(part, kind=kind, keeps_input=True, keeps_output=False, extra_saved_values=stats,
                   saved_mask_bytes=0), match.input


def onnx_model_stats(
    data: bytes,
    *,
    max_bytes: int = MAX_ONNX_BYTES,
    name: str = "onnx",
    sequence_length: int | None = None,
    batch_size: int | None = None,
) -> ModelStats:
    """Parse an ONNX file and compute per-node statistics per sample, listing operators it has no rule for.

    A symbolic batch axis is bound to `batch_size` (1 when not given), other symbolic axes to
    `sequence_length`, before shape inference; every count is then divided by the batch.
    """
    model = _parse(data, max_bytes)
    inputs, batch = bind_inputs(model, batch_size=batch_size or 1, sequence_length=sequence_length)
    model = concrete_shapes(model)
    known = {name: dims for name, (_, dims) in _tensor_types(model).items() if dims is not None}
    signs = read_signs(model, known, batch)
    restored = sum(math.prod(known[model.graph.node[i].output[0]]) // batch for i in signs.folded)
    unfold_batchnorm(model, signs, known)
    types = _tensor_types(model)
    nodes = list(model.graph.node)
    active, roots = _weight_roots(model, inputs)
    fused = _bias_fusions(nodes, roots)
    shapes = {name: dims for name, (_, dims) in types.items() if dims is not None}
    graph = Graph(nodes, active, {o.name for o in model.graph.output}, shapes)
    patterns = find_patterns(graph)
    attention = find_attention(graph)
    weights = _Weights(types, roots)
    kept: set[str] = set()
    kept_fused: set[str] = set()  # the same walk with attention run by a fused kernel
    flow = DtypeFlow({n for n in inputs if types.get(n, (0, None))[0] in FLOAT_TYPES},
                     {init.name: tuple(init.dims) for init in model.graph.initializer})
    rows: list[LayerStats] = []
    unknown: set[str] = set()
    for i, node in enumerate(nodes):
        if i in fused.values():
            continue
        if not any(n in active for n in node.input if n):
            flow.parameter_derived(node, types)  # a weight sliced or reshaped: float32, it promotes
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
        shared = weights.shared
        if i in fused:
            params += weights.take([n for n in nodes[fused[i]].input if n in roots], explicit=True)
            shared += weights.shared
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
        match = patterns.get(i)
        if match is not None:
            part, first = _in_pattern(part, match, i, context, first)
            neurons = 0 if part.neurons == 0 else neurons
        held = [first] if part.keeps_input else []
        if part.keeps_input and rule.keeps == "inputs" and match is None:
            held = context.active_inputs()
        tensors = [*held, *([out] if part.keeps_output else [])]
        bases = list(dict.fromkeys(graph.storage(t) for t in tensors))
        newly_kept = [b for b in bases if b not in kept]
        flow.follow(node, part.kind, active, [*node.output, out], match.pattern if match else None)
        saved = part.extra_saved_values + _keep(graph, context, tensors, kept)
        fused_saved, fused_mask = _fused_attention(graph, context, attention.get(i), i, part, tensors, kept_fused)
        rows.append(
            LayerStats(
                name=node.name or f"{node.op_type}_{i}",
                type=node.op_type,
                output_shape=per_sample_shape(dims, batch),
                neurons=neurons,
                parameters=params,
                multiply_adds=part.multiply_adds,
                kind=part.kind,
                saved_values=saved,
                saved_mask_bytes=part.saved_mask_bytes,
                traffic_values=part.traffic_values,
                pattern=match.pattern if match else ("attention" if i in attention else ""),
                fused_saved_values=fused_saved if attention else -1,
                fused_saved_mask_bytes=fused_mask if attention else -1,
                shared_parameters=shared,
                autocast_extra_bytes=0 if i in attention else flow.extra_bytes(context, part.kind, bases, newly_kept),
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
        import_warnings=eval_warnings(signs, restored_values=restored),
        batch_input=_batch_input(graph, types, inputs, kept, batch),
    )


def _batch_input(graph: Graph, types: TensorTypes, inputs: set[str], kept: set[str], batch: int) -> BatchInput:
    """Return the graph's inputs per sample as the loop holds them (their dtype), and what rows keep of them."""
    size = kept_float = kept_integer = 0
    shape: tuple[int, ...] = ()
    for name in sorted(inputs):
        elem, dims = types.get(name, (TensorProto.FLOAT, None))
        count = math.prod(dims) // max(1, batch) if dims else 0
        size += count * (onnx.helper.tensor_dtype_to_np_dtype(elem).itemsize if elem else 4)
        if len(inputs) == 1 and dims:
            shape = tuple(int(d) for d in dims[1:])  # one input: its per-sample shape (the batch axis first)
        if graph.storage(name) in kept:
            if elem in FLOAT_TYPES:
                kept_float += count
            else:
                kept_integer += count
    return BatchInput(bytes=size, kept_float_values=kept_float, kept_integer_values=kept_integer, shape=shape)
