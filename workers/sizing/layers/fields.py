"""Reading one layer's JSON fields with checks, and the `Part` rows that layer rules produce."""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from workers.sizing.errors import ShapeError, SpecError, UnknownNameError
from workers.sizing.stats import LayerKind

Shape = tuple[int, ...]

# Fields every layer may carry, whatever its type (see the convention in layers.py).
COMMON_KEYS = frozenset({"type", "name", "inputs", "from", "repeat", "frozen", "shared_weights", "passes"})


def size(shape: Sequence[int]) -> int:
    """Return the number of values in a tensor of this shape."""
    return math.prod(shape)


def show(shape: Sequence[int]) -> str:
    """Format a shape the way users write it in JSON."""
    return "[" + ", ".join(str(d) for d in shape) + "]"


def closest(name: str, choices: Sequence[str], *, limit: int = 3) -> tuple[str, ...]:
    """Return up to `limit` valid names closest to a misspelt one."""
    return tuple(difflib.get_close_matches(name, list(choices), n=limit, cutoff=0.5))


def whole_number(value: object, field: str, *, minimum: int) -> int:
    """Check that a JSON value is a whole number >= minimum (integral floats such as 3.0 pass)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(field, f"must be a whole number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise SpecError(field, f"must be a whole number, got {value!r}")
        value = int(value)
    if value < minimum:
        raise SpecError(field, f"must be at least {minimum}, got {value}")
    return value


@dataclass(frozen=True)
class Part:
    """One statistics row a layer rule produces; composite layers (attention, blocks) produce several.

    `keeps_input` / `keeps_output` say which tensor autograd keeps for the backward pass; the walker
    counts each tensor once even when two layers keep it (a conv keeps its input, which is usually
    the output a ReLU already keeps). `extra_saved_values` are kept values that are neither (LSTM
    gates, attention probabilities); `saved_mask_bytes` are precision-independent bytes (dropout's
    1-byte masks, max-pool's 8-byte indices, embedding's 8-byte token ids).
    """

    type: str
    kind: LayerKind
    output_shape: Shape
    parameters: int = 0
    multiply_adds: int = 0
    keeps_input: bool = False
    keeps_output: bool = False
    extra_saved_values: int = 0
    saved_mask_bytes: int = 0
    traffic_values: int = 0
    neurons: int = -1  # -1: the size of output_shape
    suffix: str = ""  # row name suffix inside a composite layer ("qkv", "attn", ...)
    source: int = -1  # where the part's (first) input comes from: -1 the previous part, -2 the one before;
    #                   the first part of a layer reads the layer's input
    kernel_positions: int = 0  # k x k of a dense stride-1 convolution (LayerStats.kernel_positions)
    # Attention run by a fused kernel (LayerStats.fused_saved_values): its extra kept values and
    # mask bytes instead of `extra_saved_values` / `saved_mask_bytes`; -1 when the same.
    fused_extra_saved_values: int = -1
    fused_mask_bytes: int = -1
    fused_multiply_adds: int = -1  # a causal core under a fused kernel (LayerStats.fused_multiply_adds)
    casts: int = 1  # separate modules this projection row stands for, each casting its input (autocast.py)
    reads_memory: bool = False  # reads the layer's memory (a decoder block's encoder output: wiring.py)


class Fields:
    """A layer's JSON object, read with range checks that name the offending field."""

    def __init__(self, spec: Mapping[str, object], *, field: str, type_name: str, label: str) -> None:
        self.spec = spec
        self.field = field  # e.g. "model.layers[3]"
        self.type = type_name
        self.label = label  # e.g. "layer 3 (conv1, conv2d)"
        self.trainable_before = 0  # trainable parameters of the layers listed before this one

    def path(self, key: str) -> str:
        """Return the dotted path of one of this layer's fields."""
        return f"{self.field}.{key}"

    def has(self, key: str) -> bool:
        """Say whether the layer sets this field."""
        return key in self.spec and self.spec[key] is not None

    def whole(self, key: str, default: int | None = None, *, minimum: int = 1) -> int:
        """Read a whole-number field; a missing field without a default is an error."""
        if not self.has(key):
            if default is None:
                raise SpecError(self.path(key), f"required for a {self.type} layer")
            return default
        return whole_number(self.spec[key], self.path(key), minimum=minimum)

    def per_axis(self, key: str, rank: int, default: int | None = None, *, minimum: int = 1) -> tuple[int, ...]:
        """Read a field given as one number or as a list of `rank` numbers (one per spatial axis)."""
        if not self.has(key):
            if default is None:
                raise SpecError(self.path(key), f"required for a {self.type} layer")
            return (default,) * rank
        value = self.spec[key]
        if isinstance(value, list | tuple):
            if len(value) != rank:
                raise SpecError(self.path(key), f"needs {rank} values (one per spatial axis), got {len(value)}")
            return tuple(whole_number(v, f"{self.path(key)}[{i}]", minimum=minimum) for i, v in enumerate(value))
        return (whole_number(value, self.path(key), minimum=minimum),) * rank

    def flag(self, key: str, default: bool) -> bool:
        """Read a true/false field."""
        if not self.has(key):
            return default
        value = self.spec[key]
        if not isinstance(value, bool):
            raise SpecError(self.path(key), f"must be true or false, got {value!r}")
        return value

    def choice(self, key: str, choices: Sequence[str], default: str) -> str:
        """Read a field that takes one of a few names."""
        if not self.has(key):
            return default
        value = self.spec[key]
        if not isinstance(value, str) or value not in choices:
            shown = value if isinstance(value, str) else repr(value)
            raise UnknownNameError(
                self.path(key),
                f"{shown!s} is not one of {', '.join(choices)}",
                closest(str(value), choices),
            )
        return value

    def fraction(self, key: str, default: float) -> float:
        """Read a probability-like field in [0, 1)."""
        if not self.has(key):
            return default
        value = self.spec[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SpecError(self.path(key), f"must be a number in [0, 1), got {value!r}")
        if not 0.0 <= float(value) < 1.0:
            raise SpecError(self.path(key), f"must be in [0, 1), got {value}")
        return float(value)

    def number(self, key: str, default: float, *, minimum: float) -> float:
        """Read a finite number field >= minimum."""
        if not self.has(key):
            return default
        value = self.spec[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SpecError(self.path(key), f"must be a finite number, got {value!r}")
        if value < minimum:
            raise SpecError(self.path(key), f"must be at least {minimum}, got {value}")
        return float(value)

    def shape_error(self, reason: str) -> ShapeError:
        """Build a ShapeError that names this layer (index, name and type) and the shapes involved."""
        return ShapeError(self.field, f"{self.label}: {reason}")

    def rank(self, shape: Shape, ranks: Sequence[int], what: str, *, hint: str = "") -> None:
        """Fail unless the input has one of the given ranks."""
        if len(shape) not in ranks:
            wanted = " or ".join(f"{r}-D" for r in ranks)
            tail = f"; {hint}" if hint else ""
            raise self.shape_error(f"{self.type} expects {wanted} input ({what}), got {show(shape)}{tail}")


def elementwise(
    type_name: str, shape: Shape, *, keeps_input: bool = False, keeps_output: bool = False, suffix: str = ""
) -> Part:
    """Build the row of a parameter-free layer that reads one tensor and writes one of the same size."""
    n = size(shape)
    return Part(
        type=type_name,
        kind=LayerKind.ELEMENTWISE,
        output_shape=shape,
        keeps_input=keeps_input,
        keeps_output=keeps_output,
        traffic_values=2 * n,
        suffix=suffix,
    )


RuleFn = Callable[[Fields, tuple[Shape, ...]], list[Part]]


@dataclass(frozen=True)
class Rule:
    """How one layer type turns its input shapes and fields into rows; `keys` are its own fields."""

    compute: RuleFn
    keys: frozenset[str] = frozenset()
    many_inputs: bool = False  # add, concat: takes every tensor named in "inputs"
    memory: bool = False  # a transformer block: `memory` names the encoder output its cross-attention reads
