"""Many machine shapes' runs planned at once, as NumPy arrays: plan_shape_run's figures for a whole ranking.

The plain ranking judges every machine shape in scope (about 600 for a job on the clouds); planning each
one's run (shapes.plan_shape_run: start-up, checkpoints, billing, spot restarts, the deadline) was half of
a recommendation's CPU time as one Python call per shape. `plan_runs` works out the same figures over
arrays, one element per shape, with the same operations in the same order (IEEE double arithmetic gives
the same bits element by element): a machine's parts are still looked up per plan group
(RunPlanner.parts_for), the spot percentile's Poisson quantile is spot.poisson_quantile itself, and
each shape is left with exactly the attributes plan_shape_run would set. plan_shape_run stays the
model, and what the strategy ranking calls; tests/test_ranking_arrays.py holds the two equal.
NumPy is imported inside the function, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.commitments import TERM_HOURS
from catalog.types import Provider
from workers.ranking.runcost import BILLING_GRANULARITY_S, BILLING_MINIMUM_S, SECONDS_PER_HOUR
from workers.ranking.runplan import RunPlanner
from workers.ranking.shapes import DEADLINE, SPOT_RESTARTS, Shape
from workers.ranking.spot import poisson_quantile
from workers.ranking.transfer import BYTES_PER_GB
from workers.sizing.spec import JobSpec


def plan_runs(shapes: Sequence[Shape], *, training_hours: Sequence[float], local_disk_holds_data: Sequence[bool],
              job: JobSpec, planner: RunPlanner) -> list[str | None]:
    """Fill in each shape's whole run on one machine, as plan_shape_run does; return each one's rejection kind.

    `training_hours` and `local_disk_holds_data` are per shape, as plan_shape_run takes them.
    """
    import numpy as np

    count = len(shapes)
    if count == 0:
        return []
    percentile = planner.percentile
    deadline = job.constraints.deadline_hours
    size_gb = job.dataset.size_bytes / BYTES_PER_GB
    parts = []
    for shape, local, hours in zip(shapes, local_disk_holds_data, training_hours, strict=True):
        m = shape.m
        p = shape.parts = planner.parts_for(m, local_disk_holds_data=local or m.provider is Provider.ONPREM)
        shape.training_hours = hours
        shape.spot_percentile = percentile
        parts.append(p)
    th = np.array(training_hours, dtype=float)
    every = np.array([p.every_hours for p in parts], dtype=float)
    write_s = np.array([p.write_s for p in parts], dtype=float)
    total_s = np.array([p.total_s for p in parts], dtype=float)
    billed_s = np.array([p.billed_s for p in parts], dtype=float)
    spot = np.array([p.rate is not None for p in parts], dtype=bool)
    mtbi = np.array([p.mtbi_hours if p.rate is not None else 1.0 for p in parts], dtype=float)
    granularity = np.array([BILLING_GRANULARITY_S.get(s.m.provider, 0.0) for s in shapes], dtype=float)
    minimum = np.array([BILLING_MINIMUM_S.get(s.m.provider, 0.0) for s in shapes], dtype=float)

    with np.errstate(divide="ignore", invalid="ignore"):
        # runplan.run_figures: the checkpoints written (none at the very end), the run, the billing
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

    rejects: list[str | None] = []
    for shape, is_refused, is_spot, h, b, c, bs, intr in zip(
            shapes, refused.tolist(), spot_ok.tolist(), hours.tolist(), billed_out.tolist(), checked.tolist(),
            scale.tolist(), interruptions.tolist(), strict=True):
        if is_refused:
            rejects.append(SPOT_RESTARTS)
            continue
        m = shape.m
        moved = m.transfer
        if moved is not None and moved.usd_per_gb > 0:  # each staging copies the data set again
            shape.egress_usd = size_gb * moved.usd_per_gb * (1.0 + (intr if is_spot else 0.0))
        shape.is_spot_run = is_spot
        shape.hours = shape.time_metric = h
        shape.cost_mult = b
        shape.checked_hours = c
        if c != c:  # NaN: a spot run past the deadline on its expected hours
            rejects.append(DEADLINE)
            continue
        shape.budget_scale = bs
        term_hours = TERM_HOURS.get(m.pricing)
        if term_hours is not None:  # a commitment is paid for every hour of its term, used or not
            shape.cost_mult, shape.budget_scale = float(term_hours), 1.0
        rejects.append(DEADLINE if deadline is not None and c > deadline else None)
    return rejects
