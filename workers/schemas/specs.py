"""Turn a raw spec (HTTP body, CLI file, Slack words) into the core's JobSpec, through one schema."""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from marshmallow import Schema, ValidationError

from workers.modelimport.models import resolve_model
from workers.schemas import JobSpecSchema
from workers.sizing.errors import SizingError
from workers.sizing.layers.attention import Attention
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.preference import PAIRED, SEQUENCES_PER_PAIR, with_preference_warning
from workers.sizing.sequence_advice import with_context_warning, with_target_warning
from workers.sizing.spec import (
    Constraints,
    Dataset,
    Framework,
    GradientClipping,
    JobSpec,
    Objective,
    OnPremAssumptions,
    Optimizer,
    OptimizerImplementation,
    OwnedGpus,
    Precision,
    Profile,
    Training,
)
from workers.sizing.stats import ModelStats
from workers.sizing.strategies.types import Adapter, AdapterKind, Checkpointing, DataParallel, Offload, Parallelism


def flatten_errors(messages: Any, prefix: str = "") -> dict[str, list[str]]:
    """Flatten marshmallow's nested error dict into {"training.batch_size": ["..."]}."""
    if isinstance(messages, list):
        if all(isinstance(m, str) for m in messages):
            return {prefix or "body": list(messages)}
        out: dict[str, list[str]] = {}
        for i, m in enumerate(messages):
            out.update(flatten_errors(m, f"{prefix}[{i}]"))
        return out
    if isinstance(messages, dict):
        out = {}
        for key, value in messages.items():
            if key == "_schema":
                path = prefix or "body"
            elif isinstance(key, int):
                path = f"{prefix}[{key}]"
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            for p, msgs in flatten_errors(value, path).items():
                out.setdefault(p, []).extend(msgs)
        return out
    return {prefix or "body": [str(messages)]}


_JOB_SPEC_SCHEMA = JobSpecSchema()  # one instance: building a schema (and its nested ones) costs ~1 ms


def validate_spec(raw: object, *, schema: Schema | None = None) -> dict[str, Any]:
    """Load a raw spec through the schema; raise ValidationError with flat field paths."""
    if not isinstance(raw, Mapping):
        raise ValidationError({"body": ["a job spec must be a JSON object"]})
    try:
        data: dict[str, Any] = (schema or _JOB_SPEC_SCHEMA).load(dict(raw))
    except ValidationError as exc:
        raise ValidationError(flatten_errors(exc.messages)) from None
    return data


def build_parallelism(data: Mapping[str, Any] | None) -> Parallelism:
    """Build the core's Parallelism from a loaded `training.parallelism` ("fsdp" is ZeRO-3's name)."""
    if not data:
        return Parallelism()
    adapter = data.get("adapter")
    offload = data.get("offload") or {}
    kind = "zero3" if data["data_parallel"] == "fsdp" else data["data_parallel"]
    return Parallelism(
        data_parallel=DataParallel(kind), tensor_parallel=data["tensor_parallel"],
        pipeline_stages=data["pipeline_stages"],
        offload=Offload(optimizer=offload.get("optimizer", False), parameters=offload.get("parameters", False)),
        adapter=Adapter(kind=AdapterKind(adapter["kind"]), rank=adapter["rank"], targets=tuple(adapter["targets"]),
                        double_quantization=adapter["double_quantization"]) if adapter else None,
        checkpointing=Checkpointing(data["checkpointing"]), allow_adapters=data["allow_adapters"],
    )


