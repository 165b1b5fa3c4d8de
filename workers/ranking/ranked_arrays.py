"""A ranking over judge_arrays' findings without a Shape per machine: spans, top rows, knee and rejected groups.

The plain ranking (ranking.py) builds a Shape per machine in scope (about 600 for a job on the clouds)
and reads each one's figures to cost its offers, to find the rows that make the list, the cost/time
front and its knee, and the groups of those rejected. Where the data set's size is known, every region
is in scope, and neither carbon, nor owned cards, nor a purchase takes part, `rank_in_arrays` works
the same out over the arrays the judging left (judge_arrays.py, candidates.table_costs) and builds a
shape (ShapeBook) only for what reads one: the options shown, a machine costed offer by offer or
over the budget, the members of a rejected group whose reason reads more than arrays hold (the groups:
rejected_arrays.py). Every figure is the same float by the same operation as the plain path's (minima,
sorts and comparisons are exact), every tie breaks as there; tests/test_ranked_arrays.py holds the two
paths equal.
NumPy is imported inside the functions, so that a CLI that never ranks does not load it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload

from workers.ranking.candidates import Span, _costed_one_by_one, _within_budget, table_costs
from workers.ranking.catalog_index import CatalogIndex, Machine
from workers.ranking.front import Row, front_test, knee_of_front_first
from workers.ranking.host_need import host_needs
from workers.ranking.judge_arrays import KINDS, NO_REJECT, fill_shape, judge_in_arrays
from workers.ranking.machine_table import Judged, MachineTable
from workers.ranking.runplan import RunPlanner
from workers.ranking.scope import Scope
from workers.ranking.shapes import (
    GPU_MEMORY,
    NO_ESTIMATE,
    Shape,
    _scope_machines,
)
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec, Objective


class ShapeBook(Sequence[Shape]):
    """A ranking's shapes in order, each built when first asked for and filled in from judge_arrays' findings.

    Collecting (collect_in_arrays) leaves what it finds of the shapes it did not build: whether a rejected
    one was seen, the cheapest cost of one with offers; a shape built later gets them too.
    """

    def __init__(self, machines: Sequence[Machine], judged: Judged) -> None:
        self.machines, self.judged = machines, judged
        self.made: dict[int, Shape] = {}
        self.seen: list[bool] | None = None  # per shape: a rejected shape's `seen`, once collected
        self.seen_array: Any = None  # the same as an array
        self.best_cost: dict[int, float] = {}  # `best_cost` of the shapes with offers that collecting did not build

    def __len__(self) -> int:
        return len(self.machines)

    @overload
    def __getitem__(self, i: int) -> Shape: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Shape]: ...

    def __getitem__(self, i: int | slice) -> Shape | Sequence[Shape]:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        shape = self.made.get(i)
        if shape is None:
            if not 0 <= i < len(self.machines):
                raise IndexError(i)
            shape = self.made[i] = Shape(self.machines[i], i)
            fill_shape(self.judged, shape, i)
            if self.seen is not None and shape.reject is not None:
                shape.seen = self.seen[i]
            cost = self.best_cost.get(i)
            if cost is not None:
                shape.best_cost = cost
        return shape

    def __iter__(self) -> Iterator[Shape]:
        return (self[i] for i in range(len(self.machines)))


def judge_lazily(job: JobSpec, *, requirements: Requirements, per_gpu: Mapping[tuple[str, int], PerGpu],
                 index: CatalogIndex, scope: Scope) -> tuple[ShapeBook, Judged]:
    """Return shapes.judge_scope's findings with hours known, its shapes as a book (each built when first asked
    for), the findings holding every shape's reason as a code."""
    machines, table, own = _scope_machines(job, requirements=requirements, index=index, scope=scope)
    if own:
        table = MachineTable(machines)
    host_need = host_needs(job, requirements, table.host_keys, per_gpu)
    judged = judge_in_arrays(None, per_gpu, job=job, requirements=requirements, host_need=host_need,
                             block_table=index.block_table, planner=RunPlanner(job), table=table)
    if judged is None:  # without shapes the findings come back whether or not any shape passed
        raise RuntimeError("judge_in_arrays without shapes returned no findings")
    return ShapeBook(table.machines, judged), judged


