"""POST /v1/estimate: size a job spec synchronously, optionally on given GPUs."""

from __future__ import annotations

from typing import Any

from service.api import ApiBlueprint
from workers.schemas import EstimateAnswer, EstimateAnswerSchema, EstimateRequestSchema
from workers.schemas.specs import build_job
from workers.sizing.estimate import estimate_on_gpus
from workers.tasks.runs import calibration_for
from workers.tasks.runtime import runtime

blp = ApiBlueprint("estimate", __name__, url_prefix="/v1", description="Size a training job.")


@blp.route("/estimate", methods=["POST"])
@blp.arguments(EstimateRequestSchema)
@blp.response(200, EstimateAnswerSchema)
@blp.problems(400, 401, 413, 415, 422)
def estimate(data: dict[str, Any]) -> EstimateAnswer:
    """Size a job spec; with `gpus`, also fit and time it on `gpu_count` of each of those GPUs."""
    slugs, gpu_count = data.pop("gpus"), data.pop("gpu_count")
    rt = runtime()
    catalog = rt.catalog.get()
    requirements = estimate_on_gpus(build_job(data), catalog.gpus, slugs=slugs, gpu_count=gpu_count,
                                    calibration=calibration_for(rt.runs, catalog))
    return EstimateAnswer(requirements, catalog.version, catalog.prices_as_of)
