"""What a larger `constraints.max_gpus` would open: the warning that says the GPU limit holds a job back;
for a time-ranked answer, what the last few percent of speed cost (`time-premium`); for a cost-ranked one,
a run twice as fast or more for little more money (`speed-for-little`); and, where the top
option's host is Arm, the first x86 option of the answer beside it (`arm_alternative`).

A job that needs more than one machine's worth of memory (a 70B full fine-tune) ranks what fits
within `max_gpus` (8 by default). When that is an offloaded run (optimizer state streamed over PCIe
and updated on the host CPU), WIDER_FACTOR x the GPUs can remove the offload and cut both time and
cost by an order of magnitude: the whole ranking is run once more at the wider limit. When the top
option simply uses every GPU allowed and the objective values time (or values cost, no deadline is set
and the run takes more than a day), its own machine type is ranked on more machines (a cheap check: one machine type).
Either way, when the better option is clearly better by the job's own objective, the answer says so
with the figures and the field to change; the ranked options stay within the user's limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import replace

from catalog.providers import PROVIDERS
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.run_words import hours_text, usd_text
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec, Objective

WIDER_FACTOR = 4  # 8 GPUs -> 32: two doublings of the machines beyond the limit
MAX_GPUS_LIMIT = 1024  # the schema's bound on constraints.max_gpus
# "Clearly better" [rule of thumb]: a fifth cheaper, or half the time for at most a tenth more money
# (cost); a fifth faster (time). Smaller gains are within the estimate's own error (README, accuracy).
CHEAPER_SHARE = 0.8
FASTER_SHARE = 0.5
SAME_COST_SHARE = 1.1
TIME_SHARE = 0.8
# A cost-ranked run with no deadline, longer than this, that uses every GPU allowed is checked on more machines
# of its type: half the time for at most SAME_COST_SHARE of the money is worth a sentence once a team waits
# days [rule of thumb].
LONG_COST_RUN_HOURS = 24.0
WIDER_OPTIONS = 8  # the machine counts a time-ranked check of one machine type returns (1, 2, 4, ... machines)


def _total_gpus(option: RankedOption) -> int:
    return option.gpu_count * option.nodes


def _offloaded(option: RankedOption) -> bool:
    p = option.parallelism
    return p is not None and (p.offload_optimizer or p.offload_parameters)


def _uses_every_gpu(job: JobSpec, top: RankedOption) -> bool:
    return _total_gpus(top) >= job.constraints.max_gpus


def _clearly_better(objective: Objective, top: RankedOption, alt: RankedOption) -> bool:
    """Return whether the wider option beats the top one by the job's objective, beyond the estimate's noise."""
    cheaper = alt.training_cost_usd <= CHEAPER_SHARE * top.training_cost_usd
    faster_same_cost = (alt.training_hours <= FASTER_SHARE * top.training_hours
                        and alt.training_cost_usd <= SAME_COST_SHARE * top.training_cost_usd)
    faster = alt.training_hours <= TIME_SHARE * top.training_hours
    if objective is Objective.COST:
        return cheaper or faster_same_cost
    if objective is Objective.TIME:
        return faster
    if objective is Objective.BALANCED:
        return cheaper or faster_same_cost or (faster and alt.training_cost_usd <= top.training_cost_usd)
    return False  # carbon: more machines seldom emit less; the warning would mislead


def _held_hours(option: RankedOption) -> float:
    """Return the hours a deadline must allow the option: on spot, its percentile time (spot restarts)."""
    return max(option.training_hours, option.percentile_hours or 0.0)


def option_text(option: RankedOption) -> str:
    """Return an option as "N x gpu (machine, pricing, region): H for $C"."""
    machines = f"{option.nodes} x {option.instance_type}" if option.nodes > 1 else option.instance_type
    return (f"{_total_gpus(option)} x {option.gpu} ({machines}, {option.pricing.value}, {option.region}): "
            f"{figures_text(option, option.training_hours, option.training_cost_usd)}")


def figures_text(option: RankedOption, hours: float, cost: float, spent: str = "") -> str:
    """Return "H for $C", or, where the job gives no sample count (hours 0), its iteration and hourly price; `spent`
    says what the money buys (" of power" for the team's own cards)."""
    if hours > 0:
        return f"{hours_text(hours)} for {usd_text(cost)}{spent}"
    return (f"{option.iteration_ms:,.0f} ms an iteration at {usd_text(option.price_per_hour_usd * option.nodes)}/h"
            f"{spent} (dataset.samples gives its time and cost)")


# Ranks a job as the recommendation did (same catalog and calibration) without this check; with
# (provider, instance type), that machine type alone, at the job's provider, region and pricing.
Ranker = Callable[[JobSpec, tuple[str, str] | None], Recommendation]


def _wider_best(job: JobSpec, top: RankedOption, rank: Ranker, wider: int) -> RankedOption | None:
    """Return the best option at the wider limit: over everything in scope when the top offloads, else
    over the top option's machine type on more machines (time and balanced objectives; cost where no deadline is
    set and the top option runs longer than LONG_COST_RUN_HOURS: the fastest there within SAME_COST_SHARE of its
    cost), or None."""
    if _offloaded(top):
        alt = rank(replace(job, constraints=replace(job.constraints, max_gpus=wider), limit=1), None)
        return alt.options[0] if alt.options else None
    if not _uses_every_gpu(job, top):
        return None
    narrow = replace(job.constraints, max_gpus=wider, providers=(top.provider,), regions=(top.region,),
                     pricing=(top.pricing.value,))
    only = (top.provider, top.instance_type)
    if job.objective in (Objective.TIME, Objective.BALANCED):
        alt = rank(replace(job, constraints=narrow, limit=1), only)
        return alt.options[0] if alt.options else None
    if (job.objective is not Objective.COST or job.constraints.deadline_hours is not None
            or top.training_hours <= LONG_COST_RUN_HOURS):  # a deadline says the time the team can wait
        return None
    # "a 7b on 1t tokens, budget 200k": 69 days on 8 x B200 first, where 16 take 35 days for +0.2%
    found = rank(replace(job, constraints=narrow, objective=Objective.TIME, limit=WIDER_OPTIONS), only).options
    same_cost = [o for o in found if o.training_cost_usd <= SAME_COST_SHARE * top.training_cost_usd]
    return min(same_cost, key=lambda o: o.training_hours, default=None)


def max_gpus_warning(job: JobSpec, rec: Recommendation, rank: Ranker) -> CodedWarning | None:
    """Return the `max-gpus-limits` warning when more GPUs than allowed would clearly beat the top option."""
    limit = job.constraints.max_gpus
    if not rec.options or limit >= MAX_GPUS_LIMIT:
        return None
    top = rec.options[0]
    if top.owned or top.training_hours <= 0 or top.gpu_count <= 0:
        return None
    wider = min(MAX_GPUS_LIMIT, limit * WIDER_FACTOR)
    alt = _wider_best(job, top, rank, wider)
    if alt is None or _total_gpus(alt) <= limit or not _clearly_better(job.objective, top, alt):
        return None
    why = " with the optimizer state offloaded to the host" if _offloaded(top) and not _offloaded(alt) else ""
    gpus, deadline = _total_gpus(alt), ""
    if job.objective is Objective.COST and alt.training_cost_usd > top.training_cost_usd:  # ranked by cost, the
        hours = math.ceil(_held_hours(alt))  # fewer machines still come first: the deadline that puts it first
        deadline = f" and constraints.deadline_hours to {hours}"
        gpus_flag = f"--max-gpus {gpus} --deadline {hours}h"
    else:
        gpus_flag = f"--max-gpus {gpus}"
    return CodedWarning("max-gpus-limits", (
        f"constraints.max_gpus ({limit}) holds this job back: the best option within {limit} GPUs takes "
        f"{hours_text(top.training_hours)} for {usd_text(top.training_cost_usd)}{why}; with up to {wider} GPUs "
        f"the {'fastest for about the same money' if deadline else 'best'} is {option_text(alt)}. "
        f"{'Set' if deadline else 'Raise'} constraints.max_gpus to {gpus}{deadline} (CLI {gpus_flag}) to rank such "
        f"options{' first' if deadline else ''}."))


# How many times the GPU limit is widened, WIDER_FACTOR each, looking for the fewest GPUs that hold a job nothing in
# scope holds: 8 -> 32 -> 128 (a Llama 3.1 405B full fine-tune needs 32 with the optimizer offloaded).
NEEDED_WIDENINGS = 2


def widened_limits(limit: int) -> Iterator[int]:
    """Yield the GPU limits tried beyond `limit`: WIDER_FACTOR times each, NEEDED_WIDENINGS at most, MAX_GPUS_LIMIT
    at most."""
    for _ in range(NEEDED_WIDENINGS):
        if limit >= MAX_GPUS_LIMIT:
            return
        limit = min(MAX_GPUS_LIMIT, limit * WIDER_FACTOR)
        yield limit


def more_gpus_needed_warning(job: JobSpec, rec: Recommendation, rank: Ranker) -> CodedWarning | None:
    """Return `max-gpus-limits` where no option holds the job within constraints.max_gpus and more GPUs would:
    the answer says the limit that ranks one, and the best option there."""
    limit = job.constraints.max_gpus
    if rec.options or not any(PROVIDERS[p].rents for p in job.constraints.providers):
        return None  # no cloud in scope (on-prem alone): cards to buy, not machines to rank (purchase.py)
    for wider in widened_limits(limit):
        widened = replace(job, constraints=replace(job.constraints, max_gpus=wider))
        alt = rank(replace(widened, limit=1), None)
        if alt.options:
            best = alt.options[0]
            further = max_gpus_warning(widened, alt, rank)  # an offloaded run there: more GPUs may drop the offload
            then = "" if further is None else f" Then: {further.message}"
            return CodedWarning("max-gpus-limits", (
                f"No option holds this job on at most {limit} GPUs (constraints.max_gpus); with up to {wider} the "
                f"best is {option_text(best)}. Raise constraints.max_gpus to {_total_gpus(best)} (CLI --max-gpus "
                f"{_total_gpus(best)}) to rank such options.{then}"))
    return None


# An option this close to the fastest is as fast within the estimate's own error (TIME_SHARE above
# calls a fifth faster "clearly"); at this share of the fastest's cost or less, a user who asked for
# time is told what the last few percent cost. [rule of thumb]
NEAR_TIME_SHARE = 1.05
PREMIUM_COST_SHARE = 0.5


def time_premium_warning(job: JobSpec, rec: Recommendation) -> CodedWarning | None:
    """Return `time-premium` for a time-ranked answer whose fastest option costs twice or more what an
    option as fast within NEAR_TIME_SHARE costs (on spot, its 90th-percentile time held to that).

    Ranked by time, every option that near the fastest comes right after it, so the answer's own
    options are searched: no second ranking.
    """
    if job.objective is not Objective.TIME or not rec.options:
        return None
    top = rec.options[0]
    if top.owned or top.training_hours <= 0 or top.training_cost_usd <= 0:
        return None
    near = top.training_hours * NEAR_TIME_SHARE
    close = [o for o in rec.options[1:] if not o.owned and o.training_cost_usd > 0
             and _held_hours(o) <= near]
    alt = min(close, key=lambda o: o.training_cost_usd, default=None)
    if alt is None or alt.training_cost_usd > PREMIUM_COST_SHARE * top.training_cost_usd:
        return None
    slower = alt.training_hours / top.training_hours - 1.0
    hours = math.ceil(near * 10) / 10
    return CodedWarning("time-premium", (
        f"the fastest option takes {hours_text(top.training_hours)} for {usd_text(top.training_cost_usd)}; "
        f"{option_text(alt)}, {slower:+.0%} time (within the estimate's error) for "
        f"{alt.training_cost_usd / top.training_cost_usd:.0%} of the cost. The options are ranked by time, as "
        f"asked; objective cost with constraints.deadline_hours {hours:g} (CLI --objective cost --deadline "
        f"{hours:g}h) ranks such options first."))


# A run this much quicker is worth naming beside the cheapest [rule of thumb]: 1.5x as fast or more, well
# beyond the estimate's own error (README, accuracy); twice as fast until 2026-12-06, which left out doubling
# the machines of a 100-hour run for +0.3% (1.99x: 16 -> 32 B200 for Llama 3 8B on 100B tokens).
QUICKER_SHARE = 2.0 / 3.0
# An extra cost a team does not weigh against a run 1.5x as fast or more [rule of thumb]: a dollar, or
# SAME_COST_SHARE of the cheapest run's cost where that is more. (A cost-ranked answer of a small job
# puts a shared slice of a GPU first for a fraction of a cent less than the whole GPU, 3-4x slower.)
LITTLE_EXTRA_USD = 1.0


def speed_for_little_warning(job: JobSpec, rec: Recommendation) -> CodedWarning | None:
    """Return `speed-for-little` for a cost-ranked answer where an option of the answer takes at most
    QUICKER_SHARE of the cheapest option's time (each on spot at its 90th-percentile time) for at most
    LITTLE_EXTRA_USD or SAME_COST_SHARE of its cost more: the fastest such option, named with the deadline
    that ranks such options first. The options stay ranked by cost.
    """
    if job.objective is not Objective.COST or not rec.options:
        return None
    top = rec.options[0]
    if top.owned or top.training_hours <= 0 or top.training_cost_usd <= 0:
        return None
    allowed = max(top.training_cost_usd + LITTLE_EXTRA_USD, SAME_COST_SHARE * top.training_cost_usd)
    quick = [o for o in rec.options[1:] if not o.owned and 0 < o.training_cost_usd <= allowed
             and 0 < _held_hours(o) <= QUICKER_SHARE * _held_hours(top)]
    alt = min(quick, key=lambda o: (_held_hours(o), o.training_cost_usd), default=None)
    if alt is None:
        return None
    hours = math.ceil(_held_hours(alt) * 10) / 10
    extra = alt.training_cost_usd - top.training_cost_usd
    return CodedWarning("speed-for-little", (
        f"the cheapest option takes {hours_text(top.training_hours)} for {usd_text(top.training_cost_usd)}; "
        f"{alt.provider} {option_text(alt)}, {top.training_hours / alt.training_hours:.1f}x as fast for "
        f"{usd_text(max(0.0, extra))} more ({extra / top.training_cost_usd:+.0%}). The options are ranked by "
        f"cost, as asked; constraints.deadline_hours {hours:g} (CLI --deadline {hours:g}h) ranks such options "
        "first."))


# A run longer than this, with no deadline, is no plan a team would follow [ours: over half again the longest
# published pre-training, Llama 3 405B's 54 days (Meta, "The Llama 3 Herd of Models", 2024)]; the answer says so.
LONG_RUN_HOURS = 90 * 24


def long_run_warning(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation]
                     ) -> CodedWarning | None:
    """Return `long-run` where the top option runs longer than LONG_RUN_HOURS and no deadline is set: the
    ranking's objective put cost (or carbon) first, so the smallest cluster that holds the job comes first; the
    fastest option within constraints.max_gpus is named (`rank` ranks a job as the recommendation did)."""
    if not rec.options or job.constraints.deadline_hours is not None or job.objective is Objective.TIME:
        return None
    top = rec.options[0]
    if top.training_hours <= LONG_RUN_HOURS:
        return None
    found = rank(replace(job, objective=Objective.TIME, limit=1))
    fastest = found.options[0] if found.options else None
    quicker = "" if fastest is None or fastest.training_hours >= TIME_SHARE * top.training_hours else (
        f" The fastest within constraints.max_gpus ({job.constraints.max_gpus}) is {fastest.provider} "
        f"{option_text(fastest)} ({fastest.training_hours / 24:,.0f} days).")
    return CodedWarning("long-run", (
        f"The top option runs {hours_text(top.training_hours)} ({top.training_hours / 24:,.0f} days): with no "
        f"deadline the answer is ranked by {job.objective.value}, so the fewest GPUs that hold the job come first."
        f"{quicker} Set constraints.deadline_hours (CLI --deadline) to rank the options that finish in time, and "
        f"raise constraints.max_gpus where none does."))