class Offers:
    """The spans of collect_candidates over arrays: those collecting did not build, one element a shape, and
    those it built (a shape costed offer by offer, or over the budget), with each shape's cheapest cost."""

    def __init__(self, *, idx: Any, keys: Any, lows: Any, times: Any, starts: Any, ends: Any, costs: Any,
                 built: list[Span], best_cost: Any) -> None:
        self.idx, self.keys, self.lows, self.times = idx, keys, lows, times
        self.starts, self.ends, self.costs, self.built = starts, ends, costs, built
        self.best_cost = best_cost  # per shape; inf without a span

    def __len__(self) -> int:
        return len(self.idx) + len(self.built)

    def points(self) -> tuple[list[float], list[float], list[int]]:
        """Return every span's (time, cheapest cost, shape index), those not built first."""
        return (self.times.tolist() + [sp.shape.time_metric for sp in self.built],
                self.lows.tolist() + [sp.shape.best_cost for sp in self.built],
                self.idx.tolist() + [sp.shape.idx for sp in self.built])


def options_front(offers: Offers) -> tuple[Callable[[float, float], bool], float, float]:
    """Return front.pareto_test of every span's (time, cheapest cost), worked out by sorting arrays, and the least
    cost and time among them (inf without any)."""
    import numpy as np

    if not len(offers):
        return front_test([], [], [], math.inf), math.inf, math.inf
    t, c = offers.times, offers.lows
    if offers.built:
        t = np.concatenate([t, np.array([sp.shape.time_metric for sp in offers.built], dtype=float)])
        c = np.concatenate([c, np.array([sp.shape.best_cost for sp in offers.built], dtype=float)])
    order = np.lexsort((c, t))  # by time, then cost: the first of each time is its cheapest
    t, c = t[order], c[order]
    first = np.ones(len(t), dtype=bool)
    first[1:] = t[1:] != t[:-1]
    t, c = t[first], c[first]
    running = np.minimum.accumulate(c)  # the cheapest up to each time
    before = [math.inf, *running[:-1].tolist()]
    least_cost = float(running[-1])
    return front_test(t.tolist(), c.tolist(), before, least_cost), least_cost, float(t[0])


def collect_in_arrays(book: ShapeBook, judged: Judged, *, scope: Scope, budget_usd: float,
                      objective: Objective) -> Offers:
    """candidates._collect_judged without building a shape per machine: the same spans, costs and marks."""
    import numpy as np

    table = judged.table
    in_scope = frozenset(scope.pricing)
    any_pricing = np.array([p in in_scope for p in table.pricings], dtype=bool)[table.pricing_id]
    # candidates._note_seen of each rejected shape (every region in scope)
    rejected = judged.reject_codes != NO_REJECT
    seen = rejected & any_pricing & (table.offer_arrays()[3] > 0)
    for i in np.flatnonzero(rejected & ~any_pricing).tolist():
        seen[i] = any(o.pricing in scope.pricing for o in book.machines[i].offers)
    book.seen, book.seen_array = seen.tolist(), seen
    at, keep = judged.at[judged.ok], judged.ok
    block_factor = judged.block_factor[keep]
    together = any_pricing[at] & ((block_factor == 0.0) | table.block_rates_complete[at])
    chosen = np.flatnonzero(together)
    times = judged.time_metric[keep][chosen]
    costed = table_costs(table=table, at=at[chosen], cost_mult=judged.cost_mult[keep][chosen],
                         block_factor=block_factor[chosen], egress_usd=judged.egress_usd[keep][chosen], times=times,
                         budget_scale=judged.budget_scale[keep][chosen], budget_usd=budget_usd, objective=objective)
    built: list[Span] = []
    empty = np.zeros(0, dtype=np.intp)
    idx, keys, lows, starts, ends, costs = empty, np.zeros(0), np.zeros(0), empty, empty, np.zeros(0)
    if costed is not None:
        costs, starts, ends, lows, keys, over = costed
        for j in np.flatnonzero(over & (ends > starts)).tolist():  # the offers within the budget, a shape built
            _within_budget(book[int(at[chosen[j]])], costs[starts[j]:ends[j]].tolist(), built, budget_usd=budget_usd,
                           objective=objective)
        plain = ~over & (ends > starts)
        idx, keys, lows, times = at[chosen][plain], keys[plain], lows[plain], times[plain]
        starts, ends = starts[plain], ends[plain]
    for i in at[~together].tolist():
        _costed_one_by_one(book[i], built, scope=scope, any_pricing=bool(any_pricing[i]), budget_usd=budget_usd,
                           objective=objective)
    best_cost = np.full(len(book), math.inf)
    best_cost[idx] = lows
    for span in built:
        best_cost[span.shape.idx] = span.shape.best_cost
    book.best_cost = dict(zip(idx.tolist(), lows.tolist(), strict=True))
    return Offers(idx=idx, keys=keys, lows=lows, times=times, starts=starts, ends=ends, costs=costs, built=built,
                  best_cost=best_cost)


