"""What the OpenAPI document states beyond what flask-smorest learns from the marshmallow fields.

Rules between fields that JSON Schema 2020-12 can state (exactly one model form, `input_shape` only
beside `layers` or a `preset`, `layers` with an `input_shape` or a `training.sequence_length`, the fields each layer
type takes, a sweep only with 2 runs or more), the names the core knows (GPUs, layer types, presets),
and, in each operation's 422 response, the rules it cannot state. A client reading the document (a
generated client, schemathesis) learns from it everything it can learn; what is left is answered 422
problem+json naming the field, as the 422 response of the operation says.

schemathesis' positive_data_acceptance judges a 422 by its status only (schemathesis 4.32,
specs/openapi/checks.py); its own advice for a rule a schema cannot express is a per-operation
allowance, which the checkout's schemathesis.toml gives to the operations below and to no other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from apispec import APISpec

from catalog.gpus import load_gpus
from workers.schemas.layer_list import MAX_LAYER_NUMBER
from workers.schemas.review import OPENAPI_REVIEW_JOB_EXTRAS
from workers.schemas.spec import DATA_PARALLEL_KINDS, OPENAPI_MODEL_EXTRAS
from workers.sizing.layers.build import ALIASES as LAYER_ALIASES
from workers.sizing.layers.build import RULES as LAYER_RULES
from workers.sizing.layers.fields import COMMON_KEYS
from workers.sizing.strategies.types import PARAMETERS_SHARDED, DataParallel

# dataset.location (the spec's DataLocationSchema): a region with aws or gcp, none with internet or anywhere.
OPENAPI_DATA_LOCATION_EXTRAS: dict[str, Any] = {
    "oneOf": [
        {"properties": {"provider": {"enum": ["aws", "gcp"]}}, "required": ["provider", "region"]},
        {"properties": {"provider": {"enum": ["internet", "anywhere"]}}, "not": {"required": ["region"]}},
    ],
}


@dataclass(frozen=True)
class UnstatedRule:
    """A rule of the core that no JSON Schema states, and how its 422 names it (regexes on field and message).

    `field` matches the error's field with list indexes written `[]` and the body's prefix dropped
    (a review's `jobs[].spec.`, a run's `spec.`); `message` is searched in the reason.
    """

    text: str
    field: str
    message: str = ""

    def names(self, field: str, message: str) -> bool:
        """Say whether this error (field, reason) is this rule's."""
        bare = re.sub(r"\[\d+\]", "[]", field)
        return (re.fullmatch(rf"(?:.*\.)?(?:{self.field})", bare) is not None
                and re.search(self.message, message) is not None)


LAYER_LIST = UnstatedRule(
    "a layer list the layer builder cannot follow: shapes that do not chain (a layer reads the previous output, "
    "or the earlier layers named in `inputs`/`from`), a name used twice, a layer type's own size missing or of "
    "the wrong kind (a dense layer's `out_features` or `units`, a convolution's `out_channels` and `kernel`: the "
    "document types a layer's own fields only as numbers, strings, booleans or lists)",
    r"model\.layers(?:\[\])?(?:\..+)?", r"^(?!.*(?:has no field|unknown layer type))")
SEQUENCE_LENGTH = UnstatedRule("a `training.sequence_length` above the positions the model learns (BERT's 512), or "
                               "beside a model that reads no tokens (Whisper's 30 s of log-mel frames)",
                               r"training\.sequence_length", r"exceeds the model's|not tokens")
ONNX_CONTENT = UnstatedRule("an `onnx` value that is base64 but not an ONNX file the importer reads",
                            r"model\.onnx", r"^(?!not valid base64)")
STRATEGY_FIT = UnstatedRule(
    "a `training.parallelism` the model cannot use: tensor parallel degrees that do not divide its attention "
    "heads, more pipeline stages than blocks, adapters on a model without attention, offload that no machine in "
    "scope has the host memory for", r"training\.parallelism\.(?:tensor_parallel|pipeline_stages|adapter"
    r"(?:\.targets)?|offload)")
REGION = UnstatedRule("a region the catalog in use does not list (a refresh changes them; GET /v1/catalog/instances "
                      "lists today's)", r"constraints\.regions|dataset\.location\.region", r"unknown (?:\w+ )?region")
CHECKPOINTS = UnstatedRule("a `training.checkpoint_every_hours` longer than `constraints.deadline_hours` or than the "
                           "whole run on the slowest card in scope (no checkpoint would be written)",
                           r"training\.checkpoint_every_hours", r"longer than the (?:whole run|\S+ h deadline)")
