"""The ranking's runs planned over arrays (run_arrays.plan_runs) agree with plan_shape_run, shape by shape."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from catalog.loader import load_catalog
from catalog.types import Catalog
from workers.ranking.catalog_index import catalog_index
from workers.ranking.ranking import _cpu_adjust
from workers.ranking.recommend import estimate_per_gpu
from workers.ranking.runplan import RunPlanner
from workers.ranking.scope import gpu_counts_in_scope, resolve_scope
from workers.ranking.shapes import DEADLINE, SPOT_RESTARTS, Shape, judge_shapes, plan_shape_run
from workers.schemas import JobSpecSchema
from workers.schemas.specs import build_job
from workers.sizing.estimate import estimate_requirements

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# What plan_shape_run sets on a shape: the vectorised plan must leave each of them the same.
PLANNED = ("reject", "parts", "training_hours", "spot_percentile", "egress_usd", "is_spot_run", "hours",
           "time_metric", "cost_mult", "_checked_hours", "budget_scale")


def _spec(name: str, **changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads((EXAMPLES / f"{name}.json").read_text())
    for section, fields in changes.items():
        spec[section] = {**spec.get(section, {}), **fields} if isinstance(fields, dict) else fields
    return spec


JOBS = {
    "bert on every pricing kind, data in us-east-1": _spec(
        "bert-finetune", constraints={"pricing": ["on_demand", "spot", "committed_1y", "committed_3y"]},
        dataset={"location": {"provider": "aws", "region": "us-east-1"}}),
    "resnet50 on spot, a tight deadline": _spec("resnet50-imagenet", constraints={
        "pricing": ["spot"], "deadline_hours": 20, "max_gpus": 8}),
    "gpt2 on spot and on demand, no deadline": _spec("gpt2-pretrain", constraints={
        "pricing": ["spot", "on_demand"], "max_gpus": 8}),
    "spot checkpoints too far apart to make progress": _spec(
        "dcgan-faces", training={"checkpoint_every_hours": 80.0}, constraints={"pricing": ["spot"]}),
    "the team's own cards beside the clouds": _spec("team-owns-4x3090"),
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _same(a: object, b: object) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def test_every_kind_of_run_is_planned_as_plan_shape_run_plans_it(catalog: Catalog) -> None:
    known = {g.slug: g for g in catalog.gpus}
    index = catalog_index(catalog)
    seen: set[str | None] = set()
    spot_runs = 0
    for name, raw in JOBS.items():
        job = build_job(JobSpecSchema().load(raw))
        requirements = estimate_requirements(job, known_gpus=known)
        per_gpu = estimate_per_gpu(job, gpu_counts_in_scope(job.constraints, catalog), known)
        shapes = judge_shapes(job, requirements=requirements, per_gpu=per_gpu, index=index,
                              scope=resolve_scope(job.constraints, catalog), cpu_adjust=_cpu_adjust(job),
                              hours_known=True)
        planner = RunPlanner(job)
        planned = [s for s in shapes if s.parts is not None]
        assert planned, name
        for judged in planned:
            alone = Shape(judged.m, judged.idx)
            local = judged.m.storage_bytes >= requirements.storage_min_bytes
            alone.reject = plan_shape_run(alone, training_hours=judged.training_hours, job=job, planner=planner,
                                          local_disk_holds_data=local)
            for field in PLANNED:
                assert _same(getattr(judged, field), getattr(alone, field)), (name, judged.m.instance_type, field)
            seen.add(judged.reject)
            spot_runs += judged.is_spot_run
    assert {None, DEADLINE, SPOT_RESTARTS} <= seen  # the cases the arrays tell apart all came up
    assert spot_runs > 0
