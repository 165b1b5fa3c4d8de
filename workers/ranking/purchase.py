"""What would we buy: cards and a host for the job, against the best rental, with the break-even in hours; pure.

Buying is its own question (domain.md §6), asked with "onprem" in `constraints.providers`, and never
ranked against rentals. For each card on sale that holds the job, in 1, 2, 4 or 8:
    purchase      = card price x cards + host price (the assumptions' host)
    power per job = card watts x cards x job hours x USD per kWh / 1000
    saving per job = best rental's cost for this job - power per job
    break-even    = purchase / saving per job runs of this job, x job hours = hours of use
    hours of use in the lifetime = lifetime years x 8760 x utilisation
A machine pays off when its break-even hours fall inside the hours of use it will see; when renting
is no dearer than the power, it never does. The host's own draw is left out (the cards dominate).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from catalog.types import OnPremCard, Pricing, Provider
from workers.ranking.costing import HOURS_PER_YEAR, onprem_gpu_counts, onprem_instance_type
from workers.ranking.runplan import plan_run
from workers.sizing.spec import JobSpec

PURCHASE_OPTIONS_KEPT = 10


@dataclass(frozen=True)
class BestRental:
    """The cheapest rented option that meets the job's constraints, the yardstick for buying."""

    cost_usd: float
    hours: float
    label: str  # "aws g5.xlarge us-east-1 spot"


@dataclass(frozen=True)
class PurchaseOption:
    """One machine a team could buy for the job, with what it costs and when it pays off."""

    gpu: str
    gpu_count: int
    instance_type: str  # "onprem-4x-rtx-3090"
    cards_usd: float
    host_usd: float
    purchase_usd: float
    power_watts: float
    electricity_usd_per_kwh: float
    job_hours: float
    power_cost_usd: float  # for one run of the job
    rental_cost_usd: float | None  # the best rental for one run; None: no rental meets the constraints
    rental: str
    break_even_runs: float | None  # None: never (renting is no dearer than the power), or no rental
    break_even_hours: float | None  # hours of use
    lifetime_years: float
    utilisation: float
    hours_of_use: float  # in the lifetime, at that utilisation
    pays_off: bool
    meets_deadline: bool
    source: str
    as_of: str
    strategy: str = ""  # how the job runs on these cards where it needs more than the job as given
    # what one run costs on them: its share of the price over the hours of use (lifetime x utilisation), plus power
    run_cost_usd: float = 0.0
    samples_per_second: float = 0.0  # the job's throughput on them: the order where the run's hours are unknown


def purchase_options(job: JobSpec, *, cards: Mapping[str, OnPremCard], hours: Mapping[tuple[str, int], float],
                     best_rental: BestRental | None, max_gpus: int,
                     strategies: Mapping[tuple[str, int], str] | None = None,
                     throughput: Mapping[tuple[str, int], float] | None = None) -> tuple[PurchaseOption, ...]:
    """Return the machines worth pricing for purchase, those that pay off soonest first (with no rental, those whose
    run costs least over their life, `run_cost_usd`).

    `hours`: the training hours of the job on n of a card, for each (card, n) that holds it, 0 where the data set's
    size is not given (the cards that hold it are priced all the same, with no run's time, power or break-even:
    "what gpu should we buy to fine-tune llama 3 8b with lora" answered "No option"); `strategies`: how it runs
    there, in words, where the strategy search found the way (strategy_ranking); `throughput`: the job's samples a
    second there, the order where the hours are unknown.
    """
    a = job.constraints.onprem
    hours_of_use = a.lifetime_years * HOURS_PER_YEAR * a.utilisation
    found: list[PurchaseOption] = []
    for gpu in sorted(cards):
        card = cards[gpu]
        for n in onprem_gpu_counts(max_gpus):
            training_hours = hours.get((gpu, n))
            if training_hours is None:
                continue
            wall_hours = plan_run(job, training_hours=training_hours, provider=Provider.ONPREM,
                                  family=f"onprem-{gpu}", gpu_count=n, pricing=Pricing.OWNED, network_gbit_per_s=0.0,
                                  local_disk_holds_data=True).wall_hours if training_hours > 0 else 0.0
            power_usd = card.power_watts * n * wall_hours * a.electricity_usd_per_kwh / 1000.0
            purchase_usd = card.price_usd * n + a.host_price_usd
            runs, break_even = _break_even(purchase_usd, power_usd, wall_hours, best_rental)
            deadline = job.constraints.deadline_hours
            found.append(PurchaseOption(
                gpu=gpu, gpu_count=n, instance_type=onprem_instance_type(gpu, n), cards_usd=card.price_usd * n,
                host_usd=a.host_price_usd, purchase_usd=purchase_usd, power_watts=card.power_watts * n,
                electricity_usd_per_kwh=a.electricity_usd_per_kwh, job_hours=wall_hours,
                power_cost_usd=power_usd, rental_cost_usd=best_rental.cost_usd if best_rental else None,
                rental=best_rental.label if best_rental else "", break_even_runs=runs, break_even_hours=break_even,
                lifetime_years=a.lifetime_years, utilisation=a.utilisation, hours_of_use=hours_of_use,
                pays_off=break_even is not None and break_even <= hours_of_use,
                meets_deadline=deadline is None or wall_hours <= deadline,
                source=card.source, as_of=card.as_of, strategy=(strategies or {}).get((gpu, n), ""),
                run_cost_usd=purchase_usd * wall_hours / max(hours_of_use, 1.0) + power_usd,
                samples_per_second=(throughput or {}).get((gpu, n), 0.0)))
    return _ordered(found)


