"""A recommendation end to end: size the job, estimate it once per (GPU model, count) in scope, rank.

This is the one call the Celery task and the CLI make. The estimation (sizing core) happens here,
once per (GPU model, count) that a machine in scope carries; the ranking (ranking.py) then joins
those figures to every offer. Jobs bigger than one GPU (a strategy named in the spec, nothing that
holds the job in plain data parallel, or more GPUs allowed than one machine carries) are ranked by
strategy_ranking.py instead: every machine type and count with its fastest strategy. When nothing
fits at all, the out-of-memory plan comes back with the options each of its steps would open
(plan_options.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date

from catalog.freshness import STALE_AFTER_DAYS, freshness_warnings
from catalog.types import Catalog, GpuSpec, Provider
from workers.ranking.budget_speed import budget_speed_warning
from workers.ranking.catalog_index import catalog_index
from workers.ranking.host_loading import host_loading_first
from workers.ranking.left_out import left_out_reason
from workers.ranking.loader_rerank import jpeg_loader_warning
from workers.ranking.no_offers import no_offers_warning
from workers.ranking.on_sale import older_cards_warning
from workers.ranking.owned_fit import owned_cards_warning
from workers.ranking.plan_options import plan_count, plan_with_options
from workers.ranking.purchase_search import held_against_any_card
from workers.ranking.ranking import rank_offers
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.relax import (
    compared_gpus_warning,
    constraints_warning,
    fused_loss_opens_warning,
    fused_optimizer_warning,
    gpus_warning,
    unranked_gpus_warning,
)
from workers.ranking.run_words import gib_text
from workers.ranking.scope import (
    allowed_gpus,
    cards_on_sale,
    check_data_location,
    gpu_counts_in_scope,
    resolve_scope,
    unranked_gpus,
    unrented_gpus,
)
from workers.ranking.strategy_ranking import rank_strategies, strategies_apply
from workers.ranking.strategy_words import DATA_PARALLEL_NAMES, strategy_text
from workers.ranking.wider import (
    arm_alternative,
    long_run_warning,
    max_gpus_warning,
    more_gpus_needed_warning,
    speed_for_little_warning,
    time_premium_warning,
)
from workers.sizing.advice import short_job_warnings
from workers.sizing.errors import SpecError
from workers.sizing.estimate import estimate_on_gpu, estimate_on_pairs, estimate_requirements, profile_gpu
from workers.sizing.machine import machine_needs
from workers.sizing.memory import usable_memory_bytes
from workers.sizing.reported import NO_CALIBRATION, Calibration, bounded_warnings, calibrate_row, used_by
from workers.sizing.requirements import CodedWarning, PerGpu, Requirements
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.checks import check_offload_host_memory
from workers.sizing.strategies.named import replica_gpus
from workers.sizing.strategies.oom_steps import given_layout_words


def runnable_pairs(job: JobSpec, pairs: Sequence[tuple[str, int]],
                   known_gpus: Mapping[str, GpuSpec]) -> tuple[tuple[str, int], ...]:
    """Return the (GPU model, count) pairs the ranking ranks: not those whose GPU the job's framework cannot train
    on (CNTK: before Ampere) nor unasked 3 GB cards; their machines are rejected with that reason (left_out.py). A
    named tensor-parallel or pipeline split runs on multiples of its GPUs: other counts are the strategy search's."""
    split = replica_gpus(job)
    return tuple(p for p in pairs if (p[0] not in known_gpus or not left_out_reason(job, known_gpus[p[0]]))
                 and p[1] % split == 0)


def estimate_per_gpu(job: JobSpec, pairs: Sequence[tuple[str, int]],
                     known_gpus: Mapping[str, GpuSpec]) -> dict[tuple[str, int], PerGpu]:
    """Return the job's fit and time on each (GPU model, count); a GPU the catalog lacks is left out."""
    kept = [(slug, n) for slug, n in pairs if slug in known_gpus]
    rows = estimate_on_pairs(job, [(known_gpus[slug], n) for slug, n in kept], known_gpus=known_gpus)
    return dict(zip(kept, rows, strict=True))


