"""Hyper-parameter searches: grid or random, and trials side by side on small GPUs or in turn on a large one.

domain.md §7: a search multiplies a job; a grid over at most about 3 parameters (values on a log
scale), random search beyond that; N trials cost N jobs, which can run in parallel on several
GPUs. domain.md §4: several small GPUs let a team run several experiments at once, which one
big GPU does not. So a sweep is shown two ways:
- sequential: every trial in turn on the fastest single GPU in scope ("one large GPU"): of the machines
  within TIME_TIE of the fastest, the cheapest (the same H100 on spot rather than on demand, whose run is
  only its restarts' few minutes shorter);
- parallel: one trial per GPU on the cheapest machine of several smaller GPUs (each cheaper per
  hour than the large one; within COST_TIE of the cheapest, the fastest), in waves of as many
  trials as the machine has GPUs. A trial's time is the job's estimate on one such GPU
  (requirements.per_gpu), and the machine is paid for the whole wall-clock, idle GPUs of a last,
  partial wave included.
Either way one machine is held for the whole sweep: it starts once (provisioning, boot, environment,
staging the data: the option's start_up) and then runs the trials, each with the checkpoints and
spot restarts its option's run has (that run's hours beyond start-up over its training steps).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from workers.ranking.recommendation import RankedOption
from workers.review.budget import TIME_TIE, Sweep, SweepKind
from workers.sizing.requirements import PerGpu

# domain.md §7: "a grid over at most about 3 parameters (values on a log scale), random search beyond".
GRID_MAX_PARAMETERS = 3

SEQUENTIAL, PARALLEL = "sequential", "parallel"
# Small-GPU machines whose sweep costs within this share of the cheapest are as good on cost: the fastest of
# them is shown (two T4s for $2.23 in 9.3 h would otherwise beat four for $2.25 in 4.6 h). The ranking's
# own ties are exact; a review's reader weighs a 1% saving against half the wall-clock.
COST_TIE = 0.05
# Why a schedule is missing.
NO_SINGLE_GPU = "no-single-gpu"  # no single-GPU machine in scope runs a trial
NO_SMALL_GPUS = "no-small-gpus"  # no machine of several GPUs, each cheaper than the large one, runs a trial
# A trial on one GPU is dearer than on a machine of several and over DOMINATED_SLOWER x as slow: in turn on one GPU is
# no schedule to weigh (a Llama 3 8B full fine-tune's two runs read "in turn on one H100, 15.2 days, $464" beside
# 8 x B200's 10 h for $191). A trial on a few small GPUs barely faster than the large one leaves the comparison.
SINGLE_GPU_DOMINATED = "single-gpu-dominated"
DOMINATED_SLOWER = 2.0


@dataclass(frozen=True)
class SweepAdvice:
    """Which search suits this many parameters, and whether the job's choice follows it."""

    parameters: int
    kind: SweepKind  # what the job says it runs
    advised: SweepKind
    follows_advice: bool
    log_scale: bool  # grid values belong on a log scale (learning rates, weight decay ...)
    values_per_parameter: float  # a grid's trials ** (1 / parameters); 0.0 for random search


@dataclass(frozen=True)
class SweepSchedule:
    """All trials on one machine: at once (one per GPU) or one after another."""

    mode: str  # SEQUENTIAL or PARALLEL
    provider: str
    instance_type: str
    region: str
    pricing: str
    gpu: str
    gpu_count: int  # GPUs on the machine
    machine_price_per_hour_usd: float  # price plus any block storage, per hour of the machine
    trials_at_once: int
    waves: int
    trial_hours: float
    wall_hours: float
    cost_usd: float


@dataclass(frozen=True)
class SweepComparison:
    """A sweep's trials on several small GPUs at once against one after another on one large GPU."""

    trials: int
    sequential: SweepSchedule | None
    parallel: SweepSchedule | None
    sequential_reason: str = ""
    parallel_reason: str = ""
    speedup: float = 0.0  # sequential wall-clock / parallel wall-clock; 0.0 when either is missing
    extra_cost_usd: float = 0.0  # parallel cost - sequential cost (negative: parallel is cheaper)
    advice: SweepAdvice | None = None


def advise_sweep(sweep: Sweep, *, trials: int) -> SweepAdvice:
    """Return the search domain.md §7 advises for the sweep's parameter count."""
    advised = SweepKind.GRID if sweep.parameters <= GRID_MAX_PARAMETERS else SweepKind.RANDOM
    per_parameter = trials ** (1.0 / sweep.parameters) if sweep.kind is SweepKind.GRID else 0.0
    return SweepAdvice(parameters=sweep.parameters, kind=sweep.kind, advised=advised,
                       follows_advice=sweep.kind is advised, log_scale=advised is SweepKind.GRID,
                       values_per_parameter=per_parameter)


def _machine_rate_usd_per_hour(option: RankedOption) -> float:
    """Return what the machine costs per hour held: its price plus its block storage spread over time."""
    if option.training_hours > 0:
        return option.price_per_hour_usd + option.storage_cost_usd / option.training_hours
    return option.price_per_hour_usd


def _start_up_hours(option: RankedOption) -> float:
    """Return the option's wait before its first step (0 where its run does not say), within its hours."""
    return min(option.start_up_hours, option.training_hours)


