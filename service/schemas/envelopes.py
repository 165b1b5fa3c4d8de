"""Schemas of the API's own envelopes (the job), for the OpenAPI document."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from workers.schemas import ProblemSchema, RecommendationSchema
from workers.schemas.review_result import ReviewResultSchema


class JobSchema(Schema):
    """A recommendation job: its state, and its result or the problem that stopped it."""

    id = fields.String(metadata={"description": "sha256 of the normalised spec and the catalog version"})
    status = fields.String(validate=validate.OneOf(("queued", "running", "done", "failed")))
    created_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    updated_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    started_at = fields.String(metadata={"description": "ISO 8601, UTC: when a worker took it up"})
    expires_after_s = fields.Integer(metadata={"description": "seconds the job is kept after it ends"})
    result = fields.Nested(RecommendationSchema, metadata={"description": "present when status is done"})
    problem = fields.Nested(ProblemSchema, metadata={"description": "present when status is failed"})


class ProgressSchema(Schema):
    """How many of a review's jobs are done."""

    done = fields.Integer(required=True)
    total = fields.Integer(required=True)


class ReviewJobStatusSchema(Schema):
    """A review job (`POST /v1/reports` 202, `GET /v1/reports/{id}`): its state, progress, and result or problem."""

    id = fields.String(required=True, metadata={"description": "review- and the sha256 of the request and catalog"})
    status = fields.String(required=True, validate=validate.OneOf(("queued", "running", "done", "failed")))
    created_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    started_at = fields.String(metadata={"description": "ISO 8601, UTC: when a worker took it up"})
    updated_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    started_at = fields.String(metadata={"description": "ISO 8601, UTC: when a worker took it up"})
    expires_after_s = fields.Integer(metadata={"description": "seconds the job is kept after it ends"})
    progress = fields.Nested(ProgressSchema)
    result = fields.Nested(ReviewResultSchema, metadata={"description": "present when status is done"})
    problem = fields.Nested(ProblemSchema, metadata={"description": "present when status is failed"})


class HealthSchema(Schema):
    """What /healthz and /readyz answer when all is well."""

    status = fields.String()
