"""training.parallelism.data_parallel = parameter_server, from the spec: the 2017 survey's scaling caps it."""

from __future__ import annotations

import pytest

from catalog.gpus import gpus_by_slug
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpus


def _estimate(data_parallel: str, gpu_count: int, framework: str = "tensorflow") -> tuple[float, list[str]]:
    _, job = load_job({"model": {"preset": "resnet50"},
                       "training": {"batch_size": 64, "precision": "fp32", "framework": framework,
                                    "parallelism": {"data_parallel": data_parallel}},
                       "dataset": {"samples": 1_281_167}})
    known = gpus_by_slug()
    req = estimate_on_gpus(job, list(known.values()), slugs=["v100-16gb"], gpu_count=gpu_count)
    row = req.per_gpu[0]
    return row.speedup_vs_one_gpu, [w.code for w in req.warnings]


@pytest.mark.parametrize(("framework", "cap"), [("tensorflow", 2.5), ("pytorch", 3.7)])
def test_a_parameter_server_job_named_in_the_spec_scales_as_the_2017_survey_measured(framework: str,
                                                                                     cap: float) -> None:
    server, codes = _estimate("parameter_server", 4, framework)
    all_reduce, plain_codes = _estimate("plain", 4, framework)
    assert server == pytest.approx(cap, rel=0.02)
    assert all_reduce > 3.8  # NCCL all-reduce of ResNet-50's gradients over NVLink hides behind backward
    assert "parameter-server" in codes and "parameter-server" not in plain_codes


def test_the_cap_grows_per_doubling_not_linearly() -> None:
    on_8, _ = _estimate("parameter_server", 8)
    assert on_8 == pytest.approx(8 * (2.5 / 4) ** 1.5, rel=0.02)  # (2.5/4)^(1/2) per doubling, 3 doublings