def _run_overhead(option: RankedOption) -> float:
    """Return the option's run hours after start-up over its training steps' hours (>= 1: checkpoints,
    spot restarts); 1 where the steps' hours are not given."""
    if option.compute_hours <= 0:
        return 1.0
    return max(1.0, (option.training_hours - _start_up_hours(option)) / option.compute_hours)


def _sequential(options: Sequence[RankedOption], *, trials: int) -> SweepSchedule | None:
    # A sweep's trials each take one GPU of one machine: options spread over several machines are no schedule.
    singles = [o for o in options if o.gpu_count == 1 and o.nodes == 1 and o.fits and o.training_hours > 0]
    if not singles:
        return None
    fastest = min(o.training_hours for o in singles)
    large = min((o for o in singles if o.training_hours <= fastest * (1.0 + TIME_TIE)),
                key=lambda o: (o.training_cost_usd, o.training_hours, o.provider, o.instance_type, o.region, o.pricing))
    if any(o.gpu_count > 1 and o.fits and 0 < o.training_hours * DOMINATED_SLOWER < large.training_hours
           and o.training_cost_usd < large.training_cost_usd for o in options):
        return None
    rate = _machine_rate_usd_per_hour(large)
    trial_hours = large.training_hours - _start_up_hours(large)
    wall_hours = _start_up_hours(large) + trials * trial_hours
    return SweepSchedule(
        mode=SEQUENTIAL, provider=large.provider, instance_type=large.instance_type, region=large.region,
        pricing=large.pricing, gpu=large.gpu, gpu_count=1, machine_price_per_hour_usd=rate, trials_at_once=1,
        waves=trials, trial_hours=trial_hours, wall_hours=wall_hours, cost_usd=rate * wall_hours,
    )


def _parallel(options: Sequence[RankedOption], per_gpu: Sequence[PerGpu], *, trials: int,
              large_rate_usd_per_hour: float) -> SweepSchedule | None:
    one_gpu_hours = {p.gpu: p.training_hours for p in per_gpu
                     if p.gpu_count == 1 and p.fits and p.training_hours > 0}
    # The fastest within COST_TIE of the least cost wins (ties by cost, then machine); only its schedule
    # is made (thousands of options a job).
    found: list[tuple[tuple[float, float, str, str, str, str], RankedOption, float, int, int, float]] = []
    for o in options:
        if o.gpu_count < 2 or o.nodes != 1 or not o.fits:
            continue
        steps_hours = one_gpu_hours.get(o.gpu)
        if steps_hours is None:
            continue
        rate = _machine_rate_usd_per_hour(o)
        if rate / o.gpu_count >= large_rate_usd_per_hour:
            continue  # not a smaller GPU: as dear per GPU-hour as the large one
        at_once = min(o.gpu_count, trials)
        waves = math.ceil(trials / at_once)
        trial_hours = steps_hours * _run_overhead(o)
        wall_hours = _start_up_hours(o) + waves * trial_hours
        found.append(((rate * wall_hours, wall_hours, o.provider, o.instance_type, o.region, o.pricing),
                      o, rate, at_once, waves, trial_hours))
    if not found:
        return None
    least = min(f[0][0] for f in found)
    best = min((f for f in found if f[0][0] <= least * (1.0 + COST_TIE)),
               key=lambda f: (f[0][1], f[0][0], *f[0][2:]))
    (cost_usd, wall_hours, *_), o, rate, at_once, waves, trial_hours = best
    return SweepSchedule(
        mode=PARALLEL, provider=o.provider, instance_type=o.instance_type, region=o.region,
        pricing=o.pricing, gpu=o.gpu, gpu_count=o.gpu_count, machine_price_per_hour_usd=rate,
        trials_at_once=at_once, waves=waves, trial_hours=trial_hours, wall_hours=wall_hours, cost_usd=cost_usd,
    )


def _runs_on_one(options: Sequence[RankedOption]) -> bool:
    """Return whether a single-GPU machine in scope runs a trial at all."""
    return any(o.gpu_count == 1 and o.nodes == 1 and o.fits and o.training_hours > 0 for o in options)


def compare_sweep(options: Sequence[RankedOption], per_gpu: Sequence[PerGpu], *, trials: int,
                  sweep: Sweep | None = None) -> SweepComparison:
    """Compare the trials one per GPU on a machine of small GPUs against in turn on the fastest single GPU."""
    sequential = _sequential(options, trials=trials)
    large_rate = math.inf if sequential is None else sequential.machine_price_per_hour_usd
    parallel = _parallel(options, per_gpu, trials=trials, large_rate_usd_per_hour=large_rate)
    speedup = extra_cost_usd = 0.0
    if sequential is not None and parallel is not None and parallel.wall_hours > 0:
        speedup = sequential.wall_hours / parallel.wall_hours
        extra_cost_usd = parallel.cost_usd - sequential.cost_usd
    return SweepComparison(
        trials=trials, sequential=sequential, parallel=parallel,
        sequential_reason="" if sequential is not None else NO_SINGLE_GPU if not _runs_on_one(options)
        else SINGLE_GPU_DOMINATED,
        parallel_reason="" if parallel is not None else NO_SMALL_GPUS,
        speedup=speedup, extra_cost_usd=extra_cost_usd,
        advice=advise_sweep(sweep, trials=trials) if sweep is not None else None,
    )
