"""What a training job keeps on disk besides its data: its checkpoints and, for a fine-tune, the pre-trained weights.

The ranking times each checkpoint's write (workers/ranking/runplan.py); the estimate warns where these
bytes outgrow the data's 3-4x (advice.model_storage_warning): a 70B full fine-tune's checkpoint is 840 GB
beside a data set of 300 MB.
"""

from __future__ import annotations

from workers.sizing.overheads import EMA_BYTES
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.adapters import lora_parameters, transformer_shape
from workers.sizing.strategies.types import Adapter, AdapterKind

# Bytes of a checkpoint per parameter: fp32 weights (4) plus the optimizer's state, 4 bytes a copy
# (momentum one copy, Adam two; bitsandbytes' AdamW8bit two of 1 byte), the state optimizer.state_dict() saves.
CHECKPOINT_BYTES_PER_PARAMETER = {"sgd": 4, "momentum": 8, "adam": 12, "adamw": 12, "rmsprop": 8, "adamw_8bit": 6}
# A pre-trained model read before a fine-tune starts, as the model hubs publish large ones: 16-bit
# weights (Hugging Face safetensors of Llama 2 70B: 138 GB for 69B parameters, 2 bytes each).
PRETRAINED_BYTES_PER_PARAMETER = 2


def checkpoint_bytes(*, parameters: int, optimizer: str, ema: bool = False) -> int:
    """Return the bytes one checkpoint writes: the weights and the optimizer's state (and the EMA's weights)."""
    return parameters * (CHECKPOINT_BYTES_PER_PARAMETER.get(optimizer, 12) + (EMA_BYTES if ema else 0))


def checkpoint_parameters(job: JobSpec, adapter: Adapter | None = None) -> int:
    """Return the parameters one checkpoint saves, with their optimizer state.

    Every weight for a full training run; for a job that names LoRA or QLoRA adapters, the adapters
    alone: the frozen base is already on disk and is not trained, and the adapter libraries save only
    the adapters (Hugging Face PEFT's `save_pretrained` writes the adapter weights; LitGPT's
    finetune/lora.py saves `lora_filter`ed state). A 70B QLoRA run wrote 828 GB a checkpoint before.
    `adapter`: a layout's own (the strategy search's choice); the job's named one otherwise.
    """
    adapter = adapter or job.training.parallelism.adapter
    if adapter is None:
        return job.model.parameters
    shape = transformer_shape(job.model)
    if shape is None:
        return job.model.parameters
    return lora_parameters(shape, rank=adapter.rank, targets=adapter.targets)


def pretrained_bytes(job: JobSpec) -> int:
    """Return the pre-trained weights a fine-tune reads first (0 unless `from_pretrained` is true)."""
    if job.training.from_pretrained is not True:
        return 0
    return (job.model.parameters + job.model.frozen_parameters) * PRETRAINED_BYTES_PER_PARAMETER


# A Hub checkpoint's largest shard: save_pretrained's default max_shard_size "5GB" (transformers
# modeling_utils.save_pretrained), the size Llama 3 8B's four safetensors files keep under.
HUB_SHARD_BYTES = 5 * 10**9


def pretrained_load_bytes(job: JobSpec, adapter: Adapter | None) -> int:
    """Return the host memory one training process takes to load the pre-trained weights (0 unless a fine-tune).

    The usual load holds a whole copy (reasons.loading_warning). A QLoRA load does not: bitsandbytes' quantizer
    sets the device map to the GPU when none is given and quantizes each weight as it is read
    (transformers Bnb4BitHfQuantizer.update_device_map and create_quantized_param, read at
    huggingface/transformers@009ba7ca), so the host holds one shard at a time."""
    whole = pretrained_bytes(job)
    if adapter is not None and adapter.kind is AdapterKind.QLORA:
        return min(whole, HUB_SHARD_BYTES)
    return whole
