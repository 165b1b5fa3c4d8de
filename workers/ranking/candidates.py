"""The offers that meet every constraint, costed, with their sort key: the ranking's per-offer step.

Where the scope filters no offer out (every pricing kind, every region) and every region has a
block storage price, the costs of all such machines' offers come from one pass of NumPy array
arithmetic (_costed_in_arrays; tests/test_ranking_arrays.py holds it to a plain loop); otherwise
each offer is checked in turn. Both paths cost an offer the same way: hourly price x hours
(`Shape.cost_mult`; for a commitment, the term's hours: shapes.py), plus the block storage rate of its
region x `Shape.block_factor` where local disk is short, plus moving the data set into the region
(`Shape.egress_usd`: a machine's offers are split by that price, shapes.by_transfer); the array path
adds the block storage before the move (as the per-machine comprehension it replaced did), the
one-by-one path after it, so the two can differ in the last bit of a cost. A machine's
kept offers stay together (a `Span`) as a list of floats and the existing offers: building a
tuple per offer would wake the
garbage collector over the whole catalog many times a run, and the ranking needs to look only into
the spans whose best key could make the cut.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from catalog.types import Offer
from workers.ranking.machine_table import Judged, MachineTable
from workers.ranking.scope import Scope
from workers.ranking.shapes import Shape
from workers.sizing.spec import Objective


class Span:
    """One machine's offers that meet every constraint, with their costs, and the smallest sort key."""

    __slots__ = ("co2", "costs", "min_key", "objective", "offers", "shape")

    def __init__(self, shape: Shape, costs: list[float], offers: Sequence[Offer], objective: Objective,
                 ) -> None:
        self.shape, self.costs, self.offers, self.objective = shape, costs, offers, objective
        self.co2: list[float] | None = None  # each offer's CO2e, set by carbon.apply_carbon for that objective
        self.rekey()

    def rekey(self) -> None:
        """Set the shape's cheapest cost and the span's smallest key from the offers it holds."""
        self.shape.best_cost = cheapest = min(self.costs)
        t = self.shape.time_metric
        # Each objective's first sort key (see ranking.py); with t > 0, min(cost) x t is min(cost x t).
        # The carbon objective's key is set by carbon.apply_carbon (it needs each region's intensity).
        objective = self.objective
        self.min_key = t if objective is Objective.TIME else cheapest * t if objective is Objective.BALANCED \
            else cheapest


def _note_over_budget(s: Shape, costs: Sequence[float], offers: Sequence[Offer], budget_usd: float) -> None:
    """Keep the cheapest offer over the budget (ties by region and pricing) for the rejection's reason.

    `budget_usd` is the limit on the expected cost (the budget over `Shape.budget_scale`); the mark
    keeps the cost the budget was held to.
    """
    cheapest = min(c for c in costs if c > budget_usd)
    mark = min((c * s.budget_scale, o.region, o.pricing) for c, o in zip(costs, offers, strict=True)
               if c == cheapest)
    if s.over_budget is None or mark < s.over_budget:
        s.over_budget = mark


def _within_budget(s: Shape, costs: list[float], found: list[Span], *, budget_usd: float,
                   objective: Objective) -> None:
    """Keep a machine's offers within the budget (held to cost x `Shape.budget_scale`), noting the cheapest over."""
    budget_usd /= s.budget_scale
    offers: Sequence[Offer] = s.m.offers
    _note_over_budget(s, costs, offers, budget_usd)
    within = [i for i, c in enumerate(costs) if c <= budget_usd]
    if within:
        found.append(Span(s, [costs[i] for i in within], [offers[i] for i in within], objective))


def _costed_one_by_one(s: Shape, found: list[Span], *, scope: Scope, any_pricing: bool, budget_usd: float,
                       objective: Objective) -> None:
    """Check each of a machine's offers against the scope, then cost it and keep it within the budget."""
    pricing_ok, regions_ok = scope.pricing, scope.regions
    costs: list[float] = []
    offers: list[Offer] = []
    mult, block_factor, scale = s.cost_mult, s.block_factor, s.budget_scale
    budget_usd /= scale
    for o in s.m.offers:
        if not any_pricing and o.pricing not in pricing_ok:
            continue
        region = o.region
        if regions_ok and region not in regions_ok:
            continue
        cost = o.price_per_hour_usd * mult + s.egress_usd
        if block_factor:
            per_gb_month = s.block_prices.get(region, s.block_fallback)
            if per_gb_month is None:
                s.missing_storage_regions = s.missing_storage_regions | {region}
                continue
            cost += block_factor * per_gb_month
        if cost > budget_usd:
            if s.over_budget is None or cost * scale <= s.over_budget[0]:
                mark = (cost * scale, region, o.pricing)
                if s.over_budget is None or mark < s.over_budget:
                    s.over_budget = mark
            continue
        costs.append(cost)
        offers.append(o)
    if costs:
        found.append(Span(s, costs, offers, objective))