MEAN_SEQUENCE_LENGTH = UnstatedRule("a `training.mean_sequence_length` above `training.sequence_length`, or "
                                    "without it", r"training\.mean_sequence_length",
                                    r"exceeds sequence_length|needs sequence_length")
DATASET_TOKENS = UnstatedRule("a `dataset.tokens` beside a `dataset.samples` above 0, or for a model that reads no "
                              "token sequences", r"dataset\.tokens", r"not both|reads no token sequences")
MODEL_BOUNDS = UnstatedRule("a model whose statistics at the spec's `training.sequence_length` leave the core's "
                            "bounds (a preset at millions of tokens: more than 10^18 multiply-adds a sample)",
                            r"model\.stats\.\w+|training\.sequence_length", r"is out of range|the sizing takes")
FROM_SCRATCH_ADAPTERS = UnstatedRule("`training.from_pretrained: false` with `training.parallelism.adapter` or "
                                     "`allow_adapters: true` (adapters need a pretrained base)",
                                     r"training\.from_pretrained", r"from_pretrained is false")
PRESET_INPUT_SHAPE = UnstatedRule("a `model.input_shape` beside a preset that reads token ids (a language model: "
                                  "`training.sequence_length` sets its input), or that the preset's layers cannot "
                                  "follow (a convolution reads [channels, height, width]; VGG-16's five poolings "
                                  "need 32x32 or more)", r"model\.input_shape(?:\[\])?")
HF_CONFIG = UnstatedRule("a `model.hf_config` the builder cannot read: a `model_type` other than the decoders it "
                         "runs (listed in the field's description), a field the block needs missing, of the wrong "
                         "kind or out of range, K/V heads that do not divide the heads, or a layer list those fields "
                         "give that does not chain", r"model\.hf_config(?:\..+)?")
MODEL_HEAD = UnstatedRule("a `model.head` beside a model that is not a BERT-style encoder: a preset other than the "
                          "BERT, RoBERTa and DistilBERT ones, an hf_config of another model_type, stats, layers or "
                          "onnx", r"model\.head")
TARGET_LENGTH = UnstatedRule("a `training.target_length` beside a model that reads one sequence: any but an "
                             "encoder-decoder given as a preset (t5, flan-t5) or hf_config (model_type t5 or mt5)",
                             r"training\.target_length", r"goes with an encoder-decoder")
EIGHT_BIT_FRAMEWORK = UnstatedRule("`training.optimizer: adamw_8bit` with a `training.framework` other than pytorch "
                                   "(bitsandbytes is a PyTorch library)", r"training\.optimizer", r"bitsandbytes")
PREFERENCE = UnstatedRule("a `training.preference` for a model that reads no token sequences (DPO and ORPO tune "
                          "a language model on pairs of them)", r"training\.preference", r"needs a language model")
_SPEC = (LAYER_LIST, SEQUENCE_LENGTH, ONNX_CONTENT, STRATEGY_FIT, REGION, MEAN_SEQUENCE_LENGTH, FROM_SCRATCH_ADAPTERS,
         MODEL_BOUNDS, PRESET_INPUT_SHAPE, HF_CONFIG, MODEL_HEAD, DATASET_TOKENS, TARGET_LENGTH, EIGHT_BIT_FRAMEWORK,
         PREFERENCE)
_RANKED = (*_SPEC, CHECKPOINTS)  # what the ranking refuses besides
# The rules of each operation whose body carries them: what a 422 to a request the document calls valid is for.
UNSTATED_RULES: dict[tuple[str, str], tuple[UnstatedRule, ...]] = {
    ("/v1/estimate", "post"): _SPEC,
    ("/v1/recommendations", "post"): _RANKED,
    ("/v1/runs", "post"): (*_SPEC, UnstatedRule("a `peak_memory_bytes` above the memory of one `gpu`",
                                                r"peak_memory_bytes", r"is above the"),
                           UnstatedRule("an `iteration_ms` more than 1,000x away from what the model predicts for the "
                                        "spec (the spec does not describe the run)", r"iteration_ms",
                                        r"the model predicts")),
    ("/v1/reports", "post"): (*_RANKED, UnstatedRule("two jobs with the same `name`", r"jobs\[\]\.name",
                                                   r"is named twice"),
                              UnstatedRule("a job giving `team` and `owner` that differ", r"jobs\[\]\.(?:team|owner)",
                                           r"not two different ones")),
}

