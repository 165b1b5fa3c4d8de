"""The sizing core against its measurement records: every record predicted, errors reported, never failed."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from catalog.gpus import gpus_by_slug
from service.cli import main
from workers.accuracy.accuracy import (
    METRICS,
    Row,
    compare_all,
    compare_record,
    compared_memory_bytes,
    largest_fitting_batch,
    load_measurements,
    percentile,
    predicted_memory,
    summarise,
)
from workers.accuracy.jobs import record_job, record_model
from workers.accuracy.sharded import sharded_run, sharded_samples_per_s
from workers.accuracy.strategies import compare_strategies, sharded_memory_records
from workers.sizing.overheads import CUDA_CONTEXT_BYTES
from workers.sizing.step_walk import Shards, walk_step
from workers.sizing.throughput import effective_precision

GPUS = gpus_by_slug()
RECORDS = load_measurements()


def _record(record_id: str) -> dict[str, Any]:
    return next(dict(r) for r in RECORDS if r["id"] == record_id)


def test_every_record_is_predicted_with_a_finite_error_and_the_summary_is_reported(
        capsys: pytest.CaptureFixture[str]) -> None:
    rows = compare_all(RECORDS, GPUS)
    assert {row.id for row in rows} == {r["id"] for r in RECORDS}
    assert all(math.isfinite(row.error) and math.isfinite(row.predicted) and row.predicted >= 0 for row in rows)
    summaries = summarise(rows)
    for metric in ("memory", "throughput"):
        for split in ("fit", "holdout", "all"):
            found = [s for s in summaries if s.metric == metric and s.split == split]
            assert len(found) == 1 and found[0].count > 0
            assert 0 <= found[0].median_abs_error <= found[0].p90_abs_error
    for s in summaries:  # reported, never asserted against a target: accuracy does not fail the suite
        print(f"{s.metric:10s} {s.split:7s} n={s.count:3d} median {s.median_abs_error:6.1%} "
              f"p90 {s.p90_abs_error:6.1%}" + ("" if s.agreement is None else f" agreement {s.agreement:.0%}"))
    assert "throughput" in capsys.readouterr().out


def test_each_measured_figure_gets_its_own_row() -> None:
    record = _record("hf-bertl-v100-bs4-fp32")  # a peak and a throughput
    assert [row.metric for row in compare_record(record, GPUS)] == ["memory", "throughput", "runs"]
    assert [row.metric for row in compare_record(_record("gbert-base-s128"), GPUS)] == ["max_batch"]


def test_percentile_interpolates_between_sorted_values() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == pytest.approx(2.5)
    assert percentile([float(v) for v in range(1, 11)], 90) == pytest.approx(9.1)
    assert percentile([7.0], 90) == 7.0
    assert math.isnan(percentile([], 50))


def test_memory_kinds_compare_like_with_like() -> None:
    case, gpu = record_job(_record("hf-bertl-v100-bs4-fp32")), GPUS["v100-16gb"]
    memory = predicted_memory(case, gpu)
    assert compared_memory_bytes(memory, kind="nvidia-smi", gpu=gpu) == memory.total_bytes
    assert compared_memory_bytes(memory, kind="unknown", gpu=gpu) == memory.total_bytes
    assert compared_memory_bytes(memory, kind="max_memory_reserved", gpu=gpu) == (
        memory.total_bytes - CUDA_CONTEXT_BYTES["volta"])
    assert compared_memory_bytes(memory, kind="max_memory_allocated", gpu=gpu) == (
        memory.total_bytes - memory.framework_reserve_bytes)


def test_a_memory_row_scores_the_relative_error_of_the_compared_figure() -> None:
    record = _record("hf-bertl-v100-bs4-fp32")
    row = compare_record(record, GPUS)[0]
    expected = compared_memory_bytes(predicted_memory(record_job(record), GPUS["v100-16gb"]), kind="nvidia-smi",
                                     gpu=GPUS["v100-16gb"])
    assert row.predicted == expected
    assert row.error == pytest.approx((expected - record["measured"]["peak_memory_bytes"])
                                      / record["measured"]["peak_memory_bytes"])


def test_largest_batch_agrees_only_when_it_fits_and_the_next_does_not() -> None:
    record = _record("gbert-base-s512")
    case, gpu = record_job(record), GPUS[record["gpu"]]
    best = largest_fitting_batch(case, gpu)
    assert best >= 1
    assert predicted_memory(case, gpu, batch_size=best).total_bytes <= gpu.memory_bytes
    assert predicted_memory(case, gpu, batch_size=best + 1).total_bytes > gpu.memory_bytes
    exact = compare_record({**record, "measured": {"max_batch_size": best}}, GPUS)[0]
    assert exact.agrees and exact.error == 0.0
    smaller = compare_record({**record, "measured": {"max_batch_size": max(best // 2, 1)}}, GPUS)[0]
    assert best == 1 or not smaller.agrees  # the prediction fits the next batch too
    none_fit = compare_record({**record, "measured": {"max_batch_size": 0}}, GPUS)[0]
    assert not none_fit.agrees and none_fit.error == 1.0  # batch 1 fits in the prediction


def test_a_step_time_is_compared_as_samples_per_second_of_the_whole_job() -> None:
    record = _record("jcj-resnet50-1080")
    row = next(r for r in compare_record(record, GPUS) if r.metric == "throughput")
    assert row.measured == pytest.approx(16 * 1000.0 / record["measured"]["iteration_ms"])


def test_fully_sharded_runs_split_the_model_state_over_the_gpus() -> None:
    case = record_job(_record("titan-llama8b-h100-fsdp8"))
    assert case.fully_sharded and case.gpu_count == 8
    gpu = GPUS["h100-sxm"]
    sharded = predicted_memory(case, gpu)
    whole = predicted_memory(replace(case, fully_sharded=False, gpu_count=1), gpu)
    assert sharded.total_bytes < whole.total_bytes
    # every moment of the step walk: the model state splits eight ways, what the layers keep does not
    job, precision = case.job, effective_precision(case.job.training.precision, gpu)
    full = walk_step(job.model, job.training, precision=precision)
    split = walk_step(job.model, job.training, precision=precision, gpu_count=8, shards=Shards(8, 8, 8))
    for one, eight in zip(full, split, strict=True):
        assert eight.activations == one.activations
        assert eight.parameters == pytest.approx(one.parameters / 8, abs=len(job.model.layers) + 1)
        assert eight.optimizer_state == pytest.approx(one.optimizer_state / 8, abs=2)


def test_sharded_runs_are_compared_on_the_strategy_path_with_the_checkpointing_they_ran() -> None:
    """torchtitan's op-level selective checkpointing keeps far more than full checkpointing; the plain
    table's memory row is the strategy table's, and its throughput is the strategy core's."""
    record = _record("titan-llama8b-h100-fsdp8")
    case = record_job(record)
    assert case.checkpointing == "selective_ops"
    gpu = GPUS["h100-sxm"]
    selective = predicted_memory(case, gpu).activations_bytes
    full = predicted_memory(replace(case, checkpointing="full"), gpu).activations_bytes
    assert selective > 1.5 * full  # the logits (about 12 GiB) are kept either way
    plain_row = next(r for r in compare_record(record, GPUS) if r.metric == "memory")
    strategy_row = next(r for r in compare_strategies(sharded_memory_records([record]), GPUS) if r.metric == "memory")
    assert plain_row.predicted == strategy_row.predicted
    run = sharded_run(case)
    assert run is not None
    throughput = next(r for r in compare_record(record, GPUS) if r.metric == "throughput")
    assert throughput.predicted == sharded_samples_per_s(run, gpu)
    assert "ZeRO-3 over 8 GPUs" in throughput.note
    # a record that says nothing: recompute means full checkpointing, none without it
    assert record_job({**record, "checkpointing": None}).checkpointing == "full"
    assert record_job({**record, "checkpointing": None, "recompute": False}).checkpointing == "none"
    assert sharded_run(replace(case, gpu_count=1)) is None