def rows_in_arrays(job: JobSpec, offers: Offers, machines: Sequence[Machine], table: MachineTable) -> list[Row]:
    """ranking.ordered_rows over the spans as arrays, where no span can be owned: ranking.top_rows, and under the
    balanced objective the knee of the cost/time front first (front.knee_first)."""
    import numpy as np

    limit = max(job.limit, 0)
    if limit == 0 or not len(offers):
        return []
    built = offers.built
    keys = np.concatenate([offers.keys, np.array([sp.min_key for sp in built], dtype=float)])
    idx = np.concatenate([offers.idx, np.array([sp.shape.idx for sp in built], dtype=np.intp)])
    name_ids, names = table.name_ids()
    group = name_ids[idx]
    best = np.full(names, math.inf)
    np.minimum.at(best, group, keys)
    present = np.zeros(names, dtype=bool)
    present[group] = True
    bests = np.sort(best[present])
    threshold = float(bests[limit - 1]) if len(bests) >= limit else math.inf  # top_rows' bound on the first key
    by_cost, by_time = job.objective is Objective.COST, job.objective is Objective.TIME
    rows: list[Row] = []

    def add(i: int, t: float, costs: list[float], kept: Sequence[Any]) -> None:
        m = machines[i]
        provider, name = m.provider_name, m.instance_type
        for cost, o in zip(costs, kept, strict=True):
            key = cost if by_cost else t if by_time else cost * t
            if key <= threshold:
                rows.append((key, t if by_cost else cost, provider, name, o.region, o.pricing,
                             o.price_per_hour_usd, cost, i))

    for j in np.flatnonzero(offers.keys <= threshold).tolist():
        i = int(offers.idx[j])
        add(i, float(offers.times[j]), offers.costs[offers.starts[j]:offers.ends[j]].tolist(), machines[i].offers)
    for span in built:
        if span.min_key <= threshold:
            add(span.shape.idx, span.shape.time_metric, span.costs, span.offers)
    rows.sort()
    from workers.ranking.ranking import _fewest_regions  # it imports this module

    rows = _fewest_regions(rows, limit)
    if job.objective is Objective.BALANCED:
        rows = knee_of_front_first(rows, _front(offers), lambda t, cost, i: _knee_row(offers, machines, t, cost, i))
    return rows


def _front(offers: Offers) -> list[tuple[float, float, int]]:
    """Return front.knee_first's front of the spans: per time the cheapest (cost, index), those cheaper than
    every faster one, fastest first."""
    import numpy as np

    times, costs, idx = (np.array(a) for a in offers.points())
    order = np.lexsort((idx, costs, times))  # by time, then (cost, index): the first of each time is its least mark
    times, costs, idx = times[order], costs[order], idx[order]
    first = np.ones(len(times), dtype=bool)
    first[1:] = times[1:] != times[:-1]
    times, costs, idx = times[first], costs[first], idx[first]
    kept = np.ones(len(times), dtype=bool)
    kept[1:] = costs[1:] < np.minimum.accumulate(costs)[:-1]  # cheaper than every faster point
    return list(zip(times[kept].tolist(), costs[kept].tolist(), idx[kept].tolist(), strict=True))


def _knee_row(offers: Offers, machines: Sequence[Machine], t: float, cost: float, i: int) -> Row:
    """Return the row of shape i's offer at `cost` (its first), keyed as the balanced objective keys it."""
    import numpy as np

    span = next((sp for sp in offers.built if sp.shape.idx == i), None)
    if span is not None:
        costs, kept = span.costs, span.offers
    else:
        j = int(np.flatnonzero(offers.idx == i)[0])
        costs, kept = offers.costs[offers.starts[j]:offers.ends[j]].tolist(), machines[i].offers
    o, m = kept[costs.index(cost)], machines[i]
    return (cost * t, cost, m.provider_name, m.instance_type, o.region, o.pricing, o.price_per_hour_usd, cost, i)


def nothing_fits_in_arrays(book: ShapeBook, offers: Offers) -> bool:
    """ranking.rank_offers' test, where no span was found: is every shape with an offer in scope short of GPU memory
    or of an estimate?"""
    codes = book.judged.reject_codes
    seen = book.seen or []
    in_scope = False
    for i in range(len(book)):
        s = book.made.get(i)
        if s is not None:
            if not (s.seen or s.best_cost < math.inf or s.over_budget is not None or s.over_co2e is not None
                    or s.missing_storage_regions):
                continue
            reject = s.reject
        elif seen[i] or offers.best_cost[i] < math.inf:
            reject = KINDS[codes[i]] or None
        else:
            continue
        in_scope = True
        if reject not in (GPU_MEMORY, NO_ESTIMATE):
            return False
    return in_scope