# Fields every layer may carry, typed as the layer builder reads them (workers/sizing/layers/build.py).
_WHOLE = {"type": "integer", "minimum": 1, "maximum": MAX_LAYER_NUMBER}
_COMMON_LAYER_FIELDS: dict[str, Any] = {
    "name": {"type": "string", "minLength": 1, "not": {"const": "input"},
             "description": "unique among the layers; `input` names the model's input"},
    "inputs": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
               "description": "names of earlier layers this layer reads"},
    "from": {"type": "string", "minLength": 1, "description": "an earlier layer, read beside the previous one"},
    "repeat": _WHOLE, "passes": _WHOLE, "frozen": {"type": "boolean"}, "shared_weights": {"type": "boolean"},
}
# Layers need a sample's shape, or a sequence length (a sequence of token ids is the input then). As if/then,
# which generated clients pass over (openapi-python-client makes a union type of an object with anyOf).
_LAYERS_NEED_A_SHAPE: dict[str, Any] = {
    "if": {"required": ["model"],
           "properties": {"model": {"required": ["layers"], "not": {"required": ["input_shape"]}}}},
    "then": {"required": ["training"], "properties": {"training": {"required": ["sequence_length"]}}},
}
# Parameter offload moves shards: zero3, fsdp or hybrid_shard (or auto, which picks one), never another kind.
_PARAMETER_OFFLOAD: dict[str, Any] = {
    "if": {"required": ["offload"], "properties": {"offload": {"required": ["parameters"],
                                                               "properties": {"parameters": {"const": True}}}}},
    "then": {"properties": {"data_parallel": {"enum": [
        kind for kind in DATA_PARALLEL_KINDS
        if kind == "auto" or DataParallel("zero3" if kind == "fsdp" else kind) in PARAMETERS_SHARDED]}}},
}


def declare_rules(spec: APISpec) -> None:
    """Add to the document's components and operations what the fields alone do not say."""
    schemas = spec.components.schemas
    for component, extras in (("Model", OPENAPI_MODEL_EXTRAS), ("ReviewJob", OPENAPI_REVIEW_JOB_EXTRAS),
                              ("DataLocation", OPENAPI_DATA_LOCATION_EXTRAS),
                              ("JobSpec", _LAYERS_NEED_A_SHAPE), ("EstimateRequest", _LAYERS_NEED_A_SHAPE)):
        if component in schemas:
            schemas[component].update(extras)
    gpus = sorted(g.slug for g in load_gpus())  # the GPU table (catalog/data), every catalog's GPUs
    for component, field, in_list in (("Profile", "gpu", False), ("RunReport", "gpu", False),
                                      ("OwnedGpus", "gpu", False), ("EstimateRequest", "gpus", True),
                                      ("Constraints", "gpus", True)):
        if component in schemas:
            target = schemas[component]["properties"][field]
            (target["items"] if in_list else target)["enum"] = gpus
    if "Parallelism" in schemas:
        schemas["Parallelism"].update(_PARAMETER_OFFLOAD)
    if "Model" in schemas:
        schemas["Model"]["properties"]["layers"]["items"] = layer_schema(
            schemas["Model"]["properties"]["layers"]["items"])
    _document_unstated_rules(spec)


def layer_schema(items: dict[str, Any]) -> dict[str, Any]:
    """Return the layer object's schema: its type, the common fields typed, and each type's own fields."""
    groups: dict[str, list[str]] = {name: [name] for name in LAYER_RULES}
    for alias, name in LAYER_ALIASES.items():
        groups[name].append(alias)
    return {**items, "properties": {**items.get("properties", {}), **_COMMON_LAYER_FIELDS},
            "oneOf": [{"properties": {"type": {"enum": sorted(names)}},
                       "propertyNames": {"enum": sorted(COMMON_KEYS | LAYER_RULES[name].keys)}}
                      for name, names in sorted(groups.items())]}


def _document_unstated_rules(spec: APISpec) -> None:
    paths: dict[str, dict[str, Any]] = spec._paths  # apispec keeps the operations there
    for (path, method), rules in UNSTATED_RULES.items():
        operation = paths.get(path, {}).get(method)
        if operation is None:
            continue
        lines = "\n".join(f"- {rule.text}" for rule in rules)
        operation["responses"]["422"] = {
            "description": "Invalid input: problem+json naming each field and why. Besides what the request "
                           "schema states, these rules (which JSON Schema cannot state) are answered 422:\n"
                           + lines,
            "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
