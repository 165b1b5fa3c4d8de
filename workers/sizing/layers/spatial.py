"""Layer rules for diffusion U-Nets (Stable Diffusion): group norm, a second model input, a sequence made back into
a feature map, one equal piece of the channels.

A latent-diffusion U-Net (diffusers' UNet2DConditionModel) normalises by groups of channels, reads besides its
latents a timestep's sinusoidal embedding (and SDXL its size conditioning), and runs transformer blocks over each
feature map's positions as a sequence, which it turns back into a map before the residual add. The per-channel
add of each residual block's timestep projection is basic.add's broadcast. Its VAE's encoder ends in the posterior's
mean and log-variance side by side, of which the latents are the mean (`chunk`). YOLO11's C2PSA attends over
its stride-32 map with the projections as 1x1 convolutions around a bare core (`attention_core`).
"""

from __future__ import annotations

from workers.sizing.errors import SpecError
from workers.sizing.layers.fields import Fields, Part, Rule, Shape, show, size, whole_number
from workers.sizing.stats import LayerKind

MAX_INPUT_VALUES = 1 << 31  # a guard on model_input's shape: larger than any per-sample tensor a step holds


def groupnorm(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Normalise each sample over groups of channels (Wu & He 2018); a scale and a shift per channel."""
    (x,) = inputs
    f.rank(x, (1, 2, 3, 4), "[channels, ...]")
    groups = f.whole("groups", 32)
    if x[0] % groups:
        raise f.shape_error(f"{groups} groups must divide the {x[0]} channels of {show(x)}")
    params = 2 * x[0] if f.flag("affine", True) else 0
    # Keeps its input and a mean and an inverse std per group (PyTorch's native_group_norm), the latter negligible.
    return [Part("groupnorm", LayerKind.NORM, x, parameters=params, keeps_input=True,
                 traffic_values=2 * size(x) + params)]


def model_input(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """A further input the training loop hands the model, `shape` values a sample (a diffusion U-Net's timestep
    embedding, [320]): reads no layer; no weights, nothing kept."""
    raw = f.spec.get("shape")
    if not isinstance(raw, list) or not raw or len(raw) > 4:
        raise SpecError(f.path("shape"), "must be a list of 1 to 4 positive whole numbers, e.g. [320]")
    dims = tuple(whole_number(d, f"{f.path('shape')}[{i}]", minimum=1) for i, d in enumerate(raw))
    if size(dims) > MAX_INPUT_VALUES:
        raise SpecError(f.path("shape"), f"{show(dims)} holds more than {MAX_INPUT_VALUES:,} values a sample")
    return [Part("model_input", LayerKind.ELEMENTWISE, dims, traffic_values=size(dims))]


def to_feature_map(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Turn a sequence [H*W, C] back into a feature map [C, H, W] of the spatial size of a named earlier map:
    `inputs: [sequence, map]` (the map is read for its shape alone). A copy: nothing kept."""
    if len(inputs) != 2:
        raise f.shape_error("to_feature_map needs two inputs [sequence, map]: the map whose height and width it "
                            "takes, e.g. the block's input")
    seq, like = inputs
    f.rank(seq, (2,), "[sequence, features]")
    f.rank(like, (3,), "[channels, height, width]", hint="the second input names a feature map")
    if seq[0] != like[1] * like[2]:
        raise f.shape_error(f"a sequence of {seq[0]} positions does not fill the {like[1]} x {like[2]} map of "
                            f"{show(like)}")
    shape = (seq[1], like[1], like[2])
    return [Part("to_feature_map", LayerKind.ELEMENTWISE, shape, traffic_values=2 * size(shape))]


def chunk(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Take one of `chunks` equal pieces of the first axis (torch.chunk over the channels: a VAE posterior's mean out
    of its mean and log-variance); a view, so nothing is kept."""
    (x,) = inputs
    chunks = f.whole("chunks", 2)
    index = f.whole("index", 0, minimum=0)
    if x[0] % chunks or index >= chunks:
        raise f.shape_error(f"cannot take piece {index} of {chunks} equal pieces of the first axis of {show(x)}")
    return [Part("chunk", LayerKind.ELEMENTWISE, (x[0] // chunks, *x[1:]))]


def attention_core(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Attend over a sequence [positions, width] that already holds each head's query, key and value (no projections):
    `heads` heads of `key_dim` query and key values and `head_dim` values each, written out as matrix products and a
    softmax (Ultralytics' PSA Attention: q^T k, softmax, v attn^T), so it keeps its input and the probabilities
    whatever the attention kernel; out [positions, heads x head_dim]."""
    (x,) = inputs
    f.rank(x, (2,), "[sequence, features]")
    heads, key_dim, head_dim = f.whole("heads"), f.whole("key_dim"), f.whole("head_dim")
    if x[1] != heads * (2 * key_dim + head_dim):
        raise f.shape_error(f"{heads} heads of key_dim {key_dim} (query and key) and head_dim {head_dim} (value) take "
                            f"{heads * (2 * key_dim + head_dim)} features a position, not the {x[1]} of {show(x)}")
    steps = x[0]
    probs = heads * steps * steps
    out = (steps, heads * head_dim)
    return [Part("attention", LayerKind.ATTENTION, out, multiply_adds=heads * steps * steps * (key_dim + head_dim),
                 keeps_input=True, extra_saved_values=probs, traffic_values=size(x) + size(out) + 4 * probs,
                 neurons=size(out) + 2 * probs)]


RULES: dict[str, Rule] = {
    "attention_core": Rule(attention_core, frozenset({"heads", "key_dim", "head_dim"})),
    "chunk": Rule(chunk, frozenset({"chunks", "index"})),
    "groupnorm": Rule(groupnorm, frozenset({"groups", "affine", "eps"})),
    "model_input": Rule(model_input, frozenset({"shape"})),
    "to_feature_map": Rule(to_feature_map, many_inputs=True),
}
