"""Time of one training iteration on a GPU: a per-layer roofline, launch overhead, and a measured profile.

Each layer takes the longer of its arithmetic (multiply-adds x 2 FLOPs at the achieved rate of its
kind on that GPU and precision) and its memory traffic (at the achieved bandwidth); backward costs
twice the forward, recompute one forward more (efficiency.py). A layer shorter than the framework's
time to dispatch its kernels leaves the GPU idle for the difference. Multi-GPU lives in multigpu.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

from catalog.types import GpuSpec
from workers.sizing import efficiency
from workers.sizing.efficiency import (
    BACKWARD_TO_FORWARD,
    ITERATION_OVERHEAD_MS,
    LAYER_DISPATCH_MS,
    RECOMPUTE_EXTRA_FORWARDS,
    WINOGRAD_KERNEL_POSITIONS,
    WINOGRAD_MAC_SHARE,
    MathUnit,
)
from workers.sizing.layers.attention import Attention, matrix_traffic_values, resolve_attention
from workers.sizing.memo import IdentityMemo
from workers.sizing.multigpu import multi_gpu_time
from workers.sizing.optimizer_time import optimizer_step_ms
from workers.sizing.overheads import ACTIVATION_BYTES, COMPUTE_WEIGHT_BYTES, GRADIENT_BYTES
from workers.sizing.preference import reference_forwards
from workers.sizing.requirements import Bottleneck
from workers.sizing.row_table import RowTable, figures, row_table
from workers.sizing.rules import TINY_LAYER_MS
from workers.sizing.spec import Precision, Training, step_training
from workers.sizing.stats import LayerKind, ModelStats
from workers.sizing.strategies.types import DataParallel
from workers.sizing.throughput import (
    achieved_flops_per_ms,
    effective_precision,
    fp8_products,
    math_unit,
    tf32_matmul,
)

BOTTLENECK_COMPUTE = Bottleneck.COMPUTE
BOTTLENECK_MEMORY = Bottleneck.MEMORY_BANDWIDTH
BOTTLENECK_OVERHEAD = Bottleneck.LAUNCH_OVERHEAD
BOTTLENECK_ALLREDUCE = Bottleneck.ALL_REDUCE
BOTTLENECK_CPU = Bottleneck.CPU_PREPROCESSING


@dataclass(frozen=True)
class IterationTime:
    """One iteration's time on one GPU model (per GPU, `gpu_count` of them), split by what bounds it."""

    compute_ms: float  # layers bound by arithmetic
    memory_ms: float  # layers bound by memory bandwidth, and the optimizer step
    allreduce_ms: float  # gradient exchange not hidden behind backward (0 on one GPU)
    overhead_ms: float  # GPU idle while kernels are dispatched, fixed per-iteration cost, scaling loss
    total_ms: float
    bottleneck: Bottleneck
    single_gpu_ms: float  # the same iteration alone on one GPU
    forward_ms: float  # a forward-only pass (evaluation) on one GPU
    speedup_vs_one_gpu: float = 1.0  # samples per second on gpu_count GPUs over one GPU
    calibrated: bool = False  # scaled from training.profile
    layer_count: int = 0
    tiny_layer_count: int = 0  # layers whose forward runs under rules.TINY_LAYER_MS


# A distinct layer's forward work for one iteration's batch: (kind, FLOPs, traffic bytes, passes per step,
# whether Winograd applies, how many layers do exactly this, bytes its FP8 casts move, whether it runs forward
# only: a frozen row, no backward; whether it is the model's output projection, which FP8 recipes keep in 16 bits:
# torchtitan's float8 filters out `output`, MosaicML's TE runs swap only the blocks' linears for te.Linear and
# unembed with the tied embedding in bf16). Plain tuples keep the per-layer loop fast enough for the ranking
# loop (one model, ~33 GPUs x 4 counts); layers that repeat
# (transformer blocks, residual stages) are costed once per distinct layer, so a 10,000-layer model of a few
# kinds of block costs what its distinct layers do.
_LayerWork = tuple[LayerKind, float, float, int, bool, int, float, bool, bool]
# fp8-mixed: each of a linear layer's three products (forward, input gradient, weight gradient) takes two operands
# in FP8, each cast from 16 bits (read 2 bytes, write 1; a transposed copy where the product needs one) by a kernel
# of its own: over a step, about 2 x (its inputs and outputs + its weights) x 3 bytes / 3 passes = 2 bytes per
# value per forward-equivalent pass. [ours: a count of the casts such a recipe makes, recalled from Transformer
# Engine's design, not re-read; not measured]
FP8_CAST_BYTES_PER_VALUE = 2
_WORK: IdentityMemo[tuple[_LayerWork, ...]] = IdentityMemo()
_SINGLE: IdentityMemo[IterationTime] = IdentityMemo(size=256)