def arm_alternative(rec: Recommendation) -> Recommendation:
    """Return the answer with the top option's `arm-host` warning naming the answer's first x86 option.

    An Arm host often tops a small job's answer by a fraction of a cent (AWS g5g beside g4dn): the
    user who cannot rebuild for aarch64 should see what the x86 machine costs without searching
    the list. Where no option of the answer is x86, the warning stays as it was.
    """
    if not rec.options or not any(w.code == "arm-host" for w in rec.options[0].warnings):
        return rec
    top = rec.options[0]
    alt = next((o for o in rec.options[1:] if not any(w.code == "arm-host" for w in o.warnings)), None)
    if alt is None:
        return rec
    more = (alt.training_cost_usd / top.training_cost_usd - 1.0) if top.training_cost_usd > 0 else 0.0
    longer = (alt.training_hours / top.training_hours - 1.0) if top.training_hours > 0 else 0.0
    note = (f"; the first x86 option of this answer is #{alt.rank}, {alt.provider} {option_text(alt)} "
            f"({more:+.1%} cost, {longer:+.1%} time)")
    warnings = tuple(replace(w, message=w.message + note) if w.code == "arm-host" else w for w in top.warnings)
    return replace(rec, options=(replace(top, warnings=warnings), *rec.options[1:]))
