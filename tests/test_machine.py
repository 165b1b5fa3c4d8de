"""The rest of the machine: host memory, storage 3-4x the data, and the CPU that feeds the GPU."""

from __future__ import annotations

import pytest

from workers.sizing.machine import (
    HOST_BASE_BYTES,
    HOST_PER_GPU_PROCESS_BYTES,
    REFERENCE_CPU_SINGLE_THREAD_SCORE,
    cpu_score_needed,
    host_memory_bytes,
    iteration_ms_with_cpu,
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
