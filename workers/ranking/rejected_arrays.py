"""The rejected groups of a ranking over arrays (ranked_arrays.py): ranking._rejected without a Shape per machine.

The machines with no span are grouped by (provider, family, GPU) and reason, the groups ordered and each
one's members listed by sorting arrays; a group's reason is worked out from arrays where the plain reason
reads every member (GPU memory, host memory, no estimate, the deadline), from the members' shapes
otherwise. tests/test_ranked_arrays.py holds it equal to the plain path.
"""

from __future__ import annotations

import math
from itertools import pairwise

from catalog.types import Catalog
from workers.ranking.judge_arrays import KINDS
from workers.ranking.ranked_arrays import Offers, ShapeBook
from workers.ranking.reasons import (
    deadline_reason,
    gpu_memory_reason,
    gpu_name,
    host_memory_reason,
    no_estimate_reason,
    rejection_reason,
    unsupported_reason,
)
from workers.ranking.recommendation import Rejected
from workers.ranking.shapes import (
    BUDGET,
    CARBON,
    DEADLINE,
    GPU_MEMORY,
    HOST_MEMORY,
    NO_ESTIMATE,
    NO_STORAGE_PRICE,
    Shape,
)
from workers.sizing.requirements import Requirements
from workers.sizing.spec import JobSpec


def rejected_in_arrays(book: ShapeBook, offers: Offers, *, job: JobSpec, requirements: Requirements,
                       catalog: Catalog) -> tuple[Rejected, ...]:
    """ranking._rejected over the book: the shapes with no span grouped by (provider, family, GPU) and reason, the
    groups in order and each one's members by listing key (ties in the shapes' order) by sorting arrays, a group's
    reason from arrays where the plain reason reads every member (GPU memory, the deadline)."""
    import numpy as np

    judged, machines, made = book.judged, book.machines, book.made
    codes = judged.reject_codes
    seen = book.seen_array if book.seen_array is not None else np.zeros(len(book), dtype=bool)
    unbuilt = seen & (offers.best_cost == math.inf)  # seen (only a shape with a reason of its own is), no span
    if made:
        unbuilt[list(made)] = False
    extra = [(i, _REJECTED_KINDS.index(kind)) for i, s in made.items()
             if s.best_cost == math.inf and (kind := _kind(s)) is not None]
    at = np.flatnonzero(unbuilt)
    kind_at = codes[at].astype(np.intp)
    if extra:
        at = np.concatenate([at, np.array([i for i, _ in extra], dtype=np.intp)])
        kind_at = np.concatenate([kind_at, np.array([k for _, k in extra], dtype=np.intp)])
    if not len(at):
        return ()
    group_id, groups, place = judged.table.rejected_ids()
    kinds = len(_REJECTED_KINDS)
    found, inverse = np.unique(group_id[at] * kinds + kind_at, return_inverse=True)
    keys = [(groups[g // kinds], _REJECTED_KINDS[g % kinds]) for g in found.tolist()]
    rank = np.empty(len(keys), dtype=np.intp)  # each (group, reason)'s place in sorted order
    rank[sorted(range(len(keys)), key=keys.__getitem__)] = np.arange(len(keys))
    ranks = rank[inverse.ravel()]
    order = np.lexsort((at, place[at], ranks))
    members_all, ranks = at[order].tolist(), ranks[order]
    bounds = [0, *(np.flatnonzero(ranks[1:] != ranks[:-1]) + 1).tolist(), len(members_all)]
    by_rank = sorted(keys)
    hours: list[float] = []
    checked: list[float] = []
    spot: list[bool] = []
    if DEADLINE in (kind for _, kind in keys):  # each shape's expected and checked hours and spot run: the reason's
        full = np.full(len(book), math.nan)
        full[judged.at] = judged.time_metric
        held = np.full(len(book), math.nan)
        held[judged.at] = judged.checked_hours
        on_spot = np.zeros(len(book), dtype=bool)
        on_spot[judged.at] = judged.is_spot_run
        hours, checked, spot = full.tolist(), held.tolist(), on_spot.tolist()
    rejected: list[Rejected] = []
    for n, (lo, hi) in enumerate(pairwise(bounds)):
        (provider, _, gpu), kind = by_rank[n]
        members = members_all[lo:hi]
        counts = {machines[i].gpu_count for i in members}
        rejected.append(Rejected(
            instance_type=", ".join(dict.fromkeys(machines[i].instance_type for i in members)),
            reason=_reason(kind, members, book=book, hours=hours, checked=checked, spot=spot,
                           requirements=requirements, job=job, catalog=catalog),
            provider=provider, gpu=gpu, gpu_count=counts.pop() if len(counts) == 1 else 0,
        ))
    return tuple(rejected)


# A rejected group's reason by number: the judging's codes (judge_arrays.KINDS), then those found per offer.
_REJECTED_KINDS = (*KINDS, BUDGET, CARBON, NO_STORAGE_PRICE)


def _kind(s: Shape) -> str | None:
    """Return ranking._rejected's reason for a shape with no span, or None where it has no offer in scope."""
    if s.seen and s.reject is not None:
        return s.reject
    if s.over_budget is not None:
        return BUDGET
    if s.over_co2e is not None:
        return CARBON
    if s.missing_storage_regions:
        return NO_STORAGE_PRICE
    return None


def _reason(kind: str, members: list[int], *, book: ShapeBook, hours: list[float], checked: list[float],
            spot: list[bool], requirements: Requirements, job: JobSpec, catalog: Catalog) -> str:
    """Return reasons.rejection_reason of the group without building its shapes where the reason reads only
    their machines and judging's figures (GPU and host memory, no estimate); for the deadline, from `hours`,
    `checked` and `spot` (each shape's expected hours, those held to the deadline, whether it runs on spot),
    building a shape only where its checked hours are still to be worked out (NaN: Shape.checked_hours)."""
    judged, machines = book.judged, book.machines
    if kind == GPU_MEMORY:  # each member's estimate is its (GPU, count)'s
        pg_of_pair, pair_ids = judged._fill.pg_of_pair, judged.table.pair_ids
        need = min(pg.gpu_memory_bytes for pg in (pg_of_pair[p] for p in {pair_ids[i] for i in members})
                   if pg is not None)
        first = machines[members[0]]
        return gpu_memory_reason(need, card_memory_bytes=first.card_memory_bytes, name=gpu_name(catalog, first.gpu))
    if kind == HOST_MEMORY:
        need = judged._fill.need
        return host_memory_reason([(int(need[i]), machines[i].host_memory_bytes) for i in members],
                                  data_in_memory=job.dataset.in_memory)
    if kind == NO_ESTIMATE:
        return unsupported_reason(job, catalog, machines[members[0]].gpu) or no_estimate_reason(
            gpu_name(catalog, machines[members[0]].gpu), gpu_counts={machines[i].gpu_count for i in members})
    if kind == DEADLINE:  # reasons._fastest_checked: by expected hours, the percentile asked of those that may beat
        fastest = math.inf
        for i in sorted(members, key=hours.__getitem__):
            h, c = hours[i], checked[i]
            if h >= fastest:
                break
            fastest = min(fastest, (c if c == c else book[i].checked_hours) or h)  # NaN: worked out on the shape
        return deadline_reason(fastest, spot=any(spot[i] for i in members), job=job)
    return rejection_reason(kind, [book[i] for i in members], requirements=requirements, job=job, catalog=catalog)
