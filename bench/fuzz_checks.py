"""A schemathesis check shared by tests/test_schemathesis.py and bench/fuzz_api.py (SCHEMATHESIS_HOOKS).

`positive_data_acceptance` (on, with 422 among its accepted answers: bench/schemathesis.toml) cannot
tell the two kinds of 422 apart. JSON Schema cannot express the core's cross-field rules: a
transformer preset needs `training.sequence_length`, a layer list's shapes must chain, a filter's
region must exist in the catalog. A 422 for those is the API working. A 422 from the request schema
itself for data the OpenAPI document calls valid is a real disagreement between the document and
the validator, and this check fails it: it loads the generated input with the marshmallow schema
the route uses and fails when that schema refuses it.
"""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter
from typing import Any

import schemathesis
from marshmallow import Schema

from service.catalog_listing import GpuFilterSchema, InstanceFilterSchema
from workers.schemas import EstimateRequestSchema, JobSpecSchema
from workers.schemas.review import ReviewRequestSchema
from workers.schemas.runs import RunReportSchema
from workers.schemas.specs import flatten_errors

# (method, path template) -> (the schema the route loads, where the input is)
REQUEST_SCHEMAS: dict[tuple[str, str], tuple[type[Schema], str]] = {
    ("POST", "/v1/estimate"): (EstimateRequestSchema, "body"),
    ("POST", "/v1/recommendations"): (JobSpecSchema, "body"),
    ("POST", "/v1/reports"): (ReviewRequestSchema, "body"),
    ("POST", "/v1/runs"): (RunReportSchema, "body"),
    ("GET", "/v1/catalog/gpus"): (GpuFilterSchema, "query"),
    ("GET", "/v1/catalog/instances"): (InstanceFilterSchema, "query"),
}
# Rules of the request schemas between two values, which JSON Schema cannot state (each is named in a
# comment beside OPENAPI_*_EXTRAS of service/schemas): these 422s are counted, not failed.
CROSS_FIELD_MESSAGES = ("cannot exceed runs", "not two different ones", "is named twice")
# Spec-valid inputs the core refused (422) per operation: counted, reported, not failures.
SEMANTIC_REJECTIONS: Counter[str] = Counter()


@schemathesis.check
def positive_data_passes_the_request_schema(ctx: Any, response: Any, case: Any) -> bool | None:
    """Fail a 422 to a spec-valid input that the route's own request schema refuses."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    entry = REQUEST_SCHEMAS.get((case.method.upper(), case.path))
    if entry is None:
        raise AssertionError(f"422 to a spec-valid request on {case.method} {case.path}, which loads no "
                             f"request schema: {response.text[:300]}")
    schema_class, location = entry
    data = case.body if location == "body" else dict(case.query or {})
    errors = flatten_errors(schema_class().validate(data))
    if errors and not all(any(known in message for known in CROSS_FIELD_MESSAGES)
                          for messages in errors.values() for message in messages):
        raise AssertionError(f"the OpenAPI document accepts what the request schema refuses: {errors}")
    SEMANTIC_REJECTIONS[f"{case.method.upper()} {case.path}"] += 1
    return None


def _write_counts() -> None:
    path = os.environ.get("GPUGAUGE_FUZZ_SEMANTIC_FILE")  # set by bench/fuzz_api.py
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(dict(SEMANTIC_REJECTIONS), out)


atexit.register(_write_counts)
