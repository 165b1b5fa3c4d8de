"""A machine's host memory need for a job: the system, one training process per GPU and its loader workers.

Split from shapes.py: the plain ranking, the array judge and the strategy search all ask it, per machine kind.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from workers.ranking.catalog_index import Machine
from workers.sizing.machine import (
    REFERENCE_CPU_SINGLE_THREAD_SCORE,
    cpu_score_needed,
    host_memory_bytes,
    loader_batch_bytes,
    loader_host_bytes,
    loader_workers,
    loaders_in_use,
)
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec


def host_memory_need_bytes(job: JobSpec, requirements: Requirements, *, gpu_count: int, vcpus: int = 0,
                           iteration_ms: float = 0.0, cpu_score: float = 0.0, threads_per_core: int = 1) -> int:
    """Return the host memory a machine with `gpu_count` GPUs (and `vcpus`, 0: not known) needs for the job.

    The requirements are for one GPU; each further GPU runs one more training process on the host
    (machine.host_memory_bytes of the sizing core) with its loader workers. On a machine of known vCPUs
    they are the fewest of those its vCPUs allow that keep a GPU of `iteration_ms` fed on its cores
    (machine.loaders_in_use), or without a time the requirements' count, at most what the vCPUs allow.
    """
    extra = host_memory_bytes(job.dataset, gpu_count=gpu_count) - host_memory_bytes(job.dataset, gpu_count=1)
    base = requirements.host_memory_bytes - requirements.loader_host_bytes_per_gpu + extra
    per_gpu = requirements.loader_host_bytes_per_gpu
    if vcpus > 0 and requirements.loader_workers_in_memory > 0:
        per_gpu = _loaders_on(job, requirements, gpu_count=gpu_count, vcpus=vcpus, iteration_ms=iteration_ms,
                              cpu_score=cpu_score, threads_per_core=threads_per_core,
                              batch_bytes=loader_batch_bytes(job.model, job.dataset,
                                                             batch_size=job.training.batch_size))
    return base + per_gpu * gpu_count


def _loaders_on(job: JobSpec, requirements: Requirements, *, gpu_count: int, vcpus: int, iteration_ms: float,
                cpu_score: float, threads_per_core: int, batch_bytes: int) -> int:
    """Return one GPU's loader host bytes on a machine of known vCPUs (host_memory_need_bytes)."""
    allowed = loader_workers(job.dataset, vcpus=vcpus, gpu_count=gpu_count)
    workers = (loaders_in_use(job.dataset, workers=allowed, batch_size=job.training.batch_size,
                              iteration_ms=iteration_ms, cpu_single_thread_score=cpu_score, vcpus=vcpus,
                              gpu_count=gpu_count, threads_per_core=threads_per_core) if iteration_ms > 0
               else min(allowed, requirements.loader_workers_in_memory))
    return loader_host_bytes(workers=workers, batch_bytes=batch_bytes)


HostKey = tuple[str, int, int, float, int]


def host_key(m: Machine) -> HostKey:
    """Return what a machine's host memory need depends on: its GPU and count, vCPUs, CPU score, threads per core."""
    return (m.gpu, m.gpu_count, m.vcpus, m.cpu_score, m.threads_per_core)


def host_needs(job: JobSpec, requirements: Requirements, keys: Iterable[HostKey],
               per_gpu: Mapping[tuple[str, int], PerGpu]) -> dict[HostKey, int]:
    """Return host_memory_need_bytes per host_key (a MachineTable's host_keys, or host_key of each machine),
    each GPU's loaders fed at its iteration time.

    The same figures as host_memory_need_bytes key by key, worked out with the per-job parts said once (a
    ranking judges a hundred or more machine kinds; tests/test_loader_memory.py holds the two equal).
    """
    keys = set(keys)
    counts = {key[1] for key in keys}
    base = {n: host_memory_need_bytes(job, requirements, gpu_count=n) for n in counts}
    dataset = job.dataset
    if requirements.loader_workers_in_memory <= 0:  # no loader: the GPU count alone sets the need
        return {key: base[key[1]] for key in keys}
    if dataset.preprocess_serial or dataset.loader_workers is not None:  # a count the job fixes, capped by vCPUs
        return {key: host_memory_need_bytes(job, requirements, gpu_count=key[1], vcpus=key[2]) for key in keys}
    batch = job.training.batch_size
    batch_bytes = loader_batch_bytes(job.model, dataset, batch_size=batch)
    per_worker = loader_host_bytes(workers=2, batch_bytes=batch_bytes) - loader_host_bytes(workers=1,
                                                                                          batch_bytes=batch_bytes)
    first = loader_host_bytes(workers=1, batch_bytes=batch_bytes) - per_worker  # what any worker count adds
    loader = requirements.loader_host_bytes_per_gpu
    work = cpu_score_needed(batch_size=batch, preprocess_ms_per_sample=dataset.preprocess_ms_per_sample,
                            iteration_ms=1.0)  # x 1/iteration_ms: the score that keeps a GPU fed
    needs = {}
    for key in keys:
        gpu, count, vcpus, score, threads = key
        if vcpus <= 0:
            needs[key] = base[count]
            continue
        allowed = max(1, vcpus // count - 1)  # machine.default_loader_workers
        pg = per_gpu.get((gpu, count))
        if pg is None or pg.iteration_ms <= 0:
            workers = min(allowed, requirements.loader_workers_in_memory)
        else:  # machine.loaders_in_use, its common case said directly: each worker on a core of its own
            total = work / pg.iteration_ms
            fewest = max(1, math.ceil(total / (score if score > 0 else REFERENCE_CPU_SINGLE_THREAD_SCORE) - 1e-9))
            if fewest >= allowed:
                workers = allowed
            elif threads <= 1 or fewest + 1 <= vcpus / count / threads:
                workers = fewest
            else:
                workers = loaders_in_use(dataset, workers=allowed, batch_size=batch, iteration_ms=pg.iteration_ms,
                                         cpu_single_thread_score=score, vcpus=vcpus, gpu_count=count,
                                         threads_per_core=threads)
        needs[key] = base[count] + count * (first + workers * per_worker - loader)
    return needs
