"""The words of a ranking: each option's one-line `why`, its warnings, and each rejected family's reason."""

from __future__ import annotations

import math
from collections.abc import Sequence

from catalog.commitments import HOURS_PER_YEAR, TERM_HOURS
from catalog.types import Catalog, Pricing, Provider
from workers.ranking.left_out import left_out_reason
from workers.ranking.run_words import (
    deadline_text,
    gib_text,
    hours_text,
    percentile_cost_text,
    percentile_text,
    run_breakdown_text,
    spot_warning,
    usd_text,
)
from workers.ranking.shapes import (
    BUDGET,
    CARBON,
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    NO_ESTIMATE,
    NO_STORAGE_PRICE,
    SPOT_RESTARTS,
    Shape,
)
from workers.ranking.transfer import BYTES_PER_GB, inbound_range
from workers.sizing.advice import vcpus_text
from workers.sizing.checkpoint import pretrained_bytes, pretrained_load_bytes
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE, host_memory_bytes, workers_needed
from workers.sizing.requirements import CodedWarning, Requirements
from workers.sizing.spec import JobSpec, Objective
from workers.sizing.strategies.types import Adapter

# Multi-GPU scaling below 75 % of linear is called poor: domain.md §4 reports 2-3x on 4 GPUs
# for TensorFlow (50-75 %) against 3.6-3.8x for PyTorch (90-95 %).
POOR_SCALING_EFFICIENCY = 0.75


def gpu_name(catalog: Catalog, slug: str) -> str:
    """Return the GPU's display name, or its slug when the catalog lacks it."""
    try:
        return catalog.gpu(slug).name
    except KeyError:
        return slug


def commitment_warnings(pricing: Pricing, *, price_per_hour_usd: float, machines: int = 1,
                        ) -> tuple[CodedWarning, ...]:
    """Return the `commitment` warning of a committed option: its rate and what the whole term costs."""
    term_hours = TERM_HOURS.get(pricing)
    if term_hours is None:
        return ()
    total = price_per_hour_usd * term_hours * machines
    years = term_hours // HOURS_PER_YEAR
    what = (f"a {years}-year EC2 Instance Savings Plan committing" if pricing in (Pricing.SAVINGS_PLAN_1Y,
            Pricing.SAVINGS_PLAN_3Y) else f"a {years}-year commitment at")
    return (CodedWarning("commitment", (
        f"{what} ${price_per_hour_usd:.4f}/h per machine is paid for "
        f"every hour of the term whether used or not: ${total:,.0f} for {machines} machine(s) over "
        f"{term_hours:,} h; the cost shown is that total, not the job's hours")),)


def option_warnings(shape: Shape, *, pricing: str, hours_known: bool, job: JobSpec) -> tuple[CodedWarning, ...]:
    """Return the warnings that apply to running the job on this option."""
    found: list[CodedWarning] = []
    pg = shape.per_gpu
    plan = shape.plan
    if pricing == Pricing.SPOT.value:
        found.append(spot_warning(plan))
    found += host_warnings(shape, job=job, processes=shape.m.gpu_count)
    n = shape.m.gpu_count
    if pg is not None and n > 1 and pg.speedup_vs_one_gpu < POOR_SCALING_EFFICIENCY * n:
        found.append(CodedWarning("poor-scaling", f"{n} GPUs run only {pg.speedup_vs_one_gpu:.1f}x "
                                             "as fast as one; several single-GPU runs may use them better"))
    if not hours_known:
        found.append(CodedWarning("duration-unknown", "dataset.samples is not given, so training time, cost, "
                                                 "budget and deadline cannot be worked out"))
    return tuple(found)


def is_cpu_bound(shape: Shape) -> bool:
    """Return whether the loader workers, not the GPU, set the shape's iteration (shapes' CPU stretch)."""
    pg = shape.per_gpu
    return pg is not None and shape.iteration_ms > pg.iteration_ms * 1.0005


