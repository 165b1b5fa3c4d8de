"""Durations in the answers' words: hours a person reads at a glance, whatever their size."""

from __future__ import annotations

import pytest

from workers.ranking.run_words import deadline_text, hours_text


@pytest.mark.parametrize(("hours", "said"), [
    (0.5, "30.0 min"), (5, "5.0 h"), (71.9, "71.9 h"), (72, "72.0 h (3.0 d)"), (1213.9, "1,213.9 h (50.6 d)"),
    (429_428.5, "429,428.5 h (49.0 years)"),  # it was "429428.5 h": 49 years, which nobody reads in hours
])
def test_a_run_of_days_or_years_says_them_beside_the_hours(hours: float, said: str) -> None:
    assert hours_text(hours) == said


@pytest.mark.parametrize(("hours", "said"), [(0.4, "24 min"), (2, "2 h"), (48, "48 h"), (2160, "2160 h (90 d)")])
def test_a_deadline_keeps_the_hours_given_and_adds_days_from_three_on(hours: float, said: str) -> None:
    assert deadline_text(hours) == said
