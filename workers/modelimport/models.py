"""The job spec's `model` (a preset, plain totals, a layer list, an ONNX file or a Hugging Face config.json)
resolved to ModelStats."""

from __future__ import annotations

import base64
import binascii
import functools
import json
from collections.abc import Mapping, Sequence

from workers.sizing.errors import OnnxError, SpecError, UnknownNameError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.fields import closest, whole_number
from workers.sizing.presets.hf_config import config_name, config_text, default_sequence, hf_config_layers, model_type
from workers.sizing.presets.hf_encoders import HEADED_TYPES
from workers.sizing.presets.hf_seq2seq import SEQ2SEQ_TYPES, WHISPER_TYPES, audio_not_tokens, whisper_input
from workers.sizing.presets.registry import find_preset, preset_stats
from workers.sizing.presets.transformer import CLASSIFIER, ENCODER_HEADS, MASKED_LM
from workers.sizing.stats import ModelStats

FORMS = ("preset", "stats", "layers", "onnx", "hf_config")
KEYS = (*FORMS, "input_shape", "name", "head")
STATS_KEYS = ("neurons", "parameters", "multiply_adds")
# A layer list of at most this many rows is built once per (list, input, sequence, name), so that every job of
# one custom model (a queue's specs that differ in epochs, a review's runs) shares one ModelStats object and the
# core's per-model memos (strategy searches, walks, allocator replays) hit: a U-Net that no card holds as given
# searched its strategies again for every job, 0.36 s each. The cache holds its models, so it is kept small: the
# last LAYER_LISTS_KEPT lists of at most MAX_CACHED_LAYERS rows each (a few MB); longer generated lists are built
# every time and die with their job (workers/sizing/memo.py says why that matters).
MAX_CACHED_LAYERS = 500
LAYER_LISTS_KEPT = 16
# The limit is onnx_import.MAX_ONNX_BYTES; that module (and the onnx package, ~0.2 s to import) loads
# only when a model comes as ONNX.


def resolve_model(model: Mapping[str, object], *, sequence_length: int | None,
                  batch_size: int | None = None, from_pretrained: bool | None = None,
                  target_length: int | None = None) -> ModelStats:
    """Turn the spec's `model` object, in whichever of its five forms, into per-sample statistics.

    `batch_size` binds an ONNX file's symbolic batch axis before shape inference. A BERT-style encoder (a
    preset with heads, or an hf_config of hf_encoders.HEADED_TYPES) gets `model.head`; without one, the
    masked-LM head when `from_pretrained` is False (pre-training an encoder is masked-language modelling),
    else its sentence classifier. An encoder-decoder (T5, BART, Whisper) preset or hf_config reads `target_length`
    target tokens (None: as many as its source; Whisper's, its target positions).
    """
    if not isinstance(model, Mapping):
        raise SpecError("model", "must be an object with one of preset, stats, layers, onnx or hf_config")
    for key in model:
        if key not in KEYS:
            raise UnknownNameError(f"model.{key}", f"unknown field {key!r}", closest(str(key), KEYS))
    given = [form for form in FORMS if model.get(form) is not None]
    if len(given) != 1:
        found = f"got {', '.join(given)}" if given else "got none"
        raise SpecError("model", f"give exactly one of preset, stats, layers, onnx or hf_config; {found}")
    form = given[0]
    input_shape = model.get("input_shape")
    if input_shape is not None and form in ("stats", "onnx", "hf_config"):
        raise SpecError("model.input_shape", f"goes with layers or a preset, not with {form}")
    name = model.get("name")
    label = name if isinstance(name, str) and name else None
    head = model.get("head")
    if head is not None and (head not in ENCODER_HEADS or form not in ("preset", "hf_config")):
        raise SpecError("model.head", f"{head!r}: one of {', '.join(ENCODER_HEADS)}, for a BERT-style encoder "
                                      f"given as a preset or hf_config" if head not in ENCODER_HEADS else
                                      f"goes with a preset or hf_config of a BERT-style encoder, not with {form}")
    pretraining = MASKED_LM if from_pretrained is False else None
    if target_length is not None and form not in ("preset", "hf_config"):
        raise SpecError("training.target_length", f"goes with an encoder-decoder given as a preset or hf_config "
                                                  f"(t5, flan-t5, bart, whisper); a model given as {form} reads no "
                                                  f"target (a layer list sets its decoder embedding's `length`)")
    if form == "preset":
        preset = model["preset"]
        if not isinstance(preset, str):
            raise SpecError("model.preset", f"must be a preset name, got {preset!r}")
        if head is None and pretraining and find_preset(preset).heads:
            head = pretraining
        if sequence_length is not None and find_preset(preset).target and find_preset(preset).input_shape:
            raise audio_not_tokens(preset)
        return preset_stats(preset, sequence_length=sequence_length, input_shape=_shape(input_shape),
                            head=None if head is None else str(head), target_length=target_length)
    if form == "stats":
        return _plain_stats(model["stats"], label or "custom", sequence_length)
    if form == "layers":
        layers = model["layers"]
        if isinstance(layers, str | bytes) or not isinstance(layers, Sequence):
            raise SpecError("model.layers", "must be a list of layer objects")
        text = _layers_text(layers, input_shape) if len(layers) <= MAX_CACHED_LAYERS else None
        if text is not None:
            return _layer_list_stats(text, sequence_length, label or "custom")
        return compute_model_stats(
            layers, input_shape=_shape(input_shape), sequence_length=sequence_length, name=label or "custom"
        )
    if form == "hf_config":
        text = config_text(model["hf_config"])
        kind = model_type(model["hf_config"])
        if head is not None and kind not in HEADED_TYPES:
            raise SpecError("model.head", f"{head!r}: a {kind!r} model has one head, its own (a head is chosen "
                                          f"for {', '.join(sorted(HEADED_TYPES))})")
        if head is None and kind in HEADED_TYPES:
            head = pretraining or CLASSIFIER
        if target_length is not None and kind not in SEQ2SEQ_TYPES:
            raise SpecError("training.target_length", f"goes with an encoder-decoder (t5, mt5, bart, whisper); a "
                                                      f"{kind!r} model reads one sequence: leave it out")
        return _hf_config_stats(text, sequence_length, label, str(head or CLASSIFIER), target_length)
    from workers.modelimport.onnx_import import onnx_model_stats

    return onnx_model_stats(_onnx_bytes(model["onnx"]), name=label or "onnx", sequence_length=sequence_length,
                            batch_size=batch_size)