# What the sizing core warns about the job as given (plain data parallel) that a strategy option has
# already dealt with where some card holds the job: it fits, sharded, so "shard it" is not news.
RESOLVED_BY_STRATEGY = frozenset({"does-not-fit", "batch-not-the-problem", "data-parallel-full-copy"})
# Where no card holds the job as given, does-not-fit is said of the roomiest card in scope (_as_given_warnings);
# the memory tier always stays the requirements' own (the job as given).
AS_GIVEN = frozenset({"does-not-fit", "batch-not-the-problem", "memory-tier"})
# Advice on plain data parallel that is wrong where one GPU cannot hold the job (sharded, split, offloaded):
# no trial runs on one GPU, and the exchange is the strategy's, not an all-reduce of full gradients.
PLAIN_ONLY = frozenset({"run-trials-in-parallel", "parameter-exchange-bound", "poor-scaling"})
SHORT_JOB = frozenset({"short-run", "short-iteration"})


def _dropped_for(top: RankedOption) -> frozenset[str]:
    """Return the codes of the sizing core's advice that the option's strategy makes moot."""
    p = top.parallelism
    if p is None:
        return frozenset()
    plain = (p.data_parallel == "plain" and p.tensor_parallel == 1 and p.pipeline_stages == 1
             and not p.offload_optimizer and not p.offload_parameters and p.adapter == "none")
    return RESOLVED_BY_STRATEGY if plain else RESOLVED_BY_STRATEGY | PLAIN_ONLY


def _advice_for_top_option(job: JobSpec, rec: Recommendation, known_gpus: Mapping[str, GpuSpec], *,
                           fits_as_given: bool = True, pairs: Sequence[tuple[str, int]] = ()) -> Requirements:
    """Return the requirements with warnings and CPU need worked out on the first option's GPUs.

    Without a named GPU the sizing core advises on a reference card (the T4); once the ranking has
    chosen, the advice is about the machine the user is told to take (all its machines' GPUs, where a
    strategy spreads the job over several), less what that option's strategy already resolves.
    `fits_as_given` False: no card holds the job as given; does-not-fit then says so of the roomiest card
    in scope, with what the top option does (_as_given_warnings). With no option (the purchase question alone, or
    limits that leave none) the advice is about the roomiest card of `pairs`, the scope: it was the T4's, a card
    out of scope ("bf16-unsupported: t4" beside a purchase list of RTX cards).
    """
    if not rec.options:
        return _advice_on_roomiest(job, rec.requirements, pairs, known_gpus)
    if rec.options[0].gpu not in known_gpus:
        return rec.requirements
    top = rec.options[0]
    advice = estimate_requirements(job, gpus=(known_gpus[top.gpu],), gpu_count=top.gpu_count * top.nodes,
                                   known_gpus=known_gpus, vcpus=top.vcpus,
                                   cpu_single_thread_score=top.cpu_single_thread_score,
                                   gpus_per_node=top.gpu_count,  # the option is `nodes` machines of its type
                                   threads_per_core=top.threads_per_core)
    warnings = advice.warnings
    if top.parallelism is not None:
        kept = {"memory-tier"}
        # The plain step's run and iteration are not the option's (its strategy, micro-batch and
        # machines): the short-job advice is the option's own figures.
        machines = f"{top.nodes} x {top.instance_type}" if top.nodes > 1 else top.instance_type
        dp = top.parallelism.data_parallel
        own = short_job_warnings(iteration_ms=top.iteration_ms, training_hours=top.compute_hours,
                                 name=f"{machines} ({DATA_PARALLEL_NAMES.get(dp, dp)})")
        as_given = () if fits_as_given else _as_given_warnings(job, rec, top, known_gpus)
        tier = tuple(_tier_with_top(w, top) for w in rec.requirements.warnings if w.code in kept)
        warnings = (*tier, *as_given,
                    *(w for w in warnings if w.code not in _dropped_for(top) | AS_GIVEN | SHORT_JOB), *own)
    loaders = advice.loader_host_bytes_per_gpu - rec.requirements.loader_host_bytes_per_gpu
    return replace(rec.requirements, warnings=warnings, host_memory_bytes=rec.requirements.host_memory_bytes + loaders,
                   cpu_single_thread_score=advice.cpu_single_thread_score, loader_workers=advice.loader_workers,
                   loader_host_bytes_per_gpu=advice.loader_host_bytes_per_gpu,
                   loader_workers_in_memory=advice.loader_workers_in_memory)


