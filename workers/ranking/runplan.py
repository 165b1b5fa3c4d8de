"""One machine's whole run for a job: training plus start-up, staging, checkpoints, billing and spot restarts.

The ranking costs an option at price x `billed_hours` (plus block storage over `wall_hours`), sorts
by the expected figures, and holds the deadline and budget to the `checked_*` figures: the expected
ones on demand and on owned cards, the stated percentile on spot (spot.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog.types import Pricing, Provider
from workers.ranking.runcost import (
    DEFAULT_CHECKPOINT_EVERY_HOURS,
    MIN_CHECKPOINT_EVERY_HOURS,
    SECONDS_PER_HOUR,
    Checkpoints,
    StartUp,
    billed_hours,
    checkpoints,
    start_up,
    storage_write_mb_per_s,
)
from workers.ranking.spot import (
    InterruptionRate,
    SpotRun,
    spot_expected,
    spot_figures,
    spot_run,
    young_daly_interval_hours,
)
from workers.sizing.checkpoint import checkpoint_bytes, checkpoint_parameters, pretrained_bytes
from workers.sizing.spec import JobSpec

if TYPE_CHECKING:
    from workers.ranking.catalog_index import Machine


@dataclass(frozen=True)
class RunPlan:
    """A run's hours, each part apart, and what the ranking bills and checks."""

    training_hours: float
    start_up: StartUp
    checkpoints: Checkpoints
    wall_hours: float  # expected, request to last step
    billed_hours: float  # expected
    checked_hours: float  # held to the deadline: expected, or the percentile on spot
    checked_billed_hours: float  # held to the budget
    spot: SpotRun | None = None
    rate: InterruptionRate | None = None
    refused: str = ""  # why the run cannot be made this way (spot restarts outpace progress)


@dataclass(frozen=True, init=False)
class MachineParts:
    """What a run's plan takes from the machine alone, whatever the training hours."""

    start_up: StartUp
    write_s: float  # one checkpoint
    every_hours: float  # between checkpoints
    rate: InterruptionRate | None  # on spot
    # The start-up's totals and the rate's MTBI, read once here for the ranking's hot path (run_figures).
    total_s: float
    billed_s: float
    mtbi_hours: float  # the run's: one machine's over the machines it runs on

    def __init__(self, start_up: StartUp, write_s: float, every_hours: float, rate: InterruptionRate | None,
                 machines: int = 1) -> None:
        # Written into the instance's dict: a frozen dataclass's own __init__ sets each field through
        # object.__setattr__, and a ranking builds a hundred of these per job.
        fields = self.__dict__
        fields["start_up"], fields["write_s"], fields["every_hours"] = start_up, write_s, every_hours
        fields["rate"] = rate
        fields["total_s"], fields["billed_s"] = start_up.total_s, start_up.billed_s
        fields["mtbi_hours"] = run_mtbi_hours(rate, machines) if rate is not None else 0.0


def run_mtbi_hours(rate: InterruptionRate, machines: int) -> float:
    """Return the mean time between interruptions of a run on `machines` spot machines at once.

    A synchronous job (data parallel, sharded, split) stops when any of its machines is reclaimed: with
    each machine's share per day p taken as independent, the run's is 1 - (1 - p)^k, so its MTBI is one
    machine's over k.
    """
    return rate.mtbi_hours / max(1, machines)


def machine_parts(job: JobSpec, *, provider: Provider, family: str, gpu_count: int, pricing: Pricing,
                  network_gbit_per_s: float,
                  local_disk_holds_data: bool, rate: InterruptionRate | None = None,
                  staging_cap_mb_per_s: float = 0.0, saved_parameters: int | None = None,
                  writers: int = 1, boot: StartUp | None = None, saved_bytes: int | None = None,
                  machines: int = 1) -> MachineParts:
    """Return the start-up, checkpoint write time, interval and spot rate of a run of the job on one machine.

    `rate` is the machine's spot interruption figure (catalog_index.Machine.rate); unused off spot.
    `saved_parameters` overrides what a checkpoint saves (a layout's adapters, `checkpoint_parameters`
    otherwise); `writers` machines write their shards of it at once (a sharded layout over several).
    `boot`: the start-up of these arguments, where the caller has it already (RunPlanner shares one
    between a machine's on-demand and spot groups); `saved_bytes`: likewise, the bytes one checkpoint writes.
    `machines`: the run's machines of this type, any of which a spot reclaim stops (run_mtbi_hours).
    """
    if boot is None:
        boot = start_up(provider, family, gpu_count=gpu_count, dataset_bytes=job.dataset.size_bytes,
                        network_gbit_per_s=network_gbit_per_s, local_disk_holds_data=local_disk_holds_data,
                        cap_mb_per_s=staging_cap_mb_per_s, weights_bytes=pretrained_bytes(job))
    write_rate = storage_write_mb_per_s(provider, local_disk_holds_data=local_disk_holds_data)
    if saved_bytes is None:
        saved = checkpoint_parameters(job) if saved_parameters is None else saved_parameters
        saved_bytes = checkpoint_bytes(parameters=saved, optimizer=job.training.optimizer.value, ema=job.training.ema)
    write_s = saved_bytes / (write_rate * max(1, writers) * 1e6)
    rate = rate if pricing is Pricing.SPOT else None
    every = job.training.checkpoint_every_hours
    if every is None:
        every = DEFAULT_CHECKPOINT_EVERY_HOURS
        if rate is not None:
            every = max(MIN_CHECKPOINT_EVERY_HOURS,
                        young_daly_interval_hours(checkpoint_write_s=write_s,
                                                  mtbi_hours=run_mtbi_hours(rate, machines)))
    return MachineParts(boot, write_s, every, rate, machines)


