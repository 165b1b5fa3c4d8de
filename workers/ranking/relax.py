"""When no option meets the budget, the deadline and the CO2e cap together: which one to relax, and to what.

The out-of-memory plan says what to change when no card holds the job; this says it when cards hold
it but the limits the user set rule every one out. Each limit is dropped in turn, the others kept,
and the ranking run again for the one option that then comes first: the cheapest that meets the
deadline (so the budget it needs), the fastest within the budget (so the deadline it needs), the
cheapest within both without the CO2e cap. Spot options are held to the limits at their percentile
(constraints.spot_percentile), so the figure quoted is the one the limit was checked against.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from catalog.gpu_names import model_word
from workers.ranking.recommendation import RankedOption, Recommendation
from workers.ranking.run_words import deadline_text, hours_text, usd_text
from workers.ranking.strategy_words import strategy_text
from workers.ranking.wider import CHEAPER_SHARE, figures_text, widened_limits
from workers.sizing.loss_advice import fused_loss_job
from workers.sizing.optimizer_advice import torch_name
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import (
    Constraints,
    Framework,
    JobSpec,
    Objective,
    Optimizer,
    OptimizerImplementation,
    OwnedGpus,
)


def _judged_hours(o: RankedOption) -> float:
    return max(o.training_hours, o.percentile_hours)


def _judged_cost(o: RankedOption) -> float:
    return max(o.training_cost_usd, o.percentile_cost_usd)


def _option_text(o: RankedOption) -> str:
    machines = f"{o.nodes} x {o.instance_type}" if o.nodes > 1 else o.instance_type
    at = f" at the {round(o.percentile * 100)}th percentile" if o.percentile_hours > 0 else ""
    return (f"{machines} ({o.provider} {o.region}, {o.pricing.value}; {o.gpu_count * o.nodes}x {o.gpu}): "
            f"{figures_text(o, _judged_hours(o), _judged_cost(o))}{at if o.training_hours > 0 else ''}")


def _round_up(value: float) -> float:
    """Return the value rounded up to two significant figures (a limit that lets the value through)."""
    if value <= 0:
        return 0.0
    step = 10.0 ** (math.floor(math.log10(value)) - 1)
    return math.ceil(value / step - 1e-9) * step


def _limits_text(c: Constraints) -> str:
    limits = []
    if c.budget_usd is not None:
        limits.append(f"the {usd_text(c.budget_usd)} budget")
    if c.deadline_hours is not None:
        limits.append(f"the {deadline_text(c.deadline_hours)} deadline")
    if c.max_co2e_kg is not None:
        limits.append(f"the {c.max_co2e_kg:g} kg CO2e cap")
    return " and ".join(limits) if len(limits) < 3 else f"{limits[0]}, {limits[1]} and {limits[2]}"  # "" for none


def constraints_warning(job: JobSpec, rec: Recommendation,
                        rank: Callable[[JobSpec], Recommendation]) -> CodedWarning | None:
    """Return `constraints-conflict` when no option meets the job's limits but some would without one of them.

    `rank` ranks a job as the recommendation did, without this check.
    """
    c = job.constraints
    if rec.options or (c.budget_usd is None and c.deadline_hours is None and c.max_co2e_kg is None):
        return None

    def first(constraints: Constraints, objective: Objective) -> RankedOption | None:
        found = rank(replace(job, constraints=constraints, objective=objective, limit=1))
        return found.options[0] if found.options else None

    anything = first(replace(c, budget_usd=None, deadline_hours=None, max_co2e_kg=None), Objective.TIME)
    if anything is None:
        # nothing runs the job even without limits, so they are not why: the rejections (memory, host) or the
        # GPUs named (gpus-exclude-all) say it
        return None
    ways: list[str] = []
    if c.budget_usd is not None:
        cheapest = first(replace(c, budget_usd=None), Objective.COST)
        if cheapest is not None:
            ways.append(f"the cheapest option without the budget is {_option_text(cheapest)}: raise "
                        f"constraints.budget_usd to {math.ceil(_judged_cost(cheapest) * 100) / 100:g}")
            if more := _cheaper_on_more_gpus(first, replace(c, budget_usd=None), cheapest):
                ways.append(f"or {more}")
        else:
            ways.append(f"whatever the budget, no option meets {_limits_text(replace(c, budget_usd=None))} on at "
                        f"most {c.max_gpus} GPUs")
            if more := _more_gpus(first, replace(c, budget_usd=None), "does"):
                ways.append(more)
    if c.deadline_hours is not None:
        fastest = first(replace(c, deadline_hours=None), Objective.TIME)
        if fastest is not None:
            moved = math.ceil(_judged_hours(fastest) * 10) / 10
            words = "" if moved >= 1 else f" ({deadline_text(moved)})"
            ways.append(f"the fastest option without the deadline is {_option_text(fastest)}: move "
                        f"constraints.deadline_hours to {moved:g}{words}")
            # "pretrain llama 7b on 1T tokens within 30 days": 8 x B200 take 1,667 h; 32 GPUs meet it
            if more := _more_gpus(first, replace(c, budget_usd=None), "meets the deadline"):
                ways.append(f"or {more}")
            elif scale := _scale_needed(first, replace(c, budget_usd=None, deadline_hours=None), c.deadline_hours):
                ways.append(scale)
        elif c.budget_usd is not None:
            overall = first(replace(c, budget_usd=None, deadline_hours=None), Objective.COST)
            if overall is not None:
                named = "" if ways and ways[0].find(_option_text(overall)) >= 0 else \
                    f": the cheapest is {_option_text(overall)}"
                others = _limits_text(replace(c, budget_usd=None, deadline_hours=None))
                within = f" within {others}" if others else ""
                ways.append(f"whatever the deadline, no option costs {usd_text(c.budget_usd)} or less{within}{named}")
                if more := _cheaper_on_more_gpus(first, replace(c, budget_usd=None, deadline_hours=None), overall):
                    ways.append(more)
    if c.max_co2e_kg is not None:
        cleanest = first(replace(c, max_co2e_kg=None), Objective.CARBON)
        if cleanest is not None and cleanest.energy is not None:
            ways.append(f"the least-emitting option without the cap is {_option_text(cleanest)}, "
                        f"{cleanest.energy.co2e_kg:.3g} kg CO2e: raise constraints.max_co2e_kg to "
                        f"{_round_up(cleanest.energy.co2e_kg):g}")
    if not ways:
        ways.append(f"only dropping every limit opens an option; the fastest is {_option_text(anything)}")
    together = " together" if " and " in _limits_text(c) else ""
    return CodedWarning("constraints-conflict",
                        f"No option meets {_limits_text(c)}{together}; " + "; ".join(ways) + ".")


def _scale_needed(first: Callable[[Constraints, Objective], RankedOption | None], c: Constraints,
                  deadline_hours: float) -> str:
    """Say, where no GPU limit ranked meets the deadline, the job's GPU-hours on the fastest option at the widest
    limit ranked and the GPUs that would meet the deadline at that efficiency (a floor: scaling only loses beyond
    it); "" where that limit adds nothing. "pretrain llama 3 70b on 15t tokens within 3 months" was told only to move
    its deadline to 429,428 h, on 8 GPUs."""
    widest = max(widened_limits(c.max_gpus), default=c.max_gpus)
    if widest <= c.max_gpus or (top := first(replace(c, max_gpus=widest), Objective.TIME)) is None:
        return ""
    gpus = top.gpu_count * top.nodes
    gpu_hours = _judged_hours(top) * gpus
    needed = math.ceil(gpu_hours / deadline_hours)
    if needed <= widest:
        return ""
    return (f"with up to {widest} GPUs, the most widened to, the fastest is {_option_text(top)}: the job is about "
            f"{gpu_hours:,.0f} {top.gpu} GPU-hours, so meeting the {deadline_text(deadline_hours)} deadline takes at "
            f"least {needed:,} such GPUs (at that option's efficiency; more GPUs only lose to communication), a "
            "cluster beyond the machines ranked: reserved capacity, or a smaller model or fewer tokens")


def _beyond_limit(first: Callable[[Constraints, Objective], RankedOption | None], c: Constraints,
                  accept: Callable[[RankedOption], bool] = lambda _: True) -> tuple[int, RankedOption] | None:
    """Return the first wider GPU limit (wider.widened_limits) whose cheapest option within `c` uses more GPUs than
    c.max_gpus (a limit to raise, not the one it has) and is accepted, with that option; None where none is."""
    for wider in widened_limits(c.max_gpus):
        more = first(replace(c, max_gpus=wider), Objective.COST)
        if more is not None and more.gpu_count * more.nodes > c.max_gpus and accept(more):
            return wider, more
    return None


def _more_gpus(first: Callable[[Constraints, Objective], RankedOption | None], c: Constraints, does: str) -> str:
    """Say the cheapest option within `c` on more GPUs than c.max_gpus and the limit that ranks it; "" where none is
    found."""
    if (found := _beyond_limit(first, c)) is None:
        return ""
    wider, more = found
    return (f"with up to {wider} GPUs the cheapest that {does} is {_option_text(more)}: raise "
            f"constraints.max_gpus to {more.gpu_count * more.nodes}")


def _cheaper_on_more_gpus(first: Callable[[Constraints, Objective], RankedOption | None], c: Constraints,
                          cheapest: RankedOption) -> str:
    """Say the cheapest option on more GPUs than c.max_gpus where it costs at most CHEAPER_SHARE of `cheapest`, the
    cheapest within the limit, and the limit that ranks it; "" where none does. A 70B full fine-tune that 8 GPUs hold
    only offloaded costs $6,107 over 1,214 h there, and $1,285 on 16 B200s: a budget's advice names the latter."""
    found = _beyond_limit(first, c, lambda more: _judged_cost(more) <= CHEAPER_SHARE * _judged_cost(cheapest))
    if found is None:
        return ""
    wider, more = found
    return f"with up to {wider} GPUs the cheapest is {_option_text(more)}: raise constraints.max_gpus to " \
           f"{more.gpu_count * more.nodes}"