def host_warnings(shape: Shape, *, job: JobSpec, processes: int, adapter: Adapter | None = None
                  ) -> list[CodedWarning]:
    """Return what the option's host says: loader workers that set the pace (the fix sized on `job`'s batch
    per GPU), an Arm CPU, and pre-trained weights that `processes` training processes cannot load as usual
    (`adapter`: the option's own, where its strategy trains adapters the job did not name)."""
    found: list[CodedWarning] = []
    if is_cpu_bound(shape):
        found.append(CodedWarning("cpu-bound", cpu_bound_message(shape, job=job)))
    if shape.m.arm_host:
        found.append(CodedWarning("arm-host", arm_host_message(shape.m.arm_host)))
    if shape.m.pricing is not Pricing.OWNED:
        need = shape.host_memory_needed_bytes or host_memory_bytes(job.dataset, gpu_count=shape.m.gpu_count)
        loading = loading_warning(job, host_memory_bytes=shape.m.host_memory_bytes, need_bytes=need,
                                  processes=processes, adapter=adapter)
        if loading is not None:
            found.append(loading)
    return found


def loading_warning(job: JobSpec, *, host_memory_bytes: int, need_bytes: int,
                    processes: int, adapter: Adapter | None = None) -> CodedWarning | None:
    """Return the host-memory-loading warning where loading the pre-trained weights would not fit the host.

    Hugging Face's guide to big models ("Instantiating a big model", transformers docs big_models.md,
    read 2026-12-02 from a stored copy): building the model and loading its weights each take a full copy
    in RAM, and "if you are using torch.distributed ... each process will load the pretrained model";
    `low_cpu_mem_usage` brings that to one copy per process, loading shard by shard with a `device_map` to
    about one shard. So one copy (2 bytes a parameter, as hubs publish them) per training process beside
    the run's own host memory is what the usual load takes; FSDP/ZeRO-3 runs that load on one process and
    broadcast (`cpu_ram_efficient_loading`, `sync_module_states`) take one copy per machine
    (`processes` 1). A QLoRA load (the job's adapter, or `adapter`, the option's) reads one shard at a time
    (checkpoint.pretrained_load_bytes). A warning, not a rejection: a streaming load runs on the smaller host.
    """
    base = pretrained_load_bytes(job, adapter or job.training.parallelism.adapter)
    if base <= 0 or host_memory_bytes <= 0:
        return None
    total = need_bytes + base * processes
    if total <= host_memory_bytes:
        return None
    each = f"each of the {processes} training processes" if processes > 1 else "the training process"
    if base < pretrained_bytes(job):  # a QLoRA load already streams shard by shard onto the GPU
        return CodedWarning("host-memory-loading", (
            f"loading the pre-trained weights one shard at a time ({gib_text(base)}, as a QLoRA load reads them) "
            f"into host memory in {each} needs {gib_text(total)} with the run's own; this machine has "
            f"{gib_text(host_memory_bytes)}: take a machine with more memory"))
    return CodedWarning("host-memory-loading", (
        f"loading the pre-trained weights ({gib_text(base)} at 2 bytes a parameter) into host memory in {each}, "
        f"as from_pretrained does, needs {gib_text(total)} with the run's own; this machine has "
        f"{gib_text(host_memory_bytes)}: load shard by shard onto the GPU (safetensors with a device_map), or "
        "have one process load and broadcast (FSDP's cpu_ram_efficient_loading), or take a machine with more "
        "memory"))


def arm_host_message(cpu_model: str) -> str:
    """Return the arm-host warning: what must be built for aarch64 before the job runs on this host.

    PyTorch's aarch64 CUDA wheels are built for NVIDIA's Arm servers (Grace), with their own list of GPU
    architectures (pytorch/pytorch PRs #161257 and #162455, 2025: the SBSA builds leave out the older
    ones), so whether the stock wheel carries this GPU's kernels is a check, not a given.
    """
    return (f"the host CPU is Arm ({cpu_model}), not x86: the framework, every Python wheel with native code "
            "and the container images must be aarch64 (arm64) builds, and x86-only dependencies will not run; "
            "check that torch.cuda.get_arch_list() of the aarch64 build names this GPU's compute capability, "
            "or take an x86 instance")


def cpu_bound_message(shape: Shape, *, job: JobSpec) -> str:
    """Return the cpu-bound warning of one option, naming the loader workers or the CPU that would fix it."""
    pg, m = shape.per_gpu, shape.m
    if pg is None:
        return ""
    head = (f"pre-processing on {shape.workers} loader worker{'s' if shape.workers != 1 else ''} per GPU "
            f"(single-thread score {m.cpu_score:,.0f}) stretches an iteration from {pg.iteration_ms:.1f} to "
            f"{shape.iteration_ms:.1f} ms")
    return head + "; fix: " + _cpu_fix(shape, iteration_ms=pg.iteration_ms, job=job)


