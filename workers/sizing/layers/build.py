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
  `add` / `concat` / `multiply` / `reparameterize` take every tensor named there (`"inputs": ["a", "b"]`).
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

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.gcpause import collection_paused
from workers.sizing.layers import basic as layer_basic
from workers.sizing.layers import conv as layer_conv
from workers.sizing.layers import seq as layer_seq
from workers.sizing.layers import spatial as layer_spatial
from workers.sizing.layers.autocast import extra_bytes, output_is_fp32
from workers.sizing.layers.fields import COMMON_KEYS, Fields, Part, Rule, Shape, closest, size, whole_number
from workers.sizing.layers.repeats import LayerRows, layer_key, plain_key
from workers.sizing.layers.rows import count_kept_values, part_ids, part_row, view_refs_of
from workers.sizing.layers.wiring import MEMORY, input_names, is_wired
from workers.sizing.stats import BatchInput, LayerStats, ModelStats

RULES: dict[str, Rule] = {**layer_basic.RULES, **layer_conv.RULES, **layer_seq.RULES, **layer_spatial.RULES}
ALIASES: dict[str, str] = {
    "affine": "dense", "linear": "dense", "fc": "dense",
    "deconv1d": "conv_transpose1d",
    "deconv2d": "conv_transpose2d",
    "deconvolution": "conv_transpose2d",
    "batchnorm1d": "batchnorm",
    "batchnorm2d": "batchnorm",
    "batch_norm": "batchnorm",
    "layer_norm": "layernorm",
    "group_norm": "groupnorm",
    "groupnormalization": "groupnorm",
    "swish": "silu",
    "leakyrelu": "leaky_relu",
    "global_average_pool": "global_avg_pool",
    "attention": "multihead_attention",
    "self_attention": "multihead_attention",
    "transformer": "transformer_block",
    "residual": "add",
    "mul": "multiply",
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
VIEW_PARTS = frozenset({"flatten", "reshape", "chunk"})
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


# From this many layers the builder runs with the cyclic collector paused (gcpause.py).
PAUSED_FROM = 2000


def compute_model_stats(
    layers: Sequence[Mapping[str, object]],
    *,
    input_shape: Sequence[int] | None,
    sequence_length: int | None,
    name: str = "custom",
    field_prefix: str = "model.layers",
) -> ModelStats:
    """Propagate shapes through a layer list and total each layer's neurons, parameters and multiply-adds."""
    if isinstance(layers, list | tuple) and len(layers) >= PAUSED_FROM:
        with collection_paused():
            return _model_stats(layers, input_shape=input_shape, sequence_length=sequence_length, name=name,
                                field_prefix=field_prefix)
    return _model_stats(layers, input_shape=input_shape, sequence_length=sequence_length, name=name,
                        field_prefix=field_prefix)


def _model_stats(
    layers: Sequence[Mapping[str, object]],
    *,
    input_shape: Sequence[int] | None,
    sequence_length: int | None,
    name: str,
    field_prefix: str,
) -> ModelStats:
    if isinstance(layers, str | bytes) or not isinstance(layers, Sequence) or not layers:
        raise SpecError(field_prefix, "must be a non-empty list of layer objects")
    if len(layers) > MAX_LAYERS:
        raise SpecError(field_prefix, f"has {len(layers)} layers; the limit is {MAX_LAYERS}")
    types = _layer_types(layers, field_prefix)
    shape, seq = _input_shape(input_shape, sequence_length, types[0])
    known: dict[str, Shape] = {"input": shape}
    taken = {"input"}  # layer and row names in use
    kept: set[str] = set()  # tensors already counted as kept for backward
    storage: dict[str, str] = {}  # a view's name -> the tensor whose storage it shares
    fp32 = {"input": types[0] != "embedding"}  # whether a tensor is float32 under autocast (autocast.py)
    rows: list[LayerStats] = []
    trainable = frozen_total = 0
    previous = "input"
    # A layer's fields and parts, by (type, fields but its name and wiring, input shapes): a model's
    # repeated blocks are worked out once per distinct layer; a layer a rule refuses raises at its first.
    computed: dict[tuple[object, ...], tuple[int, int, bool, bool, list[Part]]] = {}
    # A layer's rows as they came out, by the same key and whether its input was already kept: a
    # repeat of it in the same place (a block after a block) takes them with its own names (LayerRows).
    made: dict[tuple[object, ...], LayerRows] = {}
    checked: set[tuple[str, tuple[str, ...]]] = set()  # (type, keys) whose keys all belong to the type
    # A layer without wiring, by its type, input shape, items but its name and their types (1, 1.0 and
    # True apart): its key, and its rows when its input was not kept / was kept. A repeat of a layer
    # checked already skips the key check, the key's making and its hashing.
    plain: dict[tuple[object, ...], list[Any]] = {}
    for i, (spec, type_name) in enumerate(zip(layers, types, strict=True)):
        if "name" not in spec and "inputs" not in spec and "from" not in spec and MEMORY not in spec:
            # The usual repeat: a plain layer met before after the same shape, placed from its first rows.
            # Anything this path does not settle is worked out below, as for a layer not met before.
            seen_key = (type_name, known[previous], tuple(spec.items()), tuple(map(type, spec.values())))
            try:
                entry = plain.get(seen_key)
            except TypeError:  # a list among the values
                entry = plain.get(listed) if (listed := plain_key(seen_key)) is not None else None
            if entry is not None and entry[0] is not None:
                source_id = storage.get(previous, previous)
                source_kept = source_id in kept
                again = entry[slot := 1 + source_kept + 2 * fp32[previous]]  # rows differ by both (autocast.py)
                if again is None:
                    again = entry[slot] = made.get((entry[0], source_kept, (fp32[previous],)))
                default_name = f"{type_name}_{i}"
                if again is not None and default_name not in taken and again.place(default_name, source_id, rows,
                                                                                   kept, storage, taken, fp32):
                    trainable += again.trainable
                    frozen_total += again.frozen
                    known[default_name] = again.output_shape
                    previous = default_name
                    continue
        rule = RULES[type_name]
        wired = is_wired(spec, rule)
        entry = raw = None
        if not wired:
            if "name" not in spec:
                raw = (type_name, known[previous], tuple(spec.items()), tuple(map(type, spec.values())))
            else:
                items = tuple(kv for kv in spec.items() if kv[0] != "name")
                raw = (type_name, known[previous], items, tuple(type(kv[1]) for kv in items))
            try:
                entry = plain.get(raw)
            except TypeError:  # a list among the values
                raw = plain_key(raw)
                entry = plain.get(raw) if raw is not None else None
        if entry is None:
            keys = (type_name, tuple(spec))
            if keys not in checked:
                _check_keys(spec, f"{field_prefix}[{i}]", type_name, rule)
                checked.add(keys)
        layer_name = spec.get("name", f"{type_name}_{i}")
        if type(layer_name) is not str or not layer_name or layer_name in taken:
            raise SpecError(f"{field_prefix}[{i}].name",
                            f"must be a new, non-empty name; {layer_name!r} is taken or invalid")
        if wired:
            sources = input_names(spec, f"{field_prefix}[{i}]", rule, previous, known)
            shapes = tuple(known[n] for n in sources)
            # a decoder block's rows depend on whether its memory is kept already: worked out every time
            key = layer_key(spec, type_name, shapes) if not rule.memory or len(sources) == 1 else None
        else:
            sources = [previous]
            shapes = (known[previous],)
            if entry is None:
                key = layer_key(spec, type_name, shapes)
                if raw is not None:
                    entry = plain[raw] = [key, None, None, None, None]
            else:
                key = entry[0]
        source_id = storage.get(sources[0], sources[0])
        sources32 = tuple(fp32[n] for n in sources)
        if key is not None:
            source_kept = source_id in kept
            slot = 1 + source_kept + 2 * sources32[0]
            again = entry[slot] if entry is not None and not wired else None
            if again is None:
                again = made.get((key, source_kept, sources32))
                if again is not None and entry is not None and not wired:
                    entry[slot] = again
            if again is not None and again.place(layer_name, source_id, rows, kept, storage, taken, fp32):
                trainable += again.trainable
                frozen_total += again.frozen
                known[layer_name] = again.output_shape
                previous = layer_name
                continue
        found = computed.get(key) if key is not None else None
        if found is None:
            field = f"{field_prefix}[{i}]"
            f = Fields(spec, field=field, type_name=type_name, label=f"layer {i} ({layer_name}, {type_name})")
            f.trainable_before = trainable
            found = (f.whole("repeat", 1), f.whole("passes", 1), f.flag("frozen", False),
                     f.flag("shared_weights", False), rule.compute(f, shapes))
            if key is not None:
                computed[key] = found
        repeat, passes, frozen, shared, parts = found
        ids = part_ids(layer_name, parts)
        fresh = not any(pid in kept or pid in storage for pid in ids)
        source_kept = source_id in kept
        refs: list[int] = []  # per part, where its input's storage is: -1 the layer's source, k part k
        kept_refs: list[int] = []  # what the layer adds to the kept tensors, in the same terms
        view_refs: list[tuple[int, int]] = []  # (view part, the part or source whose storage it shares)
        first_row = len(rows)
        before = (trainable, frozen_total)
        layer32 = any(sources32[:-1] if rule.memory and len(sources) > 1 else sources32)  # the stream's, not memory's
        for k, part in enumerate(parts):
            part_id = ids[k]
            j = k + part.source
            in32 = fp32[ids[j]] if j >= 0 else layer32
            ref = view_refs_of(view_refs, j) if j >= 0 else -1
            input_id = storage.get(ids[j], ids[j]) if j >= 0 else source_id
            input_shape_k = parts[j].output_shape if j >= 0 else known[sources[0]]
            if part.reads_memory:  # a cross-attention's K/V projection reads the encoder's output (wiring.py)
                input_id, input_shape_k, in32 = storage.get(sources[-1], sources[-1]), known[sources[-1]], sources32[-1]
            fp32[part_id] = output_is_fp32(part, input_fp32=in32, layer_input_fp32=layer32)
            if part.type in VIEW_PARTS:
                storage[part_id] = input_id
                view_refs.append((k, ref))
            refs.append(ref)
            input_was_kept, output_was_kept = input_id in kept, part_id in kept
            saved = count_kept_values(part, input_id, input_shape_k, part_id, kept) if not frozen else 0
            wide = 0 if frozen else extra_bytes(part, input_fp32=in32, output_fp32=fp32[part_id], input_values=size(
                input_shape_k), input_counted=part.keeps_input and not input_was_kept and input_id in kept,
                output_counted=size(part.output_shape) if part.keeps_output and not output_was_kept else 0)
            if not input_was_kept and input_id in kept:
                kept_refs.append(ref)
            if not output_was_kept and part_id in kept:
                kept_refs.append(k)
            params = 0 if shared else part.parameters
            if frozen:
                frozen_total += params
            else:
                trainable += params
            rows.append(
                part_row(
                    part,
                    layer_name,
                    params=0 if frozen else params,
                    saved=saved,
                    repeat=repeat,
                    frozen=frozen,
                    passes=passes,
                    shared=part.parameters if shared and not frozen else 0,
                    autocast_extra=wide,
                )
            )
        for r in rows[first_row:]:
            taken.add(r.name)
        taken.add(layer_name)
        known[layer_name] = parts[-1].output_shape
        previous = layer_name
        if key is not None and fresh:
            made[(key, source_kept, sources32)] = LayerRows(parts, rows[first_row:], kept_refs, view_refs, trainable
                                                        - before[0], frozen_total - before[1], [fp32[p] for p in ids])
    tokens = types[0] == "embedding"  # token ids (int64), else a float tensor of the input shape
    return ModelStats(
        name=name,
        neurons=sum(map(_NEURONS, rows)),
        parameters=trainable,
        multiply_adds=sum(map(_MULTIPLY_ADDS, rows)),
        layers=tuple(rows),
        sequence_length=seq,
        frozen_parameters=frozen_total,
        batch_input=BatchInput(bytes=size(shape) * (TOKEN_ID_BYTES if tokens else FLOAT_INPUT_BYTES),
                               kept_float_values=size(shape) if "input" in kept and not tokens else 0,
                               kept_integer_values=size(shape) if "input" in kept and tokens else 0,
                               shape=tuple(shape)),
    )


_NEURONS, _MULTIPLY_ADDS = operator.attrgetter("neurons"), operator.attrgetter("multiply_adds")
_TYPE = operator.itemgetter("type")


def _layer_types(layers: Sequence[Mapping[str, object]], field_prefix: str) -> list[str]:
    """Return every layer's canonical type (layer_type), each spelling looked up once."""
    try:  # the usual list: every layer a mapping with a string type, read in C
        spellings = list(map(_TYPE, layers))
        distinct = {raw: layer_type({"type": raw}, "") for raw in set(spellings) if type(raw) is str}
        return list(map(distinct.__getitem__, spellings))
    except (KeyError, TypeError, SpecError):  # named at its first layer below
        pass
    seen: dict[str, str] = {}
    types = []
    for i, spec in enumerate(layers):
        raw = spec.get("type") if type(spec) is dict else None
        found = seen.get(raw) if type(raw) is str else None
        if found is None:
            found = layer_type(spec, f"{field_prefix}[{i}]")
            if type(raw) is str:
                seen[raw] = found
        types.append(found)
    return types


def _check_keys(spec: Mapping[str, object], field: str, type_name: str, rule: Rule) -> None:
    """Fail on a field the layer type does not have, suggesting the closest one (catches typos)."""
    for key in spec:
        if key not in COMMON_KEYS and key not in rule.keys:
            allowed = sorted(COMMON_KEYS | rule.keys)
            raise UnknownNameError(f"{field}.{key}", f"a {type_name} layer has no field {key!r}", closest(key, allowed))
