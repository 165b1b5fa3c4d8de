"""`training.from_pretrained`: a job that trains from scratch is never offered adapters; contradictions are 422s."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from catalog.loader import load_catalog
from workers.schemas.specs import load_job, validate_spec
from workers.sizing.estimate import estimate_on_gpus

LLAMA_FULL = {"model": {"preset": "llama-7b"}, "dataset": {"samples": 10000},
              "training": {"batch_size": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                           "optimizer": "adamw"}}


def _kinds(training_extra: dict[str, object]) -> dict[str, str]:
    spec = {**LLAMA_FULL, "training": {**LLAMA_FULL["training"], **training_extra}}
    _, job = load_job(spec)
    plan = estimate_on_gpus(job, load_catalog().gpus, slugs=["a100-80gb"]).mitigations
    return {m.kind: m.description for m in plan}


def test_pre_training_from_scratch_gets_no_adapters_but_keeps_the_other_steps() -> None:
    unsaid, scratch = _kinds({}), _kinds({"from_pretrained": False})
    assert "adapters" in unsaid and "pretrained base" in unsaid["adapters"]  # the caveat says when it applies
    assert "adapters" not in scratch and "adapters" not in scratch.get("change-network", "")
    assert {"checkpointing", "sharding", "offload"} <= set(scratch)


def test_a_fine_tune_says_adapters_change_the_method_without_the_pre_training_caveat() -> None:
    pretrained = _kinds({"from_pretrained": True})
    assert "only the adapters train." in pretrained["adapters"]
    assert "from_pretrained" not in pretrained["adapters"]


@pytest.mark.parametrize("parallelism", [{"adapter": {"kind": "lora"}}, {"allow_adapters": True}])
def test_adapters_with_from_pretrained_false_are_refused_naming_the_field(parallelism: dict[str, object]) -> None:
    spec = {**LLAMA_FULL, "training": {**LLAMA_FULL["training"], "from_pretrained": False,
                                       "parallelism": parallelism}}
    with pytest.raises(ValidationError) as caught:
        validate_spec(spec)
    messages = caught.value.messages
    assert isinstance(messages, dict) and "training.from_pretrained" in messages
    assert "from scratch" in " ".join(messages["training.from_pretrained"])


def test_from_pretrained_must_be_a_boolean_or_null() -> None:
    with pytest.raises(ValidationError) as caught:
        validate_spec({**LLAMA_FULL, "training": {**LLAMA_FULL["training"], "from_pretrained": "maybe"}})
    assert "training.from_pretrained" in caught.value.messages
    loaded = validate_spec({**LLAMA_FULL, "training": {**LLAMA_FULL["training"], "from_pretrained": None}})
    assert loaded["training"]["from_pretrained"] is None


def test_the_document_lists_the_from_scratch_rule_it_cannot_state() -> None:
    from service.openapi_rules import FROM_SCRATCH_ADAPTERS, UNSTATED_RULES

    assert FROM_SCRATCH_ADAPTERS in UNSTATED_RULES[("/v1/estimate", "post")]
    assert FROM_SCRATCH_ADAPTERS in UNSTATED_RULES[("/v1/reports", "post")]
    spec = {**LLAMA_FULL, "training": {**LLAMA_FULL["training"], "from_pretrained": False,
                                       "parallelism": {"allow_adapters": True}}}
    with pytest.raises(ValidationError) as caught:
        validate_spec(spec)
    for path, reasons in caught.value.messages.items():
        assert FROM_SCRATCH_ADAPTERS.names(f"jobs[0].spec.{path}", reasons[0])
    assert not FROM_SCRATCH_ADAPTERS.names("training.from_pretrained", "Not a valid boolean.")
