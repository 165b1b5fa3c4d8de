"""The public records of jobs bigger than one GPU (workers/accuracy/data/strategies.json) and their checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.test_validation_records import checker


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return checker.load_records(checker.STRATEGIES_PATH)


def test_strategy_records_have_no_problems_and_their_stats_recompute(records: list[dict[str, Any]]) -> None:
    assert checker.check_records(records) == []
    assert checker.check_derivations(records) == []


def test_strategy_records_cover_sharding_adapters_checkpointing_and_several_machines(
        records: list[dict[str, Any]]) -> None:
    assert len(records) >= 25
    kinds = {r["strategy"]["data_parallel"] for r in records}
    adapters = {r["strategy"].get("adapter", {}).get("kind") for r in records} - {None}
    checkpointing = {r["strategy"]["checkpointing"] for r in records}
    assert {"plain", "zero3"} <= kinds
    assert adapters == {"lora", "qlora"}
    assert checkpointing == {"none", "selective", "full"}
    machines = [r for r in records if r["gpu_count"] > r["strategy"]["gpus_per_node"]]
    assert len(machines) >= 15
    assert any(r["measured"].get("fits") is False for r in records)
    assert {r["split"] for r in records} == {"fit", "holdout"}


def test_the_checker_names_a_bad_strategy(records: list[dict[str, Any]]) -> None:
    bad = copy.deepcopy(records[0])
    bad["strategy"]["data_parallel"] = "zero4"
    bad["strategy"]["adapter"] = {"kind": "lora", "rank": 0, "targets": ["q"]}
    problems = checker.check_record(bad)
    assert any("strategy.data_parallel" in p for p in problems)
    assert any("strategy.adapter" in p for p in problems)
