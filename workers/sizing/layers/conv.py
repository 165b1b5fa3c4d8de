"""Layer rules for convolutions, transposed convolutions, pooling and upsampling (1-D and 2-D).

Shapes are per sample and channels-first: [channels, length] or [channels, height, width].
A convolution costs out_values * (kernel_values * in_channels / groups) multiply-adds, bias not
counted: the convention of He et al. 2016 ("FLOPs" = multiply-adds) and of torchvision's GFLOPS.
"""

from __future__ import annotations

import math

from workers.sizing.errors import SpecError
from workers.sizing.layers.basic import INDEX_BYTES
from workers.sizing.layers.fields import Fields, Part, Rule, Shape, show, size
from workers.sizing.stats import LayerKind

AXES = {1: "[channels, length]", 2: "[channels, height, width]"}


def _padding(f: Fields, rank: int) -> tuple[int, ...] | str:
    """Read 'padding': a number, one per axis, or "same" / "valid"."""
    value = f.spec.get("padding", 0)
    if isinstance(value, str):
        if value not in ("same", "valid"):
            raise SpecError(f.path("padding"), f'must be a number, a list, "same" or "valid", got {value!r}')
        return value
    return f.per_axis("padding", rank, 0, minimum=0)


def _sliding_output(
    f: Fields,
    x: Shape,
    *,
    kernel: tuple[int, ...],
    stride: tuple[int, ...],
    dilation: tuple[int, ...],
    ceil_mode: bool = False,
) -> tuple[int, ...]:
    """Return the output length per spatial axis of a sliding window (convolution or pooling)."""
    spatial = x[1:]
    pad = _padding(f, len(spatial))
    if pad == "same":  # TensorFlow's rule: ceil(length / stride), padded as needed
        return tuple(math.ceil(n / s) for n, s in zip(spatial, stride, strict=True))
    pads = (0,) * len(spatial) if isinstance(pad, str) else pad  # "valid": no padding
    out: list[int] = []
    for n, k, s, d, p in zip(spatial, kernel, stride, dilation, pads, strict=True):
        reach = d * (k - 1) + 1
        span = n + 2 * p - reach
        if span < 0:
            raise f.shape_error(
                f"kernel {show(kernel)} (dilation {show(dilation)}, padding {show(pads)}) does not fit input {show(x)}"
            )
        length = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (length - 1) * s >= n + p:  # PyTorch: the last window must start inside
            length -= 1
        out.append(length)
    return tuple(out)


