"""Tests for the public measurement records in validation/ and their checker."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CHECKER_PATH = Path(__file__).resolve().parents[1] / "validation" / "check_records.py"


def _load_checker() -> ModuleType:
    spec = importlib.util.spec_from_file_location("validation_check_records", CHECKER_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


checker = _load_checker()

GENERATION = {
    "titan-x-maxwell": "maxwell", "gtx-1080": "pascal", "gtx-1080-ti": "pascal", "titan-x-pascal": "pascal",
    "p100-16gb": "pascal", "v100-16gb": "volta", "v100-32gb": "volta", "titan-v": "volta",
    "rtx-2080-ti": "turing",
    "rtx-3090": "ampere", "a100-40gb": "ampere", "a100-80gb": "ampere", "rtx-4090": "ada",
    "h100-pcie": "hopper", "h100-sxm": "hopper",
}


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return checker.load_records()


def _family(model: str) -> str:
    if model.startswith(("resnet", "vgg", "alexnet")):
        return "cnn"
    if model.startswith("bert"):
        return "bert"
    if model.startswith(("mpt", "llama", "gpt")):
        return "decoder-llm"
    return model


def test_shipped_records_have_no_problems(records: list[dict[str, Any]]) -> None:
    assert checker.check_records(records) == []


def test_shipped_derived_stats_recompute_exactly(records: list[dict[str, Any]]) -> None:
    assert checker.check_derivations(records) == []


def test_records_meet_the_requested_coverage(records: list[dict[str, Any]]) -> None:
    memory = [r for r in records if {"peak_memory_bytes", "max_batch_size"} & r["measured"].keys()]
    speed = [r for r in records if {"throughput_samples_per_s", "iteration_ms"} & r["measured"].keys()]
    assert len(records) >= 50
    assert len(memory) >= 15
    assert len(speed) >= 25
    assert len({r["gpu"] for r in records}) >= 6


def test_explicit_peak_memory_records_span_models_gpus_and_kinds(records: list[dict[str, Any]]) -> None:
    peaks = [r for r in records if "peak_memory_bytes" in r["measured"]]
    assert len(peaks) >= 25
    assert len({r["gpu"] for r in peaks}) >= 5
    assert {"cnn", "bert", "decoder-llm"} <= {_family(r["model"]) for r in peaks}
    assert {"nvidia-smi", "max_memory_reserved"} <= {r["measured"]["memory_kind"] for r in peaks}
    assert {r["split"] for r in peaks} == {"fit", "holdout"}


def test_each_main_family_and_generation_is_in_both_splits(records: list[dict[str, Any]]) -> None:
    by_family: dict[str, Counter[str]] = {}
    by_generation: dict[str, Counter[str]] = {}
    for r in records:
        by_family.setdefault(_family(r["model"]), Counter())[r["split"]] += 1
        by_generation.setdefault(GENERATION[r["gpu"]], Counter())[r["split"]] += 1
    for name in ("cnn", "bert", "decoder-llm"):
        assert set(by_family[name]) == {"fit", "holdout"}, name
    for name, counts in by_generation.items():
        assert set(counts) == {"fit", "holdout"}, name


def test_unknown_gpu_slug_is_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(records[0])
    bad["gpu"] = "gtx-titan-z"
    assert any(".gpu: unknown slug" in p for p in checker.check_record(bad))


@pytest.mark.parametrize("value", [0, -3.5, float("nan"), float("inf"), "fast", True])
def test_bad_throughput_values_are_reported(records: list[dict[str, Any]], value: Any) -> None:
    bad = copy.deepcopy(next(r for r in records if "throughput_samples_per_s" in r["measured"]))
    bad["measured"]["throughput_samples_per_s"] = value
    assert any("throughput_samples_per_s" in p for p in checker.check_record(bad))


def test_missing_source_is_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(records[0])
    del bad["source"]
    assert any("missing fields" in p and "source" in p for p in checker.check_record(bad))


@pytest.mark.parametrize(("recompute", "value"), [(True, "attention_only"), (True, "none"), (False, "selective_ops")])
def test_a_checkpointing_that_is_unknown_or_contradicts_recompute_is_reported(
        records: list[dict[str, Any]], recompute: bool, value: str) -> None:
    good = copy.deepcopy(next(r for r in records if r.get("checkpointing") == "selective_ops"))
    assert checker.check_record(good) == []
    bad = {**good, "recompute": recompute, "checkpointing": value}
    assert any(".checkpointing:" in p for p in checker.check_record(bad))


def test_duplicate_ids_are_reported(records: list[dict[str, Any]]) -> None:
    assert any("duplicate id" in p for p in checker.check_records([records[0], copy.deepcopy(records[0])]))


def test_peak_memory_without_a_known_kind_is_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(next(r for r in records if "peak_memory_bytes" in r["measured"]))
    bad["measured"]["memory_kind"] = "eyeballed"
    assert any("memory_kind" in p for p in checker.check_record(bad))


def test_model_outside_presets_without_stats_is_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(next(r for r in records if r["model"].startswith("mpt-")))
    del bad["stats"]
    assert any(".stats:" in p for p in checker.check_record(bad))


def test_throughput_that_contradicts_step_time_is_reported(records: list[dict[str, Any]]) -> None:
    both = {"throughput_samples_per_s", "iteration_ms"}
    bad = copy.deepcopy(next(r for r in records if both <= r["measured"].keys()))
    bad["measured"]["iteration_ms"] *= 2
    assert any("disagrees" in p for p in checker.check_record(bad))


def test_tampered_derived_stats_are_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(next(r for r in records if r["model"].startswith("dcgan-mnist-")))
    bad["stats"]["parameters"] += 1
    assert any("stats.parameters" in p for p in checker.check_derivations([bad]))


def test_tampered_llmfs_gpt_stats_are_reported(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(next(r for r in records if r["model"] == "gpt-llmfs-163m"))
    bad["stats"]["multiply_adds"] -= 1
    assert any("stats.multiply_adds" in p for p in checker.check_derivations([bad]))


def test_main_exits_nonzero_on_a_bad_file(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(records[:2])
    bad[1]["batch_size"] = 0
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    assert checker.main([str(path)]) == 1
    assert checker.main([]) == 0
