"""The derive scripts' shared tail: write the table, or check that the committed one is current."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.ranking.data.derived import write_or_check


def test_check_passes_on_what_was_written_and_fails_otherwise(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    out, raw = tmp_path / "table.json", tmp_path / "raw.csv"
    assert write_or_check(out, "{}\n", source=raw, check=True) == 1  # nothing written yet
    assert write_or_check(out, "{}\n", source=raw, check=False) == 0
    assert out.read_text(encoding="utf-8") == "{}\n"
    assert write_or_check(out, "{}\n", source=raw, check=True) == 0
    assert write_or_check(out, '{"a": 1}\n', source=raw, check=True) == 1
    assert "table.json is not what" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "{}\n"  # a check never writes
