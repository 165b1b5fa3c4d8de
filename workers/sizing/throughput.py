"""Which arithmetic units a layer runs on, and at what peak, for a precision and a GPU."""

from __future__ import annotations

from catalog.types import GpuSpec
from workers.sizing.efficiency import (
    LOW_POWER_FACTOR,
    LOW_POWER_TDP_WATTS,
    LOW_POWER_TENSOR_FACTOR,
    MathUnit,
    compute_efficiency,
)
from workers.sizing.rules import (
    BF16_ARCHITECTURES,
    FP8_ARCHITECTURES,
    FP8_TO_FP16_TENSOR_RATE,
    TENSOR_CORE_ARCHITECTURES,
)
from workers.sizing.spec import Framework, Precision, Training
from workers.sizing.stats import LayerKind

# fp32 jobs on Ampere and later run their convolutions on TF32 tensor cores in every framework
# (torch.backends.cudnn.allow_tf32 defaults to True; cuDNN's own default). Their matrix products
# (dense, attention, recurrent, totals-only) do when `training.tf32_matmul` says so, and otherwise as
# the framework does by default:
# - PyTorch: off. torch.backends.cuda.matmul.allow_tf32 "defaults to True in PyTorch 1.7 to PyTorch 1.11,
#   and False in PyTorch 1.12 and later" (PyTorch docs, CUDA semantics, TF32 on Ampere; pytorch#79537,
#   2022-06). Training code often turns it on (torch.set_float32_matmul_precision("high"), Hugging Face
#   Trainer --tf32): such a job says `tf32_matmul: true`.
# - TensorFlow: on. "TensorFloat-32 is enabled by default" (tf.config.experimental.
#   enable_tensor_float_32_execution, TensorFlow 2.4 on; RFC tensorflow/community#287, 2020-09).
# - JAX: on. "By default, JAX leans toward speed: float32 dot products may be computed with
#   reduced-precision arithmetic internally (... TF32 on recent GPUs)" (JAX docs, Matmul precision).
# - CNTK: off (its last release, 2.7 of 2019, predates Ampere).
# Element-wise, norm and pooling layers are unaffected.
TF32_MATMUL_BY_FRAMEWORK: dict[Framework, bool] = {
    Framework.PYTORCH: False,
    Framework.TENSORFLOW: True,
    Framework.JAX: True,
    Framework.CNTK: False,
}
_TF32_KINDS = frozenset({LayerKind.CONV, LayerKind.DENSE, LayerKind.ATTENTION, LayerKind.RECURRENT,
                         LayerKind.GENERIC})


def has_bf16(gpu: GpuSpec) -> bool:
    """Return whether the GPU computes bf16 natively (Ampere and later)."""
    return gpu.bf16_tflops > 0 and gpu.architecture in BF16_ARCHITECTURES


def has_tensor_cores(gpu: GpuSpec) -> bool:
    """Return whether the GPU has tensor cores (Volta and later)."""
    return gpu.architecture in TENSOR_CORE_ARCHITECTURES


def has_fp8(gpu: GpuSpec) -> bool:
    """Return whether the GPU has FP8 tensor cores (Ada, Hopper, Blackwell)."""
    return gpu.architecture in FP8_ARCHITECTURES and gpu.fp16_tflops > 0


def effective_precision(precision: Precision, gpu: GpuSpec | None) -> Precision:
    """Return the precision the job really runs in on this GPU.

    bf16-mixed on a card without bf16 (before Ampere) is estimated as fp32, with a warning
    (advice.py), rather than refused: a ranking over every card must not fail on the old ones.
    fp8-mixed on a card without FP8 tensor cores (before Ada) runs as its recipes fall back: bf16-mixed
    (Transformer Engine and torchao keep bf16 for what they do not cast), so fp32 before Ampere.
    """
    if gpu is None:
        return precision
    if precision is Precision.FP8_MIXED and not has_fp8(gpu):
        precision = Precision.BF16_MIXED
    if precision is Precision.BF16_MIXED and not has_bf16(gpu):
        return Precision.FP32
    return precision


def tf32_matmul(training: Training) -> bool:
    """Return whether an fp32 job's matrix products run on TF32 tensor cores (where the GPU has them)."""
    if training.tf32_matmul is not None:
        return training.tf32_matmul
    return TF32_MATMUL_BY_FRAMEWORK[training.framework]


def math_unit(kind: LayerKind, precision: Precision, gpu: GpuSpec, *, tf32_matmul: bool = True) -> MathUnit:
    """Return the units a layer of this kind computes on."""
    if precision is Precision.FP32:
        if gpu.architecture in BF16_ARCHITECTURES and kind in _TF32_KINDS and (tf32_matmul or kind is LayerKind.CONV):
            return MathUnit.TF32
        return MathUnit.SIMT
    # Without tensor cores, frameworks compute fp16 with fp32 accumulation at the fp32 rate (cuDNN's
    # pseudo-half configuration): mixed precision saves memory and bandwidth, not arithmetic.
    return MathUnit.TENSOR if has_tensor_cores(gpu) else MathUnit.SIMT


def peak_tflops(unit: MathUnit, precision: Precision, gpu: GpuSpec) -> float:
    """Return the datasheet peak of the unit, in TFLOP/s."""
    if unit is MathUnit.SIMT:
        return gpu.fp32_tflops
    if unit is MathUnit.TF32:
        # Every Ampere, Ada, Hopper and Blackwell datasheet gives TF32 at half the fp16 tensor rate.
        return gpu.fp16_tflops / 2
    if precision in _BF16_PRECISIONS and gpu.bf16_tflops > 0:
        return gpu.bf16_tflops
    return gpu.fp16_tflops


_BF16_PRECISIONS = frozenset({Precision.BF16_MIXED, Precision.FP8_MIXED})
# The layers whose products an FP8 recipe runs in FP8: Transformer Engine's te.Linear family and torchao's
# Float8Linear swap linear layers only; convolutions, the attention core (flash, bf16) and the rest stay bf16.
FP8_KINDS = frozenset({LayerKind.DENSE})


def fp8_products(kind: LayerKind, precision: Precision) -> bool:
    """Return whether a layer of this kind computes its products in FP8 (precision as effective_precision gives)."""
    return precision is Precision.FP8_MIXED and kind in FP8_KINDS


def achieved_flops_per_ms(kind: LayerKind, precision: Precision, gpu: GpuSpec, *,
                          tf32_matmul: bool = True) -> float:
    """Return the FLOPs per millisecond a layer of this kind achieves on the GPU."""
    unit = math_unit(kind, precision, gpu, tf32_matmul=tf32_matmul)
    rate = peak_tflops(unit, precision, gpu) * compute_efficiency(kind, unit, gpu.architecture)
    if unit is MathUnit.TENSOR and fp8_products(kind, precision):
        # The same share of the FP8 peak as of the bf16 one: NVIDIA's FP8 GEMMs are the same kernels at twice
        # the rate per clock. MosaicML's H100 runs say what a whole step gains (README, "FP8 against MosaicML's
        # H100 runs").
        rate *= FP8_TO_FP16_TENSOR_RATE
    if gpu.tdp_watts <= LOW_POWER_TDP_WATTS:
        rate *= (LOW_POWER_TENSOR_FACTOR.get(gpu.architecture, LOW_POWER_FACTOR) if unit is MathUnit.TENSOR
                 else LOW_POWER_FACTOR)
    return rate * 1e9  # TFLOP/s = 1e12 FLOP/s = 1e9 FLOP/ms
