"""The CLI on the inputs people actually give it: an ONNX file as SPEC, base64 in a spec, YAML 1.2 floats,
empty files, flags out of range; and a property test driving it with generated arguments and files:
exit 0, 1 or 2, one-line errors, never a traceback."""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from catalog.gpus import load_gpus
from service.cli import main
from tests.onnx_builders import mlp_onnx


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own refusals
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_an_onnx_file_given_as_spec_prints_its_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.onnx"
    path.write_bytes(mlp_onnx(gemm=True))
    code, out, err = run_cli(capsys, "model", str(path), "--json")
    assert code == 0, err
    assert json.loads(out)["parameters"] > 0


def test_a_spec_with_base64_onnx_is_read_like_the_api_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = mlp_onnx(gemm=True)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"onnx": base64.b64encode(data).decode()},
                                "training": {"batch_size": 4}}))
    by_path = tmp_path / "by-path.json"
    (tmp_path / "m.onnx").write_bytes(data)
    by_path.write_text(json.dumps({"model": {"onnx": "m.onnx"}, "training": {"batch_size": 4}}))
    first, second = (run_cli(capsys, "model", str(p), "--json") for p in (spec, by_path))
    assert first[0] == 0 and second[0] == 0, (first[2], second[2])
    assert json.loads(first[1]) == json.loads(second[1])


def test_a_missing_onnx_path_names_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"onnx": "nowhere.onnx"}, "training": {"batch_size": 4}}))
    code, _, err = run_cli(capsys, "model", str(spec))
    assert code == 2 and err.startswith("gpugauge: model.onnx: no such file")


def test_yaml_reads_exponent_floats_as_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("model: {preset: bert-base}\ntraining: {batch_size: 8, sequence_length: 128, "
                    "optimizer: adamw, learning_rate: 2e-5}\n")
    code, out, err = run_cli(capsys, "estimate", str(spec), "--json")
    assert code == 0, err
    assert json.loads(out)["gpu_memory_bytes"] > 0


@pytest.mark.parametrize("name", ["empty.json", "empty.yaml"])
def test_an_empty_file_says_it_is_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    (tmp_path / name).write_text("\n")
    code, _, err = run_cli(capsys, "estimate", str(tmp_path / name))
    assert code == 2 and "the file is empty" in err and "Expecting value" not in err


def test_a_gpu_count_out_of_range_names_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 8}}))
    code, _, err = run_cli(capsys, "estimate", str(spec), "--gpu-count", "0")
    assert code == 2 and err.startswith("gpugauge: --gpu-count: ") and "gpu_count" not in err


def test_an_unknown_gpu_lists_whole_slugs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 8}}))
    code, _, err = run_cli(capsys, "estimate", str(spec), "--gpu", "nope")
    valid = err.split("valid: ", 1)[1].split(";")[0].strip().split(", ")
    assert code == 2 and "gtx-1080-ti" in valid
    assert set(valid) == {gpu.slug for gpu in load_gpus()}  # whole slugs, no fragment of one


# ------------------------------------------------------------------------------------------------
# The property: whatever the arguments and files, exit 0, 1 or 2 and no traceback.
# ------------------------------------------------------------------------------------------------
SPEC_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False) |
    st.sampled_from(["resnet50", "bert-base", "fp16-mixed", "adamw", "150GB", "2d", "$500", "x.onnx", "",
                     "aGVsbG8=", "v100-16gb", "-1", "1e400"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["preset", "stats", "layers", "onnx", "input_shape", "batch_size", "epochs",
                         "sequence_length", "precision", "optimizer", "learning_rate", "profile", "gpu",
                         "iteration_ms", "samples", "bytes", "type", "out_channels", "kernel"]), children,
        max_size=4),
    max_leaves=12)
SPECS = st.fixed_dictionaries({}, optional={
    "model": SPEC_VALUES, "training": SPEC_VALUES, "dataset": SPEC_VALUES, "constraints": SPEC_VALUES,
    "objective": SPEC_VALUES, "limit": SPEC_VALUES})
FILE_BODIES = st.one_of(
    SPECS.map(lambda s: ("json", json.dumps(s).encode())),
    SPECS.map(lambda s: ("yaml", json.dumps(s).encode())),  # JSON is YAML
    st.text(max_size=80).map(lambda t: ("yaml", t.encode())),
    st.binary(max_size=64).map(lambda b: ("json", b)),
    st.binary(max_size=64).map(lambda b: ("onnx", b)),
    st.just(("onnx", mlp_onnx(gemm=False))),
    st.just(("json", b"")),
)
FLAG_VALUES = st.sampled_from(["0", "-1", "1", "3", "nope", "v100-16gb", "t4", "16GB", "x", "", "1e9", "$3"])
FLAGS = st.lists(st.tuples(st.sampled_from(["--gpu", "--gpu-count", "--json", "--sequence-length",
                                            "--provider", "--region", "--min-memory", "--max-price",
                                            "--pricing", "--min-gpu-memory", "--format"]), FLAG_VALUES),
                 max_size=3)
COMMANDS = st.sampled_from([["model"], ["estimate"], ["recommend"], ["report"], ["catalog", "gpus"],
                            ["catalog", "instances"], ["catalog", "info"]])


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(command=COMMANDS, body=FILE_BODIES, flags=FLAGS, spec_is_file=st.booleans())
def test_any_arguments_and_files_exit_0_1_or_2_without_a_traceback(
        capsys: pytest.CaptureFixture[str], command: list[str], body: tuple[str, bytes],
        flags: list[tuple[str, str]], spec_is_file: bool) -> None:
    suffix, data = body
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"spec.{suffix}"
        path.write_bytes(data)
        spec = [str(path) if spec_is_file else "no-such-file.json"] if command[0] != "catalog" else []
        argv = [*command, *spec, *(part for flag, value in flags for part in
                                   ((flag,) if flag == "--json" else (flag, value)))]
        code, _, err = run_cli(capsys, *argv)
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and lines[-1].startswith("gpugauge"), (argv, err)
