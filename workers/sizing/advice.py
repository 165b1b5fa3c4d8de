"""Coded warnings: each rule of domain.md §2-6 that applies to a job, with the rule and its inputs named.

Codes (CONTRACT warnings[].code): baseline-formula-understates, data-parallel-full-copy,
parameter-exchange-bound, run-trials-in-parallel, short-iteration, short-run, tiny-layers,
small-gpu-memory, memory-tier, old-architecture, no-tensor-cores-for-mixed-precision, bf16-unsupported,
fp8-unsupported, fp8-no-gain (fp8.py),
top-end-underused, does-not-fit, batch-not-the-problem, cpu-bound, host-memory-short, storage-short,
unknown-dataset-size, unknown-operators, framework-preallocates, parameter-server; and the model import's own
(ModelStats.import_warnings: onnx-eval-export, onnx-training-mode-unknown).
"""

from __future__ import annotations

import math

from catalog.types import GpuSpec
from catalog.units import GIB
from workers.sizing.checkpoint import (
    PRETRAINED_BYTES_PER_PARAMETER,
    checkpoint_bytes,
    checkpoint_parameters,
    pretrained_bytes,
)
from workers.sizing.fp8 import fp8_warning
from workers.sizing.machine import (
    CONTAINER_DEFAULT_SHM_BYTES,
    FASTEST_HOST_CPU_SCORE,
    LOADER_PREFETCH_FACTOR,
    REFERENCE_CPU_SINGLE_THREAD_SCORE,
    MachineNeeds,
    loader_shared_bytes,
)
from workers.sizing.multigpu import framework_speedup_cap
from workers.sizing.requirements import CodedWarning, MemoryBreakdown
from workers.sizing.rules import (
    BASELINE_UNDERSTATES_RATIO,
    CPU_BOUND_RATIO,
    CUDA11_ARCHITECTURES,
    INDIVIDUAL_TIER_BYTES,
    MODEL_STORAGE_WARN_BYTES,
    NOT_RECOMMENDED_GPU_MEMORY_BYTES,
    OLD_ARCHITECTURES,
    PARAMETER_EXCHANGE_RATIO,
    RESEARCH_TIER_BYTES,
    SHARDING_WORTH_SHARE,
    SHORT_ITERATION_MS,
    SHORT_RUN_MINUTES,
    SMALL_GPU_MEMORY_BYTES,
    TINY_LAYER_MS,
    TINY_LAYERS_MIN_COUNT,
    TINY_LAYERS_MIN_OVERHEAD_SHARE,
    TINY_LAYERS_MIN_SHARE,
    TOP_END_FP16_TFLOPS,
    TOP_END_WASTED_OVERHEAD_SHARE,
)
from workers.sizing.spec import Framework, JobSpec, Precision
from workers.sizing.strategies.types import DataParallel
from workers.sizing.throughput import has_bf16, has_tensor_cores
from workers.sizing.timing import IterationTime


def _gb(value: float) -> str:
    """Format bytes as GiB with one decimal (cards are labelled in GiB: an "8 GB" card holds 8 GiB)."""
    return f"{value / GIB:.1f} GiB"


def memory_warnings(job: JobSpec, *, memory: MemoryBreakdown, baseline_bytes: int, gpu_count: int,
                    sharded: MemoryBreakdown | None) -> list[CodedWarning]:
    """Return the GPU-independent memory warnings (domain.md §2, §4)."""
    found = []
    peak = memory.total_bytes
    if peak > BASELINE_UNDERSTATES_RATIO * baseline_bytes:
        terms = {name.replace("_", " "): size for name, size in memory.by_term().items()}
        largest = max(terms.items(), key=lambda item: item[1])
        found.append(CodedWarning("baseline-formula-understates", (
            f"The baseline formula (neurons x batch x 2 x 4 + parameters x 2 x 4) gives "
            f"{_gb(baseline_bytes)}; the realistic peak is {_gb(peak)}, because the formula leaves out "
            f"optimizer state ({job.training.optimizer.value}), mixed-precision copies and the framework's "
            f"reserve. The largest term is {largest[0]} ({_gb(largest[1])}).")))
    if peak > INDIVIDUAL_TIER_BYTES:
        tier = ("the 32-64 GB a company's research work wants" if peak <= 64 * GIB
                else "more than one card of today's largest memory")
        found.append(CodedWarning("memory-tier", (
            f"The job as given needs {_gb(peak)} per GPU: beyond the 6-8 GB cards that suffice for an individual's "
            f"work; plan for {tier}, or see the out-of-memory plan.")))
    if gpu_count > 1 and sharded is not None and sharded.total_bytes <= (1 - SHARDING_WORTH_SHARE) * peak:
        found.append(CodedWarning("data-parallel-full-copy", (
            f"Data parallel keeps a full copy of parameters, gradients and optimizer state on each of the "
            f"{gpu_count} GPUs ({_gb(peak)} per GPU). Sharding the optimizer state and gradients "
            f"{gpu_count} ways (ZeRO-2 / FSDP SHARD_GRAD_OP) would need {_gb(sharded.total_bytes)} "
            f"per GPU.")))
    return found


