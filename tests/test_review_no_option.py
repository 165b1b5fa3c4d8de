"""A reviewed job no machine in scope holds says what would hold it, once.

"Llama 3.1 405B full fine-tune within max_gpus 8" in a budget review read "no machine in scope can run this job (see
its GPU memory need)" twice in its notes (once per pick), and its warnings lacked the ranking's `max-gpus-limits`
("raise constraints.max_gpus to 32"): the review ranks briefly, and the brief ranking works out no such advice.
"""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from service.reports import render_review
from workers.review.review import run_review
from workers.review.words import job_notes
from workers.schemas.review_result import ReviewResultSchema
from workers.schemas.reviews import load_review

HUGE = {"model": {"preset": "llama3.1-405b"},
        "training": {"from_pretrained": True, "sequence_length": 4096, "batch_size": 1, "epochs": 1,
                     "precision": "bf16-mixed", "optimizer": "adamw"},
        "dataset": {"samples": 10000}, "constraints": {"max_gpus": 8}}
SMALL = {"model": {"preset": "bert-base"}, "training": {"batch_size": 32, "epochs": 1, "sequence_length": 128},
         "dataset": {"samples": 10000}}


def _payload(shipped: Catalog) -> dict[str, Any]:
    _, review = load_review({"name": "q1", "budget_usd": 5000, "providers": ["aws", "gcp"], "jobs": [
        {"name": "405b", "team": "llm", "spec": HUGE}, {"name": "bert", "team": "nlp", "spec": SMALL}]})
    payload: dict[str, Any] = ReviewResultSchema().dump(run_review(review, shipped))
    return payload


def test_a_job_no_machine_holds_carries_what_would_hold_it(shipped: Catalog) -> None:
    payload = _payload(shipped)
    huge, small = payload["jobs"]
    codes = [w["code"] for w in huge["warnings"]]
    assert "max-gpus-limits" in codes and codes.count("undated-prices") <= 1
    limits = next(w["message"] for w in huge["warnings"] if w["code"] == "max-gpus-limits")
    assert "Raise constraints.max_gpus to" in limits
    assert "max-gpus-limits" not in [w["code"] for w in small["warnings"]]  # a job that fits is ranked briefly
    notes = job_notes(huge["cheapest"], huge["fastest"])
    assert notes == ["no machine in scope can run this job (its sizing warnings say what it needs and what would "
                     "hold it)"]
    page = render_review(payload, "markdown")
    row = next(line for line in page.splitlines() if line.startswith("| llm | 405b |"))
    assert row.count("no machine in scope can run this job") == 1
    assert any("max-gpus-limits" in line and "405b" in line for line in page.splitlines())
