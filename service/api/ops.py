"""GET /healthz (the process is up) and GET /readyz (it can run jobs: Redis and a worker answer)."""

from __future__ import annotations

from flask import current_app

from service.api import ApiBlueprint
from service.schemas.envelopes import HealthSchema
from workers.tasks.problems import Unavailable
from workers.tasks.runtime import runtime

blp = ApiBlueprint("ops", __name__, guarded=False, description="Liveness and readiness probes.")


@blp.route("/healthz", methods=["GET"])
@blp.alt_response(200, schema=HealthSchema, success=True)
@blp.doc(security=[])
def healthz() -> dict[str, str]:
    """Say the process is alive; touches nothing else."""
    return {"status": "ok"}


@blp.route("/readyz", methods=["GET"])
@blp.alt_response(200, schema=HealthSchema, success=True)
@blp.doc(security=[])
@blp.problems(503)
def readyz() -> dict[str, str]:
    """Say whether jobs can run now: Redis answers and a worker replies (embedded: the pool runs)."""
    reason = runtime().queue.unready_reason(timeout_s=float(current_app.config["READY_TIMEOUT_S"]))
    if reason is not None:
        raise Unavailable(reason)
    return {"status": "ready"}
