"""A job's machine shapes judged at once over NumPy arrays: shapes._judge_all's findings, with hours known.

The plain ranking judges every machine shape in scope (about 600 for a job on the clouds); judging
each in turn (fit, CPU-stretched time, then shapes.plan_shape_run: start-up, checkpoints, billing, spot
restarts, the deadline) was half of a recommendation's CPU time. `judge_in_arrays` works out the same
figures over arrays, one element per shape, with the same operations in the same order, so IEEE
double arithmetic gives the same bits element by element: what is looked up stays a look-up (the
estimate per (GPU model, count), the loader workers, a machine's run parts per plan group through
RunPlanner.parts_for), the CPU stretch is machine.iteration_ms_with_cpu's arithmetic over arrays, the spot
percentile's Poisson quantile is spot.poisson_quantile's sums over arrays, and each shape is left with exactly
the attributes _judge_all would set. _judge_all stays the plain model (and the path when the data
set's size is unknown); tests/test_ranking_arrays.py holds the two equal, attribute by attribute.
Without shapes (ranked_arrays.judge_lazily) the findings keep every shape's reason as a code and fill in
one shape when it is asked for (fill_shape: what the loops set; tests/test_ranked_arrays.py).
NumPy is imported inside the function, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

from workers.ranking.catalog_index import BlockTable
from workers.ranking.costing import BYTES_PER_BILLED_GB, HOURS_PER_MONTH
from workers.ranking.host_need import HostKey
from workers.ranking.machine_table import Judged, MachineTable
from workers.ranking.runcost import (
    DEFAULT_CHECKPOINT_EVERY_HOURS,
    ENVIRONMENT_S,
    LOCAL_NVME_WRITE_MB_PER_S,
    MIN_CHECKPOINT_EVERY_HOURS,
    SECONDS_PER_HOUR,
)
from workers.ranking.runplan import RunPlanner
from workers.ranking.shapes import (
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    NO_ESTIMATE,
    SPOT_RESTARTS,
    Shape,
)
from workers.ranking.spot import POISSON_MAX_K
from workers.ranking.transfer import BYTES_PER_GB
from workers.sizing.checkpoint import pretrained_bytes
from workers.sizing.machine import REFERENCE_CPU_SINGLE_THREAD_SCORE, loader_share
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec

# A shape's reason as a code in Judged.reject_codes (no reason: NO_REJECT), and back.
NO_REJECT = 0
CODES = {NO_ESTIMATE: 1, GPU_MEMORY: 2, HOST_MEMORY: 3, SPOT_RESTARTS: 4, DEADLINE: 5}
KINDS = ("", NO_ESTIMATE, GPU_MEMORY, HOST_MEMORY, SPOT_RESTARTS, DEADLINE)  # by code; "": none


def judge_in_arrays(shapes: Sequence[Shape] | None, per_gpu: Mapping[tuple[str, int], PerGpu], *, job: JobSpec,
                    requirements: Requirements, host_need: Mapping[HostKey, int], block_table: BlockTable,
                    planner: RunPlanner, table: MachineTable) -> Judged | None:
    """Fill in each shape's fit, time, run and storage need, or the first reason it cannot run the job.

    `table` holds the shapes' machines in the shapes' order (table.machines[i] is shapes[i].m). Return the
    findings of the shapes that passed the first checks as arrays (None when none did). `shapes` None: fill in
    none and return the findings whether or not any passed, every machine's reason as a code
    (`Judged.reject_codes`), for fill_shape to set on shape i what these loops would.
    """
    import numpy as np

    # The checks that need no figures, in _judge_all's order: an estimate, its fit, the host memory.
    pg_of_pair = [per_gpu.get(pair) for pair in table.pairs]
    if shapes is not None:
        for shape, pid in zip(shapes, table.pair_ids, strict=True):
            shape.per_gpu = pg_of_pair[pid]
    known = np.array([pg is not None for pg in pg_of_pair], dtype=bool)[table.pair_id]
    fits = np.array([pg is not None and pg.fits for pg in pg_of_pair], dtype=bool)[table.pair_id]
    need = np.array([host_need[k] for k in table.host_keys], dtype=np.int64)[table.host_id]
    short = fits & (table.host_memory_bytes < need)
    codes = np.full(len(table.machines), NO_REJECT, dtype=np.int8)
    codes[~known] = CODES[NO_ESTIMATE]
    codes[known & ~fits] = CODES[GPU_MEMORY]
    codes[short] = CODES[HOST_MEMORY]
    need_list = need.tolist()
    if shapes is not None:
        for i in np.flatnonzero(~known).tolist():
            shapes[i].reject = NO_ESTIMATE
        for i in np.flatnonzero(known & ~fits).tolist():
            shapes[i].reject = GPU_MEMORY
        for i in np.flatnonzero(fits).tolist():
            shapes[i].host_memory_needed_bytes = need_list[i]
        for i in np.flatnonzero(short).tolist():
            shapes[i].reject = HOST_MEMORY
    at = np.flatnonzero(fits & ~short)
    if not len(at) and shapes is not None:
        return None
    at_list = at.tolist()
    # Loader workers and the cores' worth they get per (vCPUs, GPU count, threads per core), then the CPU
    # stretch per (estimate, CPU score, cores).
    loader_keys = table.loader_keys
    share_of = {lid: loader_share(job.dataset, vcpus=loader_keys[lid][0], gpu_count=loader_keys[lid][1],
                                  threads_per_core=loader_keys[lid][2])
                for lid in np.unique(table.loader_id[at]).tolist()}
    shares = [share_of[lid] for lid in table.loader_id[at].tolist()]
    workers = [w for w, _ in shares]
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
                      / table.cpu_score[at] / np.maximum(1.0, np.array([c for _, c in shares], dtype=float)))
        iteration_ms = np.where(stretched, np.maximum(base_ms, cpu_ms), base_ms)
    storage_min, storage_max = requirements.storage_min_bytes, requirements.storage_max_bytes
    local = table.storage_bytes[at] >= storage_min
    on_disk = local | table.onprem[at]
    # Each machine's start-up and checkpoints over arrays; its MachineParts is built when asked (Shape.parts).
    parts = _parts_figures(table, at, on_disk, job=job, saved_bytes=planner.saved_bytes())
    with np.errstate(divide="ignore", invalid="ignore"):  # stretched by a slower CPU
        stretch = np.where(base_ms > 0, iteration_ms / base_ms, 1.0)
    training_hours = pair_hours[pair_at] * stretch
    hours, billed, checked, scale, interruptions, refused, spot = _run_figures(
        training_hours, parts, table.granularity_s[at], table.minimum_s[at],
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
    codes[at[refused]] = CODES[SPOT_RESTARTS]
    codes[at[~refused & late]] = CODES[DEADLINE]
    parts_from = {True: (planner, True), False: (planner, False)}
    judged = Judged(table, at=at, ok=ok, cost_mult=cost_mult, block_factor=block_factor, egress_usd=egress,
                    time_metric=hours, budget_scale=budget_scale)
    judged.reject_codes, judged.is_spot_run, judged.checked_hours, judged.at_list = codes, spot, checked, at_list
    judged._fill = _Fill(pg_of_pair=pg_of_pair, need=need_list, workers=workers, iteration_ms=iteration_ms,
                         on_disk=on_disk, training_hours=training_hours, start_s=parts[2], moved=moved & ~refused,
                         parts_from=parts_from, percentile=percentile, block=block, storage_max=storage_max,
                         block_table=block_table)
    if shapes is None:
        return judged
    live = [shapes[i] for i in at_list]
    # Every shape judged here: its loader workers, time and run; those not refused (spot restarts outpacing
    # the run) their hours and bill too, then the reasons past them, each in _judge_all's terms.
    for shape, w, ms, own_disk, hrs, start_s in zip(live, workers, iteration_ms.tolist(), on_disk.tolist(),
                                                    training_hours.tolist(), parts[2].tolist(), strict=True):
        shape.workers, shape.iteration_ms = w, ms
        shape._parts_from, shape.training_hours, shape.spot_percentile = parts_from[own_disk], hrs, percentile
        shape.start_up_s = start_s
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
    return judged


def _parts_figures(table: MachineTable, at: Any, on_disk: Any, *, job: JobSpec, saved_bytes: int) -> tuple[Any, ...]:
    """Return, for the table's machines `at`, what RunPlanner.parts_for's MachineParts would hold: checkpoint
    interval, one checkpoint's write seconds, start-up seconds and its billed part, on spot, MTBI (1.0 off spot).

    runcost.start_up and runplan.machine_parts (one writer, the job's own checkpoint), operation by operation.
    """
    import numpy as np

    storage = np.where(on_disk, LOCAL_NVME_WRITE_MB_PER_S, table.block_write_mb_per_s[at])
    network = table.network_mb_per_s[at]
    own = np.minimum(np.where(network == network, network, storage), storage)  # NaN: no network stated
    cap = table.staging_cap_mb_per_s[at]
    rate = np.where(cap > 0, np.minimum(own, cap), own)
    size, weights = job.dataset.size_bytes, pretrained_bytes(job)  # the weights at the machine's own rate
    with np.errstate(divide="ignore"):
        staging = (size / (rate * 1e6) if size > 0 else np.zeros(len(at))) + weights / (own * 1e6)
    staging = np.where(table.onprem[at], 0.0, staging)  # an owned box holds the data already
    billed_s = table.boot_s[at] + ENVIRONMENT_S + staging
    total_s = table.provisioning_s[at] + billed_s
    write_s = saved_bytes / (storage * 1e6)
    spot, mtbi = table.spot[at], table.mtbi_hours[at]
    every_hours = job.training.checkpoint_every_hours
    if every_hours is not None:
        every = np.full(len(at), float(every_hours))
    else:
        every = np.where(spot, np.maximum(MIN_CHECKPOINT_EVERY_HOURS, np.sqrt(2.0 * write_s / 3600.0 * mtbi)),
                         DEFAULT_CHECKPOINT_EVERY_HOURS)
    return every, write_s, total_s, billed_s, spot, mtbi


def _run_figures(training_hours: Any, parts: tuple[Any, ...], granularity: Any, minimum: Any, *,
                 percentile: float, deadline: float | None) -> tuple[Any, ...]:
    """Return runplan.run_figures for each shape, as arrays: hours, billed hours, checked hours (NaN: a spot
    run past the deadline on its expected hours), budget scale, expected interruptions, refused, on spot.

    `parts`: each shape's run parts (_parts_figures); `granularity` and `minimum` its provider's billing.
    """
    import numpy as np

    count = len(training_hours)
    th = training_hours
    every, write_s, total_s, billed_s, spot, mtbi = parts
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
    at = np.flatnonzero(quantile)
    if len(at):
        k[at] = _poisson_quantiles(interruptions[at], percentile)
    p_wall = np.maximum(wall + k * (restart_h + every), expected_wall)
    p_billed = np.maximum(billed + k * (restart_billed_h + every), expected_billed)
    hours = np.where(spot_ok, expected_wall, wall)
    billed_out = np.where(spot_ok, expected_billed, billed)
    checked = np.where(late, np.nan, np.where(quantile, p_wall, wall))
    checked_billed = np.where(late, np.nan, np.where(quantile, p_billed, billed))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(billed_out > 0, checked_billed / billed_out, 1.0)
    return hours, billed_out, checked, scale, interruptions, refused, spot_ok


def _poisson_quantiles(means: Any, percentile: float) -> Any:
    """Return spot.poisson_quantile of each mean, the same sums in the same order over arrays.

    Each e^-mean is math.exp's (NumPy's exp may differ from it in the last bit).
    """
    import numpy as np

    term = np.array([math.exp(-mean) for mean in means.tolist()], dtype=float)
    cumulative = term.copy()
    k = np.zeros(len(means), dtype=float)
    going = (means > 0) & (cumulative < percentile)
    step = 0
    while going.any() and step < POISSON_MAX_K:
        step += 1
        term[going] *= means[going] / step
        cumulative[going] += term[going]
        k[going] = step
        going &= cumulative < percentile
    return k


class _Fill:
    """What judge_in_arrays' loops set on the shapes, kept to set it on one shape when that shape is asked for."""

    def __init__(self, *, pg_of_pair: list[PerGpu | None], need: list[int], workers: list[int], iteration_ms: Any,
                 on_disk: Any, training_hours: Any, start_s: Any, moved: Any,
                 parts_from: Mapping[bool, tuple[RunPlanner, bool]], percentile: float, block: Any, storage_max: int,
                 block_table: BlockTable) -> None:
        self.pg_of_pair, self.need, self.workers, self.iteration_ms = pg_of_pair, need, workers, iteration_ms
        self.on_disk, self.training_hours, self.moved, self.parts_from = on_disk, training_hours, moved, parts_from
        self.start_s = start_s
        self.percentile, self.block, self.storage_max, self.block_table = percentile, block, storage_max, block_table


