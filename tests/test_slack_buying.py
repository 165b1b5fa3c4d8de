"""A purchase answer for a job said to recur: its break-even in years at that frequency, against the cards' life.
"is it cheaper to buy or rent for training resnet50 on imagenet monthly" read "pays off after 206 runs" (17 years)."""

from __future__ import annotations

import pytest

from tests.test_slack_phrases import parse
from workers.slack.buying import purchase_lines, runs_per_year


@pytest.mark.parametrize(("text", "expected"), [
    ("retrain resnet18 nightly", (365, "nightly")), ("fine-tune llama every week on 20k samples", (52, "weekly")),
    ("resnet50 on imagenet monthly", (12, "monthly")), ("bert base each quarter", (4, "quarterly")),
    ("a job every day", (365, "daily")), ("resnet50 on imagenet", None), ("a recurring job", None),
])
def test_the_frequency_is_read_from_the_words_said(text: str, expected: tuple[int, str] | None) -> None:
    assert runs_per_year(text) == expected


def _row(gpu: str, runs: float | None, *, pays_off: bool = True) -> dict:
    return {"gpu": gpu, "gpu_count": 4, "purchase_usd": 5000.0, "job_hours": 20.0, "power_cost_usd": 3.5,
            "break_even_runs": runs, "pays_off": pays_off, "lifetime_years": 3, "utilisation": 0.5,
            "run_cost_usd": 4.0, "as_of": "2025-01"}


def test_a_break_even_is_said_in_years_at_the_frequency_and_against_the_cards_life() -> None:
    rows = [_row("rtx-5090", 433), _row("rtx-5070-ti", 206), _row("rtx-4090", 30)]
    monthly = purchase_lines(rows, per_year=(12, "monthly"))
    assert monthly[0].startswith("*4 × rtx-4090*")  # the fewest runs to pay off first
    assert "pays off after 30 runs against renting, 2.5 years run monthly, within its 3-year life" in monthly[0]
    assert "206 runs against renting, 17.2 years run monthly, beyond its 3-year life: renting costs less" in monthly[1]
    plain = purchase_lines(rows)  # no frequency said: as before, in the result's order
    assert plain[0].startswith("*4 × rtx-5090*") and "pays off after 433 runs against renting" in plain[0]
    assert "years run" not in " ".join(plain)


def test_buying_for_a_recurring_job_ranks_the_clouds_beside_the_cards() -> None:
    weekly = parse("what gpus should we buy to fine-tune llama 3 8b with lora every week on 20k samples")
    assert weekly.spec["constraints"]["providers"] == ["onprem", "aws", "gcp"]
    once = parse("what gpus should we buy to fine-tune llama 3 8b with lora on 20k samples")
    assert once.spec["constraints"]["providers"] == ["onprem"]
