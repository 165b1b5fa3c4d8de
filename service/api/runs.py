"""POST /v1/runs records a measured run, GET /v1/runs lists them with the fitted corrections, DELETE removes one.

Writing needs the "runs:write" scope: with API keys set, a key listed in GPUGAUGE_RUNS_WRITE_KEYS (or any
API key when that list is empty). A run the plain model cannot have produced (memory above the card,
an iteration more than 10x off) is refused with 422 naming the field, and is not stored.
"""

from __future__ import annotations

from typing import Any

from flask import Response, current_app, jsonify, url_for
from werkzeug.exceptions import Forbidden, NotFound

from service.api import ApiBlueprint
from service.auth import api_key_hashes, presented_key_hash
from workers.schemas.runs import RunListSchema, RunReportSchema, RunSchema
from workers.sizing.reported import ABSURD_RATIO, FACTOR_BOUNDS
from workers.tasks.problems import Unavailable
from workers.tasks.runs import RunStore, calibration_for, record_run
from workers.tasks.runtime import runtime

WRITE_SCOPE = "runs:write"
blp = ApiBlueprint("runs", __name__, url_prefix="/v1",
                   description="Measured runs that calibrate later estimates (workers/sizing/reported.py).")


def _store() -> RunStore:
    store = runtime().runs
    if store is None:
        raise Unavailable("this deployment keeps no reported runs")
    return store


def _require_write_scope() -> None:
    """Refuse with 403 a valid API key that lacks the runs:write scope (GPUGAUGE_RUNS_WRITE_KEYS)."""
    writers = api_key_hashes(current_app.config["RUNS_WRITE_KEYS"])
    if writers and presented_key_hash() not in writers:
        raise Forbidden(f"this key lacks the {WRITE_SCOPE} scope: list it in GPUGAUGE_RUNS_WRITE_KEYS")


@blp.route("/runs", methods=["POST"])
@blp.arguments(RunReportSchema)
@blp.alt_response(201, schema=RunSchema, success=True,
                  headers={"Location": {"description": "the run's URL", "schema": {"type": "string"}}})
@blp.problems(400, 403, 413, 415, 422, 503)
@blp.doc(description=f"Needs the `{WRITE_SCOPE}` scope when API keys are set.")
def add_run(data: dict[str, Any]) -> Response:
    """Record a measured run; refuse (422) one the model says cannot be as described."""
    _require_write_scope()
    record = record_run(_store(), data, runtime().catalog.get())
    response = jsonify(RunSchema().dump(record))
    response.status_code = 201
    response.headers["Location"] = url_for("runs.delete_run", run_id=record["id"])
    return response


@blp.route("/runs", methods=["GET"])
@blp.response(200, RunListSchema)
@blp.problems(503)
def list_runs() -> dict[str, Any]:
    """List the stored runs and the corrections fitted from them."""
    store = _store()
    calibration = calibration_for(store, runtime().catalog.get())
    return {"runs": store.list(), "corrections": list(calibration.corrections.values()),
            "factor_bounds": list(FACTOR_BOUNDS), "absurd_ratio": ABSURD_RATIO}


@blp.route("/runs/<string:run_id>", methods=["DELETE"])
@blp.alt_response(204, success=True, description="removed")
@blp.problems(403, 404, 503)
@blp.doc(description=f"Needs the `{WRITE_SCOPE}` scope when API keys are set.")
def delete_run(run_id: str) -> Response:
    """Remove one run; later estimates no longer use it."""
    _require_write_scope()
    if not _store().remove(run_id):
        raise NotFound(f"no run {run_id!r}")
    return Response(status=204)