def gpus_warning(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation], *,
                 unrented: Callable[[], tuple[str, ...]] = tuple) -> CodedWarning | None:
    """Return `gpus-exclude-all` when constraints.gpus leaves no option and another GPU would do.

    `rank` ranks a job as the recommendation did, without this check. `unrented` gives the named GPUs no
    cloud in the catalog rents (a GTX 1080 Ti, a Titan): a user naming one most likely has it, so the
    warning says how to rank it as owned, and what one such card gives at its power cost.
    """
    c = job.constraints
    if rec.options or not c.gpus:
        return None
    found = rank(replace(job, constraints=replace(c, gpus=()), limit=1))
    if not found.options:
        return None
    top = found.options[0]
    return CodedWarning("gpus-exclude-all", (
        f"No machine with {', '.join(c.gpus)} meets the job as given within its other constraints; "
        f"{_owned_text(job, rank, unrented())}without constraints.gpus the top option is {_option_text(top)}: "
        f"add {top.gpu} to constraints.gpus, or leave it out to consider every GPU."))


def _owned_text(job: JobSpec, rank: Callable[[JobSpec], Recommendation], unrented: tuple[str, ...]) -> str:
    """Return what owning the first GPU no cloud rents would give (one card, at its power cost), or ''."""
    if not unrented:
        return ""
    slug = unrented[0]
    c = job.constraints
    owned = rank(replace(job, constraints=replace(c, owned_gpus=(*c.owned_gpus, OwnedGpus(slug, 1))), limit=1))
    names = ", ".join(unrented)
    text = (f"no cloud in the catalog rents {names}. If the team has one, say so in constraints.owned_gpus "
            f"(CLI --owned 1x{slug}) and it is ranked at its power cost")
    first = next((o for o in owned.options if o.pricing.value == "owned"), None)
    if first is None:
        return f"{text}, though one card does not hold or run the job within the constraints; "
    return f"{text}: {first.gpu_count} x {slug}, {_power_text(first)}{_run_as(first)}. Otherwise, "