def _compute_layer_work(model: ModelStats, batch_size: int, precision: Precision,
                        fused_attention: bool = False) -> tuple[_LayerWork, ...]:
    """Return each layer's forward FLOPs and traffic bytes for one iteration.

    `fused_attention`: the step's attention kernel is fused (flash, memory-efficient: layers/attention.py),
    so attention cores move no s x s matrix through memory (matrix_traffic_values), as the memory side
    keeps none.
    """
    value_bytes = ACTIVATION_BYTES[precision]
    weight_bytes = COMPUTE_WEIGHT_BYTES[precision]
    if not model.layers:
        traffic = 2 * model.neurons * batch_size * value_bytes + model.parameters * weight_bytes
        return ((LayerKind.GENERIC, 2.0 * model.multiply_adds * batch_size, float(traffic), 1, False, 1, 0.0, False,
                 False),)
    counts: dict[tuple[LayerKind, float, float, int, bool, float, bool, bool], int] = {}
    for (kind, multiply_adds, per_sample, parameters, passes, winograd, matrix, fused_macs, frozen, head), count in \
            _distinct_layers(model).items():
        if fused_attention:
            per_sample = max(per_sample - matrix, 0)
            if fused_macs >= 0:  # a causal core: the fused kernel skips the masked half
                multiply_adds = fused_macs
        traffic = per_sample * batch_size * value_bytes + parameters * weight_bytes
        # fp8-mixed: the layer's casts, memory-bound kernels of their own, not overlapped with its product
        cast = FP8_CAST_BYTES_PER_VALUE * (per_sample * batch_size + parameters) \
            if fp8_products(kind, precision) and multiply_adds and not head else 0
        key = (kind, 2.0 * multiply_adds * batch_size, float(traffic), passes, winograd, float(cast), frozen, head)
        counts[key] = counts.get(key, 0) + count
    return tuple((*key[:5], count, *key[5:]) for key, count in counts.items())


_WORK_FIGURES = figures("kind", "multiply_adds", "traffic_values", "parameters", "neurons", "passes",
                        "kernel_positions", "saved_values", "fused_saved_values", "saved_mask_bytes",
                        "fused_multiply_adds", "shared_parameters", "frozen", "frozen_parameters")


_FLOP_FIGURES = figures("multiply_adds", "passes", "frozen")
_DistinctKey = tuple[LayerKind, int, int, int, int, bool, int, int, bool, bool]
_DISTINCT: IdentityMemo[dict[_DistinctKey, int]] = IdentityMemo()


def _distinct_layers(model: ModelStats) -> dict[_DistinctKey, int]:
    """Return how many layers share each (kind, multiply-adds, values moved per sample, weights read, passes,
    Winograd, s x s matrix values of those moved, causal fused multiply-adds, forward only, output projection), in
    the order each first appears: what a layer's work depends on besides the batch and the attention kernel.
    The output projection is the last dense row, where no other row has its figures.

    A row's traffic figure counts the weights it reads; they are read once per pass, not once per sample,
    whoever holds them: its own (`parameters`), a tied row's (`shared_parameters`) or frozen ones."""

    def count() -> dict[_DistinctKey, int]:
        counts: dict[_DistinctKey, int] = {}
        # The rows' figures gathered and counted in C (row_table.py), then each distinct one keyed, in the order
        # each first appears.
        grouped = row_table(model)
        head = _output_projection(model, grouped)
        for i, ((kind, multiply_adds, traffic_values, parameters, neurons, passes, kernel_positions, saved,
             fused_saved, mask, fused_macs, shared, frozen, frozen_parameters), n) in \
                enumerate(zip(map(_WORK_FIGURES, grouped.distinct), grouped.counts, strict=True)):
            weights = parameters + shared + frozen_parameters
            # Without a traffic figure: read the input, write the output, about twice the output.
            per_sample = max(traffic_values - weights, 0) if traffic_values else 2 * neurons
            matrix = matrix_traffic_values(kind is LayerKind.ATTENTION, saved, fused_saved, mask)
            key = (kind, multiply_adds, per_sample, weights, passes,
                   kernel_positions in WINOGRAD_KERNEL_POSITIONS, matrix, fused_macs, frozen, i == head)
            counts[key] = counts.get(key, 0) + n
        return counts

    return _DISTINCT.get(model, (), count)


