"""Ranking on the host: a slow CPU stretches the time, loader workers on their cores, host memory per GPU."""

from __future__ import annotations

from dataclasses import replace

import pytest
from ranking_builders import catalog, gpu, instance, job, offer, per_gpu, rank, requirements

from catalog.types import Pricing, Provider
from workers.sizing.machine import iteration_ms_with_cpu
from workers.sizing.spec import Objective

AWS, GCP = Provider.AWS, Provider.GCP
SPOT, ON_DEMAND = Pricing.SPOT, Pricing.ON_DEMAND
_rank = rank


def test_a_slow_cpu_stretches_the_time_with_a_warning_instead_of_rejecting() -> None:
    cat = catalog([gpu("a10g", 24)],
                  [instance(AWS, "g5.old", "a10g", cpu_score=1000.0),
                   instance(AWS, "g5.new", "a10g", cpu_score=4000.0)],
                  [offer(AWS, "g5.old", "us-east-1", 1.0), offer(AWS, "g5.new", "us-east-1", 1.0)])
    table = {("a10g", 1): per_gpu("a10g", hours=10.0, iteration_ms=100.0)}
    serial = job(preprocess_ms=5.0, objective=Objective.TIME)
    serial = replace(serial, dataset=replace(serial.dataset, preprocess_serial=True))
    rec = _rank(serial, cat, table)
    by_type = {o.instance_type: o for o in rec.options}
    slow = iteration_ms_with_cpu(100.0, batch_size=32, preprocess_ms_per_sample=5.0,
                                 cpu_single_thread_score=1000.0)
    assert slow > 100.0
    assert by_type["g5.old"].iteration_ms == pytest.approx(slow)
    assert by_type["g5.old"].compute_hours == pytest.approx(10.0 * slow / 100.0)
    assert "cpu-bound" in {w.code for w in by_type["g5.old"].warnings}
    assert "CPU-bound" in by_type["g5.old"].why
    assert by_type["g5.new"].training_hours < by_type["g5.old"].training_hours
    assert [o.instance_type for o in rec.options] == ["g5.new", "g5.old"]
    [warning] = [w for w in by_type["g5.old"].warnings if w.code == "cpu-bound"]
    assert "cannot be split" in warning.message and "single-thread score of 3,200" in warning.message


def test_loader_workers_on_the_vcpus_per_gpu_keep_a_slow_cpu_from_binding() -> None:
    cat = catalog([gpu("a10g", 24)],
                  [instance(AWS, "g5.few", "a10g", cpu_score=1000.0, vcpus=2),
                   instance(AWS, "g5.many", "a10g", cpu_score=1000.0, vcpus=8)],
                  [offer(AWS, "g5.few", "us-east-1", 1.0), offer(AWS, "g5.many", "us-east-1", 1.0)])
    table = {("a10g", 1): per_gpu("a10g", hours=10.0, iteration_ms=100.0)}
    by_type = {o.instance_type: o for o in _rank(job(preprocess_ms=5.0), cat, table).options}
    # 32 samples x 5 ms x 2000 / 1000 = 320 ms of one core: 7 workers (8 vCPUs less one) take 46 ms.
    many, few = by_type["g5.many"], by_type["g5.few"]
    assert many.loader_workers == 7 and many.iteration_ms == pytest.approx(100.0)
    assert few.loader_workers == 1 and few.iteration_ms == pytest.approx(320.0)
    [warning] = [w for w in few.warnings if w.code == "cpu-bound"]
    assert "4 loader workers per GPU" in warning.message and "2 vCPUs per GPU" in warning.message
    limited = job(preprocess_ms=5.0)
    limited = replace(limited, dataset=replace(limited.dataset, loader_workers=2))
    two = {o.instance_type: o for o in _rank(limited, cat, table).options}["g5.many"]
    assert two.loader_workers == 2 and two.iteration_ms == pytest.approx(160.0)


