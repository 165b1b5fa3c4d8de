"""A recommendation's per-GPU rows: those of its ranked options by default, every one on request."""

from __future__ import annotations

from flask.testing import FlaskClient

from catalog.loader import load_catalog
from tests.service_helpers import example_spec
from workers.ranking.recommend import PER_GPU_ALL, PER_GPU_OPTIONS, recommend
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_on_gpu, estimate_on_pairs


def test_the_options_rows_are_the_ones_the_ranked_options_use_and_all_keeps_every_pair() -> None:
    catalog = load_catalog()
    _, job = load_job(example_spec("bert-finetune"))
    everything = recommend(job, catalog, per_gpu_rows=PER_GPU_ALL)
    trimmed = recommend(job, catalog, per_gpu_rows=PER_GPU_OPTIONS)
    used = {(o.gpu, o.gpu_count) for o in trimmed.options}
    assert {(r.gpu, r.gpu_count) for r in trimmed.requirements.per_gpu} == used
    assert len(everything.requirements.per_gpu) > len(trimmed.requirements.per_gpu) > 0
    assert trimmed.options == everything.options
    by_pair = {(r.gpu, r.gpu_count): r for r in everything.requirements.per_gpu}
    assert all(by_pair[(r.gpu, r.gpu_count)] == r for r in trimmed.requirements.per_gpu)


def test_estimating_every_pair_in_one_call_equals_one_call_per_pair() -> None:
    catalog = load_catalog()
    known = {g.slug: g for g in catalog.gpus}
    _, job = load_job(example_spec("resnet50-imagenet"))
    pairs = [(gpu, n) for gpu in catalog.gpus[:8] for n in (1, 2, 8)]
    assert estimate_on_pairs(job, pairs, known_gpus=known) == [
        estimate_on_gpu(job, gpu, gpu_count=n, known_gpus=known) for gpu, n in pairs]


def test_a_sixteen_gpu_instance_is_timed_as_one_machine() -> None:
    # a2-megagpu-16g: 16 A100 on one NVSwitch fabric; the ranking's pairs are the catalog's machines
    catalog = load_catalog()
    known = {g.slug: g for g in catalog.gpus}
    sixteen = [i for i in catalog.instances if i.gpu_count == 16]
    assert sixteen, "the catalog has a 16-GPU machine"
    _, job = load_job(example_spec("resnet50-imagenet"))
    card = known[sixteen[0].gpu]
    (one_machine,) = estimate_on_pairs(job, [(card, 16)], known_gpus=known)
    two_machines = estimate_on_gpu(job, card, gpu_count=16, known_gpus=known)
    assert one_machine.throughput_samples_per_s > two_machines.throughput_samples_per_s


def test_a_job_asked_for_every_row_is_another_job_with_more_rows(embedded_client: FlaskClient) -> None:
    spec = example_spec("dqn-atari")
    default = embedded_client.post("/v1/recommendations", json=spec, headers={"Prefer": "wait=20"}).get_json()
    full = embedded_client.post("/v1/recommendations", json={**spec, "per_gpu": "all"},
                                headers={"Prefer": "wait=20"}).get_json()
    assert default["id"] != full["id"]
    assert len(full["result"]["requirements"]["per_gpu"]) > len(default["result"]["requirements"]["per_gpu"])
    refused = embedded_client.post("/v1/recommendations", json={**spec, "per_gpu": "some"})
    assert refused.status_code == 422 and "per_gpu" in refused.get_json()["errors"]
