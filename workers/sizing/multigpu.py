"""Data parallel on n GPUs: ring all-reduce of the gradients over the link, overlap, framework scaling.

Each GPU runs its own batch; after backward the gradients are averaged with a ring all-reduce, which
sends 2(n-1)/n of the gradient bytes (in the gradients' dtype: fp32 under PyTorch AMP, whose
gradients follow the fp32 weights) over the slowest link of the ring. Frameworks hide most of it
behind backward (bucketed all-reduce, PyTorch DDP, Horovod, MirroredStrategy), which scales close to
linearly on one machine (NVIDIA DeepLearningExamples ResNet-50: 7.3-7.7x on 8 GPUs in TensorFlow and
PyTorch). With gradient accumulation the exchange runs once per update, after the last micro-batch's
backward, and overlaps nothing. The 2017 survey of domain.md §4 (TensorFlow 2-3x on 4 GPUs) measured
parameter-server training: it caps only a job that says it trains that way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from catalog.types import GpuSpec
from workers.sizing.efficiency import (
    ALLREDUCE_BASE_LATENCY_MS,
    ALLREDUCE_BUCKET_BYTES,
    ALLREDUCE_OVERLAP_OF_BACKWARD,
    ALLREDUCE_STEP_LATENCY_MS,
    DATA_PARALLEL_SYNC_MS,
    NETWORK_EFFICIENCY,
    NVLINK_EFFICIENCY,
    PCIE_EFFICIENCY,
    PCIE_GB_PER_S,
)
from workers.sizing.rules import SPEEDUP_ON_4_GPUS
from workers.sizing.spec import Framework

# Cards whose NVLink is a bridge between two cards; a third card talks over PCIe (vendor docs:
# GeForce and H100 PCIe NVLink bridges join pairs).
NVLINK_PAIRS_ONLY = frozenset({"rtx-2080-ti", "rtx-3090", "h100-pcie"})
# When the machine is not known, one holds at most 8 GPUs (DGX/HGX, p4d, a2-highgpu-8g) and more GPUs
# span machines. A caller that knows the machine (a catalog instance: a2-megagpu-16g's 16 A100 share one
# NVSwitch fabric; a DGX-2's 16 V100 likewise) passes its GPU count as `gpus_per_node`.
MAX_GPUS_PER_NODE = 8
# Between machines, when the caller does not say: the network of the cloud instance built on that GPU
# (AWS instance types: p3dn.24xlarge V100 100 Gbit/s, p4d.24xlarge A100 400 Gbit/s EFA, p5.48xlarge
# H100 3200 Gbit/s EFA, p5e H200 3200, p6-b200 3200); 100 Gbit/s for any other card.
DEFAULT_INTER_NODE_GBIT_PER_S = 100.0
INTER_NODE_GBIT_PER_S_BY_GPU: dict[str, float] = {
    "a100-40gb": 400.0, "a100-80gb": 400.0, "h100-sxm": 3200.0, "h100-pcie": 3200.0, "h200": 3200.0,
    "b200": 3200.0,
}


@dataclass(frozen=True)
class MultiGpuTime:
    """How n GPUs change one iteration: the exchange, what of it shows, and the resulting speed-up."""

    link: str  # "nvlink", "pcie" or "network"
    link_gb_per_s: float  # achieved one-way bandwidth of the ring's slowest link
    allreduce_full_ms: float  # the whole gradient exchange
    exposed_ms: float  # the part not hidden behind backward
    scaling_loss_ms: float  # extra time so the speed-up stays within the framework's measured scaling
    total_ms: float
    speedup: float  # samples/s on n GPUs over one GPU


def ring_link(gpu: GpuSpec, gpu_count: int, *, inter_node_gbit_per_s: float | None = None,
              gpus_per_node: int | None = None) -> tuple[str, float]:
    """Return the ring's slowest link and its achieved one-way bandwidth in GB/s.

    `gpus_per_node`: how many GPUs one machine holds (MAX_GPUS_PER_NODE when not known); a ring of
    more GPUs than that crosses the network.
    """
    pcie = PCIE_GB_PER_S[gpu.pcie_gen] * PCIE_EFFICIENCY
    nvlink = gpu.nvlink_gb_per_s / 2 * NVLINK_EFFICIENCY
    if nvlink > 0 and (gpu_count == 2 or gpu.slug not in NVLINK_PAIRS_ONLY):
        link, bandwidth = "nvlink", nvlink
    else:
        link, bandwidth = "pcie", pcie
    if inter_node_gbit_per_s is None and gpu_count > (gpus_per_node or MAX_GPUS_PER_NODE):
        inter_node_gbit_per_s = INTER_NODE_GBIT_PER_S_BY_GPU.get(gpu.slug, DEFAULT_INTER_NODE_GBIT_PER_S)
    if inter_node_gbit_per_s is not None:
        network = inter_node_gbit_per_s / 8 * NETWORK_EFFICIENCY
        if network < bandwidth:
            link, bandwidth = "network", network
    return link, bandwidth


def allreduce_latency_ms(*, gpu_count: int, buckets: int, link: str) -> float:
    """Return the latency part of the all-reduces of one iteration: NCCL's per-call and per-step costs.

    A ring takes 2(n-1) steps; where that is more than a tree's 2 log2(n) (up and down), NCCL runs
    double binary trees instead (NCCL 2.4 on: logarithmic latency at scale), so we count the fewer.
    """
    if gpu_count <= 1:
        return 0.0
    steps = min(2 * (gpu_count - 1), 2 * math.ceil(math.log2(gpu_count)))
    return buckets * (ALLREDUCE_BASE_LATENCY_MS + steps * ALLREDUCE_STEP_LATENCY_MS[link])


def allreduce_ms(gradient_bytes: int, *, gpu_count: int, link_gb_per_s: float, link: str = "pcie") -> float:
    """Return a ring all-reduce's time: 2(n-1)/n x bytes over the link, plus NCCL's latency per bucket."""
    if gpu_count <= 1 or gradient_bytes <= 0:
        return 0.0
    steps = 2 * (gpu_count - 1)
    buckets = max(1, math.ceil(gradient_bytes / ALLREDUCE_BUCKET_BYTES))
    transfer_ms = steps / gpu_count * gradient_bytes / (link_gb_per_s * 1e6)
    return transfer_ms + allreduce_latency_ms(gpu_count=gpu_count, buckets=buckets, link=link)


def framework_speedup_cap(framework: Framework, gpu_count: int) -> float:
    """Return the best speed-up the framework reaches on n GPUs (domain.md §4, per doubling)."""
    if gpu_count <= 1:
        return 1.0
    per_doubling = math.sqrt(SPEEDUP_ON_4_GPUS[framework] / 4)  # 4 GPUs = two doublings
    return float(gpu_count * per_doubling ** math.log2(gpu_count))


def multi_gpu_time(single_gpu_ms: float, *, backward_ms: float, gradient_bytes: int, gpu: GpuSpec,
                   gpu_count: int, framework: Framework, inter_node_gbit_per_s: float | None = None,
                   update_interval: int = 1, parameter_server: bool = False,
                   gpus_per_node: int | None = None) -> MultiGpuTime:
    """Return one micro-step's time on n GPUs, each on its own batch, from the one-GPU time.

    `update_interval` > 1: the exchange runs once per update, unhidden, and is spread over its
    micro-steps. `parameter_server`: the 2017 survey's scaling caps the speed-up (domain.md §4).
    """
    link, bandwidth = ring_link(gpu, gpu_count, inter_node_gbit_per_s=inter_node_gbit_per_s,
                                gpus_per_node=gpus_per_node)
    full_ms = allreduce_ms(gradient_bytes, gpu_count=gpu_count, link_gb_per_s=bandwidth, link=link)
    buckets = max(1, math.ceil(gradient_bytes / ALLREDUCE_BUCKET_BYTES))
    # The last bucket starts only when backward ends, so at least its share shows; the ranks then meet
    # (DATA_PARALLEL_SYNC_MS), which no amount of backward hides.
    if update_interval > 1:
        exposed_ms = full_ms / update_interval
    else:
        exposed_ms = max(full_ms - ALLREDUCE_OVERLAP_OF_BACKWARD * backward_ms, full_ms / buckets)
    exposed_ms += DATA_PARALLEL_SYNC_MS / update_interval if gpu_count > 1 else 0.0
    with_exchange_ms = single_gpu_ms + exposed_ms
    capped_ms = 0.0
    if parameter_server:
        capped_ms = gpu_count * single_gpu_ms / framework_speedup_cap(framework, gpu_count)
    total_ms = max(with_exchange_ms, capped_ms)
    return MultiGpuTime(
        link=link, link_gb_per_s=bandwidth, allreduce_full_ms=full_ms, exposed_ms=exposed_ms,
        scaling_loss_ms=total_ms - with_exchange_ms, total_ms=total_ms,
        speedup=gpu_count * single_gpu_ms / total_ms,
    )
