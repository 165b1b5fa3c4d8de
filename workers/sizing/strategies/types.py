"""The strategy a job names for spreading over GPUs: the spec's `training.parallelism`, as plain types."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

# PEFT's LoraConfig defaults (huggingface/peft src/peft/tuners/lora/config.py: r=8; for LLaMA the
# target modules default to q_proj and v_proj, TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
DEFAULT_LORA_RANK = 8
DEFAULT_LORA_TARGETS = ("q", "v")
LORA_TARGETS = ("q", "k", "v", "o", "mlp")


class DataParallel(StrEnum):
    """How the data-parallel replicas hold and exchange the model states."""

    AUTO = "auto"  # the ranking chooses
    PLAIN = "plain"  # DDP / Horovod / MirroredStrategy: full replica, all-reduce of gradients
    ZERO1 = "zero1"  # optimizer state sharded
    ZERO2 = "zero2"  # optimizer state and gradients sharded
    ZERO3 = "zero3"  # everything sharded (FSDP FULL_SHARD); "fsdp" is accepted as its name
    HYBRID_SHARD = "hybrid_shard"  # ZeRO-3 within a machine, replicas across machines (FSDP HYBRID_SHARD)
    PARAMETER_SERVER = "parameter_server"  # 2017 TensorFlow: variables and their update on servers


PARAMETERS_SHARDED = frozenset({DataParallel.ZERO3, DataParallel.HYBRID_SHARD})
SHARDED = frozenset({DataParallel.ZERO1, DataParallel.ZERO2, *PARAMETERS_SHARDED})


class Checkpointing(StrEnum):
    """Which activations are recomputed in backward (Korthikanti et al. 2022, arXiv 2205.05198)."""

    AUTO = "auto"
    NONE = "none"
    SELECTIVE = "selective"  # the attention core (softmax, dropout, scores) only
    # torchtitan's op-level policy: each block keeps its input, the attention kernel's output and
    # every other matmul's output; everything else is recomputed in backward
    SELECTIVE_OPS = "selective_ops"
    FULL = "full"  # every block, from its input


class AdapterKind(StrEnum):
    """Whether the base weights train, or only adapters beside them."""

    NONE = "none"
    LORA = "lora"
    QLORA = "qlora"


@dataclass(frozen=True)
class Adapter:
    """LoRA or QLoRA: rank and the projections adapted."""

    kind: AdapterKind = AdapterKind.LORA
    rank: int = DEFAULT_LORA_RANK
    targets: tuple[str, ...] = DEFAULT_LORA_TARGETS
    double_quantization: bool = True  # QLoRA only: 8-bit quantisation constants
    # QLoRA only: bitsandbytes before 0.44.0 kept each 4-bit linear's input for a backward that never
    # reads it (MatMul4Bit.forward `ctx.tensors = (A, B)`; dropped by bitsandbytes-foundation/
    # bitsandbytes@9e753741, #1270 "fix QLoRA mem bug: delete useless buffered activation",
    # 2024-07-16, first released in 0.44.0). Not in the spec: records of runs pinned to an older
    # bitsandbytes set it (LitGPT pinned bitsandbytes==0.42.0 until its 2024-08 configs).
    quantized_inputs_kept: bool = False


@dataclass(frozen=True)
class Offload:
    """What lives in host memory instead of the GPU."""

    optimizer: bool = False  # fp32 master weights, gradients and optimizer state, updated on the CPU
    parameters: bool = False  # the 16-bit weights too (ZeRO-3 / FSDP only)


@dataclass(frozen=True)
class Parallelism:
    """A job's strategy as the user gives it; `auto` fields are the ranking's to choose.

    `tensor_parallel` and `pipeline_stages` of 0 mean auto; `allow_adapters` lets the automatic
    search change the method (train adapters instead of every weight), which changes the result.
    """

    data_parallel: DataParallel = DataParallel.AUTO
    tensor_parallel: int = 0
    pipeline_stages: int = 0
    offload: Offload = field(default_factory=Offload)
    adapter: Adapter | None = None
    checkpointing: Checkpointing = Checkpointing.AUTO
    allow_adapters: bool = False
