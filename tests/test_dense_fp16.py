"""validation/dense_fp16.py: fault 9 of issue 11 (fp16 dense layers on Volta), decided on the public runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("validation_dense_fp16", ROOT / "validation" / "dense_fp16.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_volta_and_ampere_fp16_runs_print_their_errors_per_generation(capsys: pytest.CaptureFixture[str]) -> None:
    script = _script()
    cases = script._cases()
    assert sum(1 for *_, gpu, _ in cases if gpu.startswith("v100")) >= 8  # DLE, Lambda and HF V100 runs
    assert script.main([]) == 0
    out = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + out)
    assert "volta" in out and "ampere" in out