def _tier_with_top(warning: CodedWarning, top: RankedOption) -> CodedWarning:
    """Return the memory tier of the job as given, with what the top option's strategy needs per GPU.

    The tier is the job as given (the domain notes' rule); where a strategy changes how it runs, the
    answer's first option may need a lower tier, and the warning says so rather than contradict it.
    """
    p = top.parallelism
    if p is None:
        return warning
    return CodedWarning(warning.code, f"{warning.message} The top option runs it in "
                                      f"{gib_text(p.gpu_memory_per_gpu_bytes)} per GPU: "
                                      f"{strategy_text(p, nodes=top.nodes)}.")


def _as_given_warnings(job: JobSpec, rec: Recommendation, top: RankedOption,
                       known_gpus: Mapping[str, GpuSpec]) -> tuple[CodedWarning, ...]:
    """Return does-not-fit for the job as given on the roomiest card in scope, with what the top option does.

    The sizing core says it of its reference card (a T4), which nobody would pick for a job no card
    holds: the user needs the gap on the best card there is, and that the options close it.
    """
    rows = [row for row in rec.requirements.per_gpu if row.gpu in known_gpus]
    if not rows or top.parallelism is None:
        return tuple(w for w in rec.requirements.warnings if w.code in AS_GIVEN - {"memory-tier"})
    row = max(rows, key=lambda r: (known_gpus[r.gpu].memory_bytes, -r.gpu_count))
    gpu = known_gpus[row.gpu]
    t = job.training
    return (CodedWarning("does-not-fit", (
        f"The job as given (batch {t.batch_size} per GPU, {given_layout_words(job)}) needs "
        f"{gib_text(row.gpu_memory_bytes)} per GPU on {gpu.slug}, the roomiest card in scope "
        f"({gib_text(usable_memory_bytes(gpu))} usable of {gib_text(gpu.memory_bytes)}): no card holds it as given. "
        f"The options change how it runs; the top one: {strategy_text(top.parallelism, nodes=top.nodes)}, "
        f"{gib_text(top.parallelism.gpu_memory_per_gpu_bytes)} per GPU. The plan says what each change saves.")),)


def check_recommendable(job: JobSpec, catalog: Catalog) -> None:
    """Raise SpecError now for what would fail the job later: unknown names, offload without host memory,
    a checkpoint interval past the run."""
    pairs = gpu_counts_in_scope(job.constraints, catalog)
    check_data_location(job.dataset, catalog)
    known_gpus = {g.slug: g for g in catalog.gpus}
    profile_gpu(job, known_gpus)
    check_checkpoint_interval(job, known_gpus, pairs)
    providers = set(job.constraints.providers)
    if job.constraints.owned_gpus:
        return  # the team's own host is taken to have the memory the job needs (shapes.owned_machines)
    check_offload_host_memory(job, host_need_bytes=machine_needs(job.dataset, gpu_count=1).host_memory_bytes,
                              machines=((i.instance_type, i.gpu_count, i.host_memory_bytes) for i in catalog.instances
                                        if i.provider.value in providers and i.gpu_count > 0))


def check_checkpoint_interval(job: JobSpec, known_gpus: Mapping[str, GpuSpec],
                              pairs: Sequence[tuple[str, int]]) -> None:
    """Raise SpecError when the checkpoint interval is longer than the longest run any option could be.

    The run's length depends on the machine; one card of the slowest model in scope (least fp32
    throughput) gives the longest, so an interval past it is past every run.
    """
    every = job.training.checkpoint_every_hours
    deadline = job.constraints.deadline_hours
    if every is not None and deadline is not None and every > deadline:
        raise SpecError("training.checkpoint_every_hours",
                        f"{every:g} h between checkpoints is longer than the {deadline:g} h deadline, so the run "
                        "would end before its first checkpoint")
    cards = [known_gpus[g] for g, _ in pairs if g in known_gpus]
    if every is None or job.dataset.samples <= 0 or not cards:
        return
    card = min(cards, key=lambda g: (g.fp32_tflops, g.slug))
    hours = estimate_on_gpu(job, card, gpu_count=1, known_gpus=known_gpus).training_hours
    if 0 < hours < every:
        raise SpecError("training.checkpoint_every_hours",
                        f"{every:g} h between checkpoints is longer than the whole run ({hours:.3g} h on one "
                        f"{card.name}, the slowest card in scope), so no checkpoint would be written")