def _cpu_fix(shape: Shape, *, iteration_ms: float, job: JobSpec) -> str:
    m, batch, preprocess_ms = shape.m, job.training.batch_size, job.dataset.preprocess_ms_per_sample
    if job.dataset.preprocess_serial:
        need = REFERENCE_CPU_SINGLE_THREAD_SCORE * batch * preprocess_ms / iteration_ms
        return (f"pre-processing cannot be split, so one core needs a single-thread score of {need:,.0f}; "
                "split it across loader workers or pre-process once ahead of training")
    workers = workers_needed(batch_size=batch, preprocess_ms_per_sample=preprocess_ms,
                             iteration_ms=iteration_ms, cpu_single_thread_score=m.cpu_score)
    per_gpu_vcpus = m.vcpus // max(m.gpu_count, 1)
    tpc = m.threads_per_core
    has = f"{per_gpu_vcpus} vCPUs per GPU" + (f", {per_gpu_vcpus / tpc:g} cores" if tpc > 1 else "")
    if (workers + 1) * tpc <= per_gpu_vcpus:
        return f"{workers} loader workers per GPU (this machine has {has})"
    return (f"{workers} loader workers per GPU, {vcpus_text(workers, tpc)} per GPU; this machine has {has}: "
            "take a machine with more vCPUs per GPU, pre-process once ahead of training or on the GPU "
            "(NVIDIA DALI decodes and augments images there)")


def balanced_text(cost_ratio: float, time_ratio: float) -> str:
    """Say where an option stands against the cheapest and the fastest option (the balanced objective)."""
    cost = "the cheapest" if cost_ratio < 1.0005 else f"{cost_ratio:.2f}x the cheapest's cost"
    time = "the fastest" if time_ratio < 1.0005 else f"{time_ratio:.2f}x the fastest's time"
    return f"{cost}, {time}"


def why_line(shape: Shape, *, pricing: str, price_per_hour_usd: float, cost_usd: float,
             storage_cost_usd: float, hours_known: bool, job: JobSpec, balanced: tuple[float, float]) -> str:
    """Return one line on what binds this option: memory headroom, time, what dominates the cost.

    `balanced`: the option's cost over the cheapest option's and its time over the fastest's, said under the
    balanced objective (which puts the least cost x time first).
    """
    pg = shape.per_gpu
    parts: list[str] = []
    if job.objective is Objective.BALANCED:
        parts.append(balanced_text(*balanced))
    if pg is not None and shape.m.card_memory_bytes > 0:
        headroom = 1.0 - pg.gpu_memory_bytes / shape.m.card_memory_bytes
        parts.append(f"{gib_text(pg.gpu_memory_bytes)} of {gib_text(shape.m.card_memory_bytes)} per GPU "
                     f"({headroom:.0%} headroom)")
    timing = hours_text(shape.hours) if hours_known else f"{shape.time_metric * 1000:.2f} ms per sample"
    plan = shape.plan
    timing += run_breakdown_text(plan)
    if pg is not None and shape.m.gpu_count > 1:
        timing += f" on {shape.m.gpu_count} GPUs ({pg.speedup_vs_one_gpu:.1f}x one)"
    if pg is not None and shape.iteration_ms > pg.iteration_ms * 1.0005:
        timing += ", CPU-bound"
    elif pg is not None and pg.bottleneck:
        timing += f", {pg.bottleneck}-bound"
    parts.append(timing)
    if hours_known:
        cost = f"{usd_text(cost_usd)} total" + percentile_cost_text(plan, cost_usd=cost_usd,
                                                                    budget_scale=shape.budget_scale)
        if storage_cost_usd > 0:
            cost += f", block storage {storage_cost_usd / cost_usd:.0%} of it" if cost_usd > 0 else ""
        parts.append(cost)
    if pricing == Pricing.OWNED.value:
        a = job.constraints.onprem
        parts.append(f"your own cards: power only, {usd_text(price_per_hour_usd)}/h at "
                     f"${a.electricity_usd_per_kwh:g}/kWh")
    elif pricing == Pricing.SPOT.value and plan is not None and plan.spot is not None:
        parts.append(f"spot: {plan.spot.expected_interruptions:.2f} interruptions expected, checkpoint every "
                     f"{hours_text(plan.checkpoints.every_hours)}")
    return "; ".join(parts)


