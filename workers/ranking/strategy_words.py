"""A searched option in fields and words: its strategy, its one line, and its warnings.

The strategy search (strategy_ranking.py) ranks machine shapes; what it says of each option lives here:
the StrategyChoice fields, the strategy in words (also the scaling rows' and the CLI's), the `why` line,
and the warnings of the run (spot, network, doublings that stop paying) and of its host (reasons.host_warnings,
for the search's layout).
"""

from __future__ import annotations

from dataclasses import replace

from catalog.types import Pricing
from workers.ranking.reasons import host_warnings
from workers.ranking.recommendation import StrategyChoice
from workers.ranking.run_words import (
    gib_text,
    hours_text,
    percentile_cost_text,
    run_breakdown_text,
    spot_warning,
    usd_text,
)
from workers.ranking.shapes import Shape
from workers.sizing.requirements import Bottleneck, CodedWarning
from workers.sizing.spec import JobSpec, Objective
from workers.sizing.strategies.search import LayoutChoice
from workers.sizing.strategies.types import PARAMETERS_SHARDED, DataParallel

# Doubling the machines should at least cut the time by this factor to be worth the price: below
# it the doubling costs more than a third extra for the same job [rule of thumb: 1.5x for 2x].
PAYING_SPEEDUP_PER_DOUBLING = 1.5


def strategy_choice(c: LayoutChoice) -> StrategyChoice:
    """Return the option's strategy fields from the search's choice."""
    lay = c.layout
    adapter = lay.adapter
    return StrategyChoice(
        data_parallel=lay.data_parallel.value, tensor_parallel=lay.tensor_parallel,
        pipeline_stages=lay.pipeline_stages, offload_optimizer=lay.offload.optimizer,
        offload_parameters=lay.offload.parameters, adapter="none" if adapter is None else adapter.kind.value,
        adapter_rank=0 if adapter is None else adapter.rank, checkpointing=lay.checkpointing.value,
        batch_size=c.batch_size, update_interval=c.update_interval, total_gpus=lay.gpu_count,
        gpu_memory_per_gpu_bytes=c.memory.breakdown.total_bytes,
        host_offload_bytes_per_node=c.memory.host_bytes_per_gpu * lay.gpus_per_node,
        bottleneck=c.time.bottleneck.value, communication_ms=c.time.communication.exposed_ms,
        strategies_considered=c.considered,
    )


ADAPTER_NAMES = {"lora": "LoRA", "qlora": "QLoRA"}
DATA_PARALLEL_NAMES = {"plain": "plain data parallel", "zero1": "ZeRO-1", "zero2": "ZeRO-2",
                       "zero3": "ZeRO-3 / FSDP",
                       "hybrid_shard": "hybrid shard (FSDP within a machine, replicas across)",
                       "parameter_server": "parameter server"}


def strategy_text(c: StrategyChoice, *, nodes: int) -> str:
    """Return the strategy in words, e.g. "ZeRO-3 / FSDP over 16 GPUs on 2 machines, selective checkpointing"."""
    gpus = f"{c.total_gpus} GPU{'s' if c.total_gpus != 1 else ''}"
    text = f"{DATA_PARALLEL_NAMES.get(c.data_parallel, c.data_parallel)} over {gpus}"
    if nodes > 1:
        text += f" on {nodes} machines"
    if c.tensor_parallel > 1:
        text += f", tensor parallel {c.tensor_parallel}"
    if c.pipeline_stages > 1:
        text += f", {c.pipeline_stages} pipeline stages"
    if c.adapter != "none":
        text += f", {ADAPTER_NAMES.get(c.adapter, c.adapter)} rank {c.adapter_rank}"
    held = f" ({gib_text(c.host_offload_bytes_per_node)} per machine)" if c.host_offload_bytes_per_node > 0 else ""
    if c.offload_parameters:
        text += f", optimizer and parameters offloaded to host memory{held}"
    elif c.offload_optimizer:
        text += f", optimizer offloaded to host memory{held}"
    if c.checkpointing != "none":
        text += f", {c.checkpointing} checkpointing"
    if c.update_interval > 1:
        return text + f", micro-batch {c.batch_size} x {c.update_interval} accumulation steps"
    return text + f", batch {c.batch_size} per GPU, no accumulation"