def _layers_text(layers: Sequence[object], input_shape: object) -> str | None:
    """Return the layer list and input shape as canonical JSON (the cache's key), None where they are not JSON."""
    try:
        return json.dumps({"layers": layers, "input_shape": input_shape}, sort_keys=True, separators=(",", ":"),
                          allow_nan=False)
    except (TypeError, ValueError):
        return None  # the builder names what is wrong


@functools.lru_cache(maxsize=LAYER_LISTS_KEPT)
def _layer_list_stats(text: str, sequence_length: int | None, name: str) -> ModelStats:
    """Build a layer list's model once per (list and input shape, sequence length, name); ModelStats is frozen."""
    given = json.loads(text)
    return compute_model_stats(given["layers"], input_shape=_shape(given["input_shape"]),
                               sequence_length=sequence_length, name=name)


@functools.lru_cache(maxsize=64)
def _hf_config_stats(text: str, sequence_length: int | None, label: str | None, head: str,
                     target_length: int | None = None) -> ModelStats:
    """Build a Hugging Face config's model once per (config, sequence length, name, head, target length)."""
    config = json.loads(text)
    named = config_name(config) + (f" ({head} head)" if head == MASKED_LM else "")
    if config.get("model_type") in WHISPER_TYPES:  # 30 s of log-mel frames, not tokens
        if sequence_length is not None:
            raise audio_not_tokens("Whisper")
        return compute_model_stats(hf_config_layers(config, head, target_length=target_length),
                                   input_shape=whisper_input(config), sequence_length=None, name=label or named,
                                   field_prefix="model.hf_config")
    seq = sequence_length or default_sequence(config)
    layers = hf_config_layers(config, head, target_length=target_length or seq)
    return compute_model_stats(layers, input_shape=None, sequence_length=seq, name=label or named,
                               field_prefix="model.hf_config")


def _shape(value: object) -> Sequence[int] | None:
    """Pass an input shape through for the layer walker to check, refusing non-lists early."""
    if value is None:
        return None
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise SpecError("model.input_shape", f"must be a list of sizes, e.g. [3, 224, 224], got {value!r}")
    return value


def _plain_stats(raw: object, name: str, sequence_length: int | None) -> ModelStats:
    """Check the three totals a user gave directly and wrap them as statistics without layer rows."""
    if not isinstance(raw, Mapping):
        raise SpecError("model.stats", "must be an object with neurons, parameters and multiply_adds")
    for key in raw:
        if key not in STATS_KEYS:
            raise UnknownNameError(f"model.stats.{key}", f"unknown field {key!r}", closest(str(key), STATS_KEYS))
    values = {}
    for key in STATS_KEYS:
        if raw.get(key) is None:
            raise SpecError(f"model.stats.{key}", "required")
        values[key] = whole_number(raw[key], f"model.stats.{key}", minimum=0)
    if values["parameters"] == 0:
        raise SpecError("model.stats.parameters", "must be at least 1: a model without weights does not train")
    return ModelStats(
        name=name,
        neurons=values["neurons"],
        parameters=values["parameters"],
        multiply_adds=values["multiply_adds"],
        sequence_length=sequence_length,
    )


def _onnx_bytes(raw: object) -> bytes:
    """Return the ONNX file's bytes, decoding base64 text as the JSON API sends it."""
    from workers.modelimport.onnx_import import MAX_ONNX_BYTES

    if isinstance(raw, bytes | bytearray):
        return bytes(raw)
    if isinstance(raw, str):
        if len(raw) > 4 * MAX_ONNX_BYTES // 3 + 1024:  # refuse before decoding, not after
            raise OnnxError("model.onnx", f"the file is over the limit of {MAX_ONNX_BYTES:,} bytes")
        try:
            return base64.b64decode("".join(raw.split()), validate=True)
        except (binascii.Error, ValueError) as error:
            raise OnnxError("model.onnx", f"not valid base64: {error}") from error
    raise OnnxError("model.onnx", f"must be the file's bytes or base64 text, got {type(raw).__name__}")