def _costed_in_arrays(shapes: Sequence[Shape], found: list[Span], *, budget_usd: float,
                      objective: Objective) -> None:
    """Cost the offers of many machines at once and keep those within the budget, a span per machine in order.

    One array of every offer's price and block storage rate; each offer's cost is the same expression
    in the same order as the per-machine comprehension this replaced (hourly price x its machine's
    multiplier, plus block factor x rate where the machine adds block storage, plus the move of the
    data set), so each float is the same; so are each machine's cheapest offer and first sort key
    (minima are exact).
    """
    import numpy as np

    lengths = [len(s.m.prices) for s in shapes]
    total = sum(lengths)
    if total == 0:
        return
    prices = np.fromiter(itertools.chain.from_iterable(s.m.prices for s in shapes), dtype=float, count=total)
    counts = np.array(lengths)
    mult = np.repeat(np.array([s.cost_mult for s in shapes], dtype=float), counts)
    block = np.repeat(np.array([s.block_factor for s in shapes], dtype=float), counts)
    egress = np.repeat(np.array([s.egress_usd for s in shapes], dtype=float), counts)
    costs = prices * mult
    if block.any():
        rates = np.fromiter(itertools.chain.from_iterable(s.m.block_rates if s.block_factor else s.m.prices
                                                          for s in shapes), dtype=float, count=total)
        costs = np.where(block != 0.0, costs + block * rates, costs)
    costs = costs + egress
    ends = np.cumsum(counts)
    starts = ends - counts
    held = counts > 0  # a machine with no offer (none in the catalog) has no span
    lows = np.zeros(len(shapes))
    highs = np.zeros(len(shapes))
    lows[held] = np.minimum.reduceat(costs, starts[held])
    highs[held] = np.maximum.reduceat(costs, starts[held])
    times = np.array([s.time_metric for s in shapes], dtype=float)
    # Each objective's first sort key, as Span.rekey sets it
    keys = times if objective is Objective.TIME else lows * times if objective is Objective.BALANCED else lows
    limited = budget_usd < math.inf
    over = [limited and high > budget_usd / s.budget_scale for s, high in zip(shapes, highs.tolist(), strict=True)]
    _add_spans(shapes, found, flat=costs.tolist(), starts=starts.tolist(), ends=ends.tolist(), lows=lows.tolist(),
               keys=keys.tolist(), over=over, budget_usd=budget_usd, objective=objective)


def _add_spans(shapes: Sequence[Shape], found: list[Span], *, flat: list[float], starts: list[int], ends: list[int],
               lows: list[float], keys: list[float], over: list[bool], budget_usd: float,
               objective: Objective) -> None:
    """Append each shape's span of offers costed in `flat[start:end]`, or its offers within the budget where over."""
    make = Span.__new__
    for s, start, end, low, key, is_over in zip(shapes, starts, ends, lows, keys, over, strict=True):
        if end == start:
            continue
        if is_over:
            _within_budget(s, flat[start:end], found, budget_usd=budget_usd, objective=objective)
            continue
        span = make(Span)  # Span(s, costs, offers, objective) with rekey's figures from the arrays
        span.shape, span.costs, span.offers, span.objective, span.co2 = s, flat[start:end], s.m.offers, objective, None
        s.best_cost, span.min_key = low, key
        found.append(span)


def _costed_from_table(shapes: Sequence[Shape], found: list[Span], *, table: MachineTable, at: Any, cost_mult: Any,
                       block_factor: Any, egress_usd: Any, times: Any, budget_scale: Any, budget_usd: float,
                       objective: Objective) -> None:
    """_costed_in_arrays for shapes on the table's machines `at`, their figures given as arrays (judge_arrays'):
    the offers' prices and block storage rates are read from the table, the same floats in the same order."""
    costed = table_costs(table=table, at=at, cost_mult=cost_mult, block_factor=block_factor, egress_usd=egress_usd,
                         times=times, budget_scale=budget_scale, budget_usd=budget_usd, objective=objective)
    if costed is None:
        return
    costs, starts, ends, lows, keys, over = costed
    _add_spans(shapes, found, flat=costs.tolist(), starts=starts.tolist(), ends=ends.tolist(), lows=lows.tolist(),
               keys=keys.tolist(), over=over.tolist(), budget_usd=budget_usd, objective=objective)