PER_GPU_ALL, PER_GPU_OPTIONS = "all", "options"


def purchase_older_cards(job: JobSpec, catalog: Catalog) -> CodedWarning | None:
    """Return `purchase-older-cards` where the purchase question is asked and left older generations out."""
    if Provider.ONPREM.value not in job.constraints.providers:
        return None
    index, scope = catalog_index(catalog), resolve_scope(job.constraints, catalog)
    cards = {gpu: card for gpu, card in index.cards.items() if scope.allows(gpu)}
    return older_cards_warning(cards, index.current_cards, cards_on_sale(index, scope))


def recommend(job: JobSpec, catalog: Catalog, *, calibration: Calibration = NO_CALIBRATION,
              per_gpu_rows: str = PER_GPU_ALL, today: date | None = None,
              stale_after_days: int = STALE_AFTER_DAYS, brief: bool = False) -> Recommendation:
    """Return the ranked options for the job over the catalog, the rejected with reasons, and any plan.

    `calibration` holds the corrections fitted from reported runs (workers/sizing/reported.py): each
    (GPU model, count) it applies to is timed with it, and the requirements say which runs were used.
    `per_gpu_rows`: PER_GPU_ALL keeps every (GPU model, count) estimate in `requirements.per_gpu`
    (a review needs them); PER_GPU_OPTIONS keeps those the ranked options use, a third of a result's
    bytes and of its dump. The answer warns when its prices carry no date, or (given `today`) are older
    than `stale_after_days`. `brief`: the plain options without words or run details (rank_offers).
    """
    rec = _recommend(job, catalog, calibration=calibration, brief=brief)
    rec = rec if brief else host_loading_first(rec)  # the same GPUs, about as cheap, on a host that loads the weights
    found = freshness_warnings(prices_as_of=catalog.prices_as_of, undated=catalog.undated_sources, today=today,
                               stale_after_days=stale_after_days)
    extra = tuple(CodedWarning(code, message) for code, message in found) + top_price_age(rec, today, stale_after_days,
                                                                                          said=found)
    first: tuple[CodedWarning, ...] = ()  # what the team's own cards need: the question the user asked, said first
    if not brief:
        def rank(wider: JobSpec, only: tuple[str, str] | None) -> Recommendation:
            if only is None:
                return _recommend(wider, catalog, calibration=calibration, brief=True)
            return rank_strategies(wider, requirements=rec.requirements, catalog=catalog,
                                   profile_gpu=profile_gpu(wider, {g.slug: g for g in catalog.gpus}), only=only)

        limited = (no_offers_warning(job, rec, catalog) or max_gpus_warning(job, rec, rank)
                   or constraints_warning(job, rec, lambda j: rank(j, None))
                   or gpus_warning(job, rec, lambda j: rank(j, None), unrented=lambda: unrented_gpus(job, catalog))
                   or fused_loss_opens_warning(job, rec, lambda j: rank(j, None))
                   or more_gpus_needed_warning(job, rec, rank))
        premium = time_premium_warning(job, rec) or speed_for_little_warning(job, rec)
        loader = jpeg_loader_warning(job, rec, lambda j: rank(j, None))
        long_run = (long_run_warning(job, rec, lambda j: rank(j, None))  # "llama 3 70b on 15T tokens": 8 years
                    or (None if premium else budget_speed_warning(job, rec, lambda j: rank(j, None))))
        not_rented = unranked_gpus(job, catalog)
        unranked = unranked_gpus_warning(job, rec, lambda j: rank(j, None), not_rented)
        compared = compared_gpus_warning(job, rec, lambda j: rank(j, None), allowed_gpus(job.constraints, catalog),
                                         not_rented) if len(job.constraints.gpus) > 1 else None
        fused = fused_optimizer_warning(job, rec, lambda j: rank(j, None))  # offloaded where a fused Adam fits
        owned = owned_cards_warning(job, rec, catalog)
        first = () if owned is None else (owned,)
        older = purchase_older_cards(job, catalog)
        extra = (*(w for w in (limited, fused, unranked, compared, premium, long_run, loader, older) if w is not None),
                 *extra)
        rec = held_against_any_card(job, arm_alternative(rec), lambda j: rank(j, None),
                                    lambda: unrented_gpus(job, catalog))
    rec = replace(rec, requirements=replace(rec.requirements, warnings=(*first, *rec.requirements.warnings, *extra)))
    if per_gpu_rows != PER_GPU_OPTIONS:
        return rec
    used = {(o.gpu, o.gpu_count) for o in rec.options}
    rows = tuple(row for row in rec.requirements.per_gpu if (row.gpu, row.gpu_count) in used)
    return replace(rec, requirements=replace(rec.requirements, per_gpu=rows))