def model_warnings(job: JobSpec, *, gpu_count: int) -> list[CodedWarning]:
    """Return warnings about the model and data themselves (domain.md §4)."""
    model, found = job.model, []
    if model.parameters > 0 and model.multiply_adds <= PARAMETER_EXCHANGE_RATIO * model.parameters:
        ratio = model.multiply_adds / model.parameters
        effect = (f"with {gpu_count} GPUs, exchanging parameters will dominate" if gpu_count > 1
                  else "several GPUs would help little")
        found.append(CodedWarning("parameter-exchange-bound", (
            f"Multiply-adds are {ratio:.1f}x the parameters (rule of thumb: at most about "
            f"{PARAMETER_EXCHANGE_RATIO:g}x means many parameters for little compute, e.g. Affine layers "
            f"instead of convolutions): {effect}. Use the GPUs for separate trials instead.")))
    if job.dataset.samples <= 0:
        found.append(CodedWarning("unknown-dataset-size", (
            "dataset.samples is not given: time per epoch and training hours cannot be computed "
            "(time = time per iteration x ceil(samples / batch) x epochs).")))
    if job.dataset.tokens:  # the spec's dataset.tokens told back as the samples the time is counted in
        mean, given = job.training.mean_sequence_length, job.training.sequence_length
        said = f"training.{'mean_' if mean else ''}sequence_length" if mean or given else "the model's context"
        found.append(CodedWarning("samples-from-tokens", (
            f"dataset.tokens {job.dataset.tokens:,} at {mean or model.sequence_length:,} tokens a sample ({said}): "
            f"{job.dataset.samples:,} samples an epoch.")))
    if model.unknown_operators:
        found.append(CodedWarning("unknown-operators", (
            f"These operators are not modelled and count as zero memory and compute: "
            f"{', '.join(model.unknown_operators)}.")))
    found.extend(CodedWarning(code, message) for code, message in model.import_warnings)
    if job.training.parallelism.data_parallel is DataParallel.PARAMETER_SERVER:
        cap = framework_speedup_cap(job.training.framework, 4)
        found.append(CodedWarning("parameter-server", (
            f"Parameter-server exchange scaled {cap:.1f}x on 4 GPUs for {job.training.framework.value} in the "
            f"2017 survey (domain.md §4; TensorFlow 2-3x), and the estimate caps the speed-up there; "
            f"all-reduce (DDP, Horovod, MirroredStrategy) or sharding scales close to linearly on one machine.")))
    if any(layer.type == "gather" for layer in model.layers):  # a mixture of experts' dispatch (layers/feedforward.py)
        found.append(CodedWarning("mixture-of-experts-time", (
            "The experts are timed as their active work (experts_per_token of them per token) at the card's usual "
            "matrix efficiency, as if the router spread tokens evenly. Against one public run with tuned kernels "
            "and a balanced router (NeMo AutoModel, Qwen3-30B-A3B on 8 H100) it reads 24% slow; uneven load and "
            "an eager per-expert loop make real runs slower than that run. Memory holds every expert's weights, "
            "gradients and optimizer state.")))
    if job.training.framework in (Framework.TENSORFLOW, Framework.JAX):
        found.append(CodedWarning("framework-preallocates", (
            f"{job.training.framework.value} reserves most of the GPU memory at start by default, so "
            f"nvidia-smi will show the card full whatever the job needs; the figures here are what the "
            f"job needs.")))
    return found


