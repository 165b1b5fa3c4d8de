"""Schemas of the API's own envelopes (the job), for the OpenAPI document."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from workers.schemas import ProblemSchema, RecommendationSchema


class JobSchema(Schema):
    """A recommendation job: its state, and its result or the problem that stopped it."""

    id = fields.String(metadata={"description": "sha256 of the normalised spec and the catalog version"})
    status = fields.String(validate=validate.OneOf(("queued", "running", "done", "failed")))
    created_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    updated_at = fields.String(metadata={"description": "ISO 8601, UTC"})
    expires_after_s = fields.Integer(metadata={"description": "seconds the job is kept after it ends"})
    result = fields.Nested(RecommendationSchema, metadata={"description": "present when status is done"})
    problem = fields.Nested(ProblemSchema, metadata={"description": "present when status is failed"})


class HealthSchema(Schema):
    """What /healthz and /readyz answer when all is well."""

    status = fields.String()
