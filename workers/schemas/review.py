"""The budget review request of `POST /v1/reports` and `gpugauge report`: named jobs, a budget, providers."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, pre_load, validate, validates_schema

from catalog.providers import PROVIDER_NAMES as PROVIDERS
from workers.schemas.fields import StrictFloat, bounded_int
from workers.schemas.spec import JobSpecSchema, OnPremSchema

# Bounds: a company's quarterly review has thousands of jobs; 10,000 is accepted (fanned out over the
# workers, workers/tasks/review.py) within the body limit (MAX_CONTENT_LENGTH, 8 MiB). 10,000 runs per
# job covers a random search of thousands of trials.
MAX_JOBS = 10_000
MAX_RUNS = 10_000
MAX_SWEEP_PARAMETERS = 100
FORMATS = ("json", "csv", "markdown", "html")
NAME_LENGTH = validate.Length(min=1, max=200)


# What the OpenAPI document cannot learn from the fields (service/app.py adds it to "ReviewJob"): a
# team or an owner, and a sweep only with 2 runs or more. Rules between two values (team == owner when both
# are given, unique names) have no JSON Schema form: the API answers 422. A parallel above runs is taken as
# runs (all at once), as the document allows it.
OPENAPI_REVIEW_JOB_EXTRAS: dict[str, Any] = {
    "anyOf": [{"required": ["team"]}, {"required": ["owner"]}],
    "dependentSchemas": {"sweep": {"required": ["runs"], "properties": {"runs": {"minimum": 2}}}},
}


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class SweepSchema(_Strict):
    """A hyper-parameter search: grid or random, over how many parameters."""

    kind = fields.String(required=True, validate=validate.OneOf(("grid", "random")))
    parameters = bounded_int(minimum=1, maximum=MAX_SWEEP_PARAMETERS, required=True)


class RepeatedSpecField(fields.Nested):
    """A job's spec (JobSpecSchema), each distinct spec loaded once: a review's jobs repeat a few specs.

    The last LOADED_KEPT distinct specs (by their JSON) keep what the schema loaded; a job whose spec was
    seen reuses it (read, never changed downstream: build_review, the digest and the task's message read
    it). A spec the schema refuses is never kept, so each job's refusal is worked out and named afresh.
    A 1,000-job review of 40 specs loaded in 0.28 s, most of it 8,000 nested loads of the same specs.
    """

    LOADED_KEPT = 512

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._loaded: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def _deserialize(self, value: Any, attr: str | None, data: Any, partial: Any = None, **kwargs: Any) -> Any:
        if not isinstance(value, dict) or partial:
            return super()._deserialize(value, attr, data, partial=partial, **kwargs)
        key = json.dumps(value, sort_keys=True)
        with self._lock:
            found = self._loaded.get(key)
            if found is not None:
                self._loaded.move_to_end(key)
                return found
        loaded = super()._deserialize(value, attr, data, partial=partial, **kwargs)
        with self._lock:
            self._loaded[key] = loaded
            while len(self._loaded) > self.LOADED_KEPT:
                self._loaded.popitem(last=False)
        return loaded


class ReviewJobSchema(_Strict):
    """One named job of a review: its team (or owner), its runs, its sweep, its own limits, its spec."""

    name = fields.String(required=True, validate=NAME_LENGTH)
    team = fields.String(validate=NAME_LENGTH)
    owner = fields.String(validate=NAME_LENGTH)
    runs = bounded_int(minimum=1, maximum=MAX_RUNS, load_default=1,
                       metadata={"description": "How many times the job runs, e.g. a search's trials."})
    parallel = bounded_int(minimum=1, maximum=MAX_RUNS, load_default=1,
                           metadata={"description": "Runs at once, each on its own machine; more than runs "
                                                    "means all of them at once."})
    sweep = fields.Nested(SweepSchema)
    budget_usd = StrictFloat(minimum=0.0, maximum=1e10,
                             metadata={"description": "For all runs; default: the spec's, else the "
                                                      "review's."})
    deadline_hours = StrictFloat(minimum=0.001, maximum=1e6,
                                 metadata={"description": "Wall-clock for all runs; default: the spec's."})
    spec = RepeatedSpecField(JobSpecSchema, required=True)

    @post_load
    def _parallel_within_runs(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        return {**data, "parallel": min(data.get("parallel", 1), data.get("runs", 1))}

    @validates_schema
    def _team_and_runs(self, data: dict[str, Any], **_: Any) -> None:
        if "team" in data and "owner" in data and data["team"] != data["owner"]:
            raise ValidationError("give team or owner, not two different ones", "owner")
        if "team" not in data and "owner" not in data:
            raise ValidationError("a job needs a team (or an owner)", "team")
        sweep = data.get("sweep")
        if sweep is not None and data.get("runs", 1) < 2:
            raise ValidationError("a sweep runs at least 2 trials: set runs to the trial count", "runs")


class ReviewRequestSchema(_Strict):
    """A budget review: named jobs, the budget they share, the providers allowed, the output format."""

    name = fields.String(load_default="budget review", validate=NAME_LENGTH)
    budget_usd = StrictFloat(minimum=0.0, maximum=1e10)
    providers = fields.List(fields.String(validate=validate.OneOf(PROVIDERS)),
                            validate=validate.Length(min=1, max=3), load_default=list(PROVIDERS))
    onprem = fields.Nested(OnPremSchema,
                           metadata={"description": "How a bought card becomes an hourly cost."})
    jobs = fields.List(fields.Nested(ReviewJobSchema), required=True,
                       validate=validate.Length(min=1, max=MAX_JOBS))
    format = fields.String(load_default="json", validate=validate.OneOf(FORMATS))

    @pre_load
    def _fill_onprem(self, data: Any, **_: Any) -> Any:
        if isinstance(data, dict) and "onprem" not in data:
            data = {**data, "onprem": {}}
        return data

    @validates_schema
    def _unique_names(self, data: dict[str, Any], **_: Any) -> None:
        seen: set[str] = set()
        for index, job in enumerate(data.get("jobs", [])):
            if job["name"] in seen:
                raise ValidationError({"jobs": {index: {"name": [f"{job['name']!r} is named twice"]}}})
            seen.add(job["name"])
