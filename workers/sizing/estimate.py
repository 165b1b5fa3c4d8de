"""What a job needs, tied together: the contract's `requirements`, and one GPU's fit and time for ranking.

When the caller names no GPU, the time-dependent figures (CPU score, time warnings) and the
out-of-memory plan are worked out on a reference card: the T4 (16 GB), the one card both clouds rent
in every region and the cheapest on each; `per_gpu` then stays empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from catalog.gpu_names import gpu_name_matches, gpu_name_suggestions
from catalog.types import GpuSpec
from workers.sizing.advice import (
    LARGE_MODEL_PARAMETERS,
    attention_assumption_warning,
    cpu_warning,
    fp32_large_model_warning,
    gpu_warnings,
    loader_shared_memory_warning,
    memory_warnings,
    merge_warnings,
    model_storage_warning,
    model_warnings,
)
from workers.sizing.checks import check_job
from workers.sizing.errors import UnknownNameError
from workers.sizing.image_input import image_preprocess_warning, imagenet_stem_warning
from workers.sizing.layers.attention import Attention
from workers.sizing.loss_advice import fused_loss_warning
from workers.sizing.machine import (
    cpu_score_needed,
    loader_batch_bytes,
    loader_host_bytes,
    loader_need,
    loaders_in_use,
    machine_needs,
)
from workers.sizing.memory import (
    attention_kind,
    baseline_formula_bytes,
    fits,
    sharded_memory,
    step_peak,
    usable_memory_bytes,
)
from workers.sizing.oom_plan import out_of_memory_plan
from workers.sizing.optimizer_advice import eight_bit_warning, optimizer_step_warning
from workers.sizing.reported import NO_CALIBRATION, Calibration, calibrate_requirements
from workers.sizing.requirements import CodedWarning, Mitigation, PerGpu, Requirements
from workers.sizing.row_table import figures, row_table
from workers.sizing.schedule import iterations_per_epoch, iterations_total, training_hours
from workers.sizing.spec import JobSpec, Precision
from workers.sizing.strategies.named import (
    as_iteration_time,
    estimate_named,
    job_peak_bytes,
    named_layout,
    names_strategy,
    replica_gpus,
    single_gpu_time,
)
from workers.sizing.strategies.oom_steps import given_layout_words
from workers.sizing.timing import IterationTime, estimate_iteration_ms, training_flops

REFERENCE_GPU = "t4"


def unknown_gpu_error(slug: str, known_gpus: Mapping[str, GpuSpec], *, field: str) -> UnknownNameError:
    """Build the error for a GPU slug not in the catalog, listing the valid ones."""
    close = gpu_name_suggestions(slug, known_gpus)
    return UnknownNameError(field, f"unknown GPU {slug!r}; valid: {', '.join(sorted(known_gpus))}", close)


def resolve_gpus(slugs: Sequence[str], known_gpus: Mapping[str, GpuSpec], *,
                 field: str = "gpus") -> tuple[GpuSpec, ...]:
    """Return the GpuSpec of each name, or raise UnknownNameError naming `field[i]`.

    A name is a slug or a GPU as people write it ("RTX 4090", "1080ti"); a family ("a100", "v100")
    stands for each of its members (catalog/gpu_names.py); "all" is every GPU, as on the CLI. A GPU named
    twice is sized once.
    """
    resolved: dict[str, GpuSpec] = {}
    for index, slug in enumerate(slugs):
        matches = tuple(sorted(known_gpus)) if slug.strip().lower() == "all" else gpu_name_matches(slug, known_gpus)
        if not matches:
            raise unknown_gpu_error(slug, known_gpus, field=f"{field}[{index}]")
        resolved.update((match, known_gpus[match]) for match in matches)
    return tuple(resolved.values())


def estimate_on_gpus(job: JobSpec, gpus: Sequence[GpuSpec], *, slugs: Sequence[str], gpu_count: int | None = None,
                     field: str = "gpus", calibration: Calibration = NO_CALIBRATION) -> Requirements:
    """Size a job and fit it on `gpu_count` of each named GPU: the one "known GPUs, resolve, estimate" use case.

    The API, the CLI and the Slack answer call this; `gpus` is the catalog's GPU table, `field` names
    the GPU list in errors (`gpus[1]` in the API, `--gpu[1]` on the CLI). `calibration` holds the
    corrections fitted from reported runs (reported.py); the per-GPU rows it applies to say so.
    """
    known = {gpu.slug: gpu for gpu in gpus}
    if gpu_count is None:  # not said: the fewest GPUs the spec's named split runs on (one without one)
        gpu_count = replica_gpus(job)
    req = estimate_requirements(job, gpus=resolve_gpus(slugs, known, field=field), gpu_count=gpu_count,
                                known_gpus=known)
    return calibrate_requirements(req, job, known, calibration)


def profile_gpu(job: JobSpec, known_gpus: Mapping[str, GpuSpec]) -> GpuSpec | None:
    """Return the GPU of `training.profile`, or raise UnknownNameError for a slug not in the catalog."""
    profile = job.training.profile
    if profile is None or not profile.gpu:
        return None
    if profile.gpu not in known_gpus:
        raise unknown_gpu_error(profile.gpu, known_gpus, field="training.profile.gpu")
    return known_gpus[profile.gpu]


def _on_gpu(job: JobSpec, gpu: GpuSpec, *, gpu_count: int, reference: GpuSpec | None,
            inter_node_gbit_per_s: float | None, gpus_per_node: int | None = None,
            strategy_named: bool = True) -> tuple[PerGpu, IterationTime]:
    """Return the PerGpu row and the iteration time behind it (the spec's named strategy, if it names one).

    `strategy_named`: False where the caller knows the spec names no strategy (names_strategy): none is looked for.
    """
    training = job.training
    time = estimate_iteration_ms(job.time_model, training, gpu, gpu_count=gpu_count, profile_gpu=reference,
                                 inter_node_gbit_per_s=inter_node_gbit_per_s, gpus_per_node=gpus_per_node)
    layout = named_layout(job, gpu_count=gpu_count) if strategy_named else None
    if layout is None:
        peak = step_peak(job.model, training, gpu=gpu, gpu_count=gpu_count)
        memory, phase, replicas = peak.breakdown.total_bytes, peak.phase.value, gpu_count
        samples = training.batch_size * gpu_count
    else:
        named = estimate_named(job, layout, gpu=gpu, profile_gpu=reference)
        assert named.time is not None  # timed on this GPU
        memory, phase, replicas = named.memory.total_bytes, named.memory.peak_phase, layout.data_parallel_degree
        samples = named.time.samples_per_iteration
        single = named.time if gpu_count == 1 else single_gpu_time(
            job, layout, gpu, trainable_parameters=named.memory.trainable_parameters, profile_gpu=reference)
        time = as_iteration_time(named.time, time, single=single)
    hours = training_hours(job.dataset, training, iteration_ms=time.total_ms, forward_ms=time.forward_ms,
                           gpu_count=replicas)
    row = PerGpu(
        gpu=gpu.slug, gpu_count=gpu_count, fits=fits(memory, gpu), gpu_memory_bytes=memory,
        iteration_ms=time.total_ms,
        throughput_samples_per_s=samples * 1000.0 / time.total_ms,
        training_hours=hours, speedup_vs_one_gpu=time.speedup_vs_one_gpu, calibrated=time.calibrated,
        bottleneck=time.bottleneck, compute_ms=time.compute_ms, memory_ms=time.memory_ms,
        cpu_single_thread_score=loader_need(job.dataset, batch_size=training.batch_size,
                                            iteration_ms=time.total_ms).score,
        peak_phase=phase,
    )
    return row, time


def estimate_on_gpu(job: JobSpec, gpu: GpuSpec, *, gpu_count: int, known_gpus: Mapping[str, GpuSpec],
                    inter_node_gbit_per_s: float | None = None) -> PerGpu:
    """Return the job's fit and time on `gpu_count` GPUs of one model (the ranking loop's call).

    Pass `inter_node_gbit_per_s` when the GPUs span machines: the all-reduce then runs at the slower of
    the GPUs' own link and that network.
    """
    check_job(job, gpu_count=gpu_count, inter_node_gbit_per_s=inter_node_gbit_per_s)
    row, _ = _on_gpu(job, gpu, gpu_count=gpu_count, reference=profile_gpu(job, known_gpus),
                     inter_node_gbit_per_s=inter_node_gbit_per_s)
    return row


def estimate_on_pairs(job: JobSpec, pairs: Sequence[tuple[GpuSpec, int]], *,
                      known_gpus: Mapping[str, GpuSpec]) -> list[PerGpu]:
    """Return the job's fit and time on each (GPU model, count) on one machine: the ranking's loop in one call.

    What does not depend on the GPU is done once: the job's checks once per count, the profile's GPU
    once; the per-layer work is remembered per model (timing.layer_work), so each pair costs only its
    own arithmetic. Each pair is one machine (a catalog instance's GPU model and count): its GPUs
    exchange over their own link, even past 8 (a2-megagpu-16g's 16 A100 on one NVSwitch fabric).
    Equal to estimate_on_gpu on each pair of up to 8 GPUs.
    """
    reference = profile_gpu(job, known_gpus)
    for count in sorted({count for _, count in pairs}):
        check_job(job, gpu_count=count)
    strategy_named = names_strategy(job)
    return [_on_gpu(job, gpu, gpu_count=count, reference=reference, inter_node_gbit_per_s=None,
                    gpus_per_node=count, strategy_named=strategy_named)[0]
            for gpu, count in pairs]


def _targets(gpus: Sequence[GpuSpec], known_gpus: Mapping[str, GpuSpec]) -> tuple[GpuSpec, ...]:
    """Return the cards the advice is worked out on: the requested ones, else the reference card."""
    if gpus:
        return tuple(gpus)
    if REFERENCE_GPU in known_gpus:
        return (known_gpus[REFERENCE_GPU],)
    smallest = sorted(known_gpus.values(), key=lambda g: (g.memory_bytes, g.slug))
    return tuple(smallest[:1])


_FUSED_KEPT = figures("fused_saved_values")


def _attention_assumption(job: JobSpec, *, memory_bytes: int, gpu_count: int,
                          named: bool) -> CodedWarning | None:
    """Return the attention-kernel-assumed warning where `auto` chose a fused kernel that matters to the peak."""
    training = job.training
    if named or training.attention is not Attention.AUTO or attention_kind(training, None) is Attention.MATH \
            or not any(_FUSED_KEPT(row) >= 0 for row in row_table(job.model).distinct):
        return None
    math_path = step_peak(job.model, replace(training, attention=Attention.MATH), gpu=None, gpu_count=gpu_count)
    return attention_assumption_warning(fused_bytes=memory_bytes, math_bytes=math_path.breakdown.total_bytes)


def _fp32_large_model(job: JobSpec, *, memory_bytes: int, gpu_count: int) -> CodedWarning | None:
    """Return the fp32-large-model warning of an LLM-sized job sized in fp32, with its bf16-mixed figure."""
    training, model = job.training, job.model
    parameters = model.parameters + model.frozen_parameters
    if training.precision is not Precision.FP32 or parameters < LARGE_MODEL_PARAMETERS:
        return None
    bf16 = replace(job, training=replace(training, precision=Precision.BF16_MIXED))
    return fp32_large_model_warning(parameters=parameters, fp32_bytes=memory_bytes,
                                    bf16_bytes=job_peak_bytes(bf16, gpu_count=gpu_count))


def _over_gpus(warning: CodedWarning, job: JobSpec, *, gpu_count: int) -> CodedWarning:
    """Return a memory advice whose figures are per GPU of `gpu_count`, saying so: a plan on 8 GPUs sizes plain data
    parallel with DDP's gradient buckets (Llama 3 70B: 1,413 GiB against one GPU's 1,131), and an answer that
    headed 1,131 GiB then advised on "the 1413.4 GiB per GPU" left the reader two figures for one job."""
    if gpu_count <= 1:
        return warning
    return replace(warning, message=f"Sized on {gpu_count} GPUs ({given_layout_words(job)}): {warning.message}")


def estimate_requirements(job: JobSpec, *, gpus: Sequence[GpuSpec] = (), gpu_count: int = 1,
                          known_gpus: Mapping[str, GpuSpec], vcpus: int = 0,
                          cpu_single_thread_score: float = 0.0, gpus_per_node: int | None = None,
                          threads_per_core: int = 1) -> Requirements:
    """Return everything the job needs, and its fit and time on each requested GPU model.

    With a machine's `vcpus`, CPU score and `threads_per_core` (the recommendation's first option) the
    loader advice is about that machine; without, about workers on the reference core. `gpus_per_node`:
    the machine's GPUs where it is known (a catalog instance: a2-megagpu-16g's 16 on one NVSwitch fabric).
    """
    check_job(job, gpu_count=gpu_count)
    reference = profile_gpu(job, known_gpus)
    model, training = job.model, job.training
    peak = step_peak(model, training, gpu=None, gpu_count=gpu_count)
    memory, phase, calibrated = peak.breakdown, peak.phase.value, peak.calibrated
    baseline = baseline_formula_bytes(model, training.batch_size)
    sharded = sharded_memory(model, training, gpu_count=gpu_count) if gpu_count > 1 else None
    needs = machine_needs(job.dataset, gpu_count=gpu_count)
    layout = named_layout(job, gpu_count=gpu_count)
    replicas = gpu_count
    if layout is not None:  # the strategy the spec names, sized as given
        named = estimate_named(job, layout, gpu=None).memory
        memory, phase, calibrated, sharded = named.breakdown, named.peak_phase, False, None
        replicas = layout.data_parallel_degree
        needs = replace(needs, host_memory_bytes=needs.host_memory_bytes + named.host_bytes_per_gpu * gpu_count)
    warnings: list[tuple[str, CodedWarning]] = [
        ("", w) for w in (*memory_warnings(job, memory=memory, baseline_bytes=baseline, gpu_count=gpu_count,
                                           sharded=sharded), *model_warnings(job, gpu_count=gpu_count))]
    stored = model_storage_warning(job, needs)
    if stored is not None:
        warnings.append(("", stored))
    total = memory.total_bytes
    advice = (_attention_assumption(job, memory_bytes=total, gpu_count=gpu_count, named=layout is not None),
              _fp32_large_model(job, memory_bytes=total, gpu_count=gpu_count),
              fused_loss_warning(job, memory_bytes=total, gpu_count=gpu_count),
              optimizer_step_warning(job, memory_bytes=total, phase=phase, gpu_count=gpu_count),
              eight_bit_warning(job, memory_bytes=total, gpu_count=gpu_count))
    warnings += [("", _over_gpus(w, job, gpu_count=gpu_count)) for w in advice if w is not None]
    mitigations: list[Mitigation] = []
    per_gpu: list[PerGpu] = []
    cpu_scores: list[tuple[float, str, int, float]] = []
    for gpu in _targets(gpus, known_gpus):
        row, time = _on_gpu(job, gpu, gpu_count=gpu_count, reference=reference, inter_node_gbit_per_s=None,
                            gpus_per_node=gpus_per_node)
        if gpus:
            per_gpu.append(row)
        need = loader_need(job.dataset, batch_size=training.batch_size, iteration_ms=time.total_ms,
                           vcpus=vcpus, gpu_count=gpu_count, threads_per_core=threads_per_core)
        cpu_scores.append((need.score, gpu.slug, need.workers, time.total_ms))
        warnings += [(gpu.slug, w) for w in gpu_warnings(
            job, gpu, time=time, training_hours=row.training_hours, fits=row.fits,
            gpu_memory_bytes=row.gpu_memory_bytes, usable_bytes=usable_memory_bytes(gpu),
            gpu_count=gpu_count)]
        if not row.fits:
            plan = out_of_memory_plan(job, gpu, gpu_count=gpu_count, profile_gpu=reference)
            mitigations += plan.mitigations
            warnings += [(gpu.slug, w) for w in plan.warnings]
    cpu_score, fastest, workers, fastest_ms = max(cpu_scores, default=(0.0, "", 0, 0.0))
    whole = cpu_score_needed(batch_size=training.batch_size, iteration_ms=fastest_ms,
                             preprocess_ms_per_sample=job.dataset.preprocess_ms_per_sample)
    cpu = cpu_warning(cpu_score, gpu=fastest, workers=workers, serial=job.dataset.preprocess_serial,
                      threads_per_core=threads_per_core, total_score=whole,
                      **({"cpu_single_thread_score": cpu_single_thread_score} if cpu_single_thread_score > 0
                         else {}))
    if cpu is not None:
        warnings.append((fastest, cpu))
    quickest = min(cpu_scores, key=lambda c: (c[3], c[1]), default=(0.0, "", 0, 0.0))  # the GPU that reads fastest
    images = image_preprocess_warning(job, model, gpu=quickest[1], iteration_ms=quickest[3], gpu_count=gpu_count)
    if images is not None:
        warnings.append((quickest[1], images))
    if (stem := imagenet_stem_warning(model)) is not None:  # "resnet18" at 32 x 32: not the CIFAR layout
        warnings.append(("", stem))
    batch_bytes = loader_batch_bytes(model, job.dataset, batch_size=training.batch_size)
    busy = loaders_in_use(job.dataset, workers=workers, batch_size=training.batch_size, iteration_ms=fastest_ms,
                          cpu_single_thread_score=cpu_single_thread_score, vcpus=vcpus, gpu_count=gpu_count,
                          threads_per_core=threads_per_core)
    loaders = loader_host_bytes(workers=busy, batch_bytes=batch_bytes)
    shared = loader_shared_memory_warning(workers=busy, batch_bytes=batch_bytes,
                                          gpus_per_machine=gpus_per_node or gpu_count, allowed=workers)
    if shared is not None:
        warnings.append(("", shared))
    return Requirements(
        gpu_memory_bytes=memory.total_bytes,
        gpu_memory_breakdown=memory,
        baseline_formula_bytes=baseline,
        host_memory_bytes=needs.host_memory_bytes + gpu_count * loaders,
        storage_min_bytes=needs.storage_min_bytes,
        storage_max_bytes=needs.storage_max_bytes,
        cpu_single_thread_score=cpu_score,
        loader_workers=workers,
        flops_per_iteration=training_flops(model, training),
        iterations_per_epoch=iterations_per_epoch(job.dataset.samples, batch_size=training.batch_size,
                                                  gpu_count=replicas),
        iterations_total=iterations_total(job.dataset.samples, training, gpu_count=replicas),
        per_gpu=tuple(per_gpu),
        warnings=tuple(merge_warnings(warnings)),
        mitigations=tuple(mitigations),
        peak_phase=phase,
        memory_calibrated=calibrated,
        loader_host_bytes_per_gpu=loaders,
        loader_workers_in_memory=busy,
    )
