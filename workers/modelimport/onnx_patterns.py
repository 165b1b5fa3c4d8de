"""Composite patterns the exporters write for one PyTorch op, recognised so it is counted as that op.

PyTorch's TorchScript exporter (`torch.onnx.export(..., dynamo=False)`) writes several fused ops as
primitive ONNX nodes:

- SiLU as `Sigmoid` then `Mul` (x * sigmoid(x)); Mish as `Softplus`, `Tanh`, `Mul`;
- GELU as `Div`, `Erf`, `Add`, `Mul`, `Mul` (the erf form) or as `Mul`, `Add`, `Tanh` ... (the
  tanh form, before opset 20);
- LayerNorm, before opset 17, as `ReduceMean`, `Sub`, `Pow`, `ReduceMean`, `Add`, `Sqrt`, `Div`
  and the affine `Mul` and `Add`;
- GroupNorm as `Reshape` to [N, groups, -1], `InstanceNormalization` (scale 1, shift 0), `Reshape`
  back and the affine `Mul` and `Add`.

Counting each primitive's inputs as kept counts one tensor two or three times. The fused PyTorch
op keeps its input (SiLU, Mish, GELU), its input and per-row statistics (LayerNorm), or its input
and per-group statistics (GroupNorm): `Match` says which, and the importer counts that once.
A pointwise function is found by growing a cluster from a node that reads one tensor x: nodes of
pointwise operators whose activation inputs are x or the cluster's own tensors join it, and the
cluster counts as a pattern when its operators are exactly one of `SIGNATURES` and nothing outside
reads its intermediate tensors.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from onnx import NodeProto

from workers.modelimport.onnx_views import storage

POINTWISE = frozenset({"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Erf", "Tanh", "Sigmoid", "Softplus",
                       "ReduceMean", "Reciprocal", "Neg", "Exp"})
WINDOW = 16  # nodes looked at after the seed; the longest signature has 10
_LAYERNORM = {"ReduceMean": 2, "Sub": 1, "Pow": 1, "Add": 1, "Sqrt": 1, "Div": 1}
SIGNATURES: tuple[tuple[str, dict[str, int]], ...] = (
    ("silu", {"Sigmoid": 1, "Mul": 1}),
    ("mish", {"Softplus": 1, "Tanh": 1, "Mul": 1}),
    ("gelu", {"Div": 1, "Erf": 1, "Add": 1, "Mul": 2}),
    ("gelu", {"Erf": 1, "Add": 1, "Mul": 3}),
    ("gelu-tanh", {"Mul": 6, "Add": 2, "Tanh": 1}),
    ("gelu-tanh", {"Pow": 1, "Mul": 4, "Add": 2, "Tanh": 1}),
    ("layernorm", _LAYERNORM),
    ("layernorm", {**_LAYERNORM, "Mul": 1, "Add": 2}),
)
# Values per statistics row a fused norm keeps besides its input: mean and inverse std.
STATS_PER_ROW = 2


@dataclass(frozen=True)
class Match:
    """One recognised composite: its pattern, its nodes (graph order), the fused op's input and output.

    """

    pattern: str
    nodes: tuple[int, ...]
    input: str
    output: str
    grouped: str = ""  # GroupNorm: the [N, groups, -1] view InstanceNormalization reads
    inputs: tuple[str, ...] = ()  # attention: the query, key and value as the fused kernel reads them
    rows: str = ""  # attention: the softmax output, whose rows a fused kernel keeps a log-sum-exp for


class Graph:
    """Who produces and who reads each tensor, and which tensors carry activations."""

    def __init__(self, nodes: list[NodeProto], active: set[str], outputs: set[str],
                 dims: dict[str, tuple[int, ...]]) -> None:
        self.nodes, self.active, self.outputs, self.dims = nodes, active, outputs, dims
        self.producer: dict[str, int] = {}
        self.consumers: dict[str, list[int]] = {}
        for i, node in enumerate(nodes):
            for name in node.output:
                self.producer[name] = i
            for name in node.input:
                if name:
                    self.consumers.setdefault(name, []).append(i)

    def storage(self, name: str) -> str:
        """Return the tensor whose storage `name` is a view of (`onnx_views.storage`)."""
        return storage(self.nodes, self.producer, self.active, self.dims, name)

    def active_inputs(self, i: int) -> set[str]:
        """Return the activation inputs of node i."""
        return {n for n in self.nodes[i].input if n in self.active}


def _signature(ops: Counter[str]) -> str | None:
    """Return the pattern whose operators these are exactly, if any."""
    for name, wanted in SIGNATURES:
        if ops == Counter(wanted):
            return name
    return None


def _closed(graph: Graph, cluster: list[int], output: str) -> bool:
    """Say whether only the cluster reads its tensors, the output excepted."""
    members = set(cluster)
    for i in cluster:
        for name in graph.nodes[i].output:
            if name == output:
                continue
            if name in graph.outputs or any(c not in members for c in graph.consumers.get(name, [])):
                return False
    return True


def _grow(graph: Graph, seed: int, x: str) -> Match | None:
    """Grow a pointwise cluster of x from the seed node; return its longest match to a signature."""
    cluster, derived = [seed], set(graph.nodes[seed].output)
    ops: Counter[str] = Counter({graph.nodes[seed].op_type: 1})
    best: Match | None = None
    for i in range(seed + 1, min(len(graph.nodes), seed + 1 + 4 * WINDOW)):
        node = graph.nodes[i]
        if node.op_type == "Constant":
            continue
        if len(cluster) >= WINDOW:
            break
        reads = graph.active_inputs(i)
        if node.op_type not in POINTWISE or not reads or not reads <= derived | {x}:
            continue
        cluster.append(i)
        derived.update(node.output)
        ops[node.op_type] += 1
        name = _signature(ops)
        if name and _closed(graph, cluster, node.output[0]):
            best = Match(name, tuple(cluster), x, node.output[0])
    return best


def _groupnorm(graph: Graph, i: int) -> Match | None:
    """Match Reshape -> InstanceNormalization -> Reshape (-> Mul -> Add) on node i (the norm)."""
    nodes = graph.nodes
    source = graph.producer.get(nodes[i].input[0])
    if source is None or nodes[source].op_type != "Reshape":
        return None
    x = nodes[source].input[0]
    if x not in graph.active:
        return None
    chain = [source, i]
    out = nodes[i].output[0]
    for op in ("Reshape", "Mul", "Add"):
        users = graph.consumers.get(out, [])
        if len(users) != 1 or nodes[users[0]].op_type != op or len(graph.active_inputs(users[0])) != 1:
            break
        chain.append(users[0])
        out = nodes[users[0]].output[0]
    if len(chain) < 3 or nodes[chain[2]].op_type != "Reshape":
        return None
    return Match("groupnorm", tuple(chain), x, out, grouped=nodes[i].input[0])


def _single_user(graph: Graph, tensor: str, ops: tuple[str, ...]) -> int | None:
    """Return the one node reading `tensor` when it is one of these operators."""
    users = graph.consumers.get(tensor, [])
    return users[0] if len(users) == 1 and graph.nodes[users[0]].op_type in ops else None


def _unscaled(graph: Graph, tensor: str, chain: list[int]) -> str:
    """Walk back over a Mul or Div by a constant read only here (a 1/sqrt(d) scale); return its input."""
    i = graph.producer.get(tensor)
    if i is not None and graph.nodes[i].op_type in ("Mul", "Div") and len(graph.active_inputs(i)) == 1 \
            and len(graph.consumers.get(tensor, [])) == 1:
        chain.append(i)
        return next(iter(graph.active_inputs(i)))
    return tensor


def attention(graph: Graph, softmax: int) -> Match | None:
    """Match scaled dot-product attention around a Softmax: Q K^T (scale, mask), softmax, dropout, x V.

    This is what an exporter writes for `scaled_dot_product_attention`; a fused kernel (memory-
    efficient or flash) runs it as one op that keeps q, k, v, its output and a log-sum-exp per row.
    """
    nodes, chain = graph.nodes, [softmax]
    cur = nodes[softmax].input[0]
    for _ in range(2):  # an additive mask, a scale after the product
        i = graph.producer.get(cur)
        if i is None or nodes[i].op_type not in ("Add", "Mul", "Div") or len(graph.consumers.get(cur, [])) != 1:
            break
        reads = [n for n in nodes[i].input if n in graph.active]
        if nodes[i].op_type != "Add" and len(reads) != 1:
            break
        chain.append(i)
        cur = reads[0]
    scores = graph.producer.get(cur)
    if scores is None or nodes[scores].op_type != "MatMul" or len(graph.active_inputs(scores)) != 2:
        return None
    chain.append(scores)
    q = _unscaled(graph, nodes[scores].input[0], chain)
    k = _unscaled(graph, nodes[scores].input[1], chain)
    out = nodes[softmax].output[0]
    dropout = _single_user(graph, out, ("Dropout",))
    if dropout is not None:
        chain.append(dropout)
        out = nodes[dropout].output[0]
    context = _single_user(graph, out, ("MatMul",))
    if context is None or nodes[context].input[0] != out or nodes[context].input[1] not in graph.active:
        return None
    chain.append(context)
    return Match("attention", tuple(sorted(chain)), q, nodes[context].output[0],
                 inputs=(q, k, nodes[context].input[1]), rows=nodes[softmax].output[0])


def find_attention(graph: Graph) -> dict[int, Match]:
    """Return the attention each node belongs to (node index -> its match)."""
    found: dict[int, Match] = {}
    for i, node in enumerate(graph.nodes):
        if node.op_type == "Softmax":
            match = attention(graph, i)
            if match and not any(j in found for j in match.nodes):
                found.update(dict.fromkeys(match.nodes, match))
    return found


def find_patterns(graph: Graph) -> dict[int, Match]:
    """Return the recognised composite each node belongs to (node index -> its match)."""
    found: dict[int, Match] = {}
    for i, node in enumerate(graph.nodes):
        if i in found or node.op_type == "Constant":
            continue
        match: Match | None = None
        if node.op_type == "InstanceNormalization":
            match = _groupnorm(graph, i)
        elif node.op_type in POINTWISE:
            reads = graph.active_inputs(i)
            if len(reads) == 1:
                match = _grow(graph, i, next(iter(reads)))
        if match and not any(j in found for j in match.nodes):
            for j in match.nodes:
                found[j] = match
    return found