def _power_text(o: RankedOption) -> str:
    """Return what an owned option gives: "H for $C of power", or without a sample count (hours 0) its iteration at
    its hourly power cost ("0.0 min for $0.0000 of power" before)."""
    return figures_text(o, _judged_hours(o), _judged_cost(o), spent=" of power")


def _run_as(o: RankedOption) -> str:
    """Return how a searched option runs the job, in brackets ("optimizer offloaded to host memory ..."), or ''.

    One card that holds a job only offloaded or with adapters is no answer without the change: a user reading
    "one rtx-3090, 19.0 h" alone would plan on the job as given."""
    return "" if o.parallelism is None else f" ({strategy_text(o.parallelism, nodes=o.nodes)})"


MOST_UNRENTED_SAID = 6  # the 24 GB cards no cloud rents are five; each said costs one ranking


def unranked_gpus_warning(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation],
                          unranked: tuple[str, ...]) -> CodedWarning | None:
    """Return `gpus-not-rented` where constraints.gpus names cards no cloud rents beside ones that were ranked ("is
    the 4090 or the a100 faster"): the options leave them out, so say what the first would give as the team's own
    card (one of it alone, at its power cost). `unranked`: those cards, neither rented nor owned."""
    if not rec.options or not unranked:
        return None
    top, c, figures = rec.options[0], job.constraints, []
    for slug in unranked[:MOST_UNRENTED_SAID]:  # "a 24gb gpu": the 3090, the 4090, the A10, the Titan RTX, each
        alone = replace(c, gpus=(slug,), owned_gpus=(*c.owned_gpus, OwnedGpus(slug, 1)), deadline_hours=None,
                        budget_usd=None)
        found = rank(replace(job, constraints=alone, limit=1))
        first = next((o for o in found.options if o.pricing.value == "owned"), None)
        figures.append(f"one {slug} alone does not hold or run the job" if first is None else
                       f"one {slug}, {_power_text(first)}{_run_as(first)}")
    more = f" ({len(unranked) - MOST_UNRENTED_SAID} more not shown)" if len(unranked) > MOST_UNRENTED_SAID else ""
    text = (f"No cloud in the catalog rents {', '.join(unranked)}, so the options leave it out. If the team has one, "
            f"say so in constraints.owned_gpus (CLI --owned 1x{unranked[0]}) and it is ranked at its power cost: "
            f"{'; '.join(figures)}{more}")
    return CodedWarning("gpus-not-rented", f"{text}; against "
                                           f"{figures_text(top, top.training_hours, top.training_cost_usd)} for "
                                           "the top option.")


