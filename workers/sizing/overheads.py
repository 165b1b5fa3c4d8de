"""Memory factors of the sizing core: bytes per value and per parameter, and the framework's reserve.

Every figure names its source; "[rule of thumb]" marks a value we chose inside a published range,
to be checked against validation/ (the calibration step may adjust the ones so marked).
"""

from __future__ import annotations

from catalog.units import MIB
from workers.sizing.spec import Framework, Optimizer, OptimizerImplementation, Precision, Training
from workers.sizing.stats import ModelStats

# Activations kept for backward: fp32 4 B; mixed precision keeps them in 16 bits (domain.md §2:
# "mixed precision (2-byte activations, fp32 master weights)").
ACTIVATION_BYTES: dict[Precision, int] = {
    Precision.FP32: 4,
    Precision.FP16_MIXED: 2,
    Precision.BF16_MIXED: 2,
    Precision.FP8_MIXED: 2,
}
# Weights: fp32 4 B; mixed precision 6 B (fp32 master + 16-bit copy), HF "model memory anatomy"
# (estimation-methods.md §2).
WEIGHT_BYTES: dict[Precision, int] = {
    Precision.FP32: 4,
    Precision.FP16_MIXED: 6,
    Precision.BF16_MIXED: 6,
    Precision.FP8_MIXED: 6,
}
# The step walk (step_walk.py) splits WEIGHT_BYTES in two: the fp32 weights PyTorch AMP trains (its
# master copy, 4 B, alive all step) and the 16-bit copy autocast casts for each convolution and matrix
# product, kept for backward and freed with the layer's other kept tensors (measured here:
# workers/accuracy/data/step_measurements.json, bf16 rows).
MASTER_WEIGHT_BYTES = 4
WEIGHT_COPY_BYTES: dict[Precision, int] = {
    Precision.FP32: 0,
    Precision.FP16_MIXED: 2,
    Precision.BF16_MIXED: 2,
    Precision.FP8_MIXED: 2,
}
# Gradients: 4 B, "always kept in fp32" in HF's accounting (estimation-methods.md §2).
GRADIENT_BYTES = 4
# Optimizer state per trainable parameter: SGD none, momentum one fp32 copy, Adam/AdamW two
# (domain.md §2; HF anatomy: AdamW 8 B, SGD with momentum 4 B). RMSprop as torch.optim.RMSprop's defaults
# (momentum 0, not centered; Keras' defaults too) keeps one, `square_avg` (torch/optim/rmsprop.py).
# bitsandbytes' AdamW8bit keeps Adam's two states as uint8 codes of a dynamic quantization map (Dettmers et al.
# 2022, "8-bit Optimizers via Block-wise Quantization"): 1 byte each, plus one fp32 absmax per block of each state
# (bitsandbytes/optim/optimizer.py Optimizer8bit.init_state: blocks of 256 values, 2 x 4 / 256 = 0.03 bytes a
# parameter, left out) and 32-bit states for tensors under its min_8bit_size of 4,096 values (biases, norms: a
# small share of any large model's parameters, left out); the 2 bytes a weight of HF's accounting (estimation-
# methods.md §2: "8-bit AdamW 2 B"; its t5-3b example, "8-bit BNB needs 6 GB"). Bytes a parameter of each state:
OPTIMIZER_STATE_TENSORS: dict[Optimizer, tuple[int, ...]] = {
    Optimizer.SGD: (),
    Optimizer.MOMENTUM: (4,),
    Optimizer.ADAM: (4, 4),
    Optimizer.ADAMW: (4, 4),
    Optimizer.RMSPROP: (4,),
    Optimizer.ADAMW_8BIT: (1, 1),
}
OPTIMIZER_STATE_BYTES: dict[Optimizer, int] = {o: sum(tensors) for o, tensors in OPTIMIZER_STATE_TENSORS.items()}
# An exponential moving average of the trained weights (diffusers' --use_ema EMAModel, timm's ModelEmaV2, Composer's
# EMA): one fp32 copy of each, kept on the GPU beside the optimizer's state and saved with it in checkpoints.
EMA_BYTES = 4


def state_bytes_per_parameter(optimizer: Optimizer, *, ema: bool = False) -> int:
    """Return the bytes per trainable parameter kept besides weights and gradients: the optimizer's, the EMA's."""
    return OPTIMIZER_STATE_BYTES[optimizer] + (EMA_BYTES if ema else 0)


