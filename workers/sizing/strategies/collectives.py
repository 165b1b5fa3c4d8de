"""Communication of one iteration per strategy: what each GPU sends, over which link, how much shows.

Per GPU and iteration (micro-batch), with Ψ parameters and N data-parallel ranks:
- plain data parallel: one all-reduce of the gradients, 2 (N-1)/N x gradient bytes (ring);
- ZeRO-1/2: reduce-scatter of gradients and all-gather of updated weights, the same volume as the
  all-reduce (ZeRO paper §7.2.1: "the same communication volume as baseline data parallelism");
- ZeRO-3 / FSDP: all-gather of the weights in forward, again in backward, and a reduce-scatter of
  the gradients: 3 (N-1)/N x 16-bit weight bytes, 1.5x plain (ZeRO paper §7.2.2; PyTorch FSDP paper
  §3.2). With gradient accumulation each micro-batch gathers again (FSDP without no_sync, which
  llm-foundry and torchtitan run);
- hybrid shard: the ZeRO-3 traffic inside the machine, and across machines an all-reduce of each
  GPU's gradient shard, 2 (n-1)/n x 16-bit bytes / g for n machines of g GPUs;
- tensor parallel t: per block, two all-reduces of the activations in forward and two in backward
  (Megatron-LM, Shoeybi et al. 2019, §3), 2 (t-1)/t x s b h x 2 bytes each, over NVLink, not hidden;
- pipeline p with m micro-batches per step: the 1F1B bubble (p-1)/m of the compute (Narayanan et
  al. 2021, §2.2), plus each stage boundary's activations;
- offload: 16-bit gradients to the host and weights back over PCIe per optimizer step, and the
  update on the CPU at CPU_ADAM_PARAMETERS_PER_S.
Between machines, NCCL runs one ring (channel) per NIC, so a collective over every GPU of several
machines moves at the machine's whole network, and its bus bandwidth (nccl-tests PERFORMANCE.md:
busbw = payload x (n-1)/n / time) is the lesser of NVLink's and the machine network's. Hybrid
sharding's across-machine all-reduce runs one ring per GPU of the machine at once, each with its
share of the network.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from workers.sizing.efficiency import (
    ALLREDUCE_BUCKET_BYTES,
    BACKWARD_TO_FORWARD,
    NETWORK_EFFICIENCY,
    PCIE_EFFICIENCY,
    PCIE_GB_PER_S,
)
from workers.sizing.multigpu import allreduce_latency_ms
from workers.sizing.overheads import GRADIENT_BYTES
from workers.sizing.spec import Precision
from workers.sizing.strategies.parallelism import Layout
from workers.sizing.strategies.types import PARAMETERS_SHARDED, DataParallel

# FSDP overlaps the next unit's all-gather and the previous unit's reduce-scatter with compute;
# what is left shows (PyTorch FSDP paper §3.3, prefetching). [rule of thumb: 80% of the compute can
# hide communication, the same share the sizing core gives DDP's bucketed all-reduce, efficiency.py]
COMMUNICATION_OVERLAP = 0.8
# DeepSpeed's CPU-Adam updates parameters on the host, every process of a machine at once on its cores.
# [measured, public, per machine] deepspeedai/DeepSpeed#6834 (2024-12-11, tjruwase reading the user's
# wall_clock_breakdown): Qwen-72B, ZeRO-3 with optimizer and parameter offload on 4 A100-80GB machines,
# optimizer step ~10 s: 18.2B parameters a machine, 1.8e9/s; THUDM/slime#1139 (2025-12-17): GLM-4.5-Air
# (106B, every expert's state updated) on 4 H100 machines, 9.6 s of CPU Adam in an 18 s profiled step:
# 26.5B a machine, 2.8e9/s (more with the profiler off). We take 2.2e9, their geometric mean; it was a
# recalled 1e9 until 2026-12-06. Our own fused torch AdamW on one core of this machine's EPYC runs
# 1.7e9/s and two cores 2.1e9/s (memory-bound), so a host's memory, not its core count, sets the pace.
CPU_ADAM_PARAMETERS_PER_S = 2.2e9
# Those rates are whole machines'. A cloud machine of fewer GPUs is a slice of such a host (AWS p5.4xlarge: 1 H100,
# 16 of the p5.48xlarge's 192 vCPUs); its share of the host's cores and memory channels updates its share of the
# parameters: the rate is scaled by its vCPUs over FULL_HOST_VCPUS, at most 1. 96 vCPUs: the 8 x A100 machines
# (AWS p4d/p4de.24xlarge, GCP a2-highgpu-8g), the smallest whole 8-GPU hosts of the catalogs. Eight p5.4xlarge
# offloading a 70B model's optimizer were each given a whole host's CPU-Adam and ranked first, ahead of the one
# p5.48xlarge (the same 8 H100s and price, NVLink between them). A machine whose vCPUs are not known (the team's
# own) keeps the whole-host rate.
FULL_HOST_VCPUS = 96
BACKWARD_SHARE = BACKWARD_TO_FORWARD / (1.0 + BACKWARD_TO_FORWARD)
COMM_BYTES = 2  # collectives run on 16-bit weights and gradients under mixed precision

# Host-to-device copies from pinned memory reach most of the PCIe link (NVIDIA bandwidthTest on a
# PCIe 4 x16 host: about 25 of 31.5 GB/s) [rule of thumb: 80%], unlike a ring through host memory.
HOST_COPY_EFFICIENCY = 0.8


# Kinds whose gradients are exchanged once per update under gradient accumulation; ZeRO and FSDP reduce (or
# reduce-scatter) every micro-batch's gradients, so that no rank holds a whole unsharded set.
ONCE_PER_UPDATE = frozenset({DataParallel.PLAIN, DataParallel.PARAMETER_SERVER, DataParallel.AUTO})


def wire_bytes(kind: DataParallel, precision: Precision) -> tuple[int, int]:
    """Return the bytes a gradient and a weight take in the data-parallel collectives.

    Plain data parallel (DDP, Horovod, a parameter server) reduces the gradients as autograd leaves them,
    in the dtype of the weights they belong to: under mixed precision those are the fp32 master weights
    (PyTorch AMP), so 4 bytes (multigpu.py says the same for the plain estimate). ZeRO and FSDP under mixed
    precision gather 16-bit weights and reduce 16-bit gradients (DeepSpeed's bf16/fp16 modes, FSDP's
    MixedPrecision): COMM_BYTES. An fp32 job sends 4 bytes whatever the kind.
    """
    if precision is Precision.FP32:
        return GRADIENT_BYTES, GRADIENT_BYTES
    if kind in ONCE_PER_UPDATE:  # the plain kinds: gradients as autograd leaves them
        return GRADIENT_BYTES, COMM_BYTES
    return COMM_BYTES, COMM_BYTES


@dataclass(frozen=True)
class Links:
    """The achieved one-way bandwidth each GPU gets inside its machine and between machines."""

    intra_gb_per_s: float
    intra_link: str  # "nvlink" or "pcie"
    inter_gb_per_s: float  # the machine's network (all its NICs); 0 without one
    pcie_gb_per_s: float
    host_update_per_s: float = CPU_ADAM_PARAMETERS_PER_S  # the machine's CPU-Adam rate, parameters a second


def node_links(*, nvlink_gb_per_s: float, pcie_gen: int, network_gbit_per_s: float,
               nvlink_efficiency: float, host_share: float = 1.0) -> Links:
    """Return one GPU's links: NVLink (or PCIe) inside the machine, the machine's network outside, and its host's
    CPU-Adam rate (`host_share`: its share of a whole host's, from host_share below)."""
    pcie = PCIE_GB_PER_S[pcie_gen] * PCIE_EFFICIENCY
    nvlink = nvlink_gb_per_s / 2 * nvlink_efficiency
    intra, name = (nvlink, "nvlink") if nvlink > pcie else (pcie, "pcie")
    inter = network_gbit_per_s / 8 * NETWORK_EFFICIENCY
    return Links(intra_gb_per_s=intra, intra_link=name, inter_gb_per_s=inter,
                 pcie_gb_per_s=PCIE_GB_PER_S[pcie_gen] * HOST_COPY_EFFICIENCY,
                 host_update_per_s=CPU_ADAM_PARAMETERS_PER_S * host_share)


def host_share(vcpus: int) -> float:
    """Return the share of a whole host's CPU-Adam rate a machine of these vCPUs has (1 where not known), to the
    nearest power of two: within 1.4x of the vCPUs' share, inside the rate's own spread (1.8-2.8e9 a second), and the
    ranking searches once per share, not once per vCPU count."""
    if vcpus <= 0 or vcpus >= FULL_HOST_VCPUS:
        return 1.0
    return float(2.0 ** round(math.log2(vcpus / FULL_HOST_VCPUS)))


@dataclass(frozen=True)
class Communication:
    """One iteration's communication on one GPU, by kind, with what shows after overlap."""

    data_parallel_ms: float  # the whole exchange of the data-parallel dimension
    tensor_parallel_ms: float  # not hidden
    pipeline_bubble_ms: float
    offload_ms: float  # PCIe transfers and the CPU update, per iteration
    exposed_ms: float  # what adds to the compute
    bound: str  # "network", "nvlink", "pcie", "compute"


def _ring_ms(payload_bytes: float, ranks: int, gb_per_s: float) -> float:
    """Return a ring collective's transfer time: (n-1)/n x the payload over the link."""
    if ranks <= 1 or payload_bytes <= 0 or gb_per_s <= 0:
        return 0.0
    return (ranks - 1) / ranks * payload_bytes / (gb_per_s * 1e6)


def _data_parallel_ms(layout: Layout, links: Links, *, trainable: int, parameters: int,
                      precision: Precision) -> tuple[float, str]:
    """Return the data-parallel exchange of one iteration and the link that bounds it."""
    n, kind = layout.data_parallel_degree, layout.data_parallel
    if n <= 1 or trainable <= 0:
        return 0.0, "compute"
    split = layout.tensor_parallel * layout.pipeline_stages
    gradient_bytes, weight_bytes = wire_bytes(kind, precision)
    grads = trainable / split * gradient_bytes
    weights = parameters / split * weight_bytes
    spans = layout.nodes > 1
    link_gb = min(links.intra_gb_per_s, links.inter_gb_per_s) if spans else links.intra_gb_per_s
    link = ("network" if links.inter_gb_per_s < links.intra_gb_per_s else links.intra_link) if spans \
        else links.intra_link
    if kind is DataParallel.HYBRID_SHARD and spans:
        g = layout.shard_degree
        inside = _ring_ms(2 * weights + grads, g, links.intra_gb_per_s)  # all-gathers of frozen weights too
        across = 2 * _ring_ms(grads / g, layout.nodes, links.inter_gb_per_s / layout.gpus_per_node)
        return inside + across, "network" if across > inside else links.intra_link
    if kind in PARAMETERS_SHARDED:
        return _ring_ms(2 * weights + grads, n, link_gb), link
    # Plain, ZeRO-1/2 and the parameter server move the gradients out and the weights (or their
    # averages) back: an all-reduce's volume.
    return _ring_ms(2 * grads, n, link_gb), link


def _latency_ms(layout: Layout, *, blocks: int, spans: bool) -> float:
    """Return NCCL's per-call latency of the data-parallel collectives: per bucket, or 3 per FSDP unit."""
    n = layout.data_parallel_degree
    if n <= 1:
        return 0.0
    calls = 3 * max(1, blocks) if layout.data_parallel in PARAMETERS_SHARDED else max(1, blocks // 2)
    return allreduce_latency_ms(gpu_count=n, buckets=calls, link="network" if spans else "nvlink")


def iteration_communication(layout: Layout, links: Links, *, compute_ms: float, trainable: int, parameters: int,
                            activation_values_per_block: int, blocks: int, micro_batches: int,
                            precision: Precision) -> Communication:
    """Return one iteration's communication on one GPU and what of it adds to `compute_ms`.

    `compute_ms` is the GPU's own forward and backward for one micro-batch (already divided by the
    tensor-parallel and pipeline split); `activation_values_per_block` is s x b x h of one block.
    """
    dp_ms, link = _data_parallel_ms(layout, links, trainable=trainable, parameters=parameters, precision=precision)
    t = layout.tensor_parallel
    activation_bytes = GRADIENT_BYTES if precision is Precision.FP32 else COMM_BYTES
    tp_calls = 4 * blocks / layout.pipeline_stages
    # A group wider than the machine (a named degree on smaller machines) all-reduces across the network, whose
    # bandwidth the machine's GPUs share, at the network's per-call latency; Megatron-LM keeps it inside a machine.
    across = t > layout.gpus_per_node and links.inter_gb_per_s > 0
    tp_gb = min(links.intra_gb_per_s, links.inter_gb_per_s / layout.gpus_per_node) if across else links.intra_gb_per_s
    tp_ms = tp_calls * _ring_ms(2 * activation_values_per_block * activation_bytes, t, tp_gb) if t > 1 else 0.0
    if across:
        tp_ms += allreduce_latency_ms(gpu_count=t, buckets=math.ceil(tp_calls), link="network")
    p = layout.pipeline_stages
    bubble_ms = compute_ms * (p - 1) / max(1, micro_batches) if p > 1 else 0.0
    offload_ms = 0.0
    if layout.offload.optimizer and trainable > 0:
        shard = trainable / (layout.tensor_parallel * p * layout.shard_degree)
        pcie_ms = 2 * shard * COMM_BYTES / (links.pcie_gb_per_s * 1e6)
        cpu_ms = shard * layout.gpus_per_node / links.host_update_per_s * 1000.0
        offload_ms = (pcie_ms + cpu_ms) / max(1, micro_batches)  # once per optimizer step
    if layout.offload.parameters and layout.data_parallel in PARAMETERS_SHARDED:
        offload_ms += 2 * parameters / (t * p) * COMM_BYTES / (links.pcie_gb_per_s * 1e6) / layout.shard_degree
    # Sharded parameters are gathered ahead of forward and backward alike; gradients (plain, ZeRO-1/2)
    # can only be exchanged while backward runs, 2 of the 3 passes.
    sharded = layout.data_parallel in PARAMETERS_SHARDED
    overlap_share = 1.0 if sharded else BACKWARD_SHARE
    hidden = COMMUNICATION_OVERLAP * compute_ms * overlap_share
    # DDP's last gradient bucket starts only when backward ends: at least its share shows (multigpu.py's rule)
    buckets = 1 if sharded else max(1, math.ceil(trainable / (t * p) * wire_bytes(layout.data_parallel, precision)[0]
                                                 / ALLREDUCE_BUCKET_BYTES))
    latency_ms = _latency_ms(layout, blocks=blocks, spans=layout.nodes > 1)
    if layout.data_parallel in ONCE_PER_UPDATE and micro_batches > 1:
        # DDP under gradient accumulation (no_sync on the earlier micro-batches, as the Hugging Face Trainer and
        # accelerate run it): one exchange per update, after the last backward, overlapping nothing (multigpu.py)
        exposed_dp = (dp_ms + latency_ms) / micro_batches
    else:
        exposed_dp = max(0.0, dp_ms - hidden, dp_ms / buckets if not sharded else 0.0) + latency_ms
    exposed = exposed_dp + tp_ms + bubble_ms + offload_ms
    parts = {link: exposed_dp, "pcie": offload_ms}
    tp_link = "network" if across else "nvlink"
    parts[tp_link] = parts.get(tp_link, 0.0) + tp_ms
    top = max(parts, key=lambda k: parts[k])
    bound = top if parts[top] > 0.25 * compute_ms else "compute"
    return Communication(data_parallel_ms=dp_ms, tensor_parallel_ms=tp_ms, pipeline_bubble_ms=bubble_ms,
                         offload_ms=offload_ms, exposed_ms=exposed, bound=bound)