def framework_gpu_unsupported(job: JobSpec, gpu: GpuSpec) -> str:
    """Return why the job's framework cannot train on this GPU, or "" where it can.

    CNTK's last release is built on CUDA 10, older than Ampere (rules.CUDA11_ARCHITECTURES): the ranking
    leaves such cards out of a CNTK job's answer, and an estimate named on one says so.
    """
    if job.training.framework is not Framework.CNTK or gpu.architecture not in CUDA11_ARCHITECTURES:
        return ""
    arch = gpu.architecture.title()
    return (f"{gpu.slug} is {arch}: CNTK's last release (2.7, April 2019) is built on CUDA 10, and {arch} GPUs "
            "need CUDA 11 or newer, so CNTK cannot train on this card. Take a Volta or Turing card (V100, T4), "
            "or export the model to ONNX and train it in PyTorch.")


def gpu_warnings(job: JobSpec, gpu: GpuSpec, *, time: IterationTime, training_hours: float,
                 fits: bool, gpu_memory_bytes: int, usable_bytes: int, gpu_count: int) -> list[CodedWarning]:
    """Return the warnings that depend on one GPU model (domain.md §4, §6)."""
    name, found = gpu.slug, []
    precision = job.training.precision
    if gpu.memory_bytes <= SMALL_GPU_MEMORY_BYTES:
        verdict = ("3 GB cards are not recommended" if gpu.memory_bytes <= NOT_RECOMMENDED_GPU_MEMORY_BYTES
                   else "under about 4 GB is only for toys")
        found.append(CodedWarning("small-gpu-memory", (
            f"{name} has {gpu.memory_bytes / GIB:.0f} GB: {verdict}. Rough tiers: 6-8 GB for an "
            f"individual's work (up to {INDIVIDUAL_TIER_BYTES // GIB} GB), 32-64 GB for company research "
            f"({RESEARCH_TIER_BYTES // GIB} GB and up).")))
    unsupported = framework_gpu_unsupported(job, gpu)
    if unsupported:
        found.append(CodedWarning("framework-gpu-unsupported", unsupported))
    if gpu.architecture in OLD_ARCHITECTURES:
        found.append(CodedWarning("old-architecture", (
            f"{name} is {gpu.architecture.title()}: older architectures are slow, and current cuDNN and "
            f"framework releases no longer support them.")))
    if precision is not Precision.FP32 and not has_tensor_cores(gpu):
        found.append(CodedWarning("no-tensor-cores-for-mixed-precision", (
            f"{name} has no tensor cores: mixed precision halves activation memory and traffic there, "
            f"but the arithmetic runs at the fp32 rate, so it buys little speed.")))
    fp8 = fp8_warning(job, gpu)  # fp8-unsupported, fp8-no-gain
    if fp8 is not None:
        found.append(fp8)
    if precision in (Precision.BF16_MIXED, Precision.FP8_MIXED) and not has_bf16(gpu):
        found.append(CodedWarning("bf16-unsupported", (
            f"{name} ({gpu.architecture.title()}) has no bf16 arithmetic (Ampere and later have it); "
            f"estimated as fp32 there. Use fp16-mixed on this card.")))
    if not fits:
        found.append(CodedWarning("does-not-fit", (
            f"Predicted peak {_gb(gpu_memory_bytes)} per GPU exceeds what {name} offers with headroom "
            f"({_gb(usable_bytes)} of {_gb(gpu.memory_bytes)}); see the mitigations.")))
    found.extend(short_job_warnings(iteration_ms=time.total_ms, training_hours=training_hours, name=name))
    overhead_share = time.overhead_ms / time.total_ms if time.total_ms > 0 else 0.0
    if (time.layer_count >= TINY_LAYERS_MIN_COUNT
            and time.tiny_layer_count >= TINY_LAYERS_MIN_SHARE * time.layer_count
            and overhead_share >= TINY_LAYERS_MIN_OVERHEAD_SHARE):
        found.append(CodedWarning("tiny-layers", (
            f"{time.tiny_layer_count} of {time.layer_count} layers run their forward pass in under "
            f"{TINY_LAYER_MS:g} ms on {name}: with that many tiny layers, kernel launches take "
            f"{overhead_share:.0%} of each iteration and the GPU gains little.")))
    if gpu.fp16_tflops >= TOP_END_FP16_TFLOPS and overhead_share >= TOP_END_WASTED_OVERHEAD_SHARE:
        found.append(CodedWarning("top-end-underused", (
            f"{name} is a top-end card, but {overhead_share:.0%} of each iteration is overhead: top-end "
            f"cards pay off only on large networks; a cheaper card will be nearly as fast.")))
    if gpu_count > 1 and time.speedup_vs_one_gpu < 0.75 * gpu_count:
        found.append(CodedWarning("run-trials-in-parallel", (
            f"{gpu_count} x {name} train {time.speedup_vs_one_gpu:.1f}x faster than one "
            f"({job.training.framework.value} scaling, {time.bottleneck}). For a hyper-parameter search, "
            f"run {gpu_count} trials in parallel instead (a grid over at most 3 parameters on a log scale, "
            f"random search beyond that).")))
    return found