def fused_loss_opens_warning(job: JobSpec, rec: Recommendation,
                             rank: Callable[[JobSpec], Recommendation]) -> CodedWarning | None:
    """Return `fused-loss-opens` when nothing fits with the plain loss and the fused one opens options.

    A language model's logits can be what no machine holds (Llama 3 8B at 131,072 tokens: 17 billion
    values a sample, in fp32 with their gradients); the fused linear cross-entropy never holds them
    (layers/loss.py). `rank` ranks a job as the recommendation did, without this check.
    """
    if rec.options:
        return None
    fused = fused_loss_job(job)
    if fused is None:
        return None
    found = rank(replace(fused, limit=1))
    if not found.options:
        return None
    return CodedWarning("fused-loss-opens", (
        f"Nothing fits with the plain cross-entropy, which holds the model's logits in fp32 with their gradients. "
        f"A fused linear cross-entropy, which never holds them (Liger Kernel's LigerFusedLinearCrossEntropyLoss; "
        f"Hugging Face Trainer use_liger_kernel=True), opens options; the first is {_option_text(found.options[0])}. "
        f"If the run uses it, say training.loss: fused_linear_cross_entropy (CLI --loss "
        f"fused_linear_cross_entropy, Slack liger)."))


FUSED_OPTIMIZER_GAIN = 0.05  # said where the fused update's first option is this much cheaper (or faster, by time)
FUSED_OPTIMIZER_QUICKER = 2.0 / 3.0  # or no dearer and this much of the time (wider.QUICKER_SHARE's 1.5x)


