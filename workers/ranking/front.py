"""The cost/time front of a ranking: which options lie on it, and its knee (the balanced objective)."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable

from catalog.types import Pricing
from workers.ranking.candidates import Span

# One row per option that meets every constraint: the two sort keys, the tie-breaks, then what
# the option needs to be built (price, cost, shape index).
Row = tuple[float, float, str, str, str, Pricing, float, float, int]


def pareto_test(points: list[tuple[float, float]]) -> Callable[[float, float], bool]:
    """Return a test: is (time, cost) on the Pareto front, no point as good in both and better in one?

    `points` must include every option's (time, cost), or at least the cheapest cost at each time.
    """
    cheapest_at: dict[float, float] = {}
    for t, c in points:
        if c < cheapest_at.get(t, math.inf):
            cheapest_at[t] = c
    times = sorted(cheapest_at)
    cheapest = [cheapest_at[t] for t in times]
    before: list[float] = []  # before[i]: the cheapest cost among times[:i]
    running = math.inf
    for c in cheapest:
        before.append(running)
        running = min(running, c)
    return front_test(times, cheapest, before, running)


def front_test(times: list[float], cheapest: list[float], before: list[float],
               cheapest_of_all: float) -> Callable[[float, float], bool]:
    """Return pareto_test's test from its parts: the points' times, in order and each once, the cheapest cost at
    each, the cheapest at any earlier time (inf for the first) and the cheapest of all."""

    def on_front(t: float, c: float) -> bool:
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t and cheapest[i] < c:
            return False
        return not before[i] <= c if i < len(before) else not cheapest_of_all <= c

    return on_front


def knee_index(points: list[tuple[float, float]]) -> int:
    """Return the index of the knee of a cost/time Pareto front given as (time, cost), fastest first.

    The knee is where buying more speed starts to cost more, proportionally, than it gains: on
    log-log axes (halving the time weighs as much as halving the cost) the point where the front's
    slope passes -1, which is the point of least cost x time. Ties go to the cheaper point. A front
    whose faster points are only a hair faster (the same machine a minute sooner to boot) thus
    keeps its cheap end, where a chord scaled to the front's ends would call a 0.2% saving of time
    worth 70% more money.
    """
    best = 0
    for i, (t, c) in enumerate(points):
        bt, bc = points[best]
        if t * c < bt * bc * (1 - 1e-9) or (math.isclose(t * c, bt * bc, rel_tol=1e-9) and c < bc):
            best = i
    return best


def knee_first(rows: list[Row], spans: list[Span]) -> list[Row]:
    """Return the rows with the knee of the cost/time front first (the balanced objective), the rest after."""
    best_per_time: dict[float, tuple[float, int]] = {}
    for span in spans:
        s = span.shape
        mark = (s.best_cost, s.idx)
        if mark < best_per_time.get(s.time_metric, (math.inf, -1)):
            best_per_time[s.time_metric] = mark
    front: list[tuple[float, float, int]] = []
    for t in sorted(best_per_time):
        cost, idx = best_per_time[t]
        if not front or cost < front[-1][1]:
            front.append((t, cost, idx))

    def knee_row(t: float, cost: float, idx: int) -> Row:
        span = next(sp for sp in spans if sp.shape.idx == idx)
        i = span.costs.index(cost)
        o, s = span.offers[i], span.shape
        return (cost * t, cost, s.m.provider_name, s.m.instance_type, o.region, o.pricing, o.price_per_hour_usd,
                cost, idx)

    return knee_of_front_first(rows, front, knee_row)


def knee_of_front_first(rows: list[Row], front: list[tuple[float, float, int]],
                        knee_row: Callable[[float, float, int], Row]) -> list[Row]:
    """Return the rows with the knee of `front` first ((time, cost, shape index), fastest first), the rest after.

    The knee's row is the kept row of its shape at its cost, or else `knee_row(time, cost, index)` in place of the
    last kept row.
    """
    if not front:
        return rows
    t, cost, idx = front[knee_index([(f[0], f[1]) for f in front])]
    knee = next((r for r in rows if r[8] == idx and r[7] == cost), None)
    if knee is None:
        knee = knee_row(t, cost, idx)
        rows = rows[:-1] if rows else rows
    return [knee, *(r for r in rows if r is not knee)]