def rejection_reason(kind: str, members: Sequence[Shape], *, requirements: Requirements, job: JobSpec,
                     catalog: Catalog) -> str:
    """Return why a family of shapes, all rejected for `kind`, cannot run the job."""
    first = members[0]
    name = gpu_name(catalog, first.m.gpu)
    if kind == NO_ESTIMATE:
        return unsupported_reason(job, catalog, first.m.gpu) or no_estimate_reason(
            name, gpu_counts={s.m.gpu_count for s in members})
    if kind == GPU_MEMORY:
        need = min(s.per_gpu.gpu_memory_bytes for s in members if s.per_gpu is not None)
        return gpu_memory_reason(need, card_memory_bytes=first.m.card_memory_bytes, name=name)
    if kind == HOST_MEMORY:
        return host_memory_reason([(s.host_memory_needed_bytes, s.m.host_memory_bytes) for s in members],
                                  data_in_memory=job.dataset.in_memory)
    if kind == DEADLINE:
        return deadline_reason(_fastest_checked(members), spot=any(s.is_spot_run for s in members), job=job)
    if kind == SPOT_RESTARTS:
        plan = members[0].plan
        return plan.refused if plan is not None else kind
    if kind == BUDGET:
        cheapest = min((s.over_budget, s.m.instance_type) for s in members if s.over_budget is not None)
        (cost, region, pricing), instance_type = cheapest
        return (f"costs {usd_text(cost)} at the cheapest ({instance_type}, {region}, {pricing.value}), "
                f"over the {usd_text(job.constraints.budget_usd or 0.0)} budget")
    if kind == CARBON:
        least = min((s.over_co2e, s.m.instance_type) for s in members if s.over_co2e is not None)
        (kg, region, pricing), instance_type = least
        limit = job.constraints.max_co2e_kg or 0.0
        if kg == float("inf"):
            return (f"no grid carbon intensity for {first.m.provider_name} {region} in the energy table, "
                    f"so it cannot be shown to stay under {limit:g} kg CO2e")
        return (f"emits {kg:,.1f} kg CO2e at the least ({instance_type}, {region}, {pricing.value}), "
                f"over the {limit:g} kg CO2e limit")
    if kind == NO_STORAGE_PRICE:
        regions = sorted(set().union(*(s.missing_storage_regions for s in members)))
        return (f"local disk is short of the {gib_text(requirements.storage_min_bytes)} the data needs, and "
                f"the catalog has no block storage price for {first.m.provider_name} in {', '.join(regions)}")
    return kind


def unsupported_reason(job: JobSpec, catalog: Catalog, slug: str) -> str:
    """Return why the ranking leaves this catalog GPU out of the job's answer ("" where it ranks it, or it is unknown):
    the job's framework cannot train on it, or it is a 3 GB card nobody asked for (left_out.py)."""
    gpu = next((g for g in catalog.gpus if g.slug == slug), None)
    return left_out_reason(job, gpu) if gpu is not None else ""


def no_estimate_reason(name: str, *, gpu_counts: set[int]) -> str:
    """Return rejection_reason's words for GPUs the sizing core has no estimate for, at these counts."""
    counts = ", ".join(str(n) for n in sorted(gpu_counts))
    return f"no memory or time estimate for {name} at {counts} GPU(s)"


def host_memory_reason(shortfalls: Sequence[tuple[int, int]], *, data_in_memory: bool) -> str:
    """Return rejection_reason's words for machines short of host memory, each a (need, has) pair.

    A group mixes machine sizes (1 to 8 GPUs, each with its own need), so one pair is named: the
    roomiest host's, with what it would need.
    """
    need, has = max(shortfalls, key=lambda p: (p[1], -p[0]))
    what = ("the data set loaded into memory and the training processes" if data_in_memory
            else "the training processes (the system, and one process per GPU with the CUDA libraries and "
                 "its loader workers)")
    fix = ("; or read the data set from storage as training goes (dataset.in_memory: false, CLI --streamed)"
           if data_in_memory else "")
    if len(shortfalls) == 1:
        return f"needs {gib_text(need)} of host memory for {what}; has {gib_text(has)}{fix}"
    return (f"each has less host memory than it needs for {what}: the roomiest has {gib_text(has)} "
            f"against {gib_text(need)} needed{fix}")


