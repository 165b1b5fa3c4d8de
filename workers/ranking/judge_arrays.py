"""A job's machine shapes judged at once over NumPy arrays: shapes._judge_all's findings, with hours known.

The plain ranking judges every machine shape in scope (about 600 for a job on the clouds); judging
each in turn (fit, CPU-stretched time, then shapes.plan_shape_run: start-up, checkpoints, billing, spot
restarts, the deadline) was half of a recommendation's CPU time. `judge_in_arrays` works out the same
figures over arrays, one element per shape, with the same operations in the same order, so IEEE
double arithmetic gives the same bits element by element: what is looked up stays a look-up (the
estimate per (GPU model, count), the loader workers, the CPU stretch through the ranking's memoised
`cpu_adjust`, a machine's run parts per plan group through RunPlanner.parts_for), the spot
percentile's Poisson quantile is spot.poisson_quantile itself, and each shape is left with exactly
the attributes _judge_all would set. _judge_all stays the plain model (and the path when the data
set's size is unknown); tests/test_ranking_arrays.py holds the two equal, attribute by attribute.
NumPy is imported inside the function, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from catalog.types import Provider
from workers.ranking.catalog_index import BlockTable
from workers.ranking.costing import BYTES_PER_BILLED_GB, HOURS_PER_MONTH
from workers.ranking.runcost import BILLING_GRANULARITY_S, BILLING_MINIMUM_S, SECONDS_PER_HOUR
from workers.ranking.runplan import MachineParts, RunPlanner
from workers.ranking.shapes import (
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    NO_ESTIMATE,
    SPOT_RESTARTS,
    CpuAdjust,
    Shape,
)
from workers.ranking.spot import poisson_quantile
from workers.ranking.transfer import BYTES_PER_GB
from workers.sizing.machine import loader_workers
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec

# runcost's billing rules by provider name (an Enum's hash is a Python call; a name's is cached)
_GRANULARITY_S = {p.value: BILLING_GRANULARITY_S.get(p, 0.0) for p in Provider}
_MINIMUM_S = {p.value: BILLING_MINIMUM_S.get(p, 0.0) for p in Provider}


def judge_in_arrays(shapes: Sequence[Shape], per_gpu: Mapping[tuple[str, int], PerGpu], *, job: JobSpec,
                    requirements: Requirements, host_need: Mapping[int, int], cpu_adjust: CpuAdjust,
                    block_table: BlockTable, planner: RunPlanner) -> None:
    """Fill in each shape's fit, time, run and storage need, or the first reason it cannot run the job."""
    live: list[Shape] = []
    pgs: list[PerGpu] = []
    for shape in shapes:  # the checks that need no figures, in _judge_all's order
        m = shape.m
        pg = shape.per_gpu = per_gpu.get((m.gpu, m.gpu_count))
        if pg is None:
            shape.reject = NO_ESTIMATE
        elif not pg.fits:
            shape.reject = GPU_MEMORY
        else:
            need = shape.host_memory_needed_bytes = host_need[m.gpu_count]
            if m.host_memory_bytes < need:
                shape.reject = HOST_MEMORY
            else:
                live.append(shape)
                pgs.append(pg)
    if not live:
        return
    machines = [s.m for s in live]
    workers_of: dict[tuple[int, int], int] = {}
    for m in machines:
        if (m.vcpus, m.gpu_count) not in workers_of:
            workers_of[(m.vcpus, m.gpu_count)] = loader_workers(job.dataset, vcpus=m.vcpus, gpu_count=m.gpu_count)
    workers = [workers_of[(m.vcpus, m.gpu_count)] for m in machines]
    base_ms = [pg.iteration_ms for pg in pgs]
    iteration_ms = [max(b, cpu_adjust(b, m.cpu_score, w)) if m.cpu_score > 0 and b > 0 else b
                    for b, m, w in zip(base_ms, machines, workers, strict=True)]
    storage_min, storage_max = requirements.storage_min_bytes, requirements.storage_max_bytes
    onprem = Provider.ONPREM
    local = [m.storage_bytes >= storage_min for m in machines]
    parts = [planner.parts_for(m, local_disk_holds_data=on_disk or m.provider is onprem)
             for m, on_disk in zip(machines, local, strict=True)]

    training_hours = [pg.training_hours * (ms / b if b > 0 else 1.0)  # stretched by a slower CPU
                      for pg, ms, b in zip(pgs, iteration_ms, base_ms, strict=True)]
    hours, billed, checked, scale, interruptions, refused, spot = _run_figures(
        training_hours, parts, [m.provider_name for m in machines], percentile=planner.percentile,
        deadline=job.constraints.deadline_hours)
    size_gb = job.dataset.size_bytes / BYTES_PER_GB
    deadline = job.constraints.deadline_hours
    percentile = planner.percentile
    for (shape, w, ms, p, hrs, is_refused, is_spot, h, b, c, bs, intr, on_disk) in zip(
            live, workers, iteration_ms, parts, training_hours, refused, spot, hours, billed, checked, scale,
            interruptions, local, strict=True):
        shape.workers, shape.iteration_ms = w, ms
        shape.parts, shape.training_hours, shape.spot_percentile = p, hrs, percentile
        if is_refused:
            shape.reject = SPOT_RESTARTS
            continue
        m = shape.m
        moved = m.transfer
        if moved is not None and moved.usd_per_gb > 0:  # each staging copies the data set again
            shape.egress_usd = size_gb * moved.usd_per_gb * (1.0 + (intr if is_spot else 0.0))
        shape.is_spot_run = is_spot
        shape.hours = shape.time_metric = h
        shape.cost_mult = b
        shape._checked_hours = c  # the property's setter, without the call
        if c != c:  # NaN: a spot run past the deadline on its expected hours
            shape.reject = DEADLINE
            continue
        shape.budget_scale = bs
        term_hours = m.term_hours
        if term_hours is not None:  # a commitment is paid for every hour of its term, used or not
            shape.cost_mult, shape.budget_scale = float(term_hours), 1.0
        if deadline is not None and c > deadline:
            shape.reject = DEADLINE
            continue
        if m.provider is not onprem and not on_disk:
            shape.block_bytes = storage_max
            shape.block_factor = storage_max / BYTES_PER_BILLED_GB * h / HOURS_PER_MONTH
            shape.block_prices, shape.block_fallback = block_table.get(m.provider, ({}, None))