# (wall hours, billed hours, checked hours, checked billed hours, the spot run's expected interruptions or
# None off spot, refused)
Figures = tuple[float, float, float, float, float | None, bool]


def run_figures(parts: MachineParts, *, training_hours: float, provider: Provider, percentile: float,
                deadline_hours: float | None = None) -> Figures:
    """Return a run's hours from the machine's parts: the ranking's hot path, no objects built.

    Given `deadline_hours`, a spot run whose expected hours already pass it (so its percentile does too)
    gets NaN for the checked figures: its percentile is not worked out (Shape.checked_hours does, if asked).
    """
    count = max(0, math.ceil(training_hours / parts.every_hours) - 1) if training_hours > 0 else 0
    run_s = training_hours * SECONDS_PER_HOUR + count * parts.write_s
    wall = (parts.total_s + run_s) / SECONDS_PER_HOUR
    billed = billed_hours(provider, parts.billed_s + run_s)
    if parts.rate is None:
        return wall, billed, wall, billed, None, False
    restart_hours, restart_billed_hours = parts.total_s / SECONDS_PER_HOUR, parts.billed_s / SECONDS_PER_HOUR
    if deadline_hours is not None:
        expected = spot_expected(wall, billed, restart_hours, restart_billed_hours, parts.every_hours,
                                 parts.mtbi_hours)
        if expected is None:
            return wall, billed, wall, billed, None, True
        if expected[0] > deadline_hours:
            return expected[0], expected[2], math.nan, math.nan, expected[1], False
    run = spot_figures(wall, billed, restart_hours, restart_billed_hours, parts.every_hours, parts.mtbi_hours,
                       percentile)
    if run is None:
        return wall, billed, wall, billed, None, True
    return run[0], run[2], run[1], run[3], run[4], False


def plan_from_parts(parts: MachineParts, *, training_hours: float, provider: Provider, percentile: float) -> RunPlan:
    """Return the whole run, each part apart, from the machine's parts."""
    wall, billed, checked, checked_billed, _, refused = run_figures(
        parts, training_hours=training_hours, provider=provider, percentile=percentile)
    run = None
    if parts.rate is not None and not refused:  # the same figures, as the option shows them
        count = max(0, math.ceil(training_hours / parts.every_hours) - 1) if training_hours > 0 else 0
        run_s = training_hours * SECONDS_PER_HOUR + count * parts.write_s
        run = spot_run(wall_hours=(parts.total_s + run_s) / SECONDS_PER_HOUR,
                       billed_hours=billed_hours(provider, parts.billed_s + run_s),
                       restart_hours=parts.total_s / SECONDS_PER_HOUR,
                       restart_billed_hours=parts.billed_s / SECONDS_PER_HOUR, interval_hours=parts.every_hours,
                       mtbi_hours=parts.mtbi_hours, percentile=percentile)
    saves = checkpoints(training_hours, every_hours=parts.every_hours, write_s=parts.write_s)
    reason = ""
    if refused and parts.rate is not None:
        reason = (f"restarts after spot interruptions (one every {parts.mtbi_hours:.0f} h on average) "
                  "would cost as much as the run makes between them")
    return RunPlan(training_hours, parts.start_up, saves, wall, billed, checked, checked_billed, run, parts.rate,
                   refused=reason)


