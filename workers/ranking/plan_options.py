"""When nothing fits: the out-of-memory plan, one step per kind, each with the options it would open.

The sizing core plans against one card at a time (oom_plan.py). Here every GPU model in scope gets
its plan; steps that change the job the same way are merged; for each kind of step, in domain.md §5's
order, the least change that opens an option is kept (the largest batch, the fewest GPUs), and the
job so changed is estimated once per (GPU model, count) and ranked to say which options it opens.
A step that opens nothing is kept with no options (its description says how far it gets); a change
of the network cannot be estimated and opens nothing by construction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from catalog.types import Catalog, GpuSpec
from workers.ranking.ranking import rank_offers
from workers.ranking.recommendation import RankedOption
from workers.ranking.run_words import gib_text
from workers.ranking.strategy_ranking import rank_strategies
from workers.ranking.strategy_words import strategy_text
from workers.ranking.wider import figures_text
from workers.sizing.errors import SizingError
from workers.sizing.estimate import estimate_on_pairs, profile_gpu
from workers.sizing.loss_advice import fused_loss_job
from workers.sizing.memory import fits, sharded_memory, usable_memory_bytes
from workers.sizing.oom_combined import combined_job
from workers.sizing.oom_plan import out_of_memory_plan
from workers.sizing.requirements import Mitigation, MitigationKind, PerGpu, Requirements
from workers.sizing.spec import JobSpec, OptimizerImplementation, Precision
from workers.sizing.strategies.named import names_strategy
from workers.sizing.strategies.types import DataParallel
from workers.sizing.throughput import has_bf16

KIND_ORDER = ("fused-optimizer", "fused-loss", "smaller-batch", "change-network", "recompute", "checkpointing",
              "mixed-precision", "more-gpus", "sharding", "adapters", "offload", "combined")
OPENS_SHOWN = 3  # options listed per step, one per machine
OPENS_SEARCHED = 20  # options ranked per machine shown, to find that many different machines


@dataclass(frozen=True)
class _Step:
    """A mitigation and the job it makes: estimated on `min_gpus` GPUs or more, sharded or not."""

    mitigation: Mitigation
    job: JobSpec | None  # None: the change cannot be estimated (change-network)
    min_gpus: int = 1
    sharded: bool = False
    strategy: bool = False  # names a strategy (training.parallelism): ranked by strategy_ranking


_SHARDED = frozenset({DataParallel.ZERO1, DataParallel.ZERO2, DataParallel.ZERO3, DataParallel.HYBRID_SHARD})


def _step(m: Mitigation, job: JobSpec, known_gpus: Mapping[str, GpuSpec]) -> _Step:
    """Return the job a mitigation makes."""
    t = job.training
    batch = m.batch_size if m.batch_size is not None else t.batch_size
    if m.parallelism is not None:  # a strategy step: the strategy ranking finds what it opens
        return _Step(m, replace(job, training=replace(t, parallelism=m.parallelism)), min_gpus=m.gpu_count or 1,
                     strategy=True)
    if m.kind is MitigationKind.SMALLER_BATCH:
        interval = m.update_interval if m.update_interval is not None else t.update_interval
        changed = replace(t, batch_size=batch, learning_rate=m.learning_rate, update_interval=interval)
    elif m.kind is MitigationKind.RECOMPUTE:
        changed = replace(t, recompute=True)
    elif m.kind is MitigationKind.FUSED_OPTIMIZER:
        changed = replace(t, optimizer_implementation=OptimizerImplementation.FUSED)
    elif m.kind is MitigationKind.FUSED_LOSS:
        return _Step(m, fused_loss_job(job))
    elif m.kind is MitigationKind.COMBINED:  # every same-card change together, on the job's own GPUs
        card = known_gpus.get(m.gpu or "")
        if card is None:
            return _Step(m, None)
        return _Step(m, combined_job(job, card, micro_batch=batch)[0], min_gpus=m.gpu_count or 1)
    elif m.kind is MitigationKind.MIXED_PRECISION:
        card = known_gpus.get(m.gpu or "")
        target = Precision.BF16_MIXED if card is not None and has_bf16(card) else Precision.FP16_MIXED
        changed = replace(t, precision=target)
    elif m.kind in ("more-gpus", "sharding"):
        return _Step(m, replace(job, training=replace(t, batch_size=batch)), min_gpus=m.gpu_count or 2,
                     sharded=m.kind is MitigationKind.SHARDING)
    else:
        return _Step(m, None)
    return _Step(m, replace(job, training=changed))


def _order(step: _Step, known_gpus: Mapping[str, GpuSpec]) -> tuple[float, int, int, str]:
    """Order the steps of one kind from the least change to the most.

    A strategy step opens what the strategy search finds on every machine, whatever card it was
    worked out on: the card it brings closest to fitting describes it best.
    """
    t = step.job.training if step.job is not None else None
    batch = t.batch_size if t is not None else 0
    precision = t.precision.value if t is not None else ""
    card = known_gpus.get(step.mitigation.gpu or "")
    closeness = step.mitigation.gpu_memory_bytes / usable_memory_bytes(card) \
        if step.strategy and card is not None else 0.0
    return max(closeness, 1.0), step.min_gpus, -batch, precision  # "bf16-mixed" before "fp16-mixed"


def _estimates(changed: JobSpec, step: _Step, *, pairs: Sequence[tuple[str, int]],
               known_gpus: Mapping[str, GpuSpec]) -> dict[tuple[str, int], PerGpu]:
    """Return the changed job's fit and time on each (GPU model, count) the step allows."""
    kept = [(slug, n) for slug, n in pairs if slug in known_gpus and n >= step.min_gpus]
    # Each pair is one machine in scope: its GPUs exchange over their own link (a2-megagpu-16g's 16
    # A100 on one NVSwitch fabric), as in the ranking's own estimates.
    estimated = estimate_on_pairs(changed, [(known_gpus[slug], n) for slug, n in kept], known_gpus=known_gpus)
    rows: dict[tuple[str, int], PerGpu] = {}
    for (slug, n), row in zip(kept, estimated, strict=True):
        if step.sharded:
            peak = sharded_memory(changed.model, changed.training, gpu=known_gpus[slug], gpu_count=n).total_bytes
            row = replace(row, fits=fits(peak, known_gpus[slug]), gpu_memory_bytes=peak)
        rows[(slug, n)] = row
    return rows