def test_loader_workers_on_shared_cores_feed_less_than_a_core_each_and_arm_cores_feed_in_full() -> None:
    # 8 vCPUs, one GPU: 7 workers and the training process. On x86 two vCPUs share a core, so the 8 busy
    # threads run on 4 cores: 4 + 0.3 x 4 = 5.2 cores' worth, 7/8 of it the workers' (4.55 cores).
    # On Graviton a vCPU is a core: the 7 workers pre-process on 7.
    cat = catalog([gpu("a10g", 24)],
                  [instance(AWS, "g5.2xlarge", "a10g", cpu_score=1000.0, vcpus=8, cpu_model="AMD EPYC 7R32"),
                   instance(AWS, "g5g.2xlarge", "a10g", cpu_score=1000.0, vcpus=8, cpu_model="AWS Graviton2")],
                  [offer(AWS, "g5.2xlarge", "us-east-1", 1.0), offer(AWS, "g5g.2xlarge", "us-east-1", 1.0)])
    table = {("a10g", 1): per_gpu("a10g", hours=10.0, iteration_ms=50.0)}
    # 32 samples x 5 ms x 2000 / 1000 = 320 ms of one core per batch.
    rec = _rank(job(preprocess_ms=5.0), cat, table)
    by_type = {o.instance_type: o for o in rec.options}
    x86, arm = by_type["g5.2xlarge"], by_type["g5g.2xlarge"]
    assert (x86.threads_per_core, arm.threads_per_core) == (2, 1)
    assert x86.loader_workers == arm.loader_workers == 7
    assert arm.iteration_ms == pytest.approx(50.0)  # 320 / 7 = 46 ms of pre-processing: the GPU binds
    assert x86.iteration_ms == pytest.approx(320.0 / 4.55)
    assert x86.training_hours > arm.training_hours
    assert [o.instance_type for o in rec.options] == ["g5g.2xlarge", "g5.2xlarge"]
    [warning] = [w for w in x86.warnings if w.code == "cpu-bound"]
    # The fix: 320 ms in 50 takes 7 workers on a core each, 8 cores with the training process (16 vCPUs).
    assert "7 loader workers per GPU, 16 vCPUs, 8 cores per GPU" in warning.message
    assert "this machine has 8 vCPUs per GPU, 4 cores" in warning.message
    assert not [w for w in arm.warnings if w.code == "cpu-bound"]
    # The Graviton host is said to be Arm, so that the team builds for aarch64; the x86 host is not.
    [arm_host] = [w for w in arm.warnings if w.code == "arm-host"]
    assert "AWS Graviton2" in arm_host.message and "aarch64" in arm_host.message
    assert "arm-host" not in {w.code for w in x86.warnings}
    # Without the data set's size the shapes are judged one by one (shapes._judge_all): the same stretch.
    unsized = job(preprocess_ms=5.0)
    unsized = replace(unsized, dataset=replace(unsized.dataset, samples=None))
    one_by_one = {o.instance_type: o for o in _rank(unsized, cat, table).options}
    assert one_by_one["g5.2xlarge"].iteration_ms == pytest.approx(x86.iteration_ms)
    assert one_by_one["g5g.2xlarge"].iteration_ms == pytest.approx(50.0)


def test_more_gpus_need_more_host_memory_for_their_training_processes() -> None:
    cat = catalog([gpu("a10g", 24)],
                  [instance(AWS, "g5.one", "a10g", 1, host_gib=20),
                   instance(AWS, "g5.eight", "a10g", 8, host_gib=20)],
                  [offer(AWS, "g5.one", "us-east-1", 1.0), offer(AWS, "g5.eight", "us-east-1", 8.0)])
    table = {("a10g", 1): per_gpu("a10g"), ("a10g", 8): per_gpu("a10g", 8, hours=1.4)}
    rec = _rank(job(), cat, table, requirements(host_gib=19.0))
    assert [o.instance_type for o in rec.options] == ["g5.one"]
    [eight] = rec.rejected
    assert eight.instance_type == "g5.eight" and "host memory" in eight.reason