def _conv(rank: int) -> Rule:
    """Build the rule of a rank-D convolution with stride, padding, dilation, groups and bias."""

    def compute(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
        (x,) = inputs
        f.rank(x, (rank + 1,), AXES[rank], hint="add a reshape or flatten layer" if len(x) > rank + 1 else "")
        c_out, groups = f.whole("out_channels"), f.whole("groups", 1)
        if x[0] % groups or c_out % groups:
            raise f.shape_error(f"groups {groups} must divide in_channels {x[0]} and out_channels {c_out}")
        kernel = f.per_axis("kernel", rank)
        stride, dilation = f.per_axis("stride", rank, 1), f.per_axis("dilation", rank, 1)
        shape = (c_out, *_sliding_output(f, x, kernel=kernel, stride=stride, dilation=dilation))
        per_output = math.prod(kernel) * x[0] // groups
        params = c_out * per_output + (c_out if f.flag("bias", True) else 0)
        # Keeps its input: the weight gradient correlates the input with the output gradient.
        return [
            Part(
                f"conv{rank}d",
                LayerKind.CONV,
                shape,
                parameters=params,
                multiply_adds=size(shape) * per_output,
                keeps_input=True,
                traffic_values=size(x) + size(shape) + params,
                kernel_positions=(math.prod(kernel) if groups == 1 and set(stride) == {1}
                                  and set(dilation) == {1} else 0),
            )
        ]

    return Rule(compute, frozenset({"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"}))


def _conv_transpose(rank: int) -> Rule:
    """Build the rule of a rank-D transposed convolution (deconvolution), as PyTorch defines it."""

    def compute(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
        (x,) = inputs
        f.rank(x, (rank + 1,), AXES[rank])
        c_out, groups = f.whole("out_channels"), f.whole("groups", 1)
        if x[0] % groups or c_out % groups:
            raise f.shape_error(f"groups {groups} must divide in_channels {x[0]} and out_channels {c_out}")
        kernel = f.per_axis("kernel", rank)
        stride, dilation = f.per_axis("stride", rank, 1), f.per_axis("dilation", rank, 1)
        padding = f.per_axis("padding", rank, 0, minimum=0)
        extra = f.per_axis("output_padding", rank, 0, minimum=0)
        spatial = tuple(
            (n - 1) * s - 2 * p + d * (k - 1) + e + 1
            for n, k, s, d, p, e in zip(x[1:], kernel, stride, dilation, padding, extra, strict=True)
        )
        if min(spatial) < 1:
            raise f.shape_error(f"padding {show(padding)} leaves no output for input {show(x)}")
        shape = (c_out, *spatial)
        per_input = math.prod(kernel) * c_out // groups
        params = x[0] * per_input + (c_out if f.flag("bias", True) else 0)
        # Each input value is scattered through the kernel to c_out/groups channels.
        return [
            Part(
                f"conv_transpose{rank}d",
                LayerKind.CONV,
                shape,
                parameters=params,
                multiply_adds=size(x) * per_input,
                keeps_input=True,  # the weight gradient needs the input, as for a convolution
                traffic_values=size(x) + size(shape) + params,
            )
        ]

    keys = {"out_channels", "kernel", "stride", "padding", "output_padding", "dilation", "groups", "bias"}
    return Rule(compute, frozenset(keys))


def _pool(rank: int, mode: str) -> Rule:
    """Build the rule of a rank-D max or average pooling window."""

    def compute(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
        (x,) = inputs
        f.rank(x, (rank + 1,), AXES[rank])
        kernel = f.per_axis("kernel", rank)
        stride = f.per_axis("stride", rank, 0, minimum=1) if f.has("stride") else kernel
        dilation = f.per_axis("dilation", rank, 1) if mode == "max" else (1,) * rank
        spatial = _sliding_output(
            f, x, kernel=kernel, stride=stride, dilation=dilation, ceil_mode=f.flag("ceil_mode", False)
        )
        shape = (x[0], *spatial)
        # Max-pool keeps its input and the int64 index of each maximum; average-pool keeps its input
        # (PyTorch's avg_pool backward takes `self`).
        indices = INDEX_BYTES * size(shape) if mode == "max" else 0
        return [
            Part(
                f"{mode}pool{rank}d",
                LayerKind.POOL,
                shape,
                keeps_input=True,
                saved_mask_bytes=indices,
                traffic_values=size(x) + size(shape),
            )
        ]

    keys = {"kernel", "stride", "padding", "ceil_mode"} | ({"dilation"} if mode == "max" else set())
    return Rule(compute, frozenset(keys))


def global_avg_pool(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Average each channel over all positions: [C, ...] -> [C]."""
    (x,) = inputs
    f.rank(x, (2, 3, 4), "[channels, ...]")
    # Keeps its input (PyTorch's adaptive_avg_pool backward takes `self`).
    return [Part("global_avg_pool", LayerKind.POOL, (x[0],), keeps_input=True, traffic_values=size(x) + x[0])]


def adaptive_avg_pool2d(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Average into a fixed output grid (torchvision's AlexNet and VGG heads)."""
    (x,) = inputs
    f.rank(x, (3,), AXES[2])
    out = f.per_axis("output_size", 2)
    shape = (x[0], *out)
    return [
        Part(
            "adaptive_avg_pool2d",
            LayerKind.POOL,
            shape,
            keeps_input=True,
            traffic_values=size(x) + size(shape),
        )
    ]


def upsample(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Enlarge the spatial axes by an integer scale, nearest or (bi)linear."""
    (x,) = inputs
    f.rank(x, (2, 3), "[channels, length] or [channels, height, width]")
    rank = len(x) - 1
    scale = f.per_axis("scale", rank, 2)
    f.choice("mode", ("nearest", "bilinear", "linear"), "nearest")
    shape = (x[0], *(n * s for n, s in zip(x[1:], scale, strict=True)))
    # Keeps nothing: the backward pass needs only the sizes.
    return [Part("upsample", LayerKind.ELEMENTWISE, shape, traffic_values=size(x) + size(shape))]


RULES: dict[str, Rule] = {
    "conv1d": _conv(1),
    "conv2d": _conv(2),
    "conv_transpose1d": _conv_transpose(1),
    "conv_transpose2d": _conv_transpose(2),
    "maxpool1d": _pool(1, "max"),
    "maxpool2d": _pool(2, "max"),
    "avgpool1d": _pool(1, "avg"),
    "avgpool2d": _pool(2, "avg"),
    "global_avg_pool": Rule(global_avg_pool),
    "adaptive_avg_pool2d": Rule(adaptive_avg_pool2d, frozenset({"output_size"})),
    "upsample": Rule(upsample, frozenset({"scale", "mode"})),
}
