"""The rest of the machine (domain.md §6): host memory, storage, and the CPU speed that feeds the GPU."""

from __future__ import annotations

from dataclasses import dataclass

from catalog.units import GIB
from workers.sizing.rules import STORAGE_MAX_FACTOR, STORAGE_MIN_FACTOR
from workers.sizing.spec import Dataset

# The CPU scale: PassMark "CPU single thread rating". `preprocess_ms_per_sample` is read as measured
# on one core of this score: about 2000, a Skylake-SP cloud core (Xeon Platinum 8175M, AWS p3dn/m5)
# [unverified: order of magnitude from PassMark's single-thread chart]. catalog/cpu_scores.py must
# use the same scale for the instances' scores.
REFERENCE_CPU_SINGLE_THREAD_SCORE = 2000.0
REFERENCE_CPU = "Intel Xeon Platinum 8175M (Skylake-SP) core, PassMark single-thread about 2000"

# Host memory besides the data [rule of thumb]: the OS, Python and the loader's parent process, and
# per GPU one training process with the CUDA libraries mapped (a PyTorch process with CUDA
# initialised holds 2-3 GB resident).
HOST_BASE_BYTES = 2 * GIB
HOST_PER_GPU_PROCESS_BYTES = int(2.5 * GIB)


@dataclass(frozen=True)
class MachineNeeds:
    """What the host must provide besides the GPUs."""

    host_memory_bytes: int
    storage_min_bytes: int
    storage_max_bytes: int


def host_memory_bytes(dataset: Dataset, *, gpu_count: int = 1) -> int:
    """Return host memory: the dataset when it is loaded into memory, plus the processes' own."""
    data = dataset.size_bytes if dataset.in_memory else 0
    return data + HOST_BASE_BYTES + HOST_PER_GPU_PROCESS_BYTES * gpu_count


def storage_bytes(dataset: Dataset) -> tuple[int, int]:
    """Return (min, max) storage: 3 and 4 times the dataset (domain.md §6)."""
    return STORAGE_MIN_FACTOR * dataset.size_bytes, STORAGE_MAX_FACTOR * dataset.size_bytes


def machine_needs(dataset: Dataset, *, gpu_count: int = 1) -> MachineNeeds:
    """Return host memory and storage for the job."""
    low, high = storage_bytes(dataset)
    return MachineNeeds(host_memory_bytes(dataset, gpu_count=gpu_count), low, high)


def preprocess_ms_per_iteration(*, batch_size: int, preprocess_ms_per_sample: float,
                                cpu_single_thread_score: float = REFERENCE_CPU_SINGLE_THREAD_SCORE) -> float:
    """Return one GPU's batch pre-processing time on one core of the given score (mostly single-threaded)."""
    if preprocess_ms_per_sample <= 0:
        return 0.0
    return batch_size * preprocess_ms_per_sample * REFERENCE_CPU_SINGLE_THREAD_SCORE / cpu_single_thread_score


def cpu_score_needed(*, batch_size: int, preprocess_ms_per_sample: float, iteration_ms: float) -> float:
    """Return the single-thread score at which pre-processing one batch takes one GPU iteration."""
    if preprocess_ms_per_sample <= 0 or iteration_ms <= 0:
        return 0.0
    return REFERENCE_CPU_SINGLE_THREAD_SCORE * batch_size * preprocess_ms_per_sample / iteration_ms


def iteration_ms_with_cpu(per_gpu_iteration_ms: float, *, batch_size: int, preprocess_ms_per_sample: float,
                          cpu_single_thread_score: float) -> float:
    """Return the iteration time once the CPU is counted: the slower of GPU work and pre-processing.

    The loader prepares the next batch while the GPU runs this one, so the two overlap and the slower
    sets the pace ("an old CPU can halve what a new GPU delivers", domain.md §6). A score of 0 means
    the CPU is unknown: the GPU time is returned unchanged.
    """
    if cpu_single_thread_score <= 0:
        return per_gpu_iteration_ms
    cpu_ms = preprocess_ms_per_iteration(batch_size=batch_size,
                                         preprocess_ms_per_sample=preprocess_ms_per_sample,
                                         cpu_single_thread_score=cpu_single_thread_score)
    return max(per_gpu_iteration_ms, cpu_ms)
