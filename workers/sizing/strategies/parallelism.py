"""How a job spreads over GPUs, and the model-state bytes each GPU and its host keep for it.

Model states are the parameters, gradients and optimizer state (Rajbhandari et al. 2020, "ZeRO:
Memory Optimizations Toward Training Trillion Parameter Models", arXiv 1910.02054, §3.1 and Fig. 1):
with mixed-precision Adam each parameter costs 2 bytes of 16-bit weights, 2 of 16-bit gradients and
K = 12 of optimizer state (fp32 master weights, momentum, variance), and on N data-parallel GPUs
- ZeRO-1 (P_os) keeps 4 + 12/N bytes per parameter (optimizer state sharded),
- ZeRO-2 (P_os+g) keeps 2 + 14/N (gradients sharded too),
- ZeRO-3 (P_os+g+p) keeps 16/N (parameters sharded too; FSDP FULL_SHARD is the same split, Zhao et
  al. 2023, "PyTorch FSDP", arXiv 2304.11277), plus the full weights of the units being gathered.
Our accounting keeps the sizing core's per-parameter bytes (overheads.py: 6 bytes of weights in
mixed precision = fp32 master + 16-bit copy, 4 of fp32 gradients, the optimizer's own state), so
plain data parallel matches estimate_memory, and splits each term the way the stage does.
Tensor parallel over t GPUs and p pipeline stages divide every model state by t x p (Megatron-LM,
Shoeybi et al. 2019; Narayanan et al. 2021). Offload (ZeRO-Offload, Ren et al. 2021, arXiv
2101.06840) moves the fp32 master weights, gradients and optimizer state of a GPU's shard to its
host and runs the update there; parameter offload (ZeRO-3 / FSDP CPU offload) also moves the 16-bit
weights, leaving only the gathered units on the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workers.sizing.overheads import (
    COMPUTE_WEIGHT_BYTES,
    DDP_BUCKET_COPIES_PYTORCH,
    GRADIENT_BYTES,
    WEIGHT_BYTES,
    state_bytes_per_parameter,
)
from workers.sizing.spec import Optimizer, Precision
from workers.sizing.strategies.types import (
    PARAMETERS_SHARDED,
    SHARDED,
    Adapter,
    AdapterKind,
    Checkpointing,
    DataParallel,
    Offload,
)

__all__ = ["PARAMETERS_SHARDED", "SHARDED", "Adapter", "Checkpointing", "DataParallel", "Layout", "ModelStateBytes",
           "Offload", "ParameterCounts", "model_state_bytes"]
from workers.sizing.strategies.adapters import NF4_BYTES_PER_PARAMETER, NF4_NO_DQ_BYTES_PER_PARAMETER

# FSDP's forward prefetch gathers the next unit while the current one computes: two units' full
# weights are alive, and backward holds one unit's unsharded 16-bit gradients before its
# reduce-scatter (PyTorch FSDP docs, forward_prefetch / backward_prefetch BACKWARD_PRE). DeepSpeed's
# estimator counts the same as "largest_layer_memory = 4 * largest_layer_params" (2 bytes of
# gathered weights + 2 of gradients; DeepSpeed docs/code-docs/source/memory.rst).
GATHERED_UNITS = 2
UNSHARDED_GRADIENT_BYTES = 2  # one unit's 16-bit gradients before reduce-scatter


@dataclass(frozen=True)
class Layout:
    """One concrete strategy on a concrete set of GPUs: every choice made."""

    data_parallel: DataParallel
    gpu_count: int  # all GPUs, over every machine
    gpus_per_node: int
    tensor_parallel: int = 1
    pipeline_stages: int = 1
    offload: Offload = field(default_factory=Offload)
    adapter: Adapter | None = None
    checkpointing: Checkpointing = Checkpointing.NONE

    @property
    def nodes(self) -> int:
        """Return the machines the layout spans."""
        return max(1, -(-self.gpu_count // self.gpus_per_node))

    @property
    def data_parallel_degree(self) -> int:
        """Return the replicas (or shards) of the data-parallel dimension."""
        return max(1, self.gpu_count // (self.tensor_parallel * self.pipeline_stages))

    @property
    def shard_degree(self) -> int:
        """Return over how many GPUs the sharded states are split (1 when nothing is sharded)."""
        if self.data_parallel in (DataParallel.PLAIN, DataParallel.PARAMETER_SERVER, DataParallel.AUTO):
            return 1
        if self.data_parallel is DataParallel.HYBRID_SHARD:
            return max(1, min(self.data_parallel_degree, self.gpus_per_node // self.tensor_parallel))
        return self.data_parallel_degree


@dataclass(frozen=True)
class ModelStateBytes:
    """Model states on one GPU, and what its share leaves in host memory."""

    parameters: int  # weights kept, sharded or not, plus the units gathered for compute
    gradients: int
    optimizer_state: int
    host_bytes: int  # offloaded states of this GPU's shard (a machine holds gpus_per_node of these)
    trainable_parameters: int


@dataclass(frozen=True)
class ParameterCounts:
    """How a model's parameters split for a strategy: trained, frozen at 16 bits, frozen in NF4."""

    trainable: int
    frozen: int  # held at the compute dtype, no gradient, no optimizer state
    frozen_nf4: int = 0  # QLoRA's quantised base weights
    largest_unit: int = 0  # FSDP's largest wrapping unit (a block, the embedding or the head)
    # the trainable weights of that unit, whose gradient leaves it unsharded (None: all of them); with
    # adapters, one block's adapters (the base is frozen and makes no gradient)
    largest_trainable_unit: int | None = None


