"""A layer list (plain JSON) turned into per-layer statistics: shapes, neurons, parameters, multiply-adds.

The layer-list convention
-------------------------
A model is a list of JSON objects, one per layer, read in order::

    [{"type": "conv2d", "out_channels": 64, "kernel": 7, "stride": 2, "padding": 3, "name": "conv1"},
     {"type": "batchnorm"}, {"type": "relu", "name": "stem"},
     {"type": "conv2d", "out_channels": 64, "kernel": 3, "padding": 1},
     {"type": "add", "from": "stem"}]

- Shapes are per sample (no batch axis), channels first: an image is [3, 224, 224], a sequence of
  vectors [sequence, features], a sequence of token ids [sequence].
- `type` is required; `name` is optional (default "<type>_<index>") and must be unique; "input"
  names the model's input.
- A layer reads the previous layer's output, unless `inputs` names earlier layers:
  `"inputs": ["block1"]` branches from an earlier layer (a ResNet's downsample shortcut), and
  `add` / `concat` / `reparameterize` take every tensor named there (`"inputs": ["a", "b"]`).
  `"from": "name"` is shorthand for the previous output plus that layer (a residual add, a U-Net
  skip).
- Any layer may carry `repeat` (runs n times per sample with the same weights), `frozen` (runs
  without gradient, like a DQN's target network: its parameters count as frozen and it keeps
  nothing for backward), `shared_weights` (its weights belong to another layer: a tied LM head;
  counted there) and `passes` (forward-and-backward passes per training step, time only: a GAN's
  discriminator runs 3).
- The model's output is the last layer's output. Composite layers (`multihead_attention`,
  `transformer_block`) give several rows, named "<name>.<part>".
- Without `input_shape`, the input is `sequence_length` token ids; with a 1-D `input_shape` and a
  sequence layer first (lstm, gru, attention, transformer_block), the input is
  [sequence_length, *input_shape].

What each layer keeps for backward (`saved_values`) follows PyTorch autograd; a tensor kept by two
layers (a ReLU's output that the next conv keeps as its input) is counted once, at the first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.layers import basic as layer_basic
from workers.sizing.layers import conv as layer_conv
from workers.sizing.layers import seq as layer_seq
from workers.sizing.layers.fields import COMMON_KEYS, Fields, Part, Rule, Shape, closest, size, whole_number
from workers.sizing.stats import BatchInput, LayerStats, ModelStats

RULES: dict[str, Rule] = {**layer_basic.RULES, **layer_conv.RULES, **layer_seq.RULES}
ALIASES: dict[str, str] = {
    "affine": "dense",
    "linear": "dense",
    "fc": "dense",
    "deconv1d": "conv_transpose1d",
    "deconv2d": "conv_transpose2d",
    "deconvolution": "conv_transpose2d",
    "batchnorm1d": "batchnorm",
    "batchnorm2d": "batchnorm",
    "batch_norm": "batchnorm",
    "layer_norm": "layernorm",
    "swish": "silu",
    "leakyrelu": "leaky_relu",
    "global_average_pool": "global_avg_pool",
    "attention": "multihead_attention",
    "self_attention": "multihead_attention",
    "transformer": "transformer_block",
    "residual": "add",
    "upsampling": "upsample",
    "lstm_meta_learner": "meta_lstm",
    # Keras class names, lower-cased
    "batchnormalization": "batchnorm",
    "layernormalization": "layernorm",
    "conv2dtranspose": "conv_transpose2d",
    "conv1dtranspose": "conv_transpose1d",
    "maxpooling2d": "maxpool2d",
    "averagepooling2d": "avgpool2d",
    "maxpooling1d": "maxpool1d",
    "averagepooling1d": "avgpool1d",
    "globalaveragepooling2d": "global_avg_pool",
    "upsampling2d": "upsample",
    "multiheadattention": "multihead_attention",
}
SEQUENCE_FIRST = frozenset({"lstm", "gru", "multihead_attention", "transformer_block"})
# Layers whose output is a view of their input (the same storage: keeping it keeps the input).
VIEW_PARTS = frozenset({"flatten", "reshape"})
# The batch as the loop holds it on the device: float32 images or features, int64 token ids
# (what torchvision's transforms and the tokenizers' tensors give).
FLOAT_INPUT_BYTES, TOKEN_ID_BYTES = 4, 8
MAX_LAYERS = 20_000  # a guard against runaway input, far above any real network's layer count


def layer_type(spec: object, field: str) -> str:
    """Return the canonical type of one layer object, or fail naming the closest types."""
    if not isinstance(spec, Mapping):
        raise SpecError(field, 'must be an object with a \'type\', e.g. {"type": "relu"}')
    raw = spec.get("type")
    if not isinstance(raw, str) or not raw:
        raise SpecError(f"{field}.type", f"required: one of {', '.join(sorted(RULES))}")
    key = raw.strip().lower()
    key = ALIASES.get(key, key)
    if key not in RULES:
        raise UnknownNameError(f"{field}.type", f"unknown layer type {raw!r}", closest(key, [*RULES, *ALIASES]))
    return key


def _input_shape(raw: Sequence[int] | None, sequence_length: int | None, first_type: str) -> tuple[Shape, int | None]:
    """Return the per-sample input shape and the sequence length it implies (None: not a sequence)."""
    seq = None if sequence_length is None else whole_number(sequence_length, "training.sequence_length", minimum=1)
    if raw is None:
        if seq is None:
            if first_type in SEQUENCE_FIRST or first_type == "embedding":
                raise SpecError("training.sequence_length", f"required: the model starts with {first_type}")
            raise SpecError("model.input_shape", "required with layers: one sample's shape, e.g. [3, 224, 224]")
        return (seq,), seq
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence) or not 1 <= len(raw) <= 4:
        raise SpecError("model.input_shape", f"must be a list of 1 to 4 sizes, e.g. [3, 224, 224], got {raw!r}")
    shape = tuple(whole_number(d, f"model.input_shape[{i}]", minimum=1) for i, d in enumerate(raw))
    if first_type in SEQUENCE_FIRST:
        if seq is not None and len(shape) == 1:
            return (seq, *shape), seq
        return shape, shape[0]
    if first_type == "embedding":
        return shape, shape[0]
    return shape, None


def _input_names(
    spec: Mapping[str, object], field: str, rule: Rule, previous: str, known: dict[str, Shape]
) -> list[str]:
    """Return the tensor names a layer reads, checking that each names an earlier layer."""
    if "inputs" in spec and "from" in spec:
        raise SpecError(f"{field}.from", "give 'inputs' or 'from', not both")
    if "from" in spec:
        source = spec["from"]
        if not isinstance(source, str):
            raise SpecError(f"{field}.from", f"must be the name of an earlier layer, got {source!r}")
        names, where = ([previous, source] if rule.many_inputs else [source]), f"{field}.from"
    elif "inputs" in spec:
        raw = spec["inputs"]
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not raw or not all(isinstance(n, str) for n in raw):
            raise SpecError(f"{field}.inputs", f"must be a list of earlier layer names, got {raw!r}")
        names, where = list(raw), f"{field}.inputs"
    else:
        return [previous]
    for n in names:
        if n not in known:
            raise UnknownNameError(where, f"no earlier layer is named {n!r}", closest(n, list(known)))
    if not rule.many_inputs and len(names) != 1:
        raise SpecError(where, f"this layer reads one tensor, got {len(names)}: {', '.join(names)}")
    return names


def compute_model_stats(
    layers: Sequence[Mapping[str, object]],
    *,
    input_shape: Sequence[int] | None,
    sequence_length: int | None,
    name: str = "custom",
    field_prefix: str = "model.layers",
) -> ModelStats:
    """Propagate shapes through a layer list and total each layer's neurons, parameters and multiply-adds."""
    if isinstance(layers, str | bytes) or not isinstance(layers, Sequence) or not layers:
        raise SpecError(field_prefix, "must be a non-empty list of layer objects")
    if len(layers) > MAX_LAYERS:
        raise SpecError(field_prefix, f"has {len(layers)} layers; the limit is {MAX_LAYERS}")
    types = [layer_type(spec, f"{field_prefix}[{i}]") for i, spec in enumerate(layers)]
    shape, seq = _input_shape(input_shape, sequence_length, types[0])
    known: dict[str, Shape] = {"input": shape}
    taken = {"input"}  # layer and row names in use
    kept: set[str] = set()  # tensors already counted as kept for backward
    storage: dict[str, str] = {}  # a view's name -> the tensor whose storage it shares
    rows: list[LayerStats] = []
    trainable = frozen_total = 0
    previous = "input"
    # A layer's fields and parts, by (type, fields but its name and wiring, input shapes): a model's
    # repeated blocks are worked out once per distinct layer; a layer a rule refuses raises at its first.
    computed: dict[tuple[object, ...], tuple[int, int, bool, bool, list[Part]]] = {}
    for i, (spec, type_name) in enumerate(zip(layers, types, strict=True)):
        field = f"{field_prefix}[{i}]"
        rule = RULES[type_name]
        _check_keys(spec, field, type_name, rule)
        layer_name = spec.get("name", f"{type_name}_{i}")
        if not isinstance(layer_name, str) or not layer_name or layer_name in taken:
            raise SpecError(f"{field}.name", f"must be a new, non-empty name; {layer_name!r} is taken or invalid")
        sources = _input_names(spec, field, rule, previous, known)
        shapes = tuple(known[n] for n in sources)
        key = _layer_key(spec, type_name, shapes)
        found = computed.get(key) if key is not None else None
        if found is None:
            f = Fields(spec, field=field, type_name=type_name, label=f"layer {i} ({layer_name}, {type_name})")
            f.trainable_before = trainable
            found = (f.whole("repeat", 1), f.whole("passes", 1), f.flag("frozen", False),
                     f.flag("shared_weights", False), rule.compute(f, shapes))
            if key is not None:
                computed[key] = found
        repeat, passes, frozen, shared, parts = found
        ids: list[str] = []
        for k, part in enumerate(parts):
            part_id = layer_name if k == len(parts) - 1 else f"{layer_name}.{part.suffix or k}"
            j = k + part.source
            input_id, input_shape_k = (ids[j], parts[j].output_shape) if j >= 0 else (sources[0], known[sources[0]])
            input_id = storage.get(input_id, input_id)
            if part.type in VIEW_PARTS:
                storage[part_id] = input_id
            saved = count_kept_values(part, input_id, input_shape_k, part_id, kept) if not frozen else 0
            params = 0 if shared else part.parameters
            if frozen:
                frozen_total += params
            else:
                trainable += params
            rows.append(
                _row(
                    part,
                    layer_name,
                    params=0 if frozen else params,
                    saved=saved,
                    repeat=repeat,
                    frozen=frozen,
                    passes=passes,
                    shared=part.parameters if shared and not frozen else 0,
                )
            )
            ids.append(part_id)
        taken.update(r.name for r in rows[-len(parts) :])
        taken.add(layer_name)
        known[layer_name] = parts[-1].output_shape
        previous = layer_name
    tokens = types[0] == "embedding"  # token ids (int64), else a float tensor of the input shape
    return ModelStats(
        name=name,
        neurons=sum(r.neurons for r in rows),
        parameters=trainable,
        multiply_adds=sum(r.multiply_adds for r in rows),
        layers=tuple(rows),
        sequence_length=seq,
        frozen_parameters=frozen_total,
        batch_input=BatchInput(bytes=size(shape) * (TOKEN_ID_BYTES if tokens else FLOAT_INPUT_BYTES),
                               kept_float_values=size(shape) if "input" in kept and not tokens else 0,
                               kept_integer_values=size(shape) if "input" in kept and tokens else 0),
    )


