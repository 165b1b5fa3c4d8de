"""Time of the optimizer step: the kernels each implementation launches and the bytes they move, from its code.

A fused update (`fused=True`, apex FusedAdam) reads and writes each parameter's state once, in a few
launches: OPTIMIZER_TRAFFIC_BYTES per trainable parameter. A per-tensor loop (torch.optim with
`foreach=False`, transformers' AdamW, BertAdam) runs every element-wise op of the update as its own
kernel over one tensor: each op reads and writes the whole tensor again, and the loop launches ops x
tensors kernels, each costing the framework's dispatch time (KERNEL_LAUNCH_MS). The loop never waits for
the GPU, so the CPU runs ahead while large tensors stream: the step takes the longer of all its launches
and all its traffic. Gradient clipping by each tensor's own norm (BertAdam) reads a tensor's norm back
to the host before updating it (`if clip_coef < 1` in clip_grad_norm_ before PyTorch 1.10): the loop then
waits for the GPU at every tensor, so each tensor takes the longer of its own launches and traffic.
`foreach` keeps the fused figure: no record yet shows what its extra passes cost (README).
"""

from __future__ import annotations

from workers.sizing.efficiency import (
    KERNEL_LAUNCH_MS,
    MIXED_PRECISION_COPY_BYTES,
    OPTIMIZER_TRAFFIC_BYTES,
    PER_TENSOR_OPTIMIZER_KERNELS,
    PER_TENSOR_OPTIMIZER_TRAFFIC_BYTES,
)
from workers.sizing.memo import IdentityMemo
from workers.sizing.overheads import EMA_BYTES
from workers.sizing.row_table import figures, row_table
from workers.sizing.spec import GradientClipping, Optimizer, OptimizerImplementation, Precision, Training
from workers.sizing.stats import LayerKind, ModelStats

# Gradient clipping, counted from torch.nn.utils.clip_grad_norm_ (PyTorch 1.10-1.13, the loop form):
# `norms = [torch.norm(p.grad.detach(), norm_type) for p in parameters]` reads every gradient once;
# `p.grad.detach().mul_(clip_coef_clamped)` reads and writes it again: 12 bytes per parameter, two
# kernels per tensor in a loop (torch 2.x runs both as foreach ops: a few launches).
GLOBAL_CLIP_TRAFFIC_BYTES = 12
GLOBAL_CLIP_KERNELS_PER_TENSOR = 2
# Per-tensor clipping, BertAdam's `clip_grad_norm_(p, group['max_grad_norm'])` inside its loop
# (NVIDIA DeepLearningExamples PyTorch/LanguageModeling/BERT/optimization.py): for one tensor, PyTorch
# 1.6's clip_grad_norm_ runs norm, stack, norm, `+ 1e-6`, `max_norm / ...` (reciprocal and mul) and the
# comparison `clip_coef < 1`, whose truth value copies the result to the host: 7 kernels and one wait. Its
# traffic is the norm's read of the gradient (4 bytes per parameter); the scale rarely runs after a global clip.
PER_TENSOR_CLIP_KERNELS = 7
PER_TENSOR_CLIP_TRAFFIC_BYTES = 4

_PARAMETERS_KIND = figures("parameters", "kind")
_TENSORS: IdentityMemo[tuple[tuple[int, int], ...]] = IdentityMemo()


def parameter_tensors(model: ModelStats) -> tuple[tuple[int, int], ...]:
    """Return (parameters, how many tensors) of the model's trainable tensors, grouped by size.

    A row with trainable parameters stands for a weight holding them and a bias too small to
    move bytes (a norm's or a dense layer's: two tensors); an embedding row is one table. A fused
    projection row (BERT's q, k and v as one) counts two tensors where a model built of three
    Linear modules has six: the count is a lower bound. A model given as totals is one tensor.
    """

    def count() -> tuple[tuple[int, int], ...]:
        if not model.layers:
            return ((model.parameters, 1),)
        sizes: dict[int, int] = {}
        table = row_table(model)
        for figure, n in zip(table.distinct, table.counts, strict=True):
            parameters, kind = _PARAMETERS_KIND(figure)
            if parameters <= 0:
                continue
            sizes[parameters] = sizes.get(parameters, 0) + n
            if kind is not LayerKind.EMBEDDING:
                sizes[0] = sizes.get(0, 0) + n
        return tuple(sizes.items())

    return _TENSORS.get(model, (), count)


def tensor_count(model: ModelStats) -> int:
    """Return how many trainable parameter tensors a per-tensor loop visits (parameter_tensors)."""
    return sum(n for _, n in parameter_tensors(model))


EMA_TRAFFIC_BYTES = 3 * EMA_BYTES  # torch._foreach_lerp_(ema, weights, 1 - decay): reads 2 fp32 tensors, writes 1


def optimizer_step_ms(model: ModelStats, training: Training, *, precision: Precision,
                      ms_per_byte: float) -> tuple[float, float]:
    """Return one optimizer step's (traffic ms, launch-bound idle ms) on one GPU, spread over its update interval.

    The step runs once per `update_interval` iterations; `ms_per_byte` is the GPU's achieved rate.
    """
    trainable = model.parameters  # ModelStats.parameters already leaves frozen weights out
    copy_bytes = MIXED_PRECISION_COPY_BYTES[precision]
    clipping = training.gradient_clipping
    implementation = training.optimizer_implementation
    # bitsandbytes' 8-bit AdamW is a Python loop over the tensors whatever is said: one kernel each
    per_tensor = implementation is OptimizerImplementation.PER_TENSOR or training.optimizer is Optimizer.ADAMW_8BIT
    per_parameter = (PER_TENSOR_OPTIMIZER_TRAFFIC_BYTES if per_tensor else OPTIMIZER_TRAFFIC_BYTES)[training.optimizer]
    kernels = PER_TENSOR_OPTIMIZER_KERNELS[training.optimizer] if per_tensor else 0
    if clipping is GradientClipping.GLOBAL:
        per_parameter += GLOBAL_CLIP_TRAFFIC_BYTES
        kernels += GLOBAL_CLIP_KERNELS_PER_TENSOR if per_tensor else 0
    elif clipping is GradientClipping.PER_TENSOR:
        per_parameter += PER_TENSOR_CLIP_TRAFFIC_BYTES
        kernels += PER_TENSOR_CLIP_KERNELS
    if training.ema:  # the moving average's update after each step: read it and the weight, write it (fp32)
        per_parameter += EMA_TRAFFIC_BYTES
    traffic_ms = trainable * (per_parameter + copy_bytes) * ms_per_byte
    idle_ms = 0.0
    if kernels and model.layers:
        launch_ms = kernels * KERNEL_LAUNCH_MS[training.framework]
        tensors = parameter_tensors(model)
        if clipping is GradientClipping.PER_TENSOR:
            # The host waits at every tensor: each takes the longer of its launches and its traffic.
            step_ms = sum(n * max(launch_ms, size * (per_parameter + copy_bytes) * ms_per_byte)
                          for size, n in tensors)
        else:
            step_ms = max(traffic_ms, launch_ms * sum(n for _, n in tensors))
        idle_ms = max(step_ms - traffic_ms, 0.0)
    interval = training.update_interval
    return traffic_ms / interval, idle_ms / interval