def _run_figures(training_hours: list[float], parts: list[MachineParts], providers: list[str], *,
                 percentile: float, deadline: float | None) -> tuple[list[Any], ...]:
    """Return runplan.run_figures for each shape, as lists: hours, billed hours, checked hours (NaN: a spot
    run past the deadline on its expected hours), budget scale, expected interruptions, refused, on spot."""
    import numpy as np

    count = len(parts)
    th = np.array(training_hours, dtype=float)
    every = np.array([p.every_hours for p in parts], dtype=float)
    write_s = np.array([p.write_s for p in parts], dtype=float)
    total_s = np.array([p.total_s for p in parts], dtype=float)
    billed_s = np.array([p.billed_s for p in parts], dtype=float)
    spot = np.array([p.rate is not None for p in parts], dtype=bool)
    mtbi = np.array([p.mtbi_hours if p.rate is not None else 1.0 for p in parts], dtype=float)
    granularity = np.array([_GRANULARITY_S[p] for p in providers], dtype=float)
    minimum = np.array([_MINIMUM_S[p] for p in providers], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the checkpoints written (none at the very end), the run, the billing (runcost.billed_hours)
        saves = np.where(th > 0, np.maximum(0.0, np.ceil(th / every) - 1.0), 0.0)
        run_s = th * SECONDS_PER_HOUR + saves * write_s
        wall = (total_s + run_s) / SECONDS_PER_HOUR
        seconds = billed_s + run_s
        rounded = np.where(granularity > 0, np.ceil(seconds / granularity - 1e-9) * granularity, seconds)
        billed = np.maximum(rounded, minimum) / SECONDS_PER_HOUR
        # spot.spot_expected: restarts and the work lost since the last checkpoint
        restart_h, restart_billed_h = total_s / SECONDS_PER_HOUR, billed_s / SECONDS_PER_HOUR
        loss = restart_h + every / 2.0
        refused = spot & (loss >= 0.5 * mtbi)
        expected_wall = wall / (1.0 - loss / mtbi)
        interruptions = expected_wall / mtbi
        expected_billed = billed + interruptions * (restart_billed_h + every / 2.0)
    spot_ok = spot & ~refused
    late = spot_ok & (expected_wall > deadline) if deadline is not None else np.zeros(count, dtype=bool)
    quantile = spot_ok & ~late
    k = np.zeros(count, dtype=float)
    means = interruptions.tolist()
    for i in np.flatnonzero(quantile).tolist():
        k[i] = poisson_quantile(means[i], percentile)
    p_wall = np.maximum(wall + k * (restart_h + every), expected_wall)
    p_billed = np.maximum(billed + k * (restart_billed_h + every), expected_billed)
    hours = np.where(spot_ok, expected_wall, wall)
    billed_out = np.where(spot_ok, expected_billed, billed)
    checked = np.where(late, np.nan, np.where(quantile, p_wall, wall))
    checked_billed = np.where(late, np.nan, np.where(quantile, p_billed, billed))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(billed_out > 0, checked_billed / billed_out, 1.0)
    return (hours.tolist(), billed_out.tolist(), checked.tolist(), scale.tolist(), interruptions.tolist(),
            refused.tolist(), spot_ok.tolist())