def state_tensor_bytes(optimizer: Optimizer, *, ema: bool = False) -> tuple[int, ...]:
    """Return the bytes per trainable parameter of each tensor kept besides weights and gradients (one per state)."""
    return OPTIMIZER_STATE_TENSORS[optimizer] + ((EMA_BYTES,) if ema else ())


# Temporaries of the optimizer step per trainable parameter, with foreach on (the CUDA default):
# foreach Adam/AdamW allocate sqrt(exp_avg_sq) for every parameter at once (torch/optim/adam.py
# _multi_tensor_adam), one fp32 copy; foreach SGD, with or without momentum, updates in place.
# Measured here: Adam steps peak at weights + gradients + 2 states + 1.00 copy (step_measurements.json).
# Foreach RMSprop makes the same copy, `avg = torch._foreach_sqrt(grouped_square_avgs)` (_multi_tensor_rmsprop).
# AdamW8bit has no foreach path: one kernel per tensor dequantizes, updates and requantizes in registers
# (bitsandbytes' optimizer_update_8bit_blockwise), whatever implementation is said: none.
OPTIMIZER_TEMPORARY_BYTES: dict[Optimizer, int] = {
    Optimizer.SGD: 0,
    Optimizer.MOMENTUM: 0,
    Optimizer.ADAM: 4,
    Optimizer.ADAMW: 4,
    Optimizer.RMSPROP: 4,
    Optimizer.ADAMW_8BIT: 0,
}
# Temporaries with the other implementations, in fp32 copies of the largest trainable tensor:
# - per_tensor: the loop frees each tensor's temporaries before the next. Adam/AdamW: torch's
#   foreach=False path, `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)`
#   (torch/optim/adam.py _single_tensor_adam), holds the sqrt and the quotient at once: 2 copies;
#   transformers' AdamW (`denom = exp_avg_sq.sqrt().add_(group["eps"])`, optimization.py of 4.15.0)
#   holds 1, so the count is an upper bound by one tensor. SGD and momentum update in place
#   (`buf.mul_(momentum).add_(grad, ...)`, _single_tensor_sgd): 0.
#   RMSprop: `avg = square_avg.sqrt()`, then `avg.add_(eps)` in place (_single_tensor_rmsprop): 1.
# - fused: one kernel updates parameters and state in place (torch's _fused_adam, apex FusedAdam's
#   multi_tensor_adam, DeepSpeed's FusedAdam; for RMSprop, which torch has no fused kernel for, a compiled
#   update): no parameter-sized temporary.
PER_TENSOR_TEMPORARY_COPIES: dict[Optimizer, int] = {
    Optimizer.SGD: 0,
    Optimizer.MOMENTUM: 0,
    Optimizer.ADAM: 2,
    Optimizer.ADAMW: 2,
    Optimizer.RMSPROP: 1,
    Optimizer.ADAMW_8BIT: 0,
}


def optimizer_temporary_bytes(optimizer: Optimizer, implementation: OptimizerImplementation, *,
                              trainable: int, largest_tensor: int) -> int:
    """Return the bytes the optimizer step allocates beside the state, at its largest moment.

    `trainable` parameters are updated; `largest_tensor` is the parameter count of the largest
    one (a per-tensor loop holds only its temporaries at a time); never more than foreach's.
    """
    foreach = trainable * OPTIMIZER_TEMPORARY_BYTES[optimizer]
    if implementation is OptimizerImplementation.FOREACH:
        return foreach
    if implementation is OptimizerImplementation.FUSED:
        return 0
    return min(foreach, largest_tensor * PER_TENSOR_TEMPORARY_COPIES[optimizer] * MASTER_WEIGHT_BYTES)


def largest_tensor(model: ModelStats) -> int:
    """Return the parameters of the largest trainable row, standing for its largest tensor (all, as totals).

    A row's weight and bias are counted together, so this bounds the largest tensor from above; a
    model given as totals says nothing of its tensors, so a per-tensor loop is counted as foreach.
    """
    return max((row.parameters for row in model.layers), default=model.parameters)


def largest_needed(model: ModelStats, training: Training) -> int:
    """Return largest_tensor(model) where the implementation needs it (a per-tensor loop), else 0.

    The scan reads every row; foreach and fused temporaries do not depend on it, and a 10,000-row
    model's estimates call this for every (GPU, batch) they try.
    """
    return largest_tensor(model) if training.optimizer_implementation is OptimizerImplementation.PER_TENSOR else 0