def top_price_age(rec: Recommendation, today: date | None, stale_after_days: int,
                  said: tuple[tuple[str, str], ...]) -> tuple[CodedWarning, ...]:
    """Return `top-price-stale` for the top option's own dated price where it is older than `stale_after_days` and the
    catalog's `stale-prices` could not say so (some prices undated): a GCP spot price of 2026-07-30 ranked first on
    2026-12-06, 129 days on, was said only to be dated. Per job (a review lists it with the job), not the catalog's."""
    top = rec.options[0] if rec.options else None
    if top is None or today is None or not top.price_as_of or any(code == "stale-prices" for code, _ in said):
        return ()
    age = (today - date.fromisoformat(top.price_as_of[:10])).days
    if age <= stale_after_days:
        return ()
    return (CodedWarning("top-price-stale", (
        f"the top option's price ({top.instance_type}, {top.pricing.value}, {top.region}) is from "
        f"{top.price_as_of[:10]}, {age} days ago (more than {stale_after_days}): it may have changed; refresh or "
        f"import the catalog")),)


def _recommend(job: JobSpec, catalog: Catalog, *, calibration: Calibration, brief: bool = False) -> Recommendation:
    known_gpus = {g.slug: g for g in catalog.gpus}
    check_recommendable(job, catalog)  # raises SpecError for unknown names, offload without host memory
    pairs = runnable_pairs(job, gpu_counts_in_scope(job.constraints, catalog), known_gpus)
    # the GPU-independent requirements on the fewest GPUs the named strategy runs on (tensor parallel 2: two)
    requirements = estimate_requirements(job, known_gpus=known_gpus, gpu_count=replica_gpus(job))
    per_gpu = {pair: calibrate_row(row, job, known_gpus[row.gpu], calibration)
               for pair, row in estimate_per_gpu(job, pairs, known_gpus).items()}
    runs, gpus = used_by(per_gpu.values())
    requirements = replace(requirements, per_gpu=tuple(per_gpu[pair] for pair in sorted(per_gpu)),
                           calibrated_by_runs=runs, calibrated_by_gpus=gpus, warnings=(
                               *requirements.warnings,
                               *bounded_warnings(per_gpu.values(), job, known_gpus, calibration)))
    rec = rank_offers(job, requirements=requirements, per_gpu=per_gpu, catalog=catalog, brief=brief)
    nothing_fits = bool(per_gpu) and not any(row.fits for row in per_gpu.values())
    if not per_gpu and (named := tuple((slug, 1) for slug in unrented_gpus(job, catalog) if slug in known_gpus)):
        # "mistral 7b qlora on a 4090": no cloud rents the card named; the plan and advice are about it, not a T4.
        # A job the card holds as given has no plan ("bert-base on a 1060 6gb", 4.4 GiB, was told to shrink)
        advice = _advice_on_roomiest(job, rec.requirements, named, known_gpus)
        return replace(rec, requirements=advice, plan=plan_with_options(
            job, catalog=catalog, requirements=requirements, pairs=named) if advice.mitigations else ())
    # limits no single machine meets may be met by several smaller ones within max_gpus (docs/contract-additions.md)
    searching = strategies_apply(job, nothing_fits=nothing_fits or only_roomiest_fit(per_gpu, known_gpus)
                                 or owned_cards_short(job, per_gpu))
    limited = not searching and not rec.options and not nothing_fits
    if searching or limited:
        searched = rank_strategies(job, requirements=requirements, catalog=catalog,
                                   profile_gpu=profile_gpu(job, known_gpus))
        searched = replace(searched, requirements=_advice_for_top_option(job, searched, known_gpus, pairs=pairs,
                                                                         fits_as_given=not nothing_fits))
        if not nothing_fits and (searched.options or not limited):
            return searched
        if searched.options:  # the plan still says what changed and which options each step opens
            return replace(searched, plan=plan_with_options(job, catalog=catalog, requirements=requirements,
                                                            pairs=pairs))
        if nothing_fits:  # cards to buy that hold it with micro-batches or sharding ("buy 4 4090s" for a LoRA 8B)
            rec = replace(rec, purchase=searched.purchase)
    if not nothing_fits:
        return replace(rec, plan=(), requirements=_advice_for_top_option(job, rec, known_gpus, pairs=pairs))
    return replace(rec, plan=plan_with_options(job, catalog=catalog, requirements=requirements, pairs=pairs),
                   requirements=_advice_on_roomiest(job, rec.requirements, pairs, known_gpus))