def vcpus_text(workers: int, threads_per_core: int = 1) -> str:
    """Return the vCPUs per GPU that give `workers` loader workers and the training process a core each.

    "5 vCPUs" where a vCPU is a core; "10 vCPUs, 5 cores" where two vCPUs share one (machine.loader_cores).
    """
    cores = workers + 1
    if threads_per_core <= 1:
        return f"{cores} vCPUs"
    return f"{cores * threads_per_core} vCPUs, {cores} cores"


def cpu_warning(cpu_score_needed: float, *, gpu: str,
                cpu_single_thread_score: float = REFERENCE_CPU_SINGLE_THREAD_SCORE, workers: int = 1,
                serial: bool = False, threads_per_core: int = 1, total_score: float = 0.0) -> CodedWarning | None:
    """Return a cpu-bound warning when `workers` cores of this score cannot pre-process as fast as the GPU runs.

    `cpu_score_needed` is per worker (machine.loader_need: on a machine whose workers share cores, the score their
    share of a core must make up for); `total_score`, all of theirs on cores of their own (machine.cpu_score_needed;
    left 0, `cpu_score_needed` x `workers`). The message names what fixes it: the loader workers per GPU that would
    keep up on cores of their own, or, when pre-processing cannot be split, the single-thread score needed.
    """
    if cpu_score_needed <= CPU_BOUND_RATIO * cpu_single_thread_score:
        return None
    slowdown = cpu_score_needed / cpu_single_thread_score
    total = total_score if total_score > 0 else cpu_score_needed * workers
    if serial:
        fix = (f"a CPU of single-thread score {total:,.0f} would keep up"
               + (f", which no cloud host CPU reaches (the fastest rates {FASTEST_HOST_CPU_SCORE:,.0f}): split "
                  f"the pre-processing across loader workers or do it once ahead of training"
                  if total > FASTEST_HOST_CPU_SCORE else ""))
    else:
        need = math.ceil(total / cpu_single_thread_score - 1e-9)
        fix = (f"{need} loader workers per GPU on these cores would keep up ({vcpus_text(need, threads_per_core)} "
               f"per GPU), or pre-process once ahead of training or on the GPU (NVIDIA DALI decodes and "
               f"augments images there)")
    return CodedWarning("cpu-bound", (
        f"Pre-processing one batch on {workers} loader worker{'s' if workers != 1 else ''} per GPU needs a "
        f"single-thread score of {cpu_score_needed:,.0f} each to keep {gpu} busy; cores of "
        f"{cpu_single_thread_score:,.0f} make each iteration {slowdown:.1f}x longer (single-thread speed sets "
        f"each worker's pace). Fix: {fix}."))


def _size_text(n_bytes: int) -> str:
    """Return bytes as "1.2 GiB", or "73.5 MiB" below a GiB."""
    return f"{n_bytes / GIB:.1f} GiB" if n_bytes >= GIB else f"{n_bytes / 2**20:.1f} MiB"