def micro_batch_per_gpu(c: LayoutChoice) -> int:
    """Return the samples one GPU's loader prepares per iteration: its data-parallel rank's micro-batch
    shared by the GPUs that split each sample (tensor parallel, pipeline stages)."""
    return max(1, -(-c.time.samples_per_iteration // max(1, c.layout.gpu_count)))


def option_host_warnings(s: Shape, c: LayoutChoice, *, job: JobSpec) -> list[CodedWarning]:
    """Return the host's warnings as a plain option has them (reasons.host_warnings), for the search's layout:
    the loader fix sized on each GPU's micro-batch, and sharded parameters loaded by one process and broadcast
    (FSDP's sync_module_states) where other layouts load the weights in every process."""
    micro = replace(job, training=replace(job.training, batch_size=micro_batch_per_gpu(c)))
    sharded = c.layout.data_parallel in PARAMETERS_SHARDED
    found = host_warnings(s, job=micro, processes=1 if sharded else s.m.gpu_count, adapter=c.layout.adapter)
    offload = c.layout.offload
    if s.m.pricing is Pricing.OWNED and (offload.optimizer or offload.parameters) \
            and (kept := c.memory.host_bytes_per_gpu * s.m.gpu_count) > 0:
        found.append(owned_host_warning(kept, own=s.m.host_memory_bytes, parameters=offload.parameters))
    return found


def owned_host_warning(kept: int, *, own: int, parameters: bool) -> CodedWarning:
    """Return `owned-host-memory`: a layout on the team's own cards that offloads `kept` bytes to host memory (the
    optimizer state, and the parameters with `parameters`) beside the run's `own`; the team's host is not known
    (shapes.onprem_machine), so the option holds only where it has that much memory. A QLoRA run's few MB of paged
    adapter state say nothing."""
    what = "the optimizer state and parameters offloaded to it" if parameters else "the optimizer state offloaded to it"
    return CodedWarning("owned-host-memory", (
        f"this runs only where the team's machine has {gib_text(own + kept)} of host memory: {gib_text(kept)} for "
        f"{what}, beside the run's own {gib_text(own)}; gpugauge does not know the team's host, so check it "
        f"before planning on this option"))


def why_text(s: Shape, c: StrategyChoice, *, nodes: int, price: float, cost: float, hours_known: bool,
             job: JobSpec) -> str:
    """Return the option's one line: its strategy, memory per GPU, time, cost, and what bounds it."""
    machines = f"{nodes} x {s.m.instance_type}" if nodes > 1 else s.m.instance_type
    card = s.m.card_memory_bytes
    memory = f"{gib_text(c.gpu_memory_per_gpu_bytes)} of {gib_text(card)} per GPU" if card else \
        f"{gib_text(c.gpu_memory_per_gpu_bytes)} per GPU"
    timing = hours_text(s.hours) + run_breakdown_text(s.plan) if hours_known \
        else f"{s.time_metric * 1000:.2f} ms per sample"
    bound = "CPU" if c.bottleneck == Bottleneck.CPU_PREPROCESSING.value else c.bottleneck
    parts = [f"{machines}: {strategy_text(c, nodes=nodes)}", memory, f"{timing}, {bound}-bound"]
    if hours_known:
        total = price * nodes
        parts.append(f"{usd_text(cost)} total at {usd_text(total)}/h" + (f" for {nodes} machines" if nodes > 1 else "")
                     + percentile_cost_text(s.plan, cost_usd=cost, budget_scale=s.budget_scale))
    parts.append("1 strategy fits this machine shape" if c.strategies_considered == 1 else
                 f"{c.strategies_considered} strategies fit this machine shape; the fastest kept")
    if job.objective is Objective.COST:
        parts.append("ranked by cost")
    return "; ".join(parts)


def strategy_warnings(s: Shape, c: StrategyChoice, *, nodes: int, pricing: str, shapes: list[Shape],
                      nodes_of: list[int]) -> tuple[CodedWarning, ...]:
    """Return the option's warnings: spot, network-bound, and doublings of machines that stop paying off."""
    found: list[CodedWarning] = []
    if pricing == "spot":
        found.append(spot_warning(s.plan, machines=nodes))
    if c.bottleneck == Bottleneck.NETWORK.value:
        found.append(CodedWarning("network-bound", f"the exchange between machines shows {c.communication_ms:.0f} ms "
                                              "per iteration beyond the compute: a faster network (EFA, "
                                              "InfiniBand) or fewer machines would pay off"))
    if nodes > 1:
        half = next((x for x, n in zip(shapes, nodes_of, strict=True)
                     if x.m is s.m and n == nodes // 2 and x.hours > 0), None)
        if half is not None and s.hours > 0 and half.hours / s.hours < PAYING_SPEEDUP_PER_DOUBLING:
            found.append(CodedWarning("scaling-stops-paying", (
                f"{nodes // 2} -> {nodes} machines is only {half.hours / s.hours:.2f}x faster for twice the "
                f"machines ({hours_text(half.hours)} -> {hours_text(s.hours)})")))
    if c.data_parallel == DataParallel.PARAMETER_SERVER.value:
        found.append(CodedWarning("parameter-server", "parameter-server exchange (2017 TensorFlow) scaled 2-3x on 4 "
                                                 "GPUs (domain.md §4); all-reduce or sharding is faster"))
    return tuple(found)