def build_job(data: Mapping[str, Any]) -> JobSpec:
    """Build the core's JobSpec from a loaded spec, resolving the model to statistics."""
    t, d, c = data["training"], data["dataset"], data["constraints"]
    model = dict(data["model"])
    if "onnx" in model and isinstance(model["onnx"], str):
        model["onnx"] = base64.b64decode(model["onnx"])
    profile, measured = t.get("profile"), t.get("measured_memory")
    training = Training(
        batch_size=t["batch_size"], epochs=t["epochs"], sequence_length=t.get("sequence_length"),
        precision=Precision(t["precision"]), optimizer=Optimizer(t["optimizer"]),
        optimizer_implementation=OptimizerImplementation(t.get("optimizer_implementation", "foreach")),
        gradient_clipping=GradientClipping(t.get("gradient_clipping", "none")),
        learning_rate=t.get("learning_rate"), update_interval=t["update_interval"],
        recompute=t["recompute"], framework=Framework(t["framework"]),
        eval_every_epochs=t["eval_every_epochs"],
        profile=Profile(gpu=(profile or {}).get("gpu", ""), iteration_ms=(profile or {}).get("iteration_ms", 0.0),
                        tensor_memory_bytes=(measured or {}).get("tensor_memory_bytes", 0),
                        batch_size=(measured or {}).get("batch_size", 0)) if profile or measured else None,
        parallelism=build_parallelism(t.get("parallelism")),
        loss=Loss(t.get("loss", "cross_entropy")), attention=Attention(t.get("attention", "auto")),
        checkpoint_every_hours=t.get("checkpoint_every_hours"),
        tf32_matmul=t.get("tf32_matmul"), mean_sequence_length=t.get("mean_sequence_length"),
        from_pretrained=t.get("from_pretrained"), ema=t.get("ema", False), preference=t.get("preference"),
    )
    if training.preference in PAIRED:  # the core sizes sequences, two a pair; the policy starts trained (preference.py)
        training = replace(training, batch_size=training.batch_size * SEQUENCES_PER_PAIR,
                           from_pretrained=True if training.from_pretrained is None else training.from_pretrained)
    target = t.get("target_length")
    resolved = resolve_model(model, sequence_length=training.sequence_length, batch_size=training.batch_size,
                             from_pretrained=training.from_pretrained, target_length=target)
    mean = training.mean_sequence_length
    timed = (resolve_model(model, sequence_length=mean, batch_size=training.batch_size,
                           from_pretrained=training.from_pretrained, target_length=target)
             if mean is not None and mean != training.sequence_length else None)
    resolved = with_target_warning(with_context_warning(resolved, model, t), model, t)
    samples = _samples(d, training, resolved)
    if training.preference in PAIRED:
        if resolved.sequence_length is None:
            raise SizingError("training.preference", f"needs a language model: {training.preference} tunes one on "
                                                     "pairs of token sequences, and this model reads none")
        resolved = with_preference_warning(resolved, training, pairs=t["batch_size"], samples=samples)
    return JobSpec(
        model=with_loss(resolved, training.loss),
        training=training,
        timed_model=with_loss(timed, training.loss) if timed is not None else None,
        dataset=Dataset(samples=samples, tokens=d.get("tokens", 0),
                        size_bytes=d["bytes"], in_memory=d["in_memory"],
                        preprocess_ms_per_sample=d["preprocess_ms_per_sample"],
                        loader_workers=d.get("loader_workers"), preprocess_serial=d.get("preprocess_serial", False),
                        location=(d["location"]["provider"], d["location"].get("region", ""))
                        if d.get("location") else None),
        constraints=Constraints(
            budget_usd=c.get("budget_usd"), max_co2e_kg=c.get("max_co2e_kg"), deadline_hours=c.get("deadline_hours"),
            providers=tuple(c["providers"]), regions=tuple(c["regions"]), pricing=tuple(c["pricing"]),
            max_gpus=c["max_gpus"], onprem=OnPremAssumptions(**c["onprem"]),
            owned_gpus=tuple(OwnedGpus(gpu=o["gpu"], count=o["count"]) for o in c.get("owned_gpus", ())),
            gpus=tuple(c.get("gpus", ())),
            spot_percentile=c.get("spot_percentile", 0.9),
        ),
        objective=Objective(data["objective"]),
        limit=data["limit"],
    )


def _samples(dataset: Mapping[str, Any], training: Training, model: ModelStats) -> int:
    """Return the spec's samples, or its tokens made samples of the training's tokens a sample."""
    tokens = dataset.get("tokens")
    if not tokens:  # a preference job's samples are pairs, of two sequences each
        return int(dataset["samples"]) * (SEQUENCES_PER_PAIR if training.preference in PAIRED else 1)
    per_sample = training.mean_sequence_length or model.sequence_length
    if not per_sample:
        raise SizingError("dataset.tokens", "this model reads no token sequences (no training.sequence_length); "
                                            "give dataset.samples")
    return math.ceil(int(tokens) / per_sample)


def load_job(raw: object, *, schema: Schema | None = None) -> tuple[dict[str, Any], JobSpec]:
    """Validate a raw spec and build its JobSpec; every user error comes out as a ValidationError."""
    data = validate_spec(raw, schema=schema)
    try:
        return data, build_job(data)
    except SizingError as exc:
        raise ValidationError({exc.field: [exc.reason]}) from None


def canonical_json(data: Mapping[str, Any]) -> str:
    """Serialise a loaded spec so that equal specs give equal strings (for job de-duplication).

    A mapping or list met again (the same object: a review's jobs share their loaded specs) is
    normalised once.
    """
    return json.dumps(_normalise(data, {}), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def spec_digest(data: Mapping[str, Any], *, catalog_version: str) -> str:
    """Return the sha256 that names a job: the canonical spec plus the catalog version."""
    payload = f"{canonical_json(data)}|catalog={catalog_version}|v1"
    return hashlib.sha256(payload.encode()).hexdigest()


def _normalise(value: Any, seen: dict[int, Any]) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)  # 7 and 7.0 name the same job
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, Mapping | list | tuple):
        found = seen.get(id(value))
        if found is None:  # the object stays alive through the call: its id is not reused
            found = seen[id(value)] = ({k: _normalise(v, seen) for k, v in value.items()}
                                       if isinstance(value, Mapping) else [_normalise(v, seen) for v in value])
        return found
    return value
