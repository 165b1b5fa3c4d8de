"""The rest of the machine (domain.md §6): host memory, storage, and the CPU speed that feeds the GPU."""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.units import GIB
from workers.sizing.rules import STORAGE_MAX_FACTOR, STORAGE_MIN_FACTOR
from workers.sizing.spec import Dataset
from workers.sizing.stats import ModelStats

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

# A PyTorch DataLoader's workers [measured: validation/loader_memory.json, 7 cases, torch 2.13.0 on this
# machine's CPU build, `python -m validation.measure.loader_memory`]. Each worker keeps `prefetch_factor`
# batches in flight (PyTorch's default 2, torch.utils.data.DataLoader's documentation), each collated into
# shared memory (/dev/shm), and the main process holds the batch in use there too: (2 x workers + 1)
# batches of shared memory in all 7 cases (within 0.1% for 224 x 224 images, 0.9% for 32 x 32, 8.5% for
# 0.1 MB token batches, a few pages). A worker's own memory (USS) is the batch it is
# building plus 10.7-17.4 MiB (median 12). What a worker's own code adds (image decoders, a Python list of
# file names that copy-on-write duplicates page by page) is not known here: the figure is a floor.
LOADER_PREFETCH_FACTOR = 2
LOADER_WORKER_BASE_BYTES = 12 * 2**20
# Docker's /dev/shm unless `--shm-size` says otherwise: 64 MB (the docker run reference, --shm-size) [recalled].
CONTAINER_DEFAULT_SHM_BYTES = 64 * 2**20


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


def loader_batch_bytes(model: ModelStats, dataset: Dataset, *, batch_size: int) -> int:
    """Return one batch as the loader hands it over: the model's input tensors in their dtypes (float32 images,
    int64 token ids), or, for a model given as totals, the data set's bytes per sample (a floor: stored
    samples are usually compressed)."""
    if model.batch_input is not None:
        return model.batch_input.bytes * batch_size
    if dataset.samples > 0:
        return dataset.size_bytes // dataset.samples * batch_size
    return 0


def loaders_in_use(dataset: Dataset, *, workers: int, batch_size: int, iteration_ms: float,
                   cpu_single_thread_score: float = 0.0, vcpus: int = 0, gpu_count: int = 1,
                   threads_per_core: int = 1) -> int:
    """Return the loader workers one GPU's host memory counts: the fewest that keep it fed, at most `workers`.

    A machine's vCPUs allow many workers (default_loader_workers), but a user sets num_workers to what
    the pre-processing needs, counted as the cores' worth they get there (loader_cores); a count the job
    names, or a serial loader's one, stands as given.
    """
    if workers <= 0 or dataset.preprocess_serial or dataset.loader_workers is not None:
        return workers
    score = cpu_single_thread_score if cpu_single_thread_score > 0 else REFERENCE_CPU_SINGLE_THREAD_SCORE
    total = cpu_score_needed(batch_size=batch_size, preprocess_ms_per_sample=dataset.preprocess_ms_per_sample,
                             iteration_ms=iteration_ms)
    # a worker gets at most a core (loader_cores(n) <= n): none fewer than total / score can keep up
    for n in range(max(1, math.ceil(total / score - 1e-9)), workers):
        if loader_cores(n, vcpus=vcpus, gpu_count=gpu_count, threads_per_core=threads_per_core) * score >= total:
            return n
    return workers


def loader_shared_bytes(*, workers: int, batch_bytes: int) -> int:
    """Return the shared memory one GPU's loader uses: each worker's prefetched batches and the batch in use."""
    if workers <= 0:
        return 0
    return (LOADER_PREFETCH_FACTOR * workers + 1) * batch_bytes


def loader_host_bytes(*, workers: int, batch_bytes: int) -> int:
    """Return the host memory one GPU's `workers` loader workers hold: their shared batches and their own."""
    if workers <= 0:
        return 0
    return loader_shared_bytes(workers=workers, batch_bytes=batch_bytes) + workers * (batch_bytes
                                                                                      + LOADER_WORKER_BASE_BYTES)


def storage_bytes(dataset: Dataset) -> tuple[int, int]:
    """Return (min, max) storage: 3 and 4 times the dataset (domain.md §6)."""
    return STORAGE_MIN_FACTOR * dataset.size_bytes, STORAGE_MAX_FACTOR * dataset.size_bytes