def table_costs(*, table: MachineTable, at: Any, cost_mult: Any, block_factor: Any, egress_usd: Any, times: Any,
                budget_scale: Any, budget_usd: float, objective: Objective) -> tuple[Any, ...] | None:
    """Return the costs of the offers of the table's machines `at`, in one array, with each machine's first and
    past-last offer in it, its cheapest cost and first sort key, and whether its dearest offer is over the budget
    (None when the machines have no offer)."""
    import numpy as np

    if not len(at):
        return None
    prices_all, rates_all, first, counts_all = table.offer_arrays()
    counts = counts_all[at]
    total = int(counts.sum())
    if total == 0:
        return None
    ends = np.cumsum(counts)
    starts = ends - counts
    offer = np.repeat(first[at] - starts, counts) + np.arange(total)  # each kept machine's offers, in turn
    costs = prices_all[offer] * np.repeat(cost_mult, counts)
    if block_factor.any():
        block = np.repeat(block_factor, counts)
        costs = np.where(block != 0.0, costs + block * rates_all[offer], costs)
    costs = costs + np.repeat(egress_usd, counts)
    held = counts > 0  # a machine with no offer (none in the catalog) has no span
    lows = np.zeros(len(at))
    highs = np.zeros(len(at))
    lows[held] = np.minimum.reduceat(costs, starts[held])
    highs[held] = np.maximum.reduceat(costs, starts[held])
    # Each objective's first sort key, as Span.rekey sets it
    keys = times if objective is Objective.TIME else lows * times if objective is Objective.BALANCED else lows
    over = highs > budget_usd / budget_scale if budget_usd < math.inf else np.zeros(len(at), dtype=bool)
    return costs, starts, ends, lows, keys, over


def collect_candidates(shapes: Sequence[Shape], *, scope: Scope, budget_usd: float,
                       objective: Objective, judged: Judged | None = None) -> list[Span]:
    """Return, per machine that can run the job, its offers in scope and within the budget, costed.

    `judged`: judge_arrays' findings for these shapes (shapes[i] on judged.table's machine i); the offers of
    the machines they keep are then costed from the table's arrays, without reading each shape.
    """
    if judged is not None and not scope.regions:
        return _collect_judged(shapes, judged, scope=scope, budget_usd=budget_usd, objective=objective)
    alone: list[Span] = []
    in_scope = frozenset(scope.pricing)
    together: list[Shape] = []
    for s in shapes:
        # A machine holds the offers of one pricing kind (catalog_index): in scope, none is filtered out.
        any_pricing = s.m.pricing in in_scope
        unfiltered = any_pricing and not scope.regions
        if s.reject is not None:
            _note_seen(s, scope=scope, any_pricing=any_pricing)
        elif unfiltered and (not s.block_factor or s.m.block_rates_complete):
            together.append(s)
        else:
            _costed_one_by_one(s, alone, scope=scope, any_pricing=any_pricing, budget_usd=budget_usd,
                               objective=objective)
    spans: list[Span] = []
    _costed_in_arrays(together, spans, budget_usd=budget_usd, objective=objective)
    if not alone:
        return spans
    position = {id(s): i for i, s in enumerate(shapes)}  # in the shapes' order, as before
    return sorted(spans + alone, key=lambda span: position[id(span.shape)])


def _note_seen(s: Shape, *, scope: Scope, any_pricing: bool) -> None:
    """Mark a rejected shape as seen when an offer of it is in scope (its own reason then names it)."""
    if any_pricing and not scope.regions:
        s.seen = bool(s.m.offers)
    else:
        s.seen = any((any_pricing or o.pricing in scope.pricing)
                     and (not scope.regions or o.region in scope.regions) for o in s.m.offers)


def _collect_judged(shapes: Sequence[Shape], judged: Judged, *, scope: Scope, budget_usd: float,
                    objective: Objective) -> list[Span]:
    """collect_candidates over judge_arrays' findings, with every region in scope: the same spans in the same order."""
    import numpy as np

    table = judged.table
    in_scope = frozenset(scope.pricing)
    any_pricing = np.array([p in in_scope for p in table.pricings], dtype=bool)[table.pricing_id]
    ok = np.zeros(len(shapes), dtype=bool)
    ok[judged.at[judged.ok]] = True
    for i in np.flatnonzero(~ok).tolist():
        s = shapes[i]
        if s.reject is not None:
            _note_seen(s, scope=scope, any_pricing=bool(any_pricing[i]))
    # over the shapes that passed judging (judged.at[judged.ok]): priced together, or offer by offer
    at, keep = judged.at[judged.ok], judged.ok
    block_factor = judged.block_factor[keep]
    together = any_pricing[at] & ((block_factor == 0.0) | table.block_rates_complete[at])
    spans: list[Span] = []
    chosen = np.flatnonzero(together)
    _costed_from_table([shapes[i] for i in at[chosen].tolist()], spans, table=table, at=at[chosen],
                       cost_mult=judged.cost_mult[keep][chosen], block_factor=block_factor[chosen],
                       egress_usd=judged.egress_usd[keep][chosen], times=judged.time_metric[keep][chosen],
                       budget_scale=judged.budget_scale[keep][chosen], budget_usd=budget_usd, objective=objective)
    alone: list[Span] = []
    for i in at[~together].tolist():
        s = shapes[i]
        _costed_one_by_one(s, alone, scope=scope, any_pricing=bool(any_pricing[i]), budget_usd=budget_usd,
                           objective=objective)
    if not alone:
        return spans
    return sorted(spans + alone, key=lambda span: span.shape.idx)