def _output_projection(model: ModelStats, grouped: RowTable) -> int:
    """Return the position among the distinct rows of the model's last dense row when no other row shares its
    figures (an LM head, a classifier), else -1."""
    last = next((i for i in range(len(model.layers) - 1, -1, -1) if model.layers[i].kind is LayerKind.DENSE), -1)
    if last < 0:
        return -1
    at = grouped.index()[last]
    return at if grouped.counts[at] == 1 else -1


_TIMES_VERSION = 0  # raised each time the remembered times are dropped: what was derived from them is stale


def forget_cached_times() -> None:
    """Drop the remembered single-GPU times (for the calibration tool, which changes the factors)."""
    global _SINGLE, _TIMES_VERSION
    _SINGLE = IdentityMemo(size=256)
    _TIMES_VERSION += 1


def cached_times_version() -> int:
    """Return how many times the remembered times were dropped: a key part for caches of what derives from them."""
    return _TIMES_VERSION


def layer_work(model: ModelStats, batch_size: int, precision: Precision,
               fused_attention: bool = False) -> tuple[_LayerWork, ...]:
    """Return the per-layer work, remembered per model (the ranking loop asks ~130 times per job)."""
    return _WORK.get(model, (batch_size, precision, fused_attention),
                     lambda: _compute_layer_work(model, batch_size, precision, fused_attention))


def _passes(training: Training) -> float:
    """Return forward-pass equivalents per iteration: 1 forward + 2 backward (+1 forward with recompute, +1 for a
    preference job's reference model: preference.py)."""
    return (1.0 + BACKWARD_TO_FORWARD + (RECOMPUTE_EXTRA_FORWARDS if training.recompute else 0.0)
            + reference_forwards(training))


def training_flops(model: ModelStats, training: Training) -> float:
    """Return FLOPs of one iteration on one GPU: multiply-adds x 2 x 3, plus a forward with recompute.

    A layer that runs several passes per step (a GAN's discriminator) counts each. With adapters
    (LoRA, QLoRA) backward makes no gradient for the frozen weights: one pass's worth, not two, as
    the strategies' step time counts it (strategies/steptime.py).
    """
    passes = _passes(training)
    if training.parallelism.adapter is not None:
        passes -= BACKWARD_TO_FORWARD - 1.0
    trained, forward_only = _step_multiply_adds(model)
    return 2.0 * training.batch_size * (trained * passes + forward_only * (1.0 + reference_forwards(training)))


def _step_multiply_adds(model: ModelStats) -> tuple[int | float, int | float]:
    """Return the multiply-adds of every row's passes, of the trained rows and of the frozen (forward-only)
    ones: over the distinct rows x their counts when all are whole."""
    if not model.layers:
        return model.multiply_adds, 0
    grouped = row_table(model)
    rows = list(map(_FLOP_FIGURES, grouped.distinct))
    if all(type(m) is int and type(p) is int for m, p, _ in rows):  # exact in any order
        sums = [0, 0]
        for (m, p, frozen), n in zip(rows, grouped.counts, strict=True):
            sums[frozen] += m * p * n
        return sums[0], sums[1]
    total: list[int | float] = [0, 0]
    for layer in model.layers:
        total[layer.frozen] += layer.multiply_adds * layer.passes
    return total[0], total[1]


def _bottleneck(parts: dict[Bottleneck, float]) -> Bottleneck:
    """Return the name of the largest part."""
    return max(parts.items(), key=lambda item: item[1])[0]


def single_gpu_time(model: ModelStats, training: Training, gpu: GpuSpec) -> IterationTime:
    """Return the predicted iteration time on one GPU, from the model alone (no profile)."""
    return _SINGLE.get(model, (step_training(training), gpu), lambda: _single_gpu_time(model, training, gpu))


