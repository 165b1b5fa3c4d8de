"""Host memory counts the loader workers' batches: DataLoader measurements (validation/loader_memory.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from catalog.gpus import gpus_by_slug
from catalog.loader import load_catalog
from catalog.types import Catalog, Pricing, Provider
from tests.recommending import changed_example, recommend_spec
from workers.ranking.catalog_index import catalog_index
from workers.ranking.host_need import host_memory_need_bytes, host_needs
from workers.ranking.recommend import estimate_per_gpu
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.machine import (
    CONTAINER_DEFAULT_SHM_BYTES,
    HOST_BASE_BYTES,
    HOST_PER_GPU_PROCESS_BYTES,
    LOADER_WORKER_BASE_BYTES,
    loader_host_bytes,
    loader_shared_bytes,
)

MEASURED = json.loads((Path(__file__).resolve().parents[1] / "validation" / "loader_memory.json").read_text())
KNOWN = gpus_by_slug()
IMAGE = 3 * 224 * 224 * 4  # one float32 sample of the resnet50 preset


@pytest.fixture(scope="module")
def shipped() -> Catalog:
    return load_catalog()


def test_the_model_matches_the_measured_dataloader() -> None:
    errors = []
    for r in MEASURED["records"]:
        workers, batch = r["workers"], r["batch_bytes"]
        shared = loader_shared_bytes(workers=workers, batch_bytes=batch)
        measured_total = r["shared_memory_bytes"] + workers * r["worker_uss_bytes_median"]
        total = loader_host_bytes(workers=workers, batch_bytes=batch)
        errors.append((r["id"], shared / r["shared_memory_bytes"] - 1, total / measured_total - 1,
                       total - measured_total))
    for case, shared_error, total_error, _ in errors:
        print(f"{case}: shared memory {shared_error:+.1%}, loader in all {total_error:+.1%}")
    # the batches in shared memory are structural (2 per worker and the one in use): within 3% where they are
    # more than a few pages; the whole loader within 10%, or within 4 MiB where it is small (a worker's own base
    # varies 10.7-17.4 MiB: the token loader's 22 MiB in all reads +16%)
    assert all(abs(s) <= 0.03 for case, s, _, _ in errors if not case.startswith("tokens"))
    assert all(abs(t) <= 0.10 or abs(diff) <= 4 * 2**20 for _, _, t, diff in errors)
    assert MEASURED["torch"].startswith("2.13.0")


def _estimate(dataset: dict[str, Any], *, batch: int = 128, gpus: tuple[str, ...] = ("a100-80gb",),
              gpu_count: int = 1) -> Any:
    _, job = load_job({"model": {"preset": "resnet50"},
                       "training": {"batch_size": batch, "precision": "bf16-mixed"},
                       "dataset": {"samples": 1281167, "bytes": 146900000000, "in_memory": False, **dataset}})
    return estimate_requirements(job, gpus=tuple(KNOWN[g] for g in gpus), gpu_count=gpu_count, known_gpus=KNOWN)


def test_host_memory_holds_each_gpus_loader_workers_and_their_batches() -> None:
    four = _estimate({"preprocess_ms_per_sample": 2.5, "loader_workers": 4}, gpu_count=2)
    eight = _estimate({"preprocess_ms_per_sample": 2.5, "loader_workers": 8}, gpu_count=2)
    batch = 128 * IMAGE
    assert four.loader_workers_in_memory == 4 and eight.loader_workers_in_memory == 8
    # 4 more workers on each of 2 GPUs: their 2 prefetched batches, the batch each builds, and their own base
    assert eight.host_memory_bytes - four.host_memory_bytes == 2 * 4 * (3 * batch + LOADER_WORKER_BASE_BYTES)
    assert four.host_memory_bytes == (HOST_BASE_BYTES + 2 * HOST_PER_GPU_PROCESS_BYTES
                                      + 2 * loader_host_bytes(workers=4, batch_bytes=batch))


def test_without_pre_processing_nothing_is_counted_and_nothing_is_said() -> None:
    bare = _estimate({"preprocess_ms_per_sample": 0.0})
    assert bare.loader_workers == 0 and bare.loader_host_bytes_per_gpu == 0
    assert bare.host_memory_bytes == HOST_BASE_BYTES + HOST_PER_GPU_PROCESS_BYTES
    assert not [w for w in bare.warnings if w.code == "loader-shared-memory"]


def test_the_workers_counted_are_those_that_keep_the_gpu_fed() -> None:
    light = _estimate({"preprocess_ms_per_sample": 0.5})
    heavy = _estimate({"preprocess_ms_per_sample": 5.0})
    assert 1 <= light.loader_workers_in_memory < heavy.loader_workers_in_memory
    assert heavy.loader_workers_in_memory == heavy.loader_workers  # on no machine: the fewest reference workers
    assert heavy.loader_host_bytes_per_gpu == loader_host_bytes(workers=heavy.loader_workers, batch_bytes=128 * IMAGE)


def test_a_container_is_told_the_shared_memory_its_loaders_need() -> None:
    req = _estimate({"preprocess_ms_per_sample": 2.5, "loader_workers": 4}, gpu_count=4)
    [said] = [w.message for w in req.warnings if w.code == "loader-shared-memory"]
    shared = loader_shared_bytes(workers=4, batch_bytes=128 * IMAGE)
    assert shared > CONTAINER_DEFAULT_SHM_BYTES
    assert f"about {shared / 2**20:.1f} MiB per GPU" in said or f"about {shared / 2**30:.1f} GiB per GPU" in said
    assert "for 4 GPUs" in said and "--shm-size" in said and "insufficient shared memory" in said
    # an MNIST-sized batch fits Docker's default: not said
    _, mnist = load_job({"model": {"preset": "vae-mnist"}, "training": {"batch_size": 128},
                         "dataset": {"samples": 60000, "bytes": 47040000, "preprocess_ms_per_sample": 0.5,
                                     "loader_workers": 4}})
    small = estimate_requirements(mnist, known_gpus=KNOWN)
    assert small.loader_workers == 4 and not [w for w in small.warnings if w.code == "loader-shared-memory"]


def test_a_recommendation_counts_the_top_machines_loaders(shipped: Catalog) -> None:
    rec = recommend_spec(changed_example("resnet50-imagenet"), shipped)
    req, top = rec.requirements, rec.options[0]
    assert top.vcpus // top.gpu_count - 1 == req.loader_workers  # the machine allows this many per GPU
    assert 1 <= req.loader_workers_in_memory <= req.loader_workers
    assert req.host_memory_bytes == (HOST_BASE_BYTES + HOST_PER_GPU_PROCESS_BYTES
                                     + loader_host_bytes(workers=req.loader_workers_in_memory,
                                                         batch_bytes=128 * IMAGE))
    [said] = [w.message for w in req.warnings if w.code == "loader-shared-memory"]
    assert f"Each GPU's {req.loader_workers_in_memory} loader workers" in said


def test_a_machine_is_judged_with_the_workers_its_gpu_needs_there() -> None:
    _, job = load_job(changed_example("resnet50-imagenet"))
    req = estimate_requirements(job, known_gpus=KNOWN)  # on the reference card: a few workers
    batch = 128 * IMAGE

    def need(*, vcpus: int, iteration_ms: float) -> int:
        return host_memory_need_bytes(job, req, gpu_count=8, vcpus=vcpus, iteration_ms=iteration_ms,
                                      cpu_score=2500.0, threads_per_core=2)

    slow, fast = need(vcpus=192, iteration_ms=100.0), need(vcpus=192, iteration_ms=20.0)
    cramped = need(vcpus=16, iteration_ms=20.0)  # 2 vCPUs a GPU: one worker each, however fast the GPU
    base = HOST_BASE_BYTES + 8 * HOST_PER_GPU_PROCESS_BYTES
    assert cramped == base + 8 * loader_host_bytes(workers=1, batch_bytes=batch)
    assert cramped < slow < fast
    workers_fast = (fast - base - 8 * batch) // 8 // (3 * batch + LOADER_WORKER_BASE_BYTES)
    assert fast == base + 8 * loader_host_bytes(workers=int(workers_fast), batch_bytes=batch)
    assert req.loader_workers_in_memory < workers_fast <= 192 // 8 - 1


@pytest.mark.parametrize("example", ["resnet50-imagenet", "preprocess-heavy", "gpt2-pretrain"])
def test_the_rankings_host_needs_are_each_machines_own(shipped: Catalog, example: str) -> None:
    """host_needs works the figures out for a whole table at once; each must be host_memory_need_bytes'."""
    _, job = load_job(changed_example(example))
    req = estimate_requirements(job, known_gpus=KNOWN)
    table = catalog_index(shipped).scoped(providers=frozenset({Provider.AWS, Provider.GCP}), max_gpus=8,
                                          pricing=(Pricing.ON_DEMAND, Pricing.SPOT))
    per_gpu = estimate_per_gpu(job, sorted(set(table.pairs)), KNOWN)
    needs = host_needs(job, req, table.host_keys, per_gpu)
    assert len(needs) > 50
    for (gpu, count, vcpus, score, threads), need in needs.items():
        row = per_gpu.get((gpu, count))
        assert need == host_memory_need_bytes(job, req, gpu_count=count, vcpus=vcpus, cpu_score=score,
                                              threads_per_core=threads,
                                              iteration_ms=row.iteration_ms if row is not None else 0.0)
