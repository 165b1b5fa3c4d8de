"""Which storage a tensor of an ONNX graph lives in, as PyTorch would hold it: views share their base's.

PyTorch keeps a view's whole storage alive for as long as the view is kept. The chain of view
operators behind a tensor is replayed with strides (ATen's computeStride rule for a reshape), so
that a reshape PyTorch has to copy starts a storage of its own.
"""

from __future__ import annotations

from onnx import NodeProto

VIEWS = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Transpose", "Slice", "Split",
                   "Gather"})


def _ints(node: NodeProto, name: str) -> list[int]:
    """Return an integer-list attribute of a node (empty when absent)."""
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def _contiguous(shape: tuple[int, ...]) -> list[int]:
    """Return the strides of a contiguous (row-major) tensor of this shape."""
    strides, step = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = step
        step *= max(shape[axis], 1)
    return strides


def _view_strides(old: tuple[int, ...], strides: list[int], new: tuple[int, ...]) -> list[int] | None:
    """Return the strides of `new` as a view of `old`, or None where a copy is needed (ATen computeStride)."""
    if not old or not new:
        return _contiguous(new)
    out = [0] * len(new)
    view_d, chunk = len(new) - 1, strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old) - 1, -1, -1):
        tensor_numel *= old[d]
        if d == 0 or (old[d - 1] != 1 and strides[d - 1] != tensor_numel * chunk):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                out[view_d] = view_numel * chunk
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                chunk, tensor_numel, view_numel = strides[d - 1], 1, 1
    return out if view_d == -1 else None


def storage(nodes: list[NodeProto], producer: dict[str, int], active: set[str],
            dims: dict[str, tuple[int, ...]], name: str) -> str:
    """Return the tensor whose storage `name` is a view of (itself when it is no view).

    PyTorch keeps a view's whole storage alive: the value of a packed query/key/value split
    kept for backward keeps the whole projection. The chain of view operators (Reshape, Squeeze,
    Unsqueeze, Flatten, Identity, Transpose, Slice, Split, Gather of one constant index) is
    replayed with strides: a Reshape that PyTorch cannot express as a view copies (a new
    storage). A select or slice of a transposed tensor is taken as made contiguous first, as
    PyTorch code does before splitting (`.contiguous()` leaves no node in the export).
    """
    chain: list[NodeProto] = []
    cur = name
    while cur in producer:
        node = nodes[producer[cur]]
        if node.op_type not in VIEWS or not node.input or node.input[0] not in active:
            break
        index = node.input[1] if node.op_type == "Gather" else ""
        if index and (index in active or len(dims.get(index, (0,))) != 0):
            break  # a look-up by tensor (index_select) copies; one constant index is a view
        chain.append(node)
        cur = node.input[0]
    if not chain or cur not in dims:
        return cur
    base, strides = cur, _contiguous(dims[cur])
    for node in reversed(chain):  # forward order
        out = dims.get(node.output[0])
        if out is None:
            return name
        if node.op_type == "Transpose":
            perm = _ints(node, "perm") or list(reversed(range(len(strides))))
            strides = [strides[p] for p in perm]
        elif node.op_type in ("Gather", "Slice", "Split"):
            if strides != _contiguous(dims[node.input[0]]):
                base = node.input[0]
            strides = _contiguous(out)  # the offset and the shorter axis do not change what is kept
            if node.op_type == "Slice" or node.op_type == "Split":
                continue
        else:  # Reshape, Flatten, Squeeze, Unsqueeze, Identity
            viewed = _view_strides(dims[node.input[0]], strides, out)
            if viewed is None:
                base, viewed = node.output[0], _contiguous(out)
            strides = viewed
    return base