def plan_run(job: JobSpec, *, training_hours: float, provider: Provider, family: str, gpu_count: int,
             pricing: Pricing, network_gbit_per_s: float, local_disk_holds_data: bool,
             rate: InterruptionRate | None = None) -> RunPlan:
    """Return the whole run on one machine, from the request to the last step, and what is billed."""
    parts = machine_parts(job, provider=provider, family=family, gpu_count=gpu_count, pricing=pricing,
                          network_gbit_per_s=network_gbit_per_s, local_disk_holds_data=local_disk_holds_data,
                          rate=rate)
    return plan_from_parts(parts, training_hours=training_hours, provider=provider,
                           percentile=job.constraints.spot_percentile)


class RunPlanner:
    """Plans for one job's ranking: each machine's parts worked out once, each shape's figures cheaply.

    The ranking judges thousands of machine shapes; their parts depend on the machine only, so they
    are memoised; a shape keeps its figures and builds its full RunPlan only when it is shown.
    """

    def __init__(self, job: JobSpec) -> None:
        self.job = job
        self.percentile = job.constraints.spot_percentile
        self._parts: dict[tuple[Provider, str, int, Pricing, float, bool, InterruptionRate | None, float, int | None,
                                int], MachineParts] = {}
        self._groups: dict[tuple[int, bool, float, int | None, int, int], MachineParts] = {}
        self._boots: dict[tuple[Provider, str, int, float, bool, float], StartUp] = {}
        self._saved = checkpoint_parameters(job)  # what a checkpoint of the job's own layout saves
        self._saved_bytes: dict[int, int] = {}  # the bytes of a checkpoint of so many parameters

    def saved_bytes(self, saved_parameters: int | None = None) -> int:
        """Return the bytes one checkpoint writes: the job's own layout's, or of `saved_parameters`."""
        saved = self._saved if saved_parameters is None else saved_parameters
        found = self._saved_bytes.get(saved)
        if found is None:
            found = self._saved_bytes[saved] = checkpoint_bytes(parameters=saved,
                                                                optimizer=self.job.training.optimizer.value,
                                                                ema=self.job.training.ema)
        return found

    def parts_for(self, m: Machine, *, local_disk_holds_data: bool, saved_parameters: int | None = None,
                  writers: int = 1, machines: int = 1) -> MachineParts:
        """Return a machine's parts (parts() of its fields), looked up by its plan group: the ranking's hot path."""
        moved = m.transfer
        cap = moved.cap_mb_per_s if moved else 0.0
        key = (m.plan_group, local_disk_holds_data, cap, saved_parameters, writers, machines)
        found = self._groups.get(key)
        if found is None:
            # A plan group is what machine_parts reads of a machine, so no two groups share parts; the
            # start-up reads less (not the spot rate), so a machine's on-demand and spot groups share it.
            boot_key = (m.provider, m.family, m.gpu_count, m.network_gbit_per_s, local_disk_holds_data, cap)
            boot = self._boots.get(boot_key)
            if boot is None:
                boot = self._boots[boot_key] = start_up(
                    m.provider, m.family, gpu_count=m.gpu_count, dataset_bytes=self.job.dataset.size_bytes,
                    network_gbit_per_s=m.network_gbit_per_s, local_disk_holds_data=local_disk_holds_data,
                    cap_mb_per_s=cap, weights_bytes=pretrained_bytes(self.job))
            found = self._groups[key] = machine_parts(
                self.job, provider=m.provider, family=m.family, gpu_count=m.gpu_count, pricing=m.pricing,
                network_gbit_per_s=m.network_gbit_per_s, local_disk_holds_data=local_disk_holds_data, rate=m.rate,
                staging_cap_mb_per_s=cap, saved_parameters=saved_parameters, writers=writers, boot=boot,
                saved_bytes=self.saved_bytes(saved_parameters), machines=machines)
        return found

    def parts(self, *, provider: Provider, family: str, gpu_count: int, pricing: Pricing, network_gbit_per_s: float,
              local_disk_holds_data: bool, rate: InterruptionRate | None = None,
              staging_cap_mb_per_s: float = 0.0, saved_parameters: int | None = None,
              writers: int = 1) -> MachineParts:
        """Return the machine's parts, computed once per ranking."""
        key = (provider, family, gpu_count, pricing, network_gbit_per_s, local_disk_holds_data, rate,
               staging_cap_mb_per_s, saved_parameters, writers)
        found = self._parts.get(key)
        if found is None:
            found = self._parts[key] = machine_parts(
                self.job, provider=provider, family=family, gpu_count=gpu_count, pricing=pricing,
                network_gbit_per_s=network_gbit_per_s, local_disk_holds_data=local_disk_holds_data, rate=rate,
                staging_cap_mb_per_s=staging_cap_mb_per_s, saved_parameters=saved_parameters, writers=writers)
        return found
