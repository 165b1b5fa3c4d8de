"""RFC 9457 problem details, the one error shape of the HTTP API."""

from __future__ import annotations

from marshmallow import Schema, fields


class ProblemSchema(Schema):
    """An `application/problem+json` body, with per-field `errors` for validation problems."""

    type = fields.String(metadata={"description": "A URI naming the problem type (about:blank by default)."})
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String()
    instance = fields.String()
    errors = fields.Dict(keys=fields.String(), values=fields.List(fields.String()),
                         metadata={"description": "Field path -> reasons, e.g. training.batch_size."})
    request_id = fields.String()