def model_state_bytes(counts: ParameterCounts, layout: Layout, *, precision: Precision,
                      optimizer: Optimizer, ddp_bucket: bool, ema: bool = False,
                      reference_bytes: int = 0) -> ModelStateBytes:
    """Return one GPU's model-state bytes under the layout (ZeRO paper §5 stages, split per term).

    `ddp_bucket`: PyTorch DDP keeps one more gradient-sized bucket copy (overheads.py). `reference_bytes`: a
    preference job's frozen reference model, bytes a parameter (preference.py), held where the weights are.
    """
    split = layout.tensor_parallel * layout.pipeline_stages
    n = layout.shard_degree
    kind = layout.data_parallel
    compute = COMPUTE_WEIGHT_BYTES[precision]
    master = WEIGHT_BYTES[precision] - compute  # fp32 master copy in mixed precision, 0 in fp32
    # LoRA adapters train in fp32 (PEFT casts adapter weights to fp32 under autocast): no separate
    # master. QLoRA's recipe (artidoro/qlora@00e5ad2a qlora.py) casts the LoRA layers to the compute
    # dtype under --bf16 and pages the optimizer (`optim='paged_adamw_32bit'`, QLoRA §3 "Paged
    # Optimizers": state in unified memory, evicted to CPU RAM when the GPU runs short), so its
    # 32-bit Adam state need not stay on the GPU: it is counted in host memory.
    qlora = layout.adapter is not None and layout.adapter.kind is AdapterKind.QLORA
    trained_weight_bytes, trained_master = (4, 0) if layout.adapter is not None else (compute, master)
    gradient_bytes = GRADIENT_BYTES
    if qlora:
        trained_weight_bytes = gradient_bytes = compute
    trainable = counts.trainable / split
    frozen = counts.frozen / split
    frozen_nf4 = counts.frozen_nf4 / split
    # the EMA's copy sharded as the state is; offloaded, the update is DeepSpeed's CPU Adam, fp32 states whatever the
    # GPU's optimizer would have kept (bitsandbytes' 8-bit states do not go with it)
    offloaded_8bit = layout.offload.optimizer and optimizer is Optimizer.ADAMW_8BIT
    optimizer_bytes = state_bytes_per_parameter(Optimizer.ADAMW if offloaded_8bit else optimizer, ema=ema)
    unit = counts.largest_unit / layout.tensor_parallel
    trained_unit = (counts.largest_unit if counts.largest_trainable_unit is None
                    else counts.largest_trainable_unit) / layout.tensor_parallel

    nf4 = NF4_BYTES_PER_PARAMETER if layout.adapter is None or layout.adapter.double_quantization \
        else NF4_NO_DQ_BYTES_PER_PARAMETER
    weights = trainable * trained_weight_bytes + frozen * compute + frozen_nf4 * nf4
    weights += (trainable + frozen + frozen_nf4) * reference_bytes
    masters = trainable * trained_master
    gradients = trainable * gradient_bytes
    states = trainable * optimizer_bytes
    gathered = 0.0
    paged = 0.0
    if qlora:
        paged, states = states, 0.0
    if kind is DataParallel.PARAMETER_SERVER:
        masters, states = 0.0, 0.0  # the servers keep the variables' master and update them
    if kind in SHARDED:
        states /= n
        masters /= n
    if kind is DataParallel.ZERO1:
        # The full gradients stay, in 16 bits (DeepSpeed keeps them on the fp16 weights; the fp32
        # copy exists only for the optimizer's own shard): ZeRO paper's 2 + 2 + K/N per parameter.
        gradients = trainable * compute + trainable * (GRADIENT_BYTES - compute) / n
    if kind in (DataParallel.ZERO2, *PARAMETERS_SHARDED):
        gradients /= n
    if kind in PARAMETERS_SHARDED:
        weights /= n
        gathered = GATHERED_UNITS * unit * compute
        gradients += trained_unit * UNSHARDED_GRADIENT_BYTES if counts.trainable else 0.0
    if kind is DataParallel.PLAIN and ddp_bucket and layout.gpu_count > 1:
        gradients *= 1.0 + DDP_BUCKET_COPIES_PYTORCH
    host = 0.0
    host += paged / n if kind in SHARDED else paged
    if layout.offload.optimizer:
        host += masters + states + gradients
        masters = states = 0.0
        gradients = trained_unit * UNSHARDED_GRADIENT_BYTES if counts.trainable else 0.0  # the bucket on its way out
    if layout.offload.parameters and kind in PARAMETERS_SHARDED:
        host += weights
        weights = 0.0
    return ModelStateBytes(
        parameters=round(weights + masters + gathered), gradients=round(gradients),
        optimizer_state=round(states), host_bytes=round(host), trainable_parameters=counts.trainable,
    )
