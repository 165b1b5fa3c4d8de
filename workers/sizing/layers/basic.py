"""Layer rules for dense layers, normalisation, activations and tensor plumbing (add, concat, reshape).

What each layer keeps for backward follows PyTorch autograd, with the reason beside each rule;
multiply-adds count only products of weights and activations (He et al. 2016 count "FLOPs" the
same way), so elementwise layers carry their cost in `traffic_values` instead.
"""

from __future__ import annotations

from workers.sizing.errors import ShapeError, SpecError
from workers.sizing.layers.fields import Fields, Part, Rule, Shape, elementwise, show, size
from workers.sizing.stats import LayerKind

# Tensors of the input's size that a LayerNorm written as primitive ops keeps beyond its input
# (LLMs-from-scratch's: scale * (x - mean) / sqrt(var + eps) + shift keeps x - mean and the normalised
# x). Measured here with autograd's saved-tensor hooks, torch 2.13.0 CPU: 3.00x the input's bytes
# against nn.LayerNorm's 1.00x.
LAYERNORM_PARTS_EXTRA_KEPT = 2
# Bytes a value that Hugging Face Transformers' RMSNorm keeps (LlamaRMSNorm and its copies in Mistral, Qwen2/3,
# Phi-3; Gemma's): it upcasts its input to float32 and multiplies out (x.float(); x * rsqrt(mean(x^2) + eps);
# weight * that cast back, or (1 + weight) * that in float32), so autograd keeps the float32 input and the
# float32 normalised product: 8 bytes a value in fp32 and under autocast alike (the residual stream it reads
# is float32 there: a 16-bit projection's output added to the float32 stream is float32). Measured here,
# torch 2.13.0 CPU (validation/measure/nets_hf_decoder.py): 2,052 KiB kept per norm of 1,024 x 256 values in
# fp32 and in bf16 autocast, against 1,024 KiB / 512 KiB for a fused kernel's kept input.
RMSNORM_PARTS_KEPT_BYTES = 8
RMSNORM_PARTS_TRAFFIC_PER_VALUE = 10  # its ops each run over the tensor (as LAYERNORM_PARTS_TRAFFIC_PER_VALUE)
# The same LayerNorm as primitive ops runs one kernel per op, each reading and writing the whole tensor
# (eager PyTorch fuses none of them): x.mean (reads x: 1 value per element), x.var (1), x - mean (2),
# / sqrt(var + eps) (2), scale * (2), + shift (2): 10 values moved per element, against nn.LayerNorm's
# one read and one write (2). Counted from LLMs-from-scratch ch04 `LayerNorm.forward`.
LAYERNORM_PARTS_TRAFFIC_PER_VALUE = 10

INDEX_BYTES = 8  # int64 indices and token ids, as PyTorch stores them


