"""A job's machine shapes judged at once over NumPy arrays: shapes._judge_all's findings, with hours known.

The plain ranking judges every machine shape in scope (about 600 for a job on the clouds); judging
each in turn (fit, CPU-stretched time, then shapes.plan_shape_run: start-up, checkpoints, billing, spot
restarts, the deadline) was half of a recommendation's CPU time. `judge_in_arrays` works out the same
figures over arrays, one element per shape, with the same operations in the same order, so IEEE
double arithmetic gives the same bits element by element: what is looked up stays a look-up (the
estimate per (GPU model, count), the loader workers, a machine's run parts per plan group through
RunPlanner.parts_for), the CPU stretch is machine.iteration_ms_with_cpu's arithmetic over arrays, the spot
percentile's Poisson quantile is spot.poisson_quantile itself, and each shape is left with exactly
the attributes _judge_all would set. _judge_all stays the plain model (and the path when the data
set's size is unknown); tests/test_ranking_arrays.py holds the two equal, attribute by attribute.
NumPy is imported inside the function, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workers.ranking.catalog_index import BlockTable
from workers.ranking.costing import BYTES_PER_BILLED_GB, HOURS_PER_MONTH
from workers.ranking.machine_table import Judged, MachineTable
from workers.ranking.runcost import SECONDS_PER_HOUR
from workers.ranking.runplan import MachineParts, RunPlanner
from workers.ranking.shapes import (
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    NO_ESTIMATE,
    SPOT_RESTARTS,
    Shape,
)
from workers.ranking.spot import poisson_quantile
from workers.ranking.transfer import BYTES_PER_GB
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE, loader_workers
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec


def judge_in_arrays(shapes: Sequence[Shape], per_gpu: Mapping[tuple[str, int], PerGpu], *, job: JobSpec,
                    requirements: Requirements, host_need: Mapping[int, int], block_table: BlockTable,
                    planner: RunPlanner, table: MachineTable) -> Judged | None:
    """Fill in each shape's fit, time, run and storage need, or the first reason it cannot run the job.

    `table` holds the shapes' machines in the shapes' order (table.machines[i] is shapes[i].m). Return the
    findings of the shapes that passed the first checks as arrays (None when none did).
    """
    import numpy as np

    # The checks that need no figures, in _judge_all's order: an estimate, its fit, the host memory.
    pg_of_pair = [per_gpu.get(pair) for pair in table.pairs]
    for shape, pid in zip(shapes, table.pair_ids, strict=True):
        shape.per_gpu = pg_of_pair[pid]
    known = np.array([pg is not None for pg in pg_of_pair], dtype=bool)[table.pair_id]
    fits = np.array([pg is not None and pg.fits for pg in pg_of_pair], dtype=bool)[table.pair_id]
    need = np.array([host_need[n] for n in table.gpu_counts], dtype=np.int64)[table.count_id]
    short = fits & (table.host_memory_bytes < need)
    for i in np.flatnonzero(~known).tolist():
        shapes[i].reject = NO_ESTIMATE
    for i in np.flatnonzero(known & ~fits).tolist():
        shapes[i].reject = GPU_MEMORY
    need_list = need.tolist()
    for i in np.flatnonzero(fits).tolist():
        shapes[i].host_memory_needed_bytes = need_list[i]
    for i in np.flatnonzero(short).tolist():
        shapes[i].reject = HOST_MEMORY
    at = np.flatnonzero(fits & ~short)
    if not len(at):
        return None
    at_list = at.tolist()
    live = [shapes[i] for i in at_list]
    # Loader workers per (vCPUs, GPU count), then the CPU stretch per (estimate, CPU score, workers).
    loader_keys = table.loader_keys
    workers_of = {lid: loader_workers(job.dataset, vcpus=loader_keys[lid][0], gpu_count=loader_keys[lid][1])
                  for lid in np.unique(table.loader_id[at]).tolist()}
    workers = [workers_of[lid] for lid in table.loader_id[at].tolist()]
    pair_at = table.pair_id[at]
    base_ms = np.array([pg.iteration_ms if pg is not None else 0.0 for pg in pg_of_pair], dtype=float)[pair_at]
    pair_hours = np.array([pg.training_hours if pg is not None else 0.0 for pg in pg_of_pair], dtype=float)
    # The CPU stretch (machine.iteration_ms_with_cpu, what ranking._cpu_adjust returns): the slower of the
    # GPU's iteration and the loader workers' pre-processing of its batch, in the same operations' order.
    iteration_ms = base_ms
    preprocess_ms = job.dataset.preprocess_ms_per_sample
    stretched = (table.cpu_score[at] > 0) & (base_ms > 0)
    if preprocess_ms > 0 and stretched.any():
        with np.errstate(divide="ignore"):
            cpu_ms = (job.training.batch_size * preprocess_ms * REFERENCE_CPU_SINGLE_THREAD_SCORE
                      / table.cpu_score[at] / np.maximum(1.0, np.array(workers, dtype=float)))
        iteration_ms = np.where(stretched, np.maximum(base_ms, cpu_ms), base_ms)
    storage_min, storage_max = requirements.storage_min_bytes, requirements.storage_max_bytes
    local = table.storage_bytes[at] >= storage_min
    on_disk = local | table.onprem[at]
    # A machine's run parts per (plan group, data on its own disk, staging cap): RunPlanner.parts_for of one of them
    _, first, group_of = np.unique((table.plan_group[at] * 2 + on_disk) * len(table.caps) + table.cap_id[at],
                                        return_index=True, return_inverse=True)
    group_of = group_of.reshape(-1)
    group_parts = [planner.parts_for(table.machines[at_list[f]], local_disk_holds_data=bool(on_disk[f]))
                   for f in first.tolist()]
    parts = [group_parts[g] for g in group_of.tolist()]
    with np.errstate(divide="ignore", invalid="ignore"):  # stretched by a slower CPU
        stretch = np.where(base_ms > 0, iteration_ms / base_ms, 1.0)
    training_hours = pair_hours[pair_at] * stretch
    hours, billed, checked, scale, interruptions, refused, spot = _run_figures(
        training_hours, group_parts, group_of, table.granularity_s[at], table.minimum_s[at],
        percentile=planner.percentile, deadline=job.constraints.deadline_hours)
    # The findings plan_shape_run and _judge_all leave, over arrays: the move of the data set (again at
    # each spot restart), a commitment's term (paid whether used or not), the deadline, block storage.
    size_gb = job.dataset.size_bytes / BYTES_PER_GB
    deadline = job.constraints.deadline_hours
    egress_rate = table.egress_rate[at]
    moved = egress_rate > 0
    egress = np.zeros(len(at_list))
    if moved.any():
        egress = np.where(moved, size_gb * egress_rate * (1.0 + np.where(spot, interruptions, 0.0)), 0.0)
    term = table.term[at]
    committed = term == term  # not NaN
    cost_mult = np.where(committed, term, billed)
    budget_scale = np.where(committed, 1.0, scale)
    with np.errstate(invalid="ignore"):
        late = (checked != checked) | (checked > deadline) if deadline is not None else checked != checked
    ok = ~refused & ~late
    block = ok & ~on_disk
    block_factor = np.where(block, storage_max / BYTES_PER_BILLED_GB * hours / HOURS_PER_MONTH, 0.0)
    percentile = planner.percentile
    # Every shape judged here: its loader workers, time and run; those not refused (spot restarts outpacing
    # the run) their hours and bill too, then the reasons past them, each in _judge_all's terms.
    for shape, w, ms, p, hrs in zip(live, workers, iteration_ms.tolist(), parts, training_hours.tolist(),
                                    strict=True):
        shape.workers, shape.iteration_ms = w, ms
        shape.parts, shape.training_hours, shape.spot_percentile = p, hrs, percentile
    ran = np.flatnonzero(~refused)
    for i in np.flatnonzero(refused).tolist():
        live[i].reject = SPOT_RESTARTS
    for i in np.flatnonzero(moved & ~refused).tolist():
        live[i].egress_usd = egress[i]
    for i, is_spot, h, b, c in zip(ran.tolist(), spot[ran].tolist(), hours[ran].tolist(), cost_mult[ran].tolist(),
                                   checked[ran].tolist(), strict=True):
        shape = live[i]
        shape.is_spot_run = is_spot
        shape.hours = shape.time_metric = h
        shape.cost_mult = b
        shape._checked_hours = c  # the property's setter, without the call; NaN: a spot run late on its expected hours
    for i, bs in zip(np.flatnonzero(~refused & (checked == checked)).tolist(),
                     budget_scale[~refused & (checked == checked)].tolist(), strict=True):
        live[i].budget_scale = bs
    for i in np.flatnonzero(~refused & late).tolist():
        live[i].reject = DEADLINE
    providers = table.providers
    for i, bf in zip(np.flatnonzero(block).tolist(), block_factor[block].tolist(), strict=True):
        shape = live[i]
        shape.block_bytes = storage_max
        shape.block_factor = bf
        shape.block_prices, shape.block_fallback = block_table.get(providers[at_list[i]], ({}, None))
    return Judged(table, at=at, ok=ok, cost_mult=cost_mult, block_factor=block_factor, egress_usd=egress,
                  time_metric=hours, budget_scale=budget_scale)


def _run_figures(training_hours: Any, group_parts: list[MachineParts], group_of: Any, granularity: Any,
                 minimum: Any, *, percentile: float, deadline: float | None) -> tuple[Any, ...]:
    """Return runplan.run_figures for each shape, as arrays: hours, billed hours, checked hours (NaN: a spot
    run past the deadline on its expected hours), budget scale, expected interruptions, refused, on spot.

    `group_parts[group_of[i]]` is shape i's run parts; `granularity` and `minimum` its provider's billing.
    """
    import numpy as np

    count = len(group_of)
    th = training_hours
    every = np.array([p.every_hours for p in group_parts], dtype=float)[group_of]
    write_s = np.array([p.write_s for p in group_parts], dtype=float)[group_of]
    total_s = np.array([p.total_s for p in group_parts], dtype=float)[group_of]
    billed_s = np.array([p.billed_s for p in group_parts], dtype=float)[group_of]
    spot = np.array([p.rate is not None for p in group_parts], dtype=bool)[group_of]
    mtbi = np.array([p.mtbi_hours if p.rate is not None else 1.0 for p in group_parts], dtype=float)[group_of]
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
    return hours, billed_out, checked, scale, interruptions, refused, spot_ok
