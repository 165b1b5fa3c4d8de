"""An LLM-sized job sized in fp32 (the spec's default) says what bf16-mixed would need (`fp32-large-model`)."""

from __future__ import annotations

import re
from typing import Any

from catalog.gpus import gpus_by_slug
from workers.schemas.specs import load_job
from workers.sizing.advice import LARGE_MODEL_PARAMETERS
from workers.sizing.estimate import estimate_requirements

KNOWN = gpus_by_slug()
GIB = 2**30


def _requirements(training: dict[str, Any], preset: str = "mistral-7b") -> Any:
    _, job = load_job({"model": {"preset": preset}, "training": {"sequence_length": 2048, **training}})
    return job, estimate_requirements(job, known_gpus=KNOWN)


def _said(requirements: Any) -> list[str]:
    return [w.message for w in requirements.warnings if w.code == "fp32-large-model"]


def test_a_qlora_fine_tune_without_a_precision_is_told_its_bf16_figure() -> None:
    qlora = {"batch_size": 4, "parallelism": {"adapter": {"kind": "qlora", "rank": 16}}}
    job, fp32 = _requirements(qlora)
    assert job.model.parameters + job.model.frozen_parameters >= LARGE_MODEL_PARAMETERS
    [message] = _said(fp32)
    _, bf16 = _requirements({**qlora, "precision": "bf16-mixed"})
    figures = [float(x) for x in re.findall(r"([0-9.]+) GiB per GPU", message)]
    # the two figures are the two estimates' own, and bf16 needs far less here (activations in 16 bits)
    assert figures == [round(fp32.gpu_memory_bytes / GIB, 1), round(bf16.gpu_memory_bytes / GIB, 1)]
    assert bf16.gpu_memory_bytes < 0.7 * fp32.gpu_memory_bytes and "(more:" not in message
    assert not _said(bf16)


def test_where_the_optimizer_step_peaks_bf16_is_said_to_need_more() -> None:
    _, fp32 = _requirements({"batch_size": 1}, preset="llama-7b")
    _, bf16 = _requirements({"batch_size": 1, "precision": "bf16-mixed"}, preset="llama-7b")
    assert bf16.gpu_memory_bytes > fp32.gpu_memory_bytes and bf16.peak_phase == "optimizer_step"
    [message] = _said(fp32)
    assert "(more: its fp32 master weights" in message


def test_a_model_under_a_billion_parameters_in_fp32_is_not_told() -> None:
    _, bert = _requirements({"batch_size": 8, "sequence_length": 128}, preset="bert-large")
    assert not _said(bert)