def _single_gpu_time(model: ModelStats, training: Training, gpu: GpuSpec) -> IterationTime:
    """Compute single_gpu_time."""
    precision = effective_precision(training.precision, gpu)
    framework = training.framework
    fused = resolve_attention(training.attention, architecture=gpu.architecture, precision=training.precision.value,
                              framework=training.framework.value) is not Attention.MATH
    work = layer_work(model, training.batch_size, precision, fused)
    ms_per_byte = 1.0 / (gpu.memory_bandwidth_gb_per_s * 1e6 * efficiency.BANDWIDTH_EFFICIENCY)
    passes = _passes(training)
    frozen_passes = 1.0 + reference_forwards(training)  # forward only (the reference runs them again)
    dispatch_ms = LAYER_DISPATCH_MS[framework] if model.layers else 0.0
    forward_dispatch_ms = dispatch_ms / (1.0 + BACKWARD_TO_FORWARD)
    ms_per_flop = {kind: 1.0 / achieved_flops_per_ms(kind, precision, gpu, tf32_matmul=tf32_matmul(training))
                   for kind in {item[0] for item in work}}
    # the output projection in 16 bits under fp8-mixed (its product at the bf16 rate)
    head_ms_per_flop = 1.0 / achieved_flops_per_ms(LayerKind.DENSE, Precision.BF16_MIXED, gpu) \
        if precision is Precision.FP8_MIXED else ms_per_flop.get(LayerKind.DENSE, 0.0)
    winograd = WINOGRAD_MAC_SHARE if math_unit(LayerKind.CONV, precision, gpu) is MathUnit.SIMT else 1.0
    # [compute, memory] ms of one forward of every row: trained rows (x passes: forward and backward) and
    # frozen rows (forward only, under no_grad)
    trained, forward_only = [0.0, 0.0], [0.0, 0.0]
    overhead_ms = forward_ms = 0.0
    tiny = 0
    for kind, flops, traffic_bytes, layer_passes, fast_conv, count, cast_bytes, frozen, head in work:
        arithmetic_ms = flops * (head_ms_per_flop if head else ms_per_flop[kind]) * (winograd if fast_conv else 1.0)
        traffic_ms = traffic_bytes * ms_per_byte
        forward = max(arithmetic_ms, traffic_ms)
        into = forward_only if frozen else trained
        into[arithmetic_ms < traffic_ms] += forward * layer_passes * count
        if cast_bytes:
            into[1] += cast_bytes * ms_per_byte * layer_passes * count
            forward += cast_bytes * ms_per_byte
        if forward < TINY_LAYER_MS:
            tiny += count
        forward_ms += (forward if forward > forward_dispatch_ms else forward_dispatch_ms) * count
        row_passes, row_dispatch_ms = ((frozen_passes, forward_dispatch_ms * frozen_passes) if frozen else
                                       (passes, dispatch_ms + forward_dispatch_ms * (frozen_passes - 1.0)))
        if forward * row_passes < row_dispatch_ms:
            overhead_ms += (row_dispatch_ms - forward * row_passes) * layer_passes * count
    compute_ms = trained[0] * passes + forward_only[0] * frozen_passes
    memory_ms = trained[1] * passes + forward_only[1] * frozen_passes
    step_traffic_ms, step_idle_ms = optimizer_step_ms(model, training, precision=precision, ms_per_byte=ms_per_byte)
    memory_ms += step_traffic_ms
    overhead_ms += step_idle_ms + ITERATION_OVERHEAD_MS
    forward_ms += ITERATION_OVERHEAD_MS
    total_ms = compute_ms + memory_ms + overhead_ms
    parts = {BOTTLENECK_COMPUTE: compute_ms, BOTTLENECK_MEMORY: memory_ms, BOTTLENECK_OVERHEAD: overhead_ms}
    return IterationTime(
        compute_ms=compute_ms, memory_ms=memory_ms, allreduce_ms=0.0, overhead_ms=overhead_ms,
        total_ms=total_ms, bottleneck=_bottleneck(parts), single_gpu_ms=total_ms, forward_ms=forward_ms,
        layer_count=len(model.layers), tiny_layer_count=tiny if model.layers else 0,
    )


