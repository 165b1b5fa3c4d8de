"""What a budget buys beyond the cheapest run (`budget-buys-speed`).

A cost-ranked answer with a budget and no deadline puts the fewest, cheapest GPUs first: "ViT-B/16 on
ImageNet-21k for 90 epochs, budget $5,000" answered one L40S for 42 days at $555, while eight H100s finish in
five days for $1,193, well within the budget the user named. The options stay ranked by cost, as asked; the
answer names, where the budget buys a run at least twice as fast, the first option by cost and time together
(the knee of the front), the fastest within the budget where it is clearly quicker still, and the field that
ranks by either. (`speed-for-little` already names a quicker run for about the same money; this one is said where the
quicker run costs more but the budget holds it.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from workers.ranking.recommendation import Recommendation
from workers.ranking.run_words import hours_text, usd_text
from workers.ranking.wider import option_text
from workers.sizing.requirements import CodedWarning
from workers.sizing.spec import JobSpec, Objective

# A run this long is one a team would shorten if the budget allowed [rule of thumb: a day, the span past which a
# run no longer fits between two working days]; shorter runs are left to `speed-for-little`.
BUDGET_SPEED_MIN_HOURS = 24.0
# The fastest option within the budget is named where it takes at most this share of the cheapest's time [rule of
# thumb: twice as fast, well beyond the estimate's own error (README, accuracy)].
BUDGET_SPEED_SHARE = 0.5
# The fastest is named beside the knee of the front only where it is this much quicker [rule of thumb: 10%, within
# the estimate's own error below it]: the same machine on demand beside its spot offer is not worth a line.
KNEE_TIME_SHARE = 0.9


def budget_speed_warning(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation]
                         ) -> CodedWarning | None:
    """Return `budget-buys-speed` for a cost-ranked answer with a budget and no deadline whose top option runs over
    BUDGET_SPEED_MIN_HOURS, where the fastest option within the budget (`rank` ranks a job as the recommendation
    did) takes at most BUDGET_SPEED_SHARE of its time; else None."""
    budget = job.constraints.budget_usd
    if (job.objective is not Objective.COST or budget is None or job.constraints.deadline_hours is not None
            or not rec.options):
        return None
    top = rec.options[0]
    if top.owned or top.training_hours <= BUDGET_SPEED_MIN_HOURS or top.training_cost_usd <= 0:
        return None
    found = rank(replace(job, objective=Objective.TIME, limit=1))
    fastest = found.options[0] if found.options else None
    if fastest is None or fastest.training_hours > BUDGET_SPEED_SHARE * top.training_hours:
        return None
    knee = rank(replace(job, objective=Objective.BALANCED, limit=1))
    middle = knee.options[0] if knee.options else None
    named = [("ranked by cost and time together the first", middle)] if middle is not None and (
        middle.training_hours <= BUDGET_SPEED_SHARE * top.training_hours) else []
    if not named or fastest.training_hours < KNEE_TIME_SHARE * named[0][1].training_hours:
        named.append(("the fastest", fastest))  # on-demand beside spot for a few minutes less is not named
    said = "; ".join(f"{what} is {o.provider} {option_text(o)}, {top.training_hours / o.training_hours:.1f}x as fast"
                     for what, o in named)
    return CodedWarning("budget-buys-speed", (
        f"The cheapest option takes {hours_text(top.training_hours)} for {usd_text(top.training_cost_usd)}, "
        f"{top.training_cost_usd / budget:.0%} of the {usd_text(budget)} budget; within the budget {said}. The "
        "options are ranked by cost, as asked; objective: balanced (CLI --objective balanced) ranks by cost and "
        "time together, time (CLI --objective time) the fastest within the budget first."))