# Weights in 16 bits, for the traffic model (the copy the kernels read in mixed precision).
COMPUTE_WEIGHT_BYTES: dict[Precision, int] = {
    Precision.FP32: 4,
    Precision.FP16_MIXED: 2,
    Precision.BF16_MIXED: 2,
    Precision.FP8_MIXED: 2,
}

# A model given only as totals: values kept for backward per neuron. [rule of thumb] Each layer's
# output is saved once for the backward pass; its gradient lives only while that layer's backward
# runs (the baseline formula's "x 2" counts both for the whole step, which overstates).
STATS_ONLY_SAVED_PER_NEURON = 1.0
# With per-layer rows: while backward runs, the gradient of the largest layer's output and of its
# input are alive besides what is saved [rule of thumb: two buffers of the largest layer].
TRANSIENT_GRADIENT_BUFFERS = 2

# Activations a framework keeps relative to PyTorch's fused kernels. [anchor] google-research/bert's
# max-batch table (TensorFlow 1.11, 12 GB Titan X; validation/ gbert-*) fits 1.5-4.5x fewer samples
# than PyTorch-style counting predicts: graph-mode TensorFlow builds GELU, layer norm and dropout from
# primitive ops that each keep their inputs (dropout keeps an fp32 mask). We take 2.0. JAX (XLA fuses
# and rematerialises) and CNTK: 1.0 [rule of thumb].
FRAMEWORK_ACTIVATION_FACTOR: dict[Framework, float] = {
    Framework.PYTORCH: 1.0,
    Framework.TENSORFLOW: 2.0,
    Framework.JAX: 1.0,
    Framework.CNTK: 1.0,
}

# Recompute (gradient checkpointing, Chen et al. 2016): keep sqrt(n) checkpoints of n layers and
# recompute one segment at a time: about 2 sqrt(n) layers' worth alive, i.e. a share 2 / sqrt(n) of
# the activations (estimation-methods.md §2: 1000-layer ResNet 48 G -> 7 G).
RECOMPUTE_SEGMENT_FACTOR = 2.0
# A model given only as totals has no layer count; we assume this share [rule of thumb: 2/sqrt(16),
# a 16-block network].
RECOMPUTE_SHARE_STATS_ONLY = 0.5

# CUDA context plus the framework's kernel images, per GPU generation. HF measured 1343 MiB on a
# V100 with PyTorch; asmirnov's calculator gives 300 MiB-2 GiB (estimation-methods.md §2).
# [rule of thumb] Older cards run older, smaller CUDA/cuDNN stacks: we take the low end for Kepler
# and Maxwell and HF's V100 figure from Volta on.
CUDA_CONTEXT_BYTES: dict[str, int] = {
    "kepler": 300 * MIB,
    "maxwell": 400 * MIB,
    "pascal": 600 * MIB,
    "volta": 1343 * MIB,
    "turing": 1343 * MIB,
    "ampere": 1343 * MIB,
    "ada": 1343 * MIB,
    "hopper": 1343 * MIB,
    "blackwell": 1343 * MIB,
}
# Without a GPU (the GPU-independent requirement) we use the current generations' figure.
DEFAULT_CUDA_CONTEXT_BYTES = 1343 * MIB
# cuDNN convolution and cuBLAS workspaces, "temporary memory" in the HF doc [rule of thumb:
# 256 MiB with convolutions, whose algorithms ask for the largest workspaces; 64 MiB without].
WORKSPACE_BYTES_WITH_CONV = 256 * MIB
WORKSPACE_BYTES_WITHOUT_CONV = 64 * MIB
# Caching allocator slack over the tensors' own bytes: max_memory_allocated < max_memory_reserved
# < nvidia-smi (mmdetection #1005) [rule of thumb: 10%].
ALLOCATOR_SLACK_FRACTION = 0.10
# PyTorch DistributedDataParallel keeps gradient buckets, one more copy of the gradients, unless
# gradient_as_bucket_view is set (PyTorch DDP documentation). Other frameworks: [rule of thumb] none.
DDP_BUCKET_COPIES_PYTORCH = 1.0

# "Choose hardware with clear headroom above this figure" (domain.md §2). A job fits a card when its
# predicted peak is at most this share of the card's memory; the rest covers ECC and driver
# reservations (a 16 GB T4 shows 15 GiB) and the estimate's own error [rule of thumb: 10%].
USABLE_MEMORY_FRACTION = 0.90