def loader_shared_memory_warning(*, workers: int, batch_bytes: int, gpus_per_machine: int = 1,
                                 allowed: int = 0) -> CodedWarning | None:
    """Return `loader-shared-memory` where one GPU's loader needs more shared memory than a container gets by default.

    PyTorch's DataLoader workers hand their batches to the training process through /dev/shm
    (machine.loader_shared_bytes); Docker gives a container 64 MB of it unless told otherwise. `allowed`:
    the workers the machine's vCPUs allow, where more than the `workers` that keep the GPU fed.
    """
    shared = loader_shared_bytes(workers=workers, batch_bytes=batch_bytes)
    if shared <= CONTAINER_DEFAULT_SHM_BYTES:
        return None
    return CodedWarning("loader-shared-memory", (
        f"Each GPU's {workers} loader worker{'s' if workers != 1 else ''}"
        f"{f' (the fewest of the {allowed} its vCPUs allow that keep it fed)' if allowed > workers else ''}"
        f" hand{'' if workers != 1 else 's'} batches to training through "
        f"shared memory: about {_size_text(shared)} per GPU"
        f"{f' ({_size_text(shared * gpus_per_machine)} for {gpus_per_machine} GPUs)' if gpus_per_machine > 1 else ''}"
        f" ({LOADER_PREFETCH_FACTOR * workers + 1} batches of "
        f"{_size_text(batch_bytes)}: {LOADER_PREFETCH_FACTOR} prefetched per worker, PyTorch's default "
        f"prefetch_factor, and the one in use), counted in the host memory. In a container /dev/shm must hold "
        f"that for every GPU the container trains on; Docker gives 64 MB unless told (docker run --shm-size, or "
        f"--ipc=host; on Kubernetes a memory-backed emptyDir at /dev/shm), and too little stops training with "
        f"\"Unexpected bus error encountered in worker. This might be caused by insufficient shared memory "
        f"(shm)\"."))


def machine_warnings(needs: MachineNeeds, *, host_memory_bytes: int | None = None,
                     storage_bytes: int | None = None) -> list[CodedWarning]:
    """Return host-memory and storage warnings for a machine of the given sizes (None: not known)."""
    found = []
    if host_memory_bytes is not None and host_memory_bytes < needs.host_memory_bytes:
        found.append(CodedWarning("host-memory-short", (
            f"The machine has {_gb(host_memory_bytes)} of host memory; the job needs about "
            f"{_gb(needs.host_memory_bytes)} (training data loaded into memory must fit, plus the "
            f"framework's processes). More memory than that does not speed training.")))
    if storage_bytes is not None and storage_bytes < needs.storage_min_bytes:
        found.append(CodedWarning("storage-short", (
            f"The machine has {_gb(storage_bytes)} of storage; plan 3 to 4 times the data size "
            f"({_gb(needs.storage_min_bytes)} to {_gb(needs.storage_max_bytes)}). SSD over HDD matters "
            f"little for training speed.")))
    return found


def model_storage_warning(job: JobSpec, needs: MachineNeeds) -> CodedWarning | None:
    """Warn where the model's own files outgrow the data's storage: a checkpoint, and a fine-tune's base weights.

    domain.md §6 sizes storage by the data (3-4x); a 70B full fine-tune on 300 MB of text writes
    checkpoints of 840 GB. Raised when they exceed the data's upper figure and MODEL_STORAGE_WARN_BYTES.
    """
    saved = checkpoint_parameters(job)
    checkpoint = checkpoint_bytes(parameters=saved, optimizer=job.training.optimizer.value, ema=job.training.ema)
    base = pretrained_bytes(job)
    if checkpoint + base <= max(needs.storage_max_bytes, MODEL_STORAGE_WARN_BYTES):
        return None
    what = ("the adapters with their optimizer state" if saved < job.model.parameters
            else f"{job.model.parameters / 1e9:.3g}B weights with {job.training.optimizer.value} state")
    read = (f", and the pre-trained weights it starts from ({_size_text(base)} at {PRETRAINED_BYTES_PER_PARAMETER} "
            f"bytes a parameter, as hubs publish them) are read first" if base else "")
    data = (f"Storage is sized by the data ({_gb(needs.storage_min_bytes)} to {_gb(needs.storage_max_bytes)}); "
            f"the model needs more" if needs.storage_max_bytes > 0
            else "No data set size is given (dataset.bytes), so storage is sized by the model's own files")
    return CodedWarning("model-storage", (
        f"{data}: one checkpoint of {what} is {_size_text(checkpoint)}{read}. Plan "
        f"{_size_text(checkpoint + base)} beyond the data for one checkpoint kept, "
        f"{_size_text(2 * checkpoint + base)} for two (the last and the one being written); sharded state is "
        f"written by every machine, the same total."))


# Where the step under the math path would need this much more memory than under the fused kernel `auto`
# assumed, the assumption is said (ours: a tenth changes which cards hold the job).
ATTENTION_ASSUMPTION_SHARE = 0.10