def calibrate_to_profile(predicted: IterationTime, *, predicted_on_profile_gpu: IterationTime,
                         measured_ms: float) -> IterationTime:
    """Scale a prediction by a measurement on another GPU.

    The measured time is multiplied by the ratio of the two predictions. Since each prediction sums
    compute-bound layers (scaling with the GPUs' arithmetic rates) and bandwidth-bound layers
    (scaling with their bandwidths), the ratio weights the two by the job's own split.
    """
    scale = measured_ms / predicted_on_profile_gpu.total_ms
    return IterationTime(
        compute_ms=predicted.compute_ms * scale, memory_ms=predicted.memory_ms * scale, allreduce_ms=0.0,
        overhead_ms=predicted.overhead_ms * scale, total_ms=predicted.total_ms * scale,
        bottleneck=predicted.bottleneck, single_gpu_ms=predicted.total_ms * scale,
        forward_ms=predicted.forward_ms * scale, calibrated=True, layer_count=predicted.layer_count,
        tiny_layer_count=predicted.tiny_layer_count,
    )


def estimate_iteration_ms(model: ModelStats, training: Training, gpu: GpuSpec, *, gpu_count: int = 1,
                          profile_gpu: GpuSpec | None = None,
                          inter_node_gbit_per_s: float | None = None,
                          gpus_per_node: int | None = None) -> IterationTime:
    """Return the time of one iteration (every GPU on its own batch) on `gpu_count` GPUs of this model.

    `gpus_per_node`: GPUs in one machine, where the machine is known (multigpu.ring_link).

    With `training.profile`, pass the profile's GPU as `profile_gpu` (or let it be `gpu` itself when
    the slugs match): the figure is then scaled from the measurement and marked calibrated.
    """
    single = single_gpu_time(model, training, gpu)
    profile = training.profile
    if profile is not None and profile.gpu:
        if profile_gpu is None and profile.gpu == gpu.slug:
            profile_gpu = gpu
        if profile_gpu is not None:
            on_profile_gpu = single if profile_gpu is gpu else single_gpu_time(model, training, profile_gpu)
            single = calibrate_to_profile(single, predicted_on_profile_gpu=on_profile_gpu,
                                          measured_ms=profile.iteration_ms)
    if gpu_count == 1:
        return single
    layers_ms = single.compute_ms + single.memory_ms
    backward_ms = layers_ms * BACKWARD_TO_FORWARD / _passes(training)
    multi = multi_gpu_time(
        single.total_ms, backward_ms=backward_ms,
        gradient_bytes=model.parameters * GRADIENT_BYTES,
        gpu=gpu, gpu_count=gpu_count, framework=training.framework,
        inter_node_gbit_per_s=inter_node_gbit_per_s, update_interval=training.update_interval,
        parameter_server=training.parallelism.data_parallel is DataParallel.PARAMETER_SERVER,
        gpus_per_node=gpus_per_node,
    )
    parts = {BOTTLENECK_COMPUTE: single.compute_ms, BOTTLENECK_MEMORY: single.memory_ms,
             BOTTLENECK_OVERHEAD: single.overhead_ms + multi.scaling_loss_ms,
             BOTTLENECK_ALLREDUCE: multi.exposed_ms}
    return _with(single, allreduce_ms=multi.exposed_ms,
                 overhead_ms=single.overhead_ms + multi.scaling_loss_ms, total_ms=multi.total_ms,
                 bottleneck=_bottleneck(parts), speedup_vs_one_gpu=multi.speedup)


def _with(time: IterationTime, **changes: Any) -> IterationTime:
    """Return dataclasses.replace(time, **changes) without its per-field work (a quarter of the cost).

    IterationTime's fields are all set by its __init__ and checked by nothing (no __post_init__), so a copy
    of its fields with the changes is what replace builds; tests/test_timing.py holds the two equal.
    """
    unknown = changes.keys() - _ITERATION_TIME_FIELDS
    if unknown:
        raise TypeError(f"IterationTime has no field {sorted(unknown)[0]!r}")
    new = object.__new__(IterationTime)
    fields = new.__dict__
    fields.update(time.__dict__)
    fields.update(changes)
    return new


_ITERATION_TIME_FIELDS = frozenset(f.name for f in dataclass_fields(IterationTime))