def fill_shape(judged: Judged, shape: Shape, i: int) -> None:
    """Set on shape i (on judged.table's machine i) what judge_in_arrays sets on it when given the shapes."""
    f: _Fill = judged._fill
    table = judged.table
    shape.per_gpu = f.pg_of_pair[table.pair_ids[i]]
    kind = KINDS[judged.reject_codes[i]]
    if kind in (NO_ESTIMATE, GPU_MEMORY):
        shape.reject = kind
        return
    shape.host_memory_needed_bytes = f.need[i]
    if kind == HOST_MEMORY:
        shape.reject = kind
        return
    j = bisect_left(judged.at_list, i)
    shape.workers, shape.iteration_ms = f.workers[j], float(f.iteration_ms[j])
    shape._parts_from, shape.training_hours = f.parts_from[bool(f.on_disk[j])], float(f.training_hours[j])
    shape.spot_percentile, shape.start_up_s = f.percentile, float(f.start_s[j])
    if kind == SPOT_RESTARTS:
        shape.reject = kind
        return
    if f.moved[j]:
        shape.egress_usd = judged.egress_usd[j]  # a NumPy float, as the loop above sets it
    checked = float(judged.checked_hours[j])
    shape.is_spot_run = bool(judged.is_spot_run[j])
    shape.hours = shape.time_metric = float(judged.time_metric[j])
    shape.cost_mult = float(judged.cost_mult[j])
    shape._checked_hours = checked
    if checked == checked:
        shape.budget_scale = float(judged.budget_scale[j])
    if kind == DEADLINE:
        shape.reject = kind
        return
    if f.block[j]:
        shape.block_bytes = f.storage_max
        shape.block_factor = float(judged.block_factor[j])
        shape.block_prices, shape.block_fallback = f.block_table.get(table.providers[i], ({}, None))