def machine_needs(dataset: Dataset, *, gpu_count: int = 1) -> MachineNeeds:
    """Return host memory and storage for the job."""
    low, high = storage_bytes(dataset)
    return MachineNeeds(host_memory_bytes(dataset, gpu_count=gpu_count), low, high)


def default_loader_workers(*, vcpus: int, gpu_count: int) -> int:
    """Return the loader workers per GPU an instance's vCPUs allow: its vCPUs per GPU less one.

    The rule of thumb of PyTorch's DataLoader advice (num_workers up to the cores you have): each GPU's
    training process keeps one vCPU, the rest of its share pre-process. At least one worker.
    """
    if vcpus <= 0 or gpu_count <= 0:
        return 1
    return max(1, vcpus // gpu_count - 1)


def loader_workers(dataset: Dataset, *, vcpus: int = 0, gpu_count: int = 1) -> int:
    """Return the workers that pre-process for one GPU: one when it cannot be split, else the job's or the default.

    A count above what the vCPUs per GPU allow gains nothing: the extra workers share the same cores.
    """
    if dataset.preprocess_serial:
        return 1
    allowed = default_loader_workers(vcpus=vcpus, gpu_count=gpu_count) if vcpus > 0 else None
    if dataset.loader_workers is not None:
        return dataset.loader_workers if allowed is None else max(1, min(dataset.loader_workers, allowed + 1))
    return allowed if allowed is not None else 1


# What a second hardware thread on a busy core adds: two threads of one core do not pre-process twice as fast
# as one, they share its execution units. Intel's figure for Hyper-Threading is up to 30% more throughput
# (Marr et al., "Hyper-Threading Technology Architecture and Microarchitecture", Intel Technology Journal
# 6(1), 2002) [recalled, not re-read]; Tom's Hardware's processor guide (2013-10-31, read 2026-12-02):
# "speed increases of 25% or more are possible" for multithreaded work. Taken at 30%, the most a sibling
# thread is credited with.
# Data loading gains less if anything ("hyperthreading doesn't give much perf" for JIT-compiled transforms,
# tatsu-lab/fast_imagenet_ffcv's README).
SMT_YIELD = 0.3


def loader_cores(workers: int, *, vcpus: int = 0, gpu_count: int = 1, threads_per_core: int = 1) -> float:
    """Return the cores' worth of pre-processing one GPU's `workers` loader workers get on a machine.

    A cloud vCPU is a hardware thread (catalog.cpu_scores.threads_per_core): the GPU's share of the machine
    is vcpus / gpu_count threads on vcpus / gpu_count / threads_per_core cores, which its training process
    (one busy thread, launching the GPU's work) and its workers share. While the busy threads fit on the
    cores, each worker has a core of its own; beyond that a thread that shares a core adds SMT_YIELD of
    one. The workers get their share of what the cores deliver. Unknown vCPUs or one thread per core: the
    workers count in full, as before.
    """
    if workers <= 0:
        return 0.0
    if vcpus <= 0 or gpu_count <= 0 or threads_per_core <= 1:
        return float(workers)
    threads = vcpus / gpu_count
    cores = threads / threads_per_core
    busy = min(workers + 1.0, threads)  # the training process and its workers, on this GPU's threads
    if busy <= cores:
        return float(workers)
    delivered = cores + SMT_YIELD * (busy - cores)
    return delivered * workers / (workers + 1.0)


def loader_share(dataset: Dataset, *, vcpus: int = 0, gpu_count: int = 1,
                 threads_per_core: int = 1) -> tuple[int, float]:
    """Return one GPU's loader workers on a machine (loader_workers) and the cores' worth they get (loader_cores)."""
    workers = loader_workers(dataset, vcpus=vcpus, gpu_count=gpu_count)
    return workers, loader_cores(workers, vcpus=vcpus, gpu_count=gpu_count, threads_per_core=threads_per_core)


def preprocess_ms_per_iteration(*, batch_size: int, preprocess_ms_per_sample: float,
                                cpu_single_thread_score: float = REFERENCE_CPU_SINGLE_THREAD_SCORE,
                                workers: float = 1) -> float:
    """Return one GPU's batch pre-processing time over `workers` cores of the given score (loader_cores).

    Single-thread speed sets each worker's pace (domain.md §6); the workers share the batch.
    """
    if preprocess_ms_per_sample <= 0:
        return 0.0
    return (batch_size * preprocess_ms_per_sample * REFERENCE_CPU_SINGLE_THREAD_SCORE
            / cpu_single_thread_score / max(1, workers))


def cpu_score_needed(*, batch_size: int, preprocess_ms_per_sample: float, iteration_ms: float,
                     workers: int = 1) -> float:
    """Return the single-thread score at which `workers` cores pre-process one batch in one GPU iteration."""
    if preprocess_ms_per_sample <= 0 or iteration_ms <= 0:
        return 0.0
    return REFERENCE_CPU_SINGLE_THREAD_SCORE * batch_size * preprocess_ms_per_sample / iteration_ms / max(1, workers)


def workers_needed(*, batch_size: int, preprocess_ms_per_sample: float, iteration_ms: float,
                   cpu_single_thread_score: float = REFERENCE_CPU_SINGLE_THREAD_SCORE) -> int:
    """Return the fewest loader workers of this score that keep one GPU fed (0: no pre-processing)."""
    need = cpu_score_needed(batch_size=batch_size, preprocess_ms_per_sample=preprocess_ms_per_sample,
                            iteration_ms=iteration_ms)
    if need <= 0 or cpu_single_thread_score <= 0:
        return 0
    return max(1, math.ceil(need / cpu_single_thread_score - 1e-9))


def iteration_ms_with_cpu(per_gpu_iteration_ms: float, *, batch_size: int, preprocess_ms_per_sample: float,
                          cpu_single_thread_score: float, workers: float = 1) -> float:
    """Return the iteration time once the CPU is counted: the slower of GPU work and pre-processing.

    The loader workers prepare the next batches while the GPU runs this one, so the two overlap and the
    slower sets the pace ("an old CPU can halve what a new GPU delivers", domain.md §6). A score of 0
    means the CPU is unknown: the GPU time is returned unchanged.
    """
    if cpu_single_thread_score <= 0:
        return per_gpu_iteration_ms
    cpu_ms = preprocess_ms_per_iteration(batch_size=batch_size,
                                         preprocess_ms_per_sample=preprocess_ms_per_sample,
                                         cpu_single_thread_score=cpu_single_thread_score, workers=workers)
    return max(per_gpu_iteration_ms, cpu_ms)


# The fastest cloud host CPU in the catalog's score table rates 2,750 (Xeon Platinum 8559C/8580,
# catalog/cpu_scores.py, 2026-11-29); a serial pre-processing step that needs more is CPU-bound on every
# rented machine (a desktop Core i9-13900K rates about 4,600, the same table's orientation note).
FASTEST_HOST_CPU_SCORE = 2750.0


@dataclass(frozen=True)
class LoaderNeed:
    """What keeps one GPU fed: `workers` loader workers, each on cores of single-thread score `score`."""

    workers: int
    score: float  # per worker
    serial: bool = False


def loader_need(dataset: Dataset, *, batch_size: int, iteration_ms: float, vcpus: int = 0,
                gpu_count: int = 1, threads_per_core: int = 1) -> LoaderNeed:
    """Return the loader requirement of one GPU as workers x single-thread score.

    The workers are fixed when pre-processing cannot be split (one), when the job names a count, or
    when the machine is known (its vCPUs per GPU); otherwise they are the fewest workers of the
    reference core (2000) that keep the GPU fed, so the requirement reads "4 workers x 1,930". On a
    known machine whose workers share cores (loader_cores), each needs the score its share of a core
    must make up for.
    """
    total = cpu_score_needed(batch_size=batch_size, preprocess_ms_per_sample=dataset.preprocess_ms_per_sample,
                             iteration_ms=iteration_ms)
    if total <= 0:
        return LoaderNeed(0, 0.0, dataset.preprocess_serial)
    if dataset.preprocess_serial or dataset.loader_workers is not None or vcpus > 0:
        workers = loader_workers(dataset, vcpus=vcpus, gpu_count=gpu_count)
    else:
        workers = max(1, math.ceil(total / REFERENCE_CPU_SINGLE_THREAD_SCORE - 1e-9))
    cores = loader_cores(workers, vcpus=vcpus, gpu_count=gpu_count, threads_per_core=threads_per_core)
    return LoaderNeed(workers, total / cores, dataset.preprocess_serial)