# A job as given that no card of this size or less holds (80 GB: the A100 and H100 that large jobs mostly run on)
# is also ranked by the strategy search: ranked as given, a Llama 3.2 1B full fine-tune at 8 x 2,048 tokens (85 GiB)
# had only the cards over 80 GB, and 8 x B200 for $4.33 came first, where one H100 with micro-batches of 4 and
# 2 accumulation steps runs it for $1.97; the same job needing 200 GiB (nothing fits) was searched and got it.
ROOMY_CARD_BYTES = 80 * 2**30


def only_roomiest_fit(per_gpu: Mapping[tuple[str, int], PerGpu], known_gpus: Mapping[str, GpuSpec]) -> bool:
    """Return whether the job as given fits only cards of more than ROOMY_CARD_BYTES, where smaller ones are in scope
    (a scope of the roomiest cards alone is ranked as given)."""
    smaller = [row.fits for row in per_gpu.values() if known_gpus[row.gpu].memory_bytes <= ROOMY_CARD_BYTES]
    return bool(smaller) and not any(smaller)


def owned_cards_short(job: JobSpec, per_gpu: Mapping[tuple[str, int], PerGpu]) -> bool:
    """Return whether the team owns cards in scope and the job as given fits none of them: "gpt2-medium on my 3090"
    at 33.8 GiB was ranked on rented 48 GB cards alone, where micro-batches of 4 (the same effective batch) run it on
    the 3090 for its power; the strategy search ranks the owned cards with the changes that keep the method."""
    owned = {card.gpu for card in job.constraints.owned_gpus}
    rows = [row for (slug, _), row in per_gpu.items() if slug in owned]
    return bool(rows) and not any(row.fits for row in rows)


def _advice_on_roomiest(job: JobSpec, requirements: Requirements, pairs: Sequence[tuple[str, int]],
                        known_gpus: Mapping[str, GpuSpec]) -> Requirements:
    """Return the requirements with warnings and mitigations worked out on the roomiest card in scope.

    Where no option fits, the sizing core's advice is about its reference card (a T4) unless told
    otherwise: a user who named the A100 40GB, or whose job no card holds, read "exceeds what t4 offers"
    beside a plan worked out on the card closest to fitting. The advice is now about that card, the
    first the plan (plan_with_options) works on.
    """
    slugs = {slug for slug, _ in pairs if slug in known_gpus}
    if not slugs:
        return requirements
    roomiest = known_gpus[min(slugs, key=lambda slug: (-known_gpus[slug].memory_bytes, slug))]
    advice = estimate_requirements(job, gpus=(roomiest,), gpu_count=plan_count(job, roomiest.slug, pairs),
                                   known_gpus=known_gpus)
    return replace(requirements, warnings=advice.warnings, mitigations=advice.mitigations,
                   cpu_single_thread_score=advice.cpu_single_thread_score)
