"""Multi-GPU speed-up at 8 and 16 GPUs against NVIDIA DeepLearningExamples' tables (data/scaling.json)."""

from __future__ import annotations

import pytest

from catalog.gpus import gpus_by_slug
from workers.accuracy.scaling import compare_scaling, load_scaling, summarise_scaling, timed_sequence_length
from workers.sizing.presets.registry import preset_stats
from workers.sizing.spec import Framework, Optimizer, Precision, Training
from workers.sizing.timing import estimate_iteration_ms


def test_scaling_records_carry_their_source_and_agree_with_their_own_throughputs() -> None:
    records = load_scaling()
    assert {r["gpu_count"] for r in records} == {8, 16}
    for r in records:
        assert r["source"].startswith("NVIDIA/DeepLearningExamples@") and r["quote"] and r["source_date"]
        m = r["measured"]
        # the table's speed-up is its throughput ratio, to the table's rounding
        assert m["samples_per_s"] / m["single_gpu_samples_per_s"] == pytest.approx(m["speedup"], rel=0.02), r["id"]


def test_speed_up_against_the_published_tables_prints_its_errors(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [compare_scaling(r, gpus_by_slug()) for r in load_scaling()]
    with capsys.disabled():
        print()
        for row in rows:
            print(f"  {row.id:30s} predicted {row.predicted:5.2f} measured {row.measured:5.2f} {row.error:+6.1%}"
                  f"  loss {row.implied_loss_ms:5.1f} ms vs exchange {row.exchange_ms:5.1f} ms")
        for name, (n, median, p90) in sorted(summarise_scaling(rows).items()):
            print(f"  {name:24s} n={n:2d} median |error| {median:6.1%} p90 {p90:6.1%}")
    # Must hold: the all-reduce model never predicts more than linear, nor less than what NVLink allows
    assert all(row.predicted <= row.gpu_count for row in rows)
    # where the core misses by more than 10%, the measured loss per iteration exceeds the whole
    # gradient exchange the links allow: the miss is not the exchange (README, "Multi-GPU")
    for row in rows:
        if abs(row.error) > 0.10:
            assert row.implied_loss_ms > row.exchange_ms, row.id


def test_validate_prints_the_speed_up_section_and_its_json(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from service.cli import main

    assert main(["validate", "--split", "holdout", "--json"]) == 0
    section = json.loads(capsys.readouterr().out)["scaling"]
    assert len(section["rows"]) == len(load_scaling())
    row = next(r for r in section["rows"] if r["id"] == "dle-tf-rn50-dgx2-fp32-16")
    assert row["gpu_count"] == 16 and row["error"] == pytest.approx(row["predicted"] / row["measured"] - 1)
    assert {s["group"] for s in section["summary"]} >= {"all", "8 GPUs", "16 GPUs"}
    assert main(["validate", "--split", "holdout"]) == 0
    assert "Multi-GPU speed-up against NVIDIA DeepLearningExamples" in capsys.readouterr().out


def test_binned_runs_are_timed_at_their_padded_length_and_print_their_one_gpu_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    # DLE's BERT phase 2 pads each batch to its bin's longest sample, not to 512 (the record's sources)
    gpus = gpus_by_slug()
    binned = [r for r in load_scaling() if "timed_sequence_length" in r]
    assert {r["id"] for r in binned} >= {"dle-pt-bert-pre512-v100-fp16-8", "dle-pt-bert-pre512-a100-fp16-8"}
    assert timed_sequence_length({"sequence_length": 128}) == 128 and timed_sequence_length({}) is None
    with capsys.disabled():
        print()
        for r in binned:
            assert 0 < r["timed_sequence_length"] < r["sequence_length"]
            assert "arXiv" in r["timed_sequence_length_source"]
            errors = []
            for seq in (r["sequence_length"], timed_sequence_length(r)):
                training = Training(batch_size=r["batch_size"], sequence_length=seq,
                                    precision=Precision(r["precision"]), optimizer=Optimizer(r["optimizer"]),
                                    framework=Framework(r["framework"]), update_interval=r["update_interval"],
                                    tf32_matmul=r.get("tf32_matmul"))  # as compare_scaling times them
                ms = estimate_iteration_ms(preset_stats(r["model"], sequence_length=seq), training, gpus[r["gpu"]])
                errors.append(r["batch_size"] * 1000.0 / ms.total_ms / r["measured"]["single_gpu_samples_per_s"] - 1)
            print(f"  {r['id']:32s} one GPU at {r['sequence_length']}: {errors[0]:+6.1%}"
                  f"  at {timed_sequence_length(r)}: {errors[1]:+6.1%}")
            assert errors[1] > errors[0]  # fewer tokens per step: faster
