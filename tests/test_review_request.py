"""The review request: bounds, flat field paths into each job's spec, human units, and the example file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from marshmallow import ValidationError

from workers.review.budget import SweepKind
from workers.schemas.review import MAX_JOBS, MAX_RUNS
from workers.schemas.reviews import apply_review_units, load_review, review_digest
from workers.schemas.spec import JobSpecSchema

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "budget-review.json"
SPEC = {"model": {"stats": {"neurons": 1_000_000, "parameters": 2_000_000, "multiply_adds": 10**9}},
        "training": {"batch_size": 32}, "dataset": {"samples": 50_000}}


def _review(*jobs: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"name": "r", "budget_usd": 1000, "jobs": list(jobs), **top}


def _job(name: str = "a", **fields: Any) -> dict[str, Any]:
    return {"name": name, "team": "vision", "spec": SPEC, **fields}


def _errors(raw: Any) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        load_review(raw)
    messages: dict[str, list[str]] = caught.value.messages  # type: ignore[assignment]
    return messages


def test_the_example_review_loads_with_its_teams_runs_and_sweeps() -> None:
    data, review = load_review(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    assert len(review.items) >= 4 and len({i.team for i in review.items}) >= 2
    assert review.budget_usd is not None and review.budget_usd > 0
    bert = next(i for i in review.items if i.sweep is not None and i.sweep.kind is SweepKind.GRID)
    assert bert.runs == 12 and bert.sweep is not None and bert.sweep.parameters == 2
    assert data["format"] in ("json", "csv", "markdown", "html")


def test_a_bad_field_deep_in_a_job_spec_is_named_by_its_full_path() -> None:
    bad = {**SPEC, "training": {"batch_size": 0}}
    errors = _errors(_review(_job("a"), _job("b"), _job("c"), _job("d", spec=bad)))
    assert list(errors) == ["jobs[3].spec.training.batch_size"]


def test_an_unknown_preset_is_named_by_its_job() -> None:
    bad = {**SPEC, "model": {"preset": "resnet-5O"}}
    errors = _errors(_review(_job("a"), _job("b", spec=bad)))
    assert list(errors) == ["jobs[1].spec.model.preset"]


def test_a_job_needs_a_team_or_an_owner_and_an_owner_is_its_team() -> None:
    assert "jobs[0].team" in _errors(_review({"name": "a", "spec": SPEC}))
    _, review = load_review(_review({"name": "a", "owner": "ana", "spec": SPEC}))
    assert review.items[0].team == "ana"


@pytest.mark.parametrize(("job", "field"), [
    (_job(runs=0), "jobs[0].runs"),
    (_job(runs=MAX_RUNS + 1), "jobs[0].runs"),
    (_job(runs=2.5), "jobs[0].runs"),
    (_job(sweep={"kind": "grid", "parameters": 2}), "jobs[0].runs"),
    (_job(runs=8, sweep={"kind": "bayes", "parameters": 2}), "jobs[0].sweep.kind"),
    (_job(budget_usd=-1), "jobs[0].budget_usd"),
    (_job(deadline_hours=float("nan")), "jobs[0].deadline_hours"),
    (_job(colour="red"), "jobs[0].colour"),
])
def test_out_of_bounds_job_fields_are_refused_by_name(job: dict[str, Any], field: str) -> None:
    assert field in _errors(_review(job))


def test_a_parallel_above_runs_runs_them_all_at_once() -> None:
    _, review = load_review(_review(_job(runs=4, parallel=5)))
    assert review.items[0].parallel == 4


def test_a_review_holds_at_most_its_bound_of_jobs_with_distinct_names() -> None:
    assert "jobs" in _errors(_review(*[_job(f"j{i}") for i in range(MAX_JOBS + 1)]))
    assert "jobs" in _errors(_review())
    assert "jobs[1].name" in _errors(_review(_job("same"), _job("same")))


def test_review_level_fields_are_checked() -> None:
    assert "providers[0]" in _errors(_review(_job(), providers=["azure"]))
    assert "format" in _errors(_review(_job(), format="pdf"))
    assert "body" in _errors([_job()])


def test_human_units_become_numbers_for_the_cli() -> None:
    raw = _review(_job(budget_usd="$1.5k", deadline_hours="2d",
                       spec={**SPEC, "dataset": {"samples": "50k", "bytes": "2GB"}}), budget_usd="$20k")
    _, review = load_review(apply_review_units(raw))
    job = review.items[0]
    assert review.budget_usd == 20_000 and job.budget_usd == 1500 and job.deadline_hours == 48
    assert job.job.dataset.samples == 50_000 and job.job.dataset.size_bytes == 2 * 10**9


def test_a_bad_human_unit_is_named_by_its_path() -> None:
    with pytest.raises(ValidationError) as caught:
        apply_review_units(_review(_job(deadline_hours="soon", spec={**SPEC, "dataset": {"bytes": "lots"}})))
    assert set(caught.value.messages) == {"jobs[0].deadline_hours", "jobs[0].spec.dataset.bytes"}


def test_equal_reviews_share_a_digest_and_another_catalog_does_not() -> None:
    a, _ = load_review(_review(_job()))
    b, _ = load_review(_review(_job(runs=1)))
    assert review_digest(a, catalog_version="1") == review_digest(b, catalog_version="1")
    assert review_digest(a, catalog_version="1") != review_digest(a, catalog_version="2")
    html, _ = load_review(_review(_job(), format="html"))
    assert review_digest(html, catalog_version="1") == review_digest(a, catalog_version="1")


def test_a_spec_repeated_over_jobs_loads_as_each_alone_and_is_refused_at_each_job() -> None:
    other = {**SPEC, "training": {"batch_size": 64, "epochs": 2}}
    raw = _review(*(_job(f"j{i}", spec=json.loads(json.dumps((SPEC, other)[i % 2]))) for i in range(6)))
    data, _ = load_review(raw)
    alone = [JobSpecSchema().load(json.loads(json.dumps(job["spec"]))) for job in raw["jobs"]]
    assert [job["spec"] for job in data["jobs"]] == alone
    assert data["jobs"][0]["spec"] is data["jobs"][2]["spec"]  # loaded once, for both jobs
    copied = json.loads(json.dumps(data))  # no object shared: the digest normalises each spec alone
    assert review_digest(data, catalog_version="v") == review_digest(copied, catalog_version="v")
    bad = {**SPEC, "training": {"batch_size": 0}}
    errors = _errors(_review(_job("a", spec=bad), _job("b"), _job("c", spec=dict(bad))))
    assert sorted(errors) == ["jobs[0].spec.training.batch_size", "jobs[2].spec.training.batch_size"]
