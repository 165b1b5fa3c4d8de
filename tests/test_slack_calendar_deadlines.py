"""A deadline said as a day of the calendar: a month, a date, the end of the month, quarter or year (UTC, from the
clock when the command is read). "pretrain llama 3 8b on 1t tokens by end of march" was three unknown words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.test_slack_phrases import parse
from workers.slack import deadlines
from workers.slack.grammar import CommandError

MONDAY_NOON = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _monday(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deadlines, "clock", lambda: MONDAY_NOON)


@pytest.mark.parametrize("said", ["by end of march", "by the end of march", "by march", "by march 31",
                                  "by 31 march", "by march 31st", "by mar 31", "before 2027-03-31"])
def test_the_end_of_march_is_next_years_whatever_the_words(said: str) -> None:
    command = parse(f"pretrain llama 3 8b on 1t tokens {said}")
    # 2027-03-31 23:59:59 UTC is 114 days, 11 h 59 min 59 s after Monday 2026-12-07 noon: 2,748 h
    assert command.spec["constraints"]["deadline_hours"] == 2748.0
    assert "deadline=2748h (until the end of Wednesday 2027-03-31, UTC)" in command.defaults_used


@pytest.mark.parametrize(("said", "hours"), [
    ("by end of month", 588.0), ("by eom", 588.0), ("by the end of the quarter", 588.0), ("by eoy", 588.0),
    ("by december 20", 324.0), ("by 2026-12-20", 324.0), ("by jan", 1332.0), ("by feb 1", 1356.0),
])
def test_month_quarter_and_year_ends_and_dates_this_month(said: str, hours: float) -> None:
    assert parse(f"bert base on 100k samples {said}").spec["constraints"]["deadline_hours"] == hours


def test_what_follows_the_date_is_read_as_before() -> None:
    command = parse("resnet50 on imagenet by march 31 on aws with 8 gpus")
    assert command.spec["constraints"]["providers"] == ["aws"]
    assert command.spec["constraints"]["max_gpus"] == 8


@pytest.mark.parametrize("said", ["bert base by february 30", "bert base by 2026-13-01", "bert base by 2026-12-01",
                                  "bert base march"])
def test_no_such_day_a_past_date_or_a_month_without_by_is_no_deadline(said: str) -> None:
    with pytest.raises(CommandError):
        parse(said)