def dense(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Apply a fully connected layer to the last axis: in*out multiply-adds per input row."""
    (x,) = inputs
    f.rank(x, (1, 2), "[features] or [sequence, features]", hint="add a flatten layer")
    if f.has("out_features") and f.has("units"):
        raise f.shape_error("give out_features or units, not both")
    out = f.whole("units") if f.has("units") else f.whole("out_features")
    rows = size(x[:-1])
    params = x[-1] * out + (out if f.flag("bias", True) else 0)
    shape = (*x[:-1], out)
    # Keeps its input: the weight gradient is input^T x output gradient.
    return [
        Part(
            "dense",
            LayerKind.DENSE,
            shape,
            parameters=params,
            multiply_adds=rows * x[-1] * out,
            keeps_input=True,
            traffic_values=size(x) + size(shape) + params,
        )
    ]


def batchnorm(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Normalise each channel (axis 0) over the batch; a scale and a shift per channel."""
    (x,) = inputs
    f.rank(x, (1, 2, 3, 4), "[channels, ...]")
    params = 2 * x[0] if f.flag("affine", True) else 0
    # Keeps its input (and per-channel mean and inverse std, negligible) to form the input gradient.
    return [
        Part(
            "batchnorm",
            LayerKind.NORM,
            x,
            parameters=params,
            keeps_input=True,
            traffic_values=2 * size(x) + params,
        )
    ]


def layernorm(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Normalise over the last axis (features); a scale and a shift per feature."""
    (x,) = inputs
    params = 2 * x[-1] if f.flag("affine", True) else 0
    # Keeps its input (and per-row mean and inverse std) to form the input gradient; written as
    # primitive ops (`parts`), also x - mean and the normalised x (LAYERNORM_PARTS_EXTRA_KEPT).
    parts = f.flag("parts", False)
    extra = LAYERNORM_PARTS_EXTRA_KEPT * size(x) if parts else 0
    return [
        Part(
            "layernorm",
            LayerKind.NORM,
            x,
            parameters=params,
            keeps_input=True,
            extra_saved_values=extra,
            traffic_values=(LAYERNORM_PARTS_TRAFFIC_PER_VALUE if parts else 2) * size(x) + params,
        )
    ]


def rmsnorm(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Scale the last axis by its root mean square (LLaMA); one scale per feature."""
    (x,) = inputs
    return [rmsnorm_part(x, parts=f.flag("parts", False))]


def rmsnorm_part(x: Shape, *, parts: bool, suffix: str = "") -> Part:
    """Return an RMSNorm row: a fused kernel keeps its input, like layernorm; Transformers' composed one
    (`parts`) keeps RMSNORM_PARTS_KEPT_BYTES a value whatever the precision (see there)."""
    n = size(x)
    return Part(
        "rmsnorm",
        LayerKind.NORM,
        x,
        parameters=x[-1],
        keeps_input=not parts,
        saved_mask_bytes=RMSNORM_PARTS_KEPT_BYTES * n if parts else 0,
        traffic_values=(RMSNORM_PARTS_TRAFFIC_PER_VALUE if parts else 2) * n + x[-1],
        suffix=suffix,
    )


def _activation(type_name: str, *, keeps_output: bool, keys: frozenset[str] = frozenset()) -> Rule:
    """Build the rule of a pointwise activation that keeps either its input or its output."""

    def compute(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
        (x,) = inputs
        return [elementwise(type_name, x, keeps_input=not keeps_output, keeps_output=keeps_output)]

    return Rule(compute, keys)


def dropout(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Zero values at random during training; p = 0 makes it the identity."""
    (x,) = inputs
    p = f.fraction("p", 0.5)
    # Keeps a 1-byte mask per value (PyTorch native_dropout returns a bool mask), not its input.
    mask = size(x) if p > 0 else 0
    return [Part("dropout", LayerKind.ELEMENTWISE, x, saved_mask_bytes=mask, traffic_values=2 * size(x))]


def flatten(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Collapse all axes into one; a view, so nothing is kept."""
    (x,) = inputs
    return [Part("flatten", LayerKind.ELEMENTWISE, (size(x),))]


def reshape(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Give the values a new shape (one axis may be -1); a view, so nothing is kept."""
    (x,) = inputs
    raw = f.spec.get("shape")
    if not isinstance(raw, list) or not raw:
        raise f.shape_error("reshape needs a non-empty list 'shape', e.g. [64, -1]")
    dims: list[int] = []
    for i, d in enumerate(raw):
        if isinstance(d, int) and not isinstance(d, bool) and (d == -1 or d > 0):
            dims.append(d)
        else:
            raise SpecError(f"{f.path('shape')}[{i}]", f"must be a positive whole number or -1, got {d!r}")
    if dims.count(-1) > 1:
        raise f.shape_error("reshape takes at most one -1 in 'shape'")
    known = size([d for d in dims if d != -1])
    total = size(x)
    if -1 in dims:
        if total % known:
            raise f.shape_error(f"cannot reshape {show(x)} ({total} values) into {show(dims)}")
        dims[dims.index(-1)] = total // known
    if size(dims) != total:
        raise f.shape_error(f"cannot reshape {show(x)} ({total} values) into {show(dims)} ({size(dims)} values)")
    return [Part("reshape", LayerKind.ELEMENTWISE, tuple(dims))]


def add(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Sum two or more tensors of the same shape (a residual connection); a later one may hold one value per channel
    of the first ([C] or [C, 1, 1]: a diffusion U-Net's timestep projection, added over each feature map)."""
    if len(inputs) < 2:
        raise f.shape_error("add needs at least two inputs: name them in 'inputs' or 'from'")
    for other in inputs[1:]:
        trimmed = other
        while len(trimmed) > 1 and trimmed[-1] == 1:
            trimmed = trimmed[:-1]
        per_channel = len(inputs[0]) > 1 and len(other) <= len(inputs[0]) and trimmed == inputs[0][:1]
        if other != inputs[0] and not per_channel:
            raise f.shape_error(f"add needs equal shapes (or one value per channel of the first, e.g. "
                                f"[{inputs[0][0]}]), got {show(inputs[0])} and {show(other)}")
    n = size(inputs[0])
    # Keeps nothing: the gradient of a sum passes through unchanged (a per-channel term's is summed over the map).
    return [Part("add", LayerKind.ELEMENTWISE, inputs[0], traffic_values=n * 2 + sum(size(s) for s in inputs[1:]))]


def concat(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Join tensors along one axis (default 0, the channels): U-Net skips, DenseNet."""
    if len(inputs) < 2:
        raise f.shape_error("concat needs at least two inputs: name them in 'inputs' or 'from'")
    rank = len(inputs[0])
    axis = f.whole("axis", 0, minimum=-rank) if f.has("axis") else 0
    axis = axis + rank if axis < 0 else axis
    if axis >= rank:
        raise f.shape_error(f"axis {axis} does not exist in {show(inputs[0])}")
    for other in inputs[1:]:
        same = len(other) == rank and all(
            a == b for i, (a, b) in enumerate(zip(other, inputs[0], strict=False)) if i != axis
        )
        if not same:
            raise f.shape_error(
                f"concat along axis {axis} needs the other axes equal, got {show(inputs[0])} and {show(other)}"
            )
    shape = list(inputs[0])
    shape[axis] = sum(s[axis] for s in inputs)
    n = size(shape)
    # Keeps nothing: the gradient is split back into slices.
    return [Part("concat", LayerKind.ELEMENTWISE, tuple(shape), traffic_values=2 * n)]


def multiply(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Multiply a tensor by a gate [tensor, gate]: one of its shape, or one value per channel (its leading axes,
    the rest 1 or left out): squeeze-and-excitation's x * sigmoid(...), a gated unit's product."""
    if len(inputs) != 2:
        raise f.shape_error("multiply needs two inputs [tensor, gate]: name them in 'inputs' or 'from'")
    x, gate = inputs
    trimmed = gate
    while len(trimmed) > 1 and trimmed[-1] == 1:
        trimmed = trimmed[:-1]
    if size(gate) > size(x):
        raise f.shape_error(f"multiply takes inputs [tensor, gate], the tensor first: got {show(x)} then the larger "
                            f"{show(gate)}; swap the two names in 'inputs'")
    if len(gate) > len(x) or (gate != x and tuple(x[:len(trimmed)]) != tuple(trimmed)):
        raise f.shape_error(f"multiply needs a gate of the tensor's shape {show(x)} or one value per channel "
                            f"(e.g. [{x[0]}] or [{x[0]}, 1, 1]), got {show(gate)}")
    n, g = size(x), size(gate)
    # Keeps both factors, each the other's gradient needs: the tensor (once, where a layer before keeps it too) and
    # the gate's values (counted here even where the gate's sigmoid keeps them as well: a few per channel).
    return [Part("multiply", LayerKind.ELEMENTWISE, x, keeps_input=True, extra_saved_values=g,
                 traffic_values=2 * n + g)]


def select(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Take one position of the first axis: BERT's pooler and ViT's head read the first token."""
    (x,) = inputs
    f.rank(x, (2, 3, 4), "[sequence, features]")
    index = f.whole("index", 0, minimum=0)
    if index >= x[0]:
        raise f.shape_error(f"index {index} is outside the first axis of {show(x)}")
    return [Part("select", LayerKind.ELEMENTWISE, x[1:], traffic_values=2 * size(x[1:]))]


def embedding(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Look up a vector per token id: [sequence] -> [sequence, dim]; optional segment table (BERT).

    `length`: the embedding reads a second sequence of its own, `length` token ids a sample, whatever layer
    precedes it: an encoder-decoder's target (the decoder's input ids, training.target_length for a preset),
    [length, dim]. With `shared_weights` it looks them up in the encoder's table, as T5 and BART do.
    """
    (x,) = inputs
    if not f.has("length"):
        f.rank(x, (1,), "token ids [sequence]", hint="an embedding must read token ids, not features")
    else:
        x = (f.whole("length"),)
    vocab, dim = f.whole("vocab"), f.whole("dim")
    types = f.whole("token_types", 0, minimum=0)
    shape = (x[0], dim)
    tables = 2 if types else 1
    # Keeps the int64 token ids (8 bytes each) to scatter the gradient into the table rows.
    return [
        Part(
            "embedding",
            LayerKind.EMBEDDING,
            shape,
            parameters=(vocab + types) * dim,
            saved_mask_bytes=INDEX_BYTES * x[0] * tables,
            traffic_values=x[0] * tables + (tables + 1) * size(shape),
        )
    ]


def position_embedding(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Add a learned vector per position (GPT-2, BERT, ViT); the table has max_positions rows.

    Without max_positions the table has a row per position of the input: an image model's table, resampled to a
    new resolution as timm and torchvision do when a ViT is fine-tuned at 384 x 384 (577 rows, not 224's 197).
    """
    (x,) = inputs
    f.rank(x, (2,), "[sequence, features]")
    limit = f.whole("max_positions") if f.has("max_positions") else x[0]
    if x[0] > limit:
        raise ShapeError(
            "training.sequence_length",
            f"{f.label}: sequence length {x[0]} exceeds the model's {limit} learned positions",
        )
    # Keeps nothing: an add of a table slice.
    return [Part("position_embedding", LayerKind.EMBEDDING, x, parameters=limit * x[1], traffic_values=3 * size(x))]


def class_token(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Prepend one learned token to the sequence (ViT's [class] token)."""
    (x,) = inputs
    f.rank(x, (2,), "[sequence, features]")
    shape = (x[0] + 1, x[1])
    return [Part("class_token", LayerKind.ELEMENTWISE, shape, parameters=x[1], traffic_values=2 * size(shape))]


def to_sequence(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Turn a feature map [C, H, W] into a sequence [H*W, C] (ViT patches)."""
    (x,) = inputs
    f.rank(x, (2, 3), "[channels, height, width]")
    shape = (size(x[1:]), x[0])
    return [Part("to_sequence", LayerKind.ELEMENTWISE, shape, traffic_values=2 * size(shape))]


def reparameterize(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Draw z = mean + eps * exp(log_var / 2) from two inputs [mean, log_var] (a VAE's sampler)."""
    if len(inputs) != 2 or inputs[0] != inputs[1]:
        got = ", ".join(show(s) for s in inputs)
        raise f.shape_error(f"reparameterize needs two inputs of one shape [mean, log_var], got {got}")
    n = size(inputs[0])
    # Keeps the noise eps and the standard deviation exp(log_var / 2) for the two products' gradients.
    return [Part("reparameterize", LayerKind.ELEMENTWISE, inputs[0], extra_saved_values=2 * n, traffic_values=4 * n)]


RULES: dict[str, Rule] = {
    "dense": Rule(dense, frozenset({"out_features", "units", "bias"})),
    "batchnorm": Rule(batchnorm, frozenset({"affine", "momentum", "eps"})),
    "layernorm": Rule(layernorm, frozenset({"affine", "eps", "parts"})),
    "rmsnorm": Rule(rmsnorm, frozenset({"eps", "parts"})),
    # ReLU, tanh, sigmoid and softmax keep their output (their derivative is a function of it).
    "relu": _activation("relu", keeps_output=True),
    "tanh": _activation("tanh", keeps_output=True),
    "sigmoid": _activation("sigmoid", keeps_output=True),
    "softmax": _activation("softmax", keeps_output=True, keys=frozenset({"axis"})),
    "log_softmax": _activation("log_softmax", keeps_output=True, keys=frozenset({"axis"})),
    # GELU, SiLU, leaky ReLU, ELU and ReLU6 keep their input (PyTorch's backward formulas read it).
    "gelu": _activation("gelu", keeps_output=False),
    "silu": _activation("silu", keeps_output=False),
    "leaky_relu": _activation("leaky_relu", keeps_output=False, keys=frozenset({"negative_slope"})),
    "elu": _activation("elu", keeps_output=False),
    "relu6": _activation("relu6", keeps_output=False),
    "dropout": Rule(dropout, frozenset({"p"})),
    "flatten": Rule(flatten),
    "reshape": Rule(reshape, frozenset({"shape"})),
    "add": Rule(add, many_inputs=True),
    "concat": Rule(concat, frozenset({"axis"}), many_inputs=True),
    "multiply": Rule(multiply, many_inputs=True),
    "select": Rule(select, frozenset({"index"})),
    "embedding": Rule(embedding, frozenset({"vocab", "dim", "token_types", "length"})),
    "position_embedding": Rule(position_embedding, frozenset({"max_positions"})),
    "class_token": Rule(class_token),
    "to_sequence": Rule(to_sequence),
    "reparameterize": Rule(reparameterize, many_inputs=True),
}
