"""Turn a raw budget review (HTTP body, CLI file) into the core's Review, through one schema."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from marshmallow import ValidationError

from catalog.units import parse_duration_hours, parse_usd
from workers.review.budget import Review, ReviewItem, Sweep, SweepKind
from workers.schemas.humanize import apply_human_units
from workers.schemas.review import ReviewRequestSchema
from workers.schemas.specs import build_job, canonical_json, flatten_errors
from workers.sizing.errors import SizingError
from workers.sizing.spec import OnPremAssumptions


def validate_review(raw: object) -> dict[str, Any]:
    """Load a raw review through the schema; raise ValidationError with flat paths (jobs[3].spec...)."""
    if not isinstance(raw, Mapping):
        raise ValidationError({"body": ["a budget review must be a JSON object"]})
    try:
        data: dict[str, Any] = ReviewRequestSchema().load(dict(raw))
    except ValidationError as exc:
        raise ValidationError(flatten_errors(exc.messages)) from None
    return data


def build_review(data: Mapping[str, Any]) -> Review:
    """Build the core's Review from a loaded request; a job whose model cannot be resolved names its field."""
    items: list[ReviewItem] = []
    errors: dict[str, list[str]] = {}
    for index, job in enumerate(data["jobs"]):
        try:
            spec = build_job(job["spec"])
        except SizingError as exc:
            errors[f"jobs[{index}].spec.{exc.field}"] = [exc.reason]
            continue
        sweep = job.get("sweep")
        items.append(ReviewItem(
            name=job["name"], team=job.get("team", job.get("owner", "")), job=spec, runs=job["runs"],
            parallel=job["parallel"],
            sweep=Sweep(SweepKind(sweep["kind"]), sweep["parameters"]) if sweep else None,
            budget_usd=job.get("budget_usd"), deadline_hours=job.get("deadline_hours"),
        ))
    if errors:
        raise ValidationError(errors)
    return Review(name=data["name"], items=tuple(items), budget_usd=data.get("budget_usd"),
                  providers=tuple(data["providers"]), onprem=OnPremAssumptions(**data["onprem"]))


def load_review(raw: object) -> tuple[dict[str, Any], Review]:
    """Validate a raw review and build its Review; every user error comes out as a ValidationError."""
    data = validate_review(raw)
    return data, build_review(data)


def review_digest(data: Mapping[str, Any], *, catalog_version: str) -> str:
    """Return a review job's digest: sha256 of the canonical request (any format), the catalog version."""
    request = {k: v for k, v in data.items() if k != "format"}  # one review, rendered in any format
    payload = f"{canonical_json(request)}|catalog={catalog_version}|review-v1"
    return hashlib.sha256(payload.encode()).hexdigest()


def _human(value: Any, parse: Any, path: str, errors: dict[str, list[str]]) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return parse(value)
    except ValueError as exc:
        errors[path] = [str(exc)]
        return value


def apply_review_units(raw: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a review with human strings ("$5k", "2d", "150GB") made plain numbers (CLI input)."""
    errors: dict[str, list[str]] = {}
    out = dict(raw)
    if "budget_usd" in out:
        out["budget_usd"] = _human(out["budget_usd"], parse_usd, "budget_usd", errors)
    jobs = out.get("jobs")
    if isinstance(jobs, list):
        converted: list[Any] = []
        for index, job in enumerate(jobs):
            if not isinstance(job, dict):
                converted.append(job)
                continue
            job = dict(job)
            prefix = f"jobs[{index}]"
            for key, parse in (("budget_usd", parse_usd), ("deadline_hours", parse_duration_hours)):
                if key in job:
                    job[key] = _human(job[key], parse, f"{prefix}.{key}", errors)
            if isinstance(job.get("spec"), dict):
                try:
                    job["spec"] = apply_human_units(job["spec"])
                except ValidationError as exc:
                    for path, messages in flatten_errors(exc.messages).items():
                        errors[f"{prefix}.spec.{path}"] = messages
            converted.append(job)
        out["jobs"] = converted
    if errors:
        raise ValidationError(errors)
    return out
