"""Strategies a model cannot use, refused at submit with the field that names them (422 / exit 2).

- tensor parallel splits each layer's attention heads over the GPUs: the degree must divide them
  (Megatron-LM, Shoeybi et al. 2019, §3: heads are partitioned across the GPUs);
- LoRA and QLoRA adapt attention (and MLP) projections: a model without them has nothing to adapt;
- parameter offload moves the sharded 16-bit weights, so it needs a sharded data-parallel kind;
- tensor parallel and pipeline stages need a model given by its layers (the split follows them).
Offload without host memory for it is refused against the catalog (check_offload_host_memory).
"""

from __future__ import annotations

from collections.abc import Iterable

from workers.sizing.errors import SpecError
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.adapters import transformer_shape
from workers.sizing.strategies.types import PARAMETERS_SHARDED, DataParallel

FIELD = "training.parallelism"


def check_strategy(job: JobSpec) -> None:
    """Raise SpecError when the spec names a strategy this model cannot use."""
    p = job.training.parallelism
    shape = transformer_shape(job.model)
    if p.tensor_parallel > 1:
        if shape is None:
            raise SpecError(f"{FIELD}.tensor_parallel", "tensor parallel splits attention heads; this model has no "
                                                        "attention blocks (give it as a transformer preset or layers)")
        if shape.heads % p.tensor_parallel:
            raise SpecError(f"{FIELD}.tensor_parallel", f"degree {p.tensor_parallel} does not divide the model's "
                                                        f"{shape.heads} attention heads")
    if p.pipeline_stages > 1 and (shape is None or shape.blocks < p.pipeline_stages):
        blocks = 0 if shape is None else shape.blocks
        raise SpecError(f"{FIELD}.pipeline_stages", f"{p.pipeline_stages} stages need at least as many transformer "
                                                    f"blocks; the model has {blocks}")
    if p.adapter is not None:
        if shape is None:
            raise SpecError(f"{FIELD}.adapter", f"{p.adapter.kind.value} adapts attention projections; this model "
                                                "has none (LoRA needs a transformer preset or layers with attention)")
        missing = [t for t in p.adapter.targets if shape.lora_sizes.get(t, 0) == 0]
        if missing:
            raise SpecError(f"{FIELD}.adapter.targets", f"the model has no {', '.join(missing)} projections")
    if p.offload.parameters and p.data_parallel not in (*PARAMETERS_SHARDED, DataParallel.AUTO):
        raise SpecError(f"{FIELD}.offload.parameters", f"parameter offload needs zero3, fsdp or hybrid_shard "
                                                       f"(the weights it moves are the shards), not "
                                                       f"{p.data_parallel.value}")


def check_offload_host_memory(job: JobSpec, *, host_need_bytes: int, machines: Iterable[tuple[str, int, int]]) -> None:
    """Raise SpecError when offload is asked for and no machine in scope has the host memory it needs.

    `machines` are (instance type, GPUs, host memory bytes). Offload keeps 16 bytes per trainable
    parameter on the hosts (fp32 master weights, gradients and Adam state; +2 with parameter offload),
    split over as many machines of that type as `constraints.max_gpus` allows.
    """
    p = job.training.parallelism
    if not (p.offload.optimizer or p.offload.parameters):
        return
    machines = list(machines)  # read only here: a caller may pass a generator over the catalog
    trainable = job.model.parameters  # the trainable weights (frozen ones are ModelStats.frozen_parameters)
    states = trainable * (16 + (2 if p.offload.parameters else 0))
    max_gpus = job.constraints.max_gpus
    spare = [(host - host_need_bytes) * max(1, max_gpus // gpus) for _, gpus, host in machines if gpus <= max_gpus]
    if max(spare, default=0) < states:
        best = max((host for _, gpus, host in machines if gpus <= max_gpus), default=0)
        raise SpecError(f"{FIELD}.offload", f"offload keeps about {states / 2**30:,.0f} GiB in host memory (16 bytes "
                                            f"per trainable parameter); within {max_gpus} GPUs no machines in scope "
                                            f"hold it (the largest has {best / 2**30:,.0f} GiB)")
