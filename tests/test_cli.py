"""The CLI's model, estimate and recommend commands: tables, JSON equal to the API's, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from service.cli import main
from tests.service_helpers import contract_check
from workers.render import fmt_bytes
from workers.sizing.presets.registry import preset_names, preset_stats

EXAMPLES = sorted(p for p in (Path(__file__).resolve().parent.parent / "examples").glob("*.json")
                  if p.name != "budget-review.json")
GPUS = ["--gpu", "gtx-1080-ti", "--gpu", "v100-16gb", "--gpu", "a100-80gb"]


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_spec(tmp_path: Path, spec: dict[str, Any], name: str = "spec.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(spec) if name.endswith(".json") else spec["__yaml__"], encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_model_prints_the_per_layer_table_with_totals_for_every_example(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "model", str(example))
    assert code == 0, err
    assert "total" in out and "activation memory share" in out and "█" in out


@pytest.mark.parametrize("preset", preset_names())
def test_model_json_totals_equal_the_preset_statistics(preset: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "model", preset, "--json")
    stats = preset_stats(preset)
    doc = json.loads(out)
    assert code == 0
    assert (doc["neurons"], doc["parameters"], doc["multiply_adds"]) == (
        stats.neurons, stats.parameters, stats.multiply_adds)
    assert set(doc["layers"][0]) >= {"name", "type", "output_shape", "neurons", "parameters", "multiply_adds"}
    assert sum(layer["parameters"] for layer in doc["layers"]) == stats.parameters


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_estimate_on_three_gpus_prints_every_section_and_json_matches_the_contract(
        example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", str(example), *GPUS)
    assert code == 0, err
    assert "GPU memory per GPU" in out and "Per GPU" in out and "a100-80gb" in out
    code, out, _ = run_cli(capsys, "estimate", str(example), *GPUS, "--json")
    doc = json.loads(out)
    assert code == 0
    assert contract_check().contract_requirements(doc) == []
    assert [row["gpu"] for row in doc["per_gpu"]] == ["gtx-1080-ti", "v100-16gb", "a100-80gb"]


def test_an_estimate_without_samples_says_so_rather_than_zero_iterations(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--gpu", "t4", "--batch", "32")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "no samples given (dataset.samples), so no run length" in flat and "0 iterations per epoch" not in flat
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--gpu", "t4", "--samples", "6400", "--batch", "32")
    assert code == 0, err
    assert "200 iterations per epoch" in " ".join(out.split())


def test_a_gpu_whose_step_differs_from_the_headline_is_named_under_the_table(
        capsys: pytest.CaptureFixture[str]) -> None:
    # BERT-base at sequence 512: on a K80 attention keeps its 512 x 512 scores (no fused kernel before
    # Maxwell), far more than the headline's current card; on an A100 the two agree.
    args = ("estimate", "bert-base", "--batch", "32", "--seq", "512", "--gpu", "k80")
    _, out, _ = run_cli(capsys, *args, "--json")
    doc = json.loads(out)
    [row] = doc["per_gpu"]
    assert row["gpu_memory_bytes"] > 1.5 * doc["gpu_memory_bytes"]
    code, out, err = run_cli(capsys, *args)
    assert code == 0, err
    flat = " ".join(out.split())
    assert "memory: each row is that GPU's own step" in flat
    assert f"k80 {fmt_bytes(row['gpu_memory_bytes'])}" in flat
    code, out, err = run_cli(capsys, "estimate", "bert-base", "--batch", "32", "--seq", "512", "--gpu", "a100-80gb")
    assert code == 0, err
    assert "memory: each row" not in out


def test_estimate_json_is_exactly_what_the_http_api_returns(
        embedded_client: FlaskClient, capsys: pytest.CaptureFixture[str]) -> None:
    example = EXAMPLES[0]
    code, out, _ = run_cli(capsys, "estimate", str(example), "--gpu", "t4", "--gpu-count", "2", "--json")
    body = {**json.loads(example.read_text()), "gpus": ["t4"], "gpu_count": 2}
    answer = embedded_client.post("/v1/estimate", json=body)
    assert code == 0 and answer.status_code == 200
    assert json.loads(out) == answer.get_json()


def test_recommend_json_is_a_contract_result_with_ranked_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "recommend", str(EXAMPLES[0]), "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert contract_check().contract_result(doc) == []
    assert [o["rank"] for o in doc["options"]] == list(range(1, len(doc["options"]) + 1))
    assert doc["catalog"]["version"] and doc["catalog"]["prices_as_of"]


def test_human_units_in_a_yaml_spec_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    yaml_text = ("model: {preset: resnet18}\ntraining: {batch_size: 32}\n"
                 "dataset: {samples: 1.28M, bytes: 150GB}\nconstraints: {budget_usd: $500, deadline_hours: 2d}\n")
    path = write_spec(tmp_path, {"__yaml__": yaml_text}, "spec.yaml")
    code, out, err = run_cli(capsys, "estimate", path, "--json")
    doc = json.loads(out)
    assert code == 0, err
    assert doc["storage_bytes"] == {"min": 3 * 150 * 10**9, "max": 4 * 150 * 10**9}
    assert doc["iterations_per_epoch"] == -(-1_280_000 // 32)


def test_a_sequence_length_flag_takes_a_context_as_people_say_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", "gpt2", "--batch", "2", "--seq", "1k", "--json")
    assert code == 0, err
    _, plain, _ = run_cli(capsys, "estimate", "gpt2", "--batch", "2", "--seq", "1024", "--json")
    _, half, _ = run_cli(capsys, "estimate", "gpt2", "--batch", "2", "--seq", "512", "--json")
    assert json.loads(out)["gpu_memory_bytes"] == json.loads(plain)["gpu_memory_bytes"]
    assert json.loads(half)["gpu_memory_bytes"] < json.loads(plain)["gpu_memory_bytes"]
    code, _, err = run_cli(capsys, "estimate", "gpt2", "--batch", "2", "--seq", "2q")
    assert code == 2 and "training.sequence_length" in err


@pytest.mark.parametrize(("spec", "needle"), [
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 0}}, "training.batch_size"),
    ({"model": {"preset": "resnt50"}, "training": {"batch_size": 8}}, "resnet50"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "epochs": 0.5}}, "training.epochs"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 8}, "dataset": {"bytes": -1}}, "dataset.bytes"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "learning_rate": 1e308}},
     "training.learning_rate"),
    ({"model": {"preset": "resnet50", "stats": {"neurons": 1, "parameters": 1, "multiply_adds": 1}},
      "training": {"batch_size": 8}}, "exactly one of"),
    ({"model": {"layers": [{"type": "conv2d", "out_channels": 8, "kernel": 3}, {"type": "dense", "units": 10}],
                "input_shape": [3, 32, 32]}, "training": {"batch_size": 8}}, "model.layers[1]"),
    ({"model": {"layers": [{"type": "convolution", "out_channels": 8}], "input_shape": [3, 32, 32]},
      "training": {"batch_size": 8}}, "model.layers[0].type"),
    ({"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "profile": {"gpu": "gtx-9999",
                                                                                  "iteration_ms": 10}}},
     "training.profile.gpu"),
])
def test_bad_input_is_one_line_naming_the_field_with_exit_code_2(
        spec: dict[str, Any], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "estimate", write_spec(tmp_path, spec))
    assert code == 2
    assert out == ""
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_nan_in_a_json_spec_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nan.json"
    path.write_text('{"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "epochs": NaN}}')
    code, _, err = run_cli(capsys, "estimate", str(path))
    assert code == 2 and "training.epochs" in err


def test_an_unknown_gpu_lists_the_valid_slugs(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "estimate", str(EXAMPLES[0]), "--gpu", "gtx-1080-tii")
    assert code == 2
    assert "gtx-1080-ti" in err and "a100-80gb" in err


def test_a_missing_or_malformed_spec_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "estimate", str(tmp_path / "nope.json"))
    assert code == 2 and "no such spec file" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run_cli(capsys, "recommend", str(bad))
    assert code == 2 and "not valid JSON" in err