# Rules that read more than a layer's own fields and input shapes (meta_lstm: the trainable parameters
# listed before it) are worked out every time.
_NOT_REMEMBERED = frozenset({"meta_lstm"})
_WIRING = frozenset({"name", "from", "inputs"})


def _layer_key(spec: Mapping[str, object], type_name: str,
               shapes: tuple[Shape, ...]) -> tuple[object, ...] | None:
    """Return what a layer's parts depend on, hashable, or None when they depend on more (or it cannot hash)."""
    if type_name in _NOT_REMEMBERED:
        return None
    items = []
    for k, v in spec.items():
        if k in _WIRING:
            continue
        if isinstance(v, list):
            if not all(type(x) in (int, float, str, bool) for x in v):
                return None
            v = ("__list__", *((type(x).__name__, x) for x in v))
        elif type(v) not in (int, float, str, bool) and v is not None:
            return None
        items.append((k, type(v).__name__, v))  # the type too: 1, 1.0 and True hash alike
    return (type_name, shapes, tuple(sorted(items)))


def _check_keys(spec: Mapping[str, object], field: str, type_name: str, rule: Rule) -> None:
    """Fail on a field the layer type does not have, suggesting the closest one (catches typos)."""
    for key in spec:
        if key not in COMMON_KEYS and key not in rule.keys:
            allowed = sorted(COMMON_KEYS | rule.keys)
            raise UnknownNameError(f"{field}.{key}", f"a {type_name} layer has no field {key!r}", closest(key, allowed))


