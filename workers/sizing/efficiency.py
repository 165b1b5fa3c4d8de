"""Achieved-efficiency factors of the time model, in one table, each with its source.

The time model (timing.py) is a per-layer roofline: a layer takes the longer of its arithmetic at
`peak x COMPUTE_EFFICIENCY[kind, unit] x ARCHITECTURE_FACTOR[arch, unit]` and its memory traffic at
`bandwidth x BANDWIDTH_EFFICIENCY`. This module holds every factor that a fit against measurements
(validation/) may change; nothing else in the core carries a tuned number for time.
"[anchor]" marks a value derived from a published measurement in estimation-methods.md; "[rule of
thumb]" a value we chose inside the range the sources give, awaiting calibration.
"""

from __future__ import annotations

from enum import StrEnum

from workers.sizing.spec import Framework, Optimizer, Precision
from workers.sizing.stats import LayerKind


class MathUnit(StrEnum):
    """The units a layer's arithmetic runs on."""

    SIMT = "simt"  # fp32 CUDA cores (also fp16 on cards without tensor cores: fp32 accumulate)
    TF32 = "tf32"  # tensor cores in TF32 (Ampere on, fp32 jobs; half the fp16 tensor rate)
    TENSOR = "tensor"  # tensor cores in fp16/bf16 with fp32 accumulate


# Share of the unit's peak a layer kind reaches, on the reference generation (Volta for tensor
# units, every generation for SIMT).
# [anchor] big GEMMs: Megatron 52%, Korthikanti 54%, MosaicML 43-64% of tensor peak on A100 for
# whole LLMs (estimation-methods.md §3), so a dense layer alone reaches about 60%.
# [anchor] fp32 convolution: ResNet-50 on a GTX 1080 Ti trains at about 200 images/s = 5 TFLOP/s,
# 45% of fp32 peak for the whole network; the convolutions alone about 65%.
# [anchor] mixed-precision convolution: ResNet-50 on V100 about 1200 images/s = 30 TFLOP/s, 24% of
# tensor peak for the whole network; the convolutions alone about 40%.
# [rule of thumb] attention (batched s x s matmuls, smaller than the projections), recurrent cells
# (small sequential GEMMs) and a model given as totals sit below those.
# Norm, element-wise, pooling and embedding layers are bandwidth-bound; their compute factor only
# matters if their multiply-adds are large, and a low one keeps them honest.
COMPUTE_EFFICIENCY: dict[tuple[LayerKind, MathUnit], float] = {
    (LayerKind.CONV, MathUnit.SIMT): 0.65,
    (LayerKind.CONV, MathUnit.TF32): 0.35,
    (LayerKind.CONV, MathUnit.TENSOR): 0.40,
    (LayerKind.DENSE, MathUnit.SIMT): 0.75,
    (LayerKind.DENSE, MathUnit.TF32): 0.55,
    (LayerKind.DENSE, MathUnit.TENSOR): 0.60,
    (LayerKind.ATTENTION, MathUnit.SIMT): 0.50,
    (LayerKind.ATTENTION, MathUnit.TF32): 0.35,
    (LayerKind.ATTENTION, MathUnit.TENSOR): 0.40,
    (LayerKind.RECURRENT, MathUnit.SIMT): 0.40,
    (LayerKind.RECURRENT, MathUnit.TF32): 0.25,
    (LayerKind.RECURRENT, MathUnit.TENSOR): 0.25,
    (LayerKind.GENERIC, MathUnit.SIMT): 0.55,
    (LayerKind.GENERIC, MathUnit.TF32): 0.35,
    (LayerKind.GENERIC, MathUnit.TENSOR): 0.35,
}
BANDWIDTH_BOUND_COMPUTE_EFFICIENCY = 0.25  # norm, element-wise, pool, embedding [rule of thumb]