def describe_option(o: RankedOption) -> str:
    """Return one option as one line: where, on what, how long, how much; for a strategy's option, how it runs.

    A strategy step's description gives the changed job at the batch as given ("peak 42.3 GiB still
    exceeds the 36.0 GiB usable"); the strategy search may open a machine with a smaller micro-batch and
    accumulation, and the line says so rather than contradict it.
    """
    # without a sample count (hours 0) its iteration and hourly price, not "0.0 min, $0.0000"
    line = (f"{o.provider} {o.instance_type} ({o.gpu_count}x {o.gpu}), {o.region}, {o.pricing}: "
            f"{figures_text(o, o.training_hours, o.training_cost_usd)}")
    p = o.parallelism
    if p is None:
        return line
    return f"{line} ({strategy_text(p, nodes=o.nodes)}, {gib_text(p.gpu_memory_per_gpu_bytes)} per GPU)"


def _opens(step: _Step, *, catalog: Catalog, requirements: Requirements, pairs: Sequence[tuple[str, int]],
           known_gpus: Mapping[str, GpuSpec]) -> tuple[str, ...]:
    """Return the options the step opens, best first, or () when it opens none."""
    if step.job is None:
        return ()
    if step.strategy:
        try:
            searched = rank_strategies(replace(step.job, limit=OPENS_SHOWN * OPENS_SEARCHED),
                                       requirements=requirements, catalog=catalog)
        except SizingError:
            return ()
        sharded = step.job.training.parallelism.data_parallel in _SHARDED  # over one GPU it is plain: not opened
        best: dict[tuple[str, str], RankedOption] = {}
        for o in searched.options:
            if not (sharded and o.gpu_count * o.nodes < 2):
                best.setdefault((o.provider, o.instance_type), o)
        return tuple(describe_option(o) for o in list(best.values())[:OPENS_SHOWN])
    try:
        rows = _estimates(step.job, step, pairs=pairs, known_gpus=known_gpus)
    except SizingError:
        return ()  # the changed job is out of the estimator's range: it opens nothing we can show
    if not any(row.fits for row in rows.values()):
        return ()
    rec = rank_offers(replace(step.job, limit=OPENS_SHOWN * OPENS_SEARCHED), requirements=requirements,
                      per_gpu=rows, catalog=catalog)
    shown: dict[tuple[str, str], RankedOption] = {}
    for o in rec.options:  # the best offer of each machine, so that regions do not crowd out machines
        shown.setdefault((o.provider, o.instance_type), o)
    return tuple(describe_option(o) for o in list(shown.values())[:OPENS_SHOWN])


def plan_count(job: JobSpec, slug: str, pairs: Sequence[tuple[str, int]]) -> int:
    """Return the GPUs a model's plan starts from: one, or for a named strategy the most one machine in scope
    carries that its tensor-parallel and pipeline split divide (the strategy needs several GPUs to mean anything)."""
    if not names_strategy(job):
        return 1
    p = job.training.parallelism
    split = (p.tensor_parallel or 1) * (p.pipeline_stages or 1)
    return max((n for s, n in pairs if s == slug and n % split == 0), default=split)


def plan_with_options(job: JobSpec, *, catalog: Catalog, requirements: Requirements,
                      pairs: Sequence[tuple[str, int]]) -> tuple[Mitigation, ...]:
    """Return the out-of-memory plan over the GPU models in scope, each step with the options it opens."""
    known_gpus = {g.slug: g for g in catalog.gpus}
    reference = profile_gpu(job, known_gpus)
    models = sorted({slug for slug, _ in pairs if slug in known_gpus},
                    key=lambda slug: (-known_gpus[slug].memory_bytes, slug))  # closest to fitting first
    counts = {slug: plan_count(job, slug, pairs) for slug in models}
    if any(n > 1 for n in counts.values()):  # a named sharded strategy on one GPU is plain data parallel
        models = [slug for slug in models if counts[slug] > 1 or not names_strategy(job)]
    steps: dict[tuple[object, ...], _Step] = {}
    for slug in models:
        count = counts[slug]
        for m in out_of_memory_plan(job, known_gpus[slug], gpu_count=count, profile_gpu=reference).mitigations:
            step = _step(m, job, known_gpus)
            t = step.job.training if step.job is not None else None
            key = (m.kind, step.min_gpus, t) if t is not None else (m.kind,)
            steps.setdefault(key, step)
    plan: list[Mitigation] = []
    for kind in KIND_ORDER:
        candidates = sorted((s for s in steps.values() if s.mitigation.kind == kind),
                            key=lambda s: _order(s, known_gpus))
        if not candidates:
            continue
        kept = candidates[0].mitigation
        for step in candidates:
            opened = _opens(step, catalog=catalog, requirements=requirements, pairs=pairs,
                            known_gpus=known_gpus)
            if opened:
                kept = replace(step.mitigation, opens=opened)
                break
        plan.append(kept)
    return tuple(plan)
