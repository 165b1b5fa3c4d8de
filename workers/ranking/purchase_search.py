"""The purchase question ("what would we buy") for a job the strategy search ranks.

rank_offers prices cards that hold the job as given. A job that names an adapter or a strategy, or that no
card holds as given (a 7B QLoRA at batch 4 x 2,048 on a 24 GB card), is ranked by the strategy search
(strategy_ranking.py); its purchase question asks the same search of each card on sale, one machine of
1 to max_gpus cards, so a card that holds the job with micro-batches, checkpointing or sharding is priced
with that strategy's hours and named with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from catalog.types import Pricing, Provider
from workers.ranking.catalog_index import CatalogIndex, Machine
from workers.ranking.costing import onprem_gpu_counts
from workers.ranking.purchase import BestRental, PurchaseOption, against_rental, purchase_options
from workers.ranking.recommendation import Recommendation
from workers.ranking.scope import Scope, cards_on_sale
from workers.ranking.shapes import Shape, cheapest_rental, onprem_machine
from workers.ranking.strategy_words import strategy_choice, strategy_text
from workers.sizing.requirements import Requirements
from workers.sizing.schedule import training_hours
from workers.sizing.spec import JobSpec
from workers.sizing.strategies.search import LayoutChoice


def searched_purchase(job: JobSpec, *, requirements: Requirements, index: CatalogIndex, scope: Scope,
                      best: Callable[[Machine, int], LayoutChoice | None],
                      shapes: Sequence[Shape]) -> tuple[PurchaseOption, ...]:
    """Return the purchase options of the cards in scope, each run with the fastest strategy that fits it.

    `best` is the ranking's strategy search (one machine of the given cards); `shapes` the ranked rentals,
    the cheapest of which a purchase is held against.
    """
    hours: dict[tuple[str, int], float] = {}
    strategies: dict[tuple[str, int], str] = {}
    throughput: dict[tuple[str, int], float] = {}
    for gpu in sorted(cards_on_sale(index, scope)):
        for n in onprem_gpu_counts(scope.max_gpus):
            choice = best(onprem_machine(job, requirements=requirements, index=index, gpu=gpu, gpu_count=n), 1)
            if choice is None:
                continue
            training = replace(job.training, batch_size=choice.batch_size, update_interval=choice.update_interval)
            hours[(gpu, n)] = training_hours(job.dataset, training, iteration_ms=choice.time.iteration_ms,
                                             forward_ms=choice.time.forward_ms,
                                             gpu_count=choice.layout.data_parallel_degree)
            strategies[(gpu, n)] = strategy_text(strategy_choice(choice), nodes=1)
            throughput[(gpu, n)] = (choice.batch_size * choice.layout.data_parallel_degree * 1000.0
                                    / choice.time.iteration_ms if choice.time.iteration_ms > 0 else 0.0)
    return purchase_options(job, cards=cards_on_sale(index, scope), hours=hours, best_rental=cheapest_rental(shapes),
                            max_gpus=scope.max_gpus, strategies=strategies, throughput=throughput)


def held_against_any_card(job: JobSpec, rec: Recommendation, rank: Callable[[JobSpec], Recommendation],
                          unrented: Callable[[], tuple[str, ...]]) -> Recommendation:
    """Return the recommendation with its purchase held against the cheapest rental of the same job on any card,
    where constraints.gpus names only cards no cloud rents and so left no rental to compare: "should we buy 4 RTX
    4090s or rent" priced the cards with no word on renting. Not where the providers are `onprem` alone (buying
    is all that was asked). `rank` ranks a job as the recommendation did, without its warnings."""
    c = job.constraints
    clouds = tuple(p for p in c.providers if p != Provider.ONPREM.value)
    if not rec.purchase or any(p.rental_cost_usd is not None for p in rec.purchase) or (c.providers and not clouds) \
            or not unrented():
        return rec
    found = rank(replace(job, constraints=replace(c, gpus=(), providers=clouds, owned_gpus=()), limit=1))
    top = next((o for o in found.options if o.pricing is not Pricing.OWNED), None)
    if top is None:
        return rec
    label = f"{top.provider} {top.instance_type} {top.pricing.value} ({top.gpu_count * top.nodes}x {top.gpu})"
    rental = BestRental(top.training_cost_usd, top.training_hours, label)  # as cheapest_rental: the expected cost
    return replace(rec, purchase=against_rental(rec.purchase, rental))