def attention_assumption_warning(*, fused_bytes: int, math_bytes: int) -> CodedWarning | None:
    """Return the attention-kernel-assumed warning where `auto`'s fused kernel changes the peak materially.

    `auto` assumes PyTorch's scaled_dot_product_attention (flash or memory-efficient: no sequence x sequence
    matrix kept or moved); code that writes attention out, or a PyTorch before 2.0, runs the math path.
    """
    if fused_bytes <= 0 or math_bytes <= fused_bytes * (1.0 + ATTENTION_ASSUMPTION_SHARE):
        return None
    return CodedWarning("attention-kernel-assumed", (
        f"Attention is sized as PyTorch's fused kernel (scaled_dot_product_attention: flash or "
        f"memory-efficient), which keeps no sequence x sequence matrix: {_gb(fused_bytes)} per GPU. Training "
        f"code that writes attention out (matmul, softmax), or PyTorch before 2.0, runs the math path: say "
        f"training.attention: math, {_gb(math_bytes)} per GPU, and each iteration moves the matrix through "
        f"memory, so it is slower too."))


# A model this large is a large language model, trained in 16 bits almost always [recalled: nanoGPT's train.py
# picks bfloat16 wherever the GPU supports it; the QLoRA paper (Dettmers et al. 2023) computes in BFloat16;
# Hugging Face's fine-tuning recipes set bf16=True]. Where such a job is sized in fp32 (the spec's default
# when no precision is given), the answer says what bf16-mixed would need. [ours: 1B parameters]
LARGE_MODEL_PARAMETERS = 1_000_000_000


def fp32_large_model_warning(*, parameters: int, fp32_bytes: int, bf16_bytes: int) -> CodedWarning | None:
    """Return `fp32-large-model` where a model of LARGE_MODEL_PARAMETERS or more is sized in fp32."""
    if parameters < LARGE_MODEL_PARAMETERS or bf16_bytes <= 0:
        return None
    # Where the optimizer step sets the peak, bf16-mixed keeps 16-bit weights beside the fp32 masters: more.
    memory = ("" if bf16_bytes < fp32_bytes else
              " (more: its fp32 master weights stay beside the 16-bit copies, and the optimizer step sets the peak)")
    return CodedWarning("fp32-large-model", (
        f"This job is sized in fp32 (training.precision, fp32 when none is given): {_gb(fp32_bytes)} per GPU. "
        f"A model of {parameters / 1e9:.1f}B parameters is almost always trained in bf16-mixed (nanoGPT, QLoRA and "
        f"Hugging Face recipes): {_gb(bf16_bytes)} per GPU{memory}, and several times faster on tensor cores. If "
        "the run uses it, say training.precision: bf16-mixed (CLI --precision bf16-mixed, Slack bf16)."))


def short_job_warnings(*, iteration_ms: float, training_hours: float, name: str) -> list[CodedWarning]:
    """Return domain.md §4's very-short-job warnings: an iteration under about 10 ms, a run under about 10 min."""
    found: list[CodedWarning] = []
    if 0 < iteration_ms < SHORT_ITERATION_MS:
        found.append(CodedWarning("short-iteration", (
            f"One iteration takes {iteration_ms:.2f} ms on {name}, under about {SHORT_ITERATION_MS:g} ms: "
            f"start-up and communication overheads dominate, and a GPU (or more GPUs) gains little.")))
    if 0 < training_hours * 60 < SHORT_RUN_MINUTES:
        found.append(CodedWarning("short-run", (
            f"The whole run takes {training_hours * 60:.1f} minutes on {name}, under about "
            f"{SHORT_RUN_MINUTES:g} minutes: start-up overheads dominate, a bigger GPU gains little.")))
    return found


def merge_warnings(warnings: list[tuple[str, CodedWarning]]) -> list[CodedWarning]:
    """Return one warning per code, in first-seen order; a code raised on several cards names them all.

    Each item is (card, warning), card "" for a warning that belongs to no card.
    """
    first: dict[str, CodedWarning] = {}
    others: dict[str, list[str]] = {}
    for card, warning in warnings:
        if warning.code not in first:
            first[warning.code], others[warning.code] = warning, []
        elif card and card not in others[warning.code]:
            others[warning.code].append(card)
    merged = []
    for code, warning in first.items():
        if others[code]:
            warning = CodedWarning(code, f"{warning.message} The same holds on {', '.join(others[code])}.")
        merged.append(warning)
    return merged