def _break_even(purchase_usd: float, power_usd: float, wall_hours: float,
                rental: BestRental | None) -> tuple[float | None, float | None]:
    """Return the runs and hours of use after which buying costs less than renting; (None, None) where it never
    does (renting no dearer than the power) or there is no rental to compare."""
    if rental is None or rental.cost_usd <= power_usd or wall_hours <= 0:
        return None, None
    runs = purchase_usd / (rental.cost_usd - power_usd)
    return runs, runs * wall_hours


def against_rental(options: tuple[PurchaseOption, ...], rental: BestRental) -> tuple[PurchaseOption, ...]:
    """Return the purchase options held against `rental` instead (their break-even, pay-off and order redone)."""
    held = []
    for p in options:
        runs, break_even = _break_even(p.purchase_usd, p.power_cost_usd, p.job_hours, rental)
        held.append(replace(p, rental_cost_usd=rental.cost_usd, rental=rental.label, break_even_runs=runs,
                            break_even_hours=break_even,
                            pays_off=break_even is not None and break_even <= p.hours_of_use))
    return _ordered(held)


def _sample_cost(p: PurchaseOption) -> float:
    """Return what a sample costs on the cards over their life (price spread over the hours of use, and power), the
    order of a run whose hours are unknown (it is the run's cost over its samples where they are known)."""
    if p.samples_per_second <= 0:
        return math.inf
    per_hour = p.purchase_usd / max(p.hours_of_use, 1.0) + p.power_watts * p.electricity_usd_per_kwh / 1000.0
    return per_hour / (p.samples_per_second * 3600.0)


def _ordered(found: list[PurchaseOption]) -> tuple[PurchaseOption, ...]:
    """Return the options worth listing, in order, the least to spend kept last."""
    # Against a rental, those that pay off soonest; with none to compare (the purchase question alone), the least a
    # run costs over the cards' life: the price spread over the hours they are used (lifetime x utilisation, as the
    # break-even assumes) plus power. Cheapest first put 1 x RTX 4060 first for ResNet-50 on ImageNet, 10 days a run,
    # where $250 more buys an RTX 5070 at 4.3 days.
    found.sort(key=lambda p: (not p.meets_deadline, math.inf if p.break_even_hours is None else p.break_even_hours,
                              p.run_cost_usd if p.job_hours > 0 else _sample_cost(p), p.purchase_usd, p.gpu,
                              p.gpu_count))
    kept = found[:PURCHASE_OPTIONS_KEPT]
    least = min(found, key=lambda p: (not p.meets_deadline, p.purchase_usd, p.job_hours), default=None)
    if least is not None and least not in kept:  # the least to spend stays in the list, last
        kept[-1] = least
    return tuple(kept)