def count_kept_values(
    part: Part,
    input_id: str,
    input_shape: Shape,
    part_id: str,
    kept: set[str],
    *,
    output_values: int | None = None,
) -> int:
    """Count the values a part keeps for backward, skipping tensors an earlier layer already keeps."""
    values = part.extra_saved_values
    if part.keeps_input and input_id not in kept:
        kept.add(input_id)
        values += size(input_shape)
    if part.keeps_output and part_id not in kept:
        kept.add(part_id)
        values += size(part.output_shape) if output_values is None else output_values
    return values


def _row(part: Part, layer_name: str, *, params: int, saved: int, repeat: int, frozen: bool,
         passes: int = 1, shared: int = 0) -> LayerStats:
    """Build one statistics row, scaled by the layer's repeat count."""
    neurons = size(part.output_shape) if part.neurons < 0 else part.neurons
    fused = -1
    if part.fused_extra_saved_values >= 0 and not frozen:
        fused = saved - part.extra_saved_values + part.fused_extra_saved_values
    fused_mask = -1 if part.fused_mask_bytes < 0 or frozen else part.fused_mask_bytes
    return LayerStats(
        name=f"{layer_name}.{part.suffix}" if part.suffix else layer_name,
        type=part.type,
        output_shape=part.output_shape,
        neurons=neurons * repeat,
        parameters=params,
        multiply_adds=part.multiply_adds * repeat,
        kind=part.kind,
        saved_values=saved * repeat,
        saved_mask_bytes=0 if frozen else part.saved_mask_bytes * repeat,
        traffic_values=part.traffic_values * repeat,
        passes=passes,
        kernel_positions=part.kernel_positions,
        fused_saved_values=-1 if fused < 0 else fused * repeat,
        fused_saved_mask_bytes=-1 if fused_mask < 0 else fused_mask * repeat,
        shared_parameters=shared,
    )
