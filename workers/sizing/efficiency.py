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


# Share of the unit's peak a layer kind reaches (before ARCHITECTURE_FACTOR).
# [fitted] conv and dense on every unit: fitted on the "fit" split of workers/accuracy/data/measurements.json
# (53 throughput records) together with BANDWIDTH_EFFICIENCY and the Maxwell/Pascal and Hopper/Blackwell
# factors below, by workers/accuracy/calibration.py (`gpugauge validate --fit`): coordinate descent from the
# priors (conv 0.65 / 0.40 / 0.35, dense 0.75 / 0.60 / 0.55 on SIMT / tensor / TF32) minimising the
# summed |log(predicted / measured)|, each kept within 0.05-0.90. docs/sizing.md "Calibration" has
# the errors on the "holdout" split. They are effective shares: cuDNN's convolutions are rarely the
# bound in these networks (the bandwidth-bound layers around them are), so mostly GeForce cards with
# small tensor peaks (RTX 3090, 4090) and VGG's large 3x3 layers pin the conv values down.
# [rule of thumb, not fitted] attention (batched s x s matmuls, smaller than the projections): few
# records separate it from dense, so it keeps its prior below dense; recurrent cells (small sequential
# GEMMs) and a model given as totals (no public record) also keep theirs.
# Norm, element-wise, pooling and embedding layers are bandwidth-bound; their compute factor only
# matters if their multiply-adds are large, and a low one keeps them honest.
COMPUTE_EFFICIENCY: dict[tuple[LayerKind, MathUnit], float] = {
    (LayerKind.CONV, MathUnit.SIMT): 0.73,
    (LayerKind.CONV, MathUnit.TF32): 0.86,
    (LayerKind.CONV, MathUnit.TENSOR): 0.78,
    (LayerKind.DENSE, MathUnit.SIMT): 0.69,
    (LayerKind.DENSE, MathUnit.TF32): 0.64,
    (LayerKind.DENSE, MathUnit.TENSOR): 0.62,
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

# Winograd's algorithm (Lavin & Gray 2016) computes a 3x3 stride-1 convolution with fewer multiplies;
# cuDNN picks it for such layers on CUDA cores (fp32). We charge the share of F(2x2, 3x3), 2.25x fewer
# multiplies (4 x 4 = 16 instead of 4 x 9 = 36 per output tile and channel pair); the transforms'
# cost is left in the layer's traffic. [anchor] VGG-16 on Maxwell and Pascal trains at or above the
# cards' fp32 peak counted in multiply-adds (jcjohnson/cnn-benchmarks, validation/ jcj-vgg16-*):
# only a cheaper algorithm does that. Left free, a fit on the "fit" split gave 0.43; we keep 1 / 2.25.
WINOGRAD_KERNEL_POSITIONS = frozenset({9})
WINOGRAD_MAC_SHARE = 1 / 2.25

# Per generation: how much of a unit's peak the libraries reach relative to Volta, Turing, Ampere and
# Ada (1.0: those four share the fitted base; freeing them as well fitted the "fit" split to 7% but
# left the "holdout" at 12.5%, i.e. it over-fitted).
# [fitted with COMPUTE_EFFICIENCY] Maxwell and Pascal CUDA cores: 0.81 (their cuDNN kernels reach less
# of the fp32 peak than Volta's, whose L1/shared memory was rebuilt); Hopper: 0.93 (a far larger tensor
# peak is harder to feed; MosaicML's MFU tables show the same, estimation-methods.md §3: A100 43-64%,
# H100 26-46%). Blackwell (no public record) is tied to Hopper.
# Hopper's tensor cores (fp16/bf16) apart from its TF32 (2026-12-03): one factor for both had fitted 0.93,
# held up by the two TF32 records (H100 PCIe fp32, -8.4% and -2.4%) while every bf16/fp16 record on an
# H100 SXM read fast (+2.5% to +15.8%), and the sharded H100 runs of the strategy records more so. Fitted
# alone on the "fit" split (the other factors as shipped; golden-section search of calibration.py's loss):
# 0.78 (fit loss 8.32 -> 8.08, holdout 6.74 -> 6.73). At 0.78 the MPT runs on H100 read as the same
# runs on A100 do (MPT-1B -2.3% against -5.7% / -2.9%, MPT-7B -11.3% against -13.6% / -15.2%): the
# A100 -> H100 step matches. TF32 fitted alone goes to its bound, 1.0, for 0.3% of the loss: kept at 0.93.
# [rule of thumb] Kepler (no public record): its cuDNN kernels reach less still; we keep the prior ratio,
# 0.75 of Maxwell's: 0.61.
ARCHITECTURE_FACTOR: dict[tuple[str, MathUnit], float] = {
    ("kepler", MathUnit.SIMT): 0.61,
    ("maxwell", MathUnit.SIMT): 0.81,
    ("pascal", MathUnit.SIMT): 0.81,
    ("hopper", MathUnit.TENSOR): 0.78,
    ("hopper", MathUnit.TF32): 0.93,
    ("blackwell", MathUnit.TENSOR): 0.78,
    ("blackwell", MathUnit.TF32): 0.93,
}
# Cards with a 70-75 W envelope (T4, L4, P4) cannot hold boost clocks under sustained training load
# [rule of thumb: 0.7 of their datasheet peak].
LOW_POWER_TDP_WATTS = 75
LOW_POWER_FACTOR = 0.7
# The T4's tensor cores, measured: a cuBLAS fp16 GEMM of 4096 x 4096 x 4096 repeated 100 times sustains "about
# 24T" on a T4, "due to power capping of the GPU ... about 70W. It is expected behavior for approximately
# continuous matrix multiply operations on a T4" (forums.developer.nvidia.com/t/about-gpu-peak-performance/264462,
# 2023, an NVIDIA moderator's answer; read 2026-12-07): 0.37 of its 65 TFLOPS datasheet peak. A large GEMM reaches
# about 0.9 of the peak on a card that holds its boost clock [rule of thumb], so the cap leaves the T4 0.37 / 0.9 =
# 0.41 of its clock: its tensor cores take 0.41 where the 0.7 rule stays for CUDA cores and for the L4 and P4 (not
# measured). With 0.7 the core put a T4's typical dense layer at 28.2 TFLOPS, above the measured best case.
LOW_POWER_TENSOR_FACTOR: dict[str, float] = {"turing": 0.41}

# Share of datasheet memory bandwidth that bandwidth-bound layers reach, as the traffic model counts
# their bytes (one read of each input and one write of the output per pass). [fitted with
# COMPUTE_EFFICIENCY] 0.54: STREAM-like copies reach 70-80%, but batchnorm reads its input twice (the
# statistics, then the normalisation) and the backward kernels read more than twice the forward's
# bytes, which this effective share absorbs.
BANDWIDTH_EFFICIENCY = 0.54

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
# The same rule of thumb per kernel: about 10 us of framework time to launch one (4 kernels a layer above).
KERNELS_PER_LAYER = 4
KERNEL_LAUNCH_MS: dict[Framework, float] = {framework: ms / KERNELS_PER_LAYER
                                            for framework, ms in LAYER_DISPATCH_MS.items()}
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
    Optimizer.RMSPROP: 20,  # momentum's: one state read and written
    Optimizer.ADAMW_8BIT: 16,  # fp32 weight and gradient read, weight written; two 1-byte states read and written
}
# A per-tensor loop (optimizer_time.py) runs each op of the update as its own kernel over one tensor, so each
# op reads and writes the tensor again. Counted from torch.optim's single-tensor paths (foreach=False;
# torch/optim/sgd.py _single_tensor_sgd, adam.py and adamw.py _single_tensor_adam(w)), per trainable
# parameter, fp32, reads + writes:
# - SGD: `param.add_(grad, alpha=-lr)`: 1 kernel, 12 B.
# - momentum: `buf.mul_(momentum).add_(grad, alpha=1 - dampening)`, `param.add_(buf, alpha=-lr)`: 3, 32 B.
# - Adam: `exp_avg.lerp_(grad, 1 - beta1)` 12, `exp_avg_sq.mul_(beta2)` 8, `.addcmul_(grad, grad, ...)` 16,
#   `denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)` 8 + 8 + 8, `param.addcdiv_(exp_avg,
#   denom, value=-step_size)` 16: 7 kernels, 76 B. transformers 4.15's AdamW without weight decay (the HF
#   Trainer's default) runs the same count: mul_, add_, mul_, addcmul_, sqrt, add_, addcdiv_.
# - AdamW: Adam plus the decoupled decay `param.mul_(1 - lr * weight_decay)`: 8 kernels, 84 B.
# - RMSprop (torch/optim/rmsprop.py _single_tensor_rmsprop, defaults): `square_avg.mul_(alpha)` 8,
#   `.addcmul_(grad, grad, ...)` 16, `avg = square_avg.sqrt()` 8, `avg.add_(eps)` 8, `param.addcdiv_(grad, avg,
#   value=-lr)` 16: 5 kernels, 56 B.
PER_TENSOR_OPTIMIZER_KERNELS: dict[Optimizer, int] = {
    Optimizer.SGD: 1,
    Optimizer.MOMENTUM: 3,
    Optimizer.ADAM: 7,
    Optimizer.ADAMW: 8,
    Optimizer.RMSPROP: 5,
    Optimizer.ADAMW_8BIT: 1,  # bitsandbytes loops over the tensors in Python, one fused kernel each
}
PER_TENSOR_OPTIMIZER_TRAFFIC_BYTES: dict[Optimizer, int] = {
    Optimizer.SGD: 12,
    Optimizer.MOMENTUM: 32,
    Optimizer.ADAM: 76,
    Optimizer.ADAMW: 84,
    Optimizer.RMSPROP: 56,
    Optimizer.ADAMW_8BIT: 16,
}
MIXED_PRECISION_COPY_BYTES: dict[Precision, int] = {
    Precision.FP32: 0,
    Precision.FP16_MIXED: 2,
    Precision.BF16_MIXED: 2,
    Precision.FP8_MIXED: 2,
}