def test_models_rebuilt_from_record_stats_match_the_records() -> None:
    for record in RECORDS:
        if "stats" not in record:
            continue
        model, note = record_model(record)
        share = model.parameters / record["stats"]["parameters"]
        assert 0.95 <= share <= 1.12, (record["id"], share, note)  # llama3: full K/V projections, +10%
        if record["model"].startswith("dcgan-mnist"):
            assert model.multiply_adds == record["stats"]["multiply_adds"]
            assert model.neurons == record["stats"]["neurons"]


def test_flash_attention_runs_keep_no_attention_matrix() -> None:
    flash, _ = record_model(_record("mpt-125m-a100-80"))
    naive, _ = record_model(_record("llmfs-gpt163m-a100-fp32"))
    seq = 2048
    attention = [layer for layer in flash.layers if layer.kind.value == "attention"]
    assert attention and all(layer.saved_values < 12 * seq * seq for layer in attention)
    assert any(layer.saved_values >= 12 * 1024 * 1024 for layer in naive.layers if layer.kind.value == "attention")


def test_summaries_are_per_metric_and_split() -> None:
    def row(split: str, error: float) -> Row:
        return Row(id="x", model="m", gpu="t4", gpu_count=1, batch_size=1, precision="fp32", split=split,
                   metric="throughput", unit="samples/s", predicted=1 + error, measured=1.0, error=error)

    rows = [row("fit", 0.1), row("fit", -0.3), row("holdout", 0.2)]
    by_split = {s.split: s for s in summarise(rows)}
    assert set(by_split) == {"fit", "holdout", "all"} and all(s.metric == "throughput" for s in by_split.values())
    assert by_split["fit"].count == 2 and by_split["fit"].median_abs_error == pytest.approx(0.2)
    assert by_split["fit"].median_error == pytest.approx(-0.1)
    assert by_split["all"].count == 3 and by_split["all"].median_abs_error == pytest.approx(0.2)
    assert by_split["holdout"].agreement is None
    assert METRICS[0] == "memory"


def test_validate_command_prints_every_case_and_the_summary_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--split", "holdout", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["rows"] and {row["split"] for row in out["rows"]} == {"holdout"}
    assert {row["id"] for row in out["rows"]} == {r["id"] for r in RECORDS if r["split"] == "holdout"}
    assert {(s["metric"], s["split"]) for s in out["summary"]} >= {("memory", "holdout"), ("throughput", "holdout")}


def test_validate_command_prints_a_table_and_exits_zero_whatever_the_errors(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--split", "fit"]) == 0
    out = capsys.readouterr().out
    assert "dle-rn50-a100-tf32-1" in out and "p90" in out and "holdout" not in out.split("Errors per metric")[1]


def test_validate_command_names_an_unreadable_measurement_file(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "m.json"
    bad.write_text("[{]", encoding="utf-8")
    assert main(["validate", "--measurements", str(bad)]) == 2
    assert "--measurements" in capsys.readouterr().err