def gpu_memory_reason(need_bytes: int, *, card_memory_bytes: int, name: str) -> str:
    """Return rejection_reason's words for GPUs short of the memory per GPU (`need_bytes`, the least of the group)."""
    if need_bytes > card_memory_bytes:
        return f"needs {gib_text(need_bytes)} per GPU; {name} has {gib_text(card_memory_bytes)}"
    return f"needs {gib_text(need_bytes)} per GPU, too little headroom on {name}'s {gib_text(card_memory_bytes)}"


def deadline_reason(fastest_hours: float, *, spot: bool, job: JobSpec) -> str:
    """Return rejection_reason's words for a group past the deadline: its fastest run takes `fastest_hours`."""
    at = f" at the {percentile_text(job.constraints.spot_percentile)} of spot restarts" if spot else ""
    deadline = deadline_text(job.constraints.deadline_hours or 0.0)  # called only where a deadline is set
    return f"takes {hours_text(fastest_hours)} at best{at}, past the {deadline} deadline"


def transfer_text(shape: Shape, *, job: JobSpec) -> str:
    """Return where an option's data set comes from, at what price per GB and rate, with the source."""
    moved, location = shape.m.transfer, job.dataset.location
    if location is None or shape.m.provider is Provider.ONPREM:
        return ""
    if moved is None:
        return ("data set anywhere: placed in the region at no cost" if location[0] == "anywhere" else
                "data set from the internet: transfer in is free on AWS and Google Cloud; the sender's charge "
                "and uplink are not known here")
    if moved.kind == "same-region":
        return f"data set from {location[0]} {location[1]}: in the same region, no transfer charge"
    text = f"data set from {location[0]} {location[1]}: {moved.kind}, ${moved.usd_per_gb:.3f}/GB"
    if moved.cap_mb_per_s > 0:
        text += f", staged at up to {moved.cap_mb_per_s:,.0f} MB/s (median measured between regions)"
    return f"{text}; {moved.source}"


# data-location-unknown is left out where even the dearest copy is under a cent, or under 1 % of the run.
MIN_TRANSFER_WARNING_USD = 0.01
MIN_TRANSFER_WARNING_SHARE = 0.01


def transfer_warnings(shape: Shape, *, region: str, job: JobSpec, regions: tuple[str, ...],
                      cost_usd: float) -> tuple[CodedWarning, ...]:
    """Return a cloud option's data-transfer warning: its cost, or what it would cost where the location is unknown."""
    data = job.dataset
    m = shape.m
    if m.provider is Provider.ONPREM or data.size_bytes <= 0:
        return ()
    size = gib_text(data.size_bytes)
    if data.location is None:
        low, high = inbound_range(m.provider, region, regions)
        gb = data.size_bytes / BYTES_PER_GB
        if gb * high < max(MIN_TRANSFER_WARNING_USD, MIN_TRANSFER_WARNING_SHARE * cost_usd):
            return ()  # even the dearest copy is noise beside the run
        return (CodedWarning("data-location-unknown", (
            f"dataset.location is not given, so moving the {size} data set to {region} is not priced: from "
            f"another {m.provider_name} region it would cost {usd_text(gb * low)}-{usd_text(gb * high)} per copy, "
            f"from outside the clouds nothing on this side; give dataset.location (provider and region, or "
            f"anywhere)")),)
    if shape.egress_usd > 0 and m.transfer is not None:
        return (CodedWarning("data-transfer", (
            f"the {size} data set is copied from {data.location[0]} {data.location[1]} to {region} "
            f"({m.transfer.kind}): {usd_text(shape.egress_usd)} at ${m.transfer.usd_per_gb:.3f}/GB"
            f"{', once per staging (spot restarts stage it again)' if shape.is_spot_run else ''}")),)
    return ()


def _fastest_checked(members: Sequence[Shape]) -> float:
    """Return the least hours held to the deadline (checked, else expected) among the shapes.

    A shape's checked hours are never under its expected hours (the percentile of a spot run is at
    least its expectation), so the shapes are taken by expected hours and those that cannot beat the
    best found are not asked for their percentile (worked out only when asked: Shape.checked_hours).
    """
    fastest = math.inf
    for s in sorted(members, key=lambda s: s.hours):
        if s.hours >= fastest:
            break
        fastest = min(fastest, s.checked_hours or s.hours)
    return fastest
