"""The rest of the machine: host memory, storage 3-4x the data, and the CPU that feeds the GPU."""

from __future__ import annotations

import pytest

from catalog.cpu_scores import threads_per_core
from workers.sizing.machine import (
    HOST_BASE_BYTES,
    HOST_PER_GPU_PROCESS_BYTES,
    REFERENCE_CPU_SINGLE_THREAD_SCORE,
    cpu_score_needed,
    host_memory_bytes,
    iteration_ms_with_cpu,
    loader_cores,
    loader_need,
    machine_needs,
    storage_bytes,
)
from workers.sizing.spec import Dataset

GB = 10**9


def test_host_memory_holds_the_data_when_loaded_into_memory() -> None:
    data = Dataset(samples=1000, size_bytes=150 * GB, in_memory=True)
    assert host_memory_bytes(data) == 150 * GB + HOST_BASE_BYTES + HOST_PER_GPU_PROCESS_BYTES
    assert host_memory_bytes(data, gpu_count=4) == 150 * GB + HOST_BASE_BYTES + 4 * HOST_PER_GPU_PROCESS_BYTES
    streamed = Dataset(samples=1000, size_bytes=150 * GB, in_memory=False)
    assert host_memory_bytes(streamed) == HOST_BASE_BYTES + HOST_PER_GPU_PROCESS_BYTES


def test_storage_is_three_to_four_times_the_data() -> None:
    assert storage_bytes(Dataset(size_bytes=10 * GB)) == (30 * GB, 40 * GB)
    needs = machine_needs(Dataset(size_bytes=7), gpu_count=2)
    assert (needs.storage_min_bytes, needs.storage_max_bytes) == (21, 28)


def test_cpu_score_needed_keeps_preprocessing_as_fast_as_the_gpu() -> None:
    # 64 samples x 2 ms on the reference core = 128 ms of pre-processing per 64 ms iteration: twice the core.
    needed = cpu_score_needed(batch_size=64, preprocess_ms_per_sample=2.0, iteration_ms=64.0)
    assert needed == pytest.approx(2 * REFERENCE_CPU_SINGLE_THREAD_SCORE)
    assert cpu_score_needed(batch_size=64, preprocess_ms_per_sample=0.0, iteration_ms=64.0) == 0.0


def test_a_cpu_of_half_the_needed_score_doubles_the_iteration() -> None:
    needed = cpu_score_needed(batch_size=32, preprocess_ms_per_sample=1.0, iteration_ms=40.0)
    slowed = iteration_ms_with_cpu(40.0, batch_size=32, preprocess_ms_per_sample=1.0,
                                   cpu_single_thread_score=needed / 2)
    assert slowed == pytest.approx(80.0)


def test_a_fast_enough_or_unknown_cpu_leaves_the_gpu_time_alone() -> None:
    needed = cpu_score_needed(batch_size=32, preprocess_ms_per_sample=1.0, iteration_ms=40.0)
    for score in (needed, needed * 3, 0.0):
        assert iteration_ms_with_cpu(40.0, batch_size=32, preprocess_ms_per_sample=1.0,
                                     cpu_single_thread_score=score) == pytest.approx(40.0)


def test_cloud_x86_hosts_have_two_threads_per_core_and_arm_hosts_one() -> None:
    for model in ("Intel Xeon Platinum 8559C", "AMD EPYC 7R13", "Intel Xeon Scalable (Sapphire Rapids)"):
        assert threads_per_core(model) == 2
    for model in ("AWS Graviton2", "Google Axion", "NVIDIA Grace", "Ampere Altra"):
        assert threads_per_core(model) == 1


def test_loader_workers_count_in_full_while_each_busy_thread_has_a_core() -> None:
    # 16 vCPUs on 8 cores for one GPU: 7 workers and the training process fill the cores exactly.
    assert loader_cores(7, vcpus=16, gpu_count=1, threads_per_core=2) == 7.0
    # One thread per core, or the machine unknown: every worker is a core, as before.
    assert loader_cores(15, vcpus=16, gpu_count=1, threads_per_core=1) == 15.0
    assert loader_cores(15, vcpus=0, gpu_count=1, threads_per_core=2) == 15.0
    assert loader_cores(0, vcpus=16, gpu_count=1, threads_per_core=2) == 0.0


def test_loader_workers_on_sibling_threads_add_a_fraction_of_a_core() -> None:
    # g4dn.xlarge: 4 vCPUs, 2 cores, one GPU; 3 workers and the training process on 4 threads deliver
    # 2 + 0.3 x 2 = 2.6 cores, three quarters of it the workers': 1.95 cores, not 3.
    assert loader_cores(3, vcpus=4, gpu_count=1, threads_per_core=2) == pytest.approx(1.95)
    # p6-b200.48xlarge: 192 vCPUs over 8 GPUs: 24 threads on 12 cores per GPU, 23 workers: 15.6 x 23 / 24.
    assert loader_cores(23, vcpus=192, gpu_count=8, threads_per_core=2) == pytest.approx(14.95)
    # More workers than threads gain nothing: they share the same threads.
    assert loader_cores(40, vcpus=4, gpu_count=1, threads_per_core=2) == pytest.approx(2.6 * 40 / 41)


def test_the_loader_need_on_shared_cores_asks_more_of_each_worker() -> None:
    data = Dataset(samples=1000, size_bytes=GB, preprocess_ms_per_sample=2.0)
    # 64 x 2 ms in a 32 ms iteration: four reference cores' worth of pre-processing per GPU.
    arm = loader_need(data, batch_size=64, iteration_ms=32.0, vcpus=4, gpu_count=1, threads_per_core=1)
    x86 = loader_need(data, batch_size=64, iteration_ms=32.0, vcpus=4, gpu_count=1, threads_per_core=2)
    assert arm.workers == x86.workers == 3
    assert arm.score == pytest.approx(4 * REFERENCE_CPU_SINGLE_THREAD_SCORE / 3)
    assert x86.score == pytest.approx(4 * REFERENCE_CPU_SINGLE_THREAD_SCORE / 1.95)