def fused_optimizer_warning(job: JobSpec, rec: Recommendation,
                            rank: Callable[[JobSpec], Recommendation]) -> CodedWarning | None:
    """Return `fused-optimizer-opens` where the top option offloads the optimizer state to host memory because Adam's
    foreach update (torch.optim's CUDA default) makes an fp32 copy of every trainable weight at the step, and the same
    update as one fused kernel, which makes none, ranks a first option FUSED_OPTIMIZER_GAIN better by the objective.
    "a full fine-tune of phi-3 mini on one a100": offloaded, 38.3 h, PCIe-bound; fused, 18 h on the same card."""
    training, top = job.training, rec.options[0] if rec.options else None
    if (top is None or top.parallelism is None or not top.parallelism.offload_optimizer
            or training.framework is not Framework.PYTORCH
            or training.optimizer not in (Optimizer.ADAM, Optimizer.ADAMW)
            or training.optimizer_implementation is OptimizerImplementation.FUSED):
        return None
    found = rank(replace(job, training=replace(training, optimizer_implementation=OptimizerImplementation.FUSED),
                         limit=1))
    first = found.options[0] if found.options else None
    judged = _judged_hours if job.objective is Objective.TIME else _judged_cost
    # better by the objective, or as cheap and far quicker (an offloaded L4 at 84 h against a fused A100 at 20 h)
    quicker = first is not None and _judged_cost(first) <= _judged_cost(top) and \
        _judged_hours(first) <= _judged_hours(top) * FUSED_OPTIMIZER_QUICKER
    if first is None or (judged(first) > judged(top) * (1 - FUSED_OPTIMIZER_GAIN) and not quicker):
        return None
    name = torch_name(training.optimizer)
    return CodedWarning("fused-optimizer-opens", (
        f"The top option offloads the optimizer state to host memory ({hours_text(_judged_hours(top))} for "
        f"{usd_text(_judged_cost(top))}): at the update, {name}'s "
        f"{'foreach' if training.optimizer_implementation is OptimizerImplementation.FOREACH else 'per-tensor'} "
        f"path makes fp32 copies of the weights that no card in scope holds beside the rest. The same update as one "
        f"fused kernel makes none (torch.optim.{name}(..., fused=True); the Hugging Face Trainer's optim "
        f"\"adamw_torch_fused\", its default on torch 2.8 and later; training.optimizer_implementation: fused); its "
        f"first option is {_option_text(first)}."))


COMPARED_MODELS_MOST = 4  # "a100 vs h100 vs l40s" compares; a longer list is the cards a team accepts, a filter


def compared_gpus_warning(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation],
                          named: frozenset[str], unranked: tuple[str, ...]) -> CodedWarning | None:
    """Return `gpus-compared` where constraints.gpus names several GPU models (`named`: its slugs) and the options
    hold only some of them: the first option of each model left out, ranked on its own ("compare a100 vs h100 for
    ..." listed ten H100 machines and no A100). Models no cloud rents (`unranked`) are `gpus-not-rented`'s."""
    models = sorted({model_word(slug) for slug in named} - {model_word(slug) for slug in unranked})
    shown = {model_word(o.gpu) for o in rec.options}
    missing = [m for m in models if m not in shown]
    if not rec.options or not 2 <= len(models) <= COMPARED_MODELS_MOST or not missing:
        return None
    figures = []
    for model in missing:
        cards = tuple(sorted(slug for slug in named if model_word(slug) == model))
        found = rank(replace(job, constraints=replace(job.constraints, gpus=cards), limit=1))
        figures.append(f"{model}, {_option_text(found.options[0])}" if found.options else
                       f"{model}, no option that meets the constraints")
    return CodedWarning("gpus-compared", (
        f"The options are all {', '.join(sorted(shown))}; the first of each other GPU named, ranked on its own: "
        f"{'; '.join(figures)}."))