# Per generation: how much of a unit's peak the libraries reach relative to the reference.
# [anchor] MosaicML MFU: A100 43-64%, H100 26-46% (bf16) -> Hopper about 0.7 of Ampere; bigger
# tensor peaks are harder to feed. [rule of thumb] Turing, Ada and Blackwell in between; Kepler's
# cuDNN kernels reach less of its fp32 peak.
ARCHITECTURE_FACTOR: dict[tuple[str, MathUnit], float] = {
    ("kepler", MathUnit.SIMT): 0.75,
    ("volta", MathUnit.TENSOR): 1.0,
    ("turing", MathUnit.TENSOR): 0.9,
    ("ampere", MathUnit.TENSOR): 0.85,
    ("ampere", MathUnit.TF32): 0.85,
    ("ada", MathUnit.TENSOR): 0.8,
    ("ada", MathUnit.TF32): 0.8,
    ("hopper", MathUnit.TENSOR): 0.6,
    ("hopper", MathUnit.TF32): 0.6,
    ("blackwell", MathUnit.TENSOR): 0.5,
    ("blackwell", MathUnit.TF32): 0.5,
}
# Cards with a 70-75 W envelope (T4, L4, P4) cannot hold boost clocks under sustained training load
# [rule of thumb: 0.7 of their datasheet peak].
LOW_POWER_TDP_WATTS = 75
LOW_POWER_FACTOR = 0.7

# Share of datasheet memory bandwidth that element-wise kernels reach: 70-80% (STREAM-like copies on
# GDDR and HBM) [rule of thumb, from the brief's anchor "elementwise ~70-80% of bandwidth"].
BANDWIDTH_EFFICIENCY = 0.75

# Backward costs twice the forward in arithmetic and in traffic (HF: "2x flops in the backward";
# training = 3 x forward, estimation-methods.md §3).
BACKWARD_TO_FORWARD = 2.0
# Recompute runs the forward once more: +1 forward of 3 (+33%; Chen et al. ~30%, NeMo +30%, HF ~20%).
RECOMPUTE_EXTRA_FORWARDS = 1.0

# Framework time per layer per iteration to dispatch its forward and backward kernels from Python
# (the GPU idles when a layer's kernels are shorter than this) [rule of thumb: about 10 us per
# kernel launch in PyTorch eager, ~4 kernels per layer; graph frameworks less; XLA fuses].
LAYER_DISPATCH_MS: dict[Framework, float] = {
    Framework.PYTORCH: 0.04,
    Framework.TENSORFLOW: 0.03,
    Framework.JAX: 0.01,
    Framework.CNTK: 0.03,
}
# Fixed cost of each iteration outside the layers: zero_grad, loss read-back, the batch's copy to the
# GPU, the Python loop [rule of thumb: 1 ms].
ITERATION_OVERHEAD_MS = 1.0

# The optimizer step reads and writes every trainable parameter's state: bytes touched per parameter
# (fp32 weight, gradient, state: read all, write weight and state) [derived from the state sizes of
# overheads.py]; mixed precision also writes the 16-bit copy.
OPTIMIZER_TRAFFIC_BYTES: dict[Optimizer, int] = {
    Optimizer.SGD: 12,
    Optimizer.MOMENTUM: 20,
    Optimizer.ADAM: 28,
    Optimizer.ADAMW: 28,
}
MIXED_PRECISION_COPY_BYTES: dict[Precision, int] = {
    Precision.FP32: 0,
    Precision.FP16_MIXED: 2,
    Precision.BF16_MIXED: 2,
}

# All-reduce links. NVIDIA quotes NVLink as the total of both directions; a ring sends one way.
# [rule of thumb] NCCL reaches about 80% of the one-way NVLink rate, about 60% of PCIe x16 through
# the host bridge, and 80% of a network link.
NVLINK_EFFICIENCY = 0.8
PCIE_GB_PER_S: dict[int, float] = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}  # x16, one way
PCIE_EFFICIENCY = 0.6
NETWORK_EFFICIENCY = 0.8
# NCCL start-up per ring step [rule of thumb: 5 us].
ALLREDUCE_STEP_LATENCY_MS = 0.005
# PyTorch DDP packs gradients into 25 MB buckets and reduces each while backward goes on
# (bucket_cap_mb=25, PyTorch DDP docs); the last bucket cannot overlap.
ALLREDUCE_BUCKET_BYTES = 25 * 2**20
# Share of the backward pass the all-reduce may hide behind [rule of thumb: 80%].
ALLREDUCE_OVERLAP_OF_BACKWARD = 0.8

# Evaluation epochs: a held-out set of this share of the training samples, forward only [rule of
# thumb: 10%; ImageNet's is 3.9%, CIFAR-10's 20%].
EVAL_FRACTION_OF_DATA = 0.1


def compute_efficiency(kind: LayerKind, unit: MathUnit, architecture: str) -> float:
    """Return the share of the unit's peak that a layer of this kind reaches on this generation."""
    base = COMPUTE_EFFICIENCY.get((kind, unit), BANDWIDTH_BOUND_COMPUTE_EFFICIENCY)
    return base * ARCHITECTURE_FACTOR.get((architecture, unit), 1.0)
