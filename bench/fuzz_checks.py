"""A schemathesis check shared by tests/test_schemathesis.py and bench/fuzz_api.py (SCHEMATHESIS_HOOKS).

schemathesis.toml lets positive_data_acceptance take a 422 from the four operations whose bodies carry
rules no JSON Schema states (service/openapi_rules.py lists them, and the document's 422 responses say
them). That allowance cannot tell the two kinds of 422 apart; this check does: every 422 to an input the
document calls valid must name, for each of its errors, one of the operation's unstated rules. A 422 for
anything else (a rule the document states, or should) is a disagreement between the document and the
service, and fails. The refusals that pass are counted per rule and reported by the bench.
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
from service.openapi_rules import UNSTATED_RULES
from workers.schemas import EstimateRequestSchema, JobSpecSchema
from workers.schemas.review import ReviewRequestSchema
from workers.schemas.runs import RunReportSchema

# (method, path template) -> (the schema the route loads, where the input is)
REQUEST_SCHEMAS: dict[tuple[str, str], tuple[type[Schema], str]] = {
    ("POST", "/v1/estimate"): (EstimateRequestSchema, "body"),
    ("POST", "/v1/recommendations"): (JobSpecSchema, "body"),
    ("POST", "/v1/reports"): (ReviewRequestSchema, "body"),
    ("POST", "/v1/runs"): (RunReportSchema, "body"),
    ("GET", "/v1/catalog/gpus"): (GpuFilterSchema, "query"),
    ("GET", "/v1/catalog/instances"): (InstanceFilterSchema, "query"),
}
# Spec-valid inputs the core refused (422) for an unstated rule, per operation and rule: counted, not failed.
SEMANTIC_REJECTIONS: Counter[str] = Counter()


@schemathesis.check
def positive_422s_are_unstated_rules(ctx: Any, response: Any, case: Any) -> bool | None:
    """Fail a 422 to a spec-valid input unless each of its errors is one of the operation's unstated rules."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return None
    rules = UNSTATED_RULES.get((case.path, case.method.lower()), ())
    try:
        errors = response.json().get("errors") or {}
    except ValueError:
        errors = {}
    if not errors:
        raise AssertionError(f"a 422 to a spec-valid request on {case.method} {case.path} names no field: "
                             f"{response.text[:300]}")
    for field, messages in errors.items():
        for message in messages if isinstance(messages, list) else [messages]:
            rule = next((rule for rule in rules if rule.names(field, str(message))), None)
            if rule is None:
                raise AssertionError(f"the OpenAPI document accepts what {case.method} {case.path} refuses, and its "
                                     f"422 response lists no such rule: {field}: {message}")
            SEMANTIC_REJECTIONS[f"{case.method.upper()} {case.path}: {rule.field}"] += 1
    return None


def _write_counts() -> None:
    path = os.environ.get("GPUGAUGE_FUZZ_SEMANTIC_FILE")  # set by bench/fuzz_api.py
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(dict(SEMANTIC_REJECTIONS), out)


atexit.register(_write_counts)