# All-reduce links. NVIDIA quotes NVLink as the total of both directions; a ring sends one way.
# [rule of thumb] NCCL reaches about 80% of the one-way NVLink rate and 80% of a network link.
# [anchor] PCIe: a public DDP measurement on 2 x T4 over PCIe (dev.to, "DDP Is Not Always Faster",
# nanoGPT 4M parameters) spent 11.2 ms per step exchanging 16 MB of fp32 gradients: 1.4 GB/s, 9% of
# PCIe 3 x16 one way (cloud VMs and GeForce cards route it through host memory, without peer-to-peer);
# GPUs behind a PCIe switch with peer-to-peer reach about 60%. We take 25% for a PCIe ring.
NVLINK_EFFICIENCY = 0.8
PCIE_GB_PER_S: dict[int, float] = {1: 4.0, 2: 8.0, 3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}  # x16, one way
PCIE_EFFICIENCY = 0.25
NETWORK_EFFICIENCY = 0.8
# NCCL's own latency model of a ring all-reduce (NVIDIA/nccl src/graph/tuning.cc, ring / Simple
# protocol): 8.4 us per call plus, per ring step, 3.4 us over NVLink, 5.7 us over PCIe, 9.6 us over the
# network; a ring all-reduce on n GPUs takes 2(n-1) steps, once per gradient bucket.
ALLREDUCE_BASE_LATENCY_MS = 0.0084
ALLREDUCE_STEP_LATENCY_MS: dict[str, float] = {"nvlink": 0.0034, "pcie": 0.0057, "network": 0.0096}
# Data parallel costs every iteration a fixed host-side price besides the exchange: PyTorch DDP's
# reducer prepares the buckets before backward, launches one all-reduce per bucket from the autograd
# hooks, and the step then waits for the last one (the ranks meet at every iteration, so the slowest
# rank's Python loop sets the pace) [rule of thumb: 0.5 ms, about the fixed cost of an iteration's
# own Python loop, ITERATION_OVERHEAD_MS / 2].
DATA_PARALLEL_SYNC_MS = 0.5
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
