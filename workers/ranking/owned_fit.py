"""What the team's own cards would need, where the job as given fits none of them and the answer is rented.

"Can I fine-tune Llama 3 8B on my 3090 with QLoRA?" names an owned card (constraints.owned_gpus). Where the job as
given does not fit it, the ranking rejects it and ranks rentals; the user asked about their card. The warning
`owned-cards-need-changes` says, for each owned card model, the simplest row of the out-of-memory plan on the cards
owned that fits (the plan's order: the fused update, the fused loss, a smaller batch, ..., every same-card change
together last, oom_combined.py), or that none does.
"""

from __future__ import annotations

from collections.abc import Sequence

from catalog.types import Catalog, GpuSpec, Pricing
from catalog.units import GIB
from workers.ranking.left_out import left_out_reason
from workers.ranking.recommendation import Recommendation
from workers.sizing.errors import SpecError
from workers.sizing.estimate import estimate_on_gpus
from workers.sizing.memory import usable_memory_bytes
from workers.sizing.requirements import CodedWarning, Mitigation, MitigationKind, Requirements
from workers.sizing.spec import JobSpec

# Rows that do not make the job fit the cards owned as they are: another method, or a network to redesign.
_NOT_ON_THE_CARDS = frozenset({MitigationKind.ADAPTERS, MitigationKind.CHANGE_NETWORK})


def same_cards_row(mitigations: Sequence[Mitigation], *, gpu: str, count: int, usable: int) -> Mitigation | None:
    """Return the first row of the out-of-memory plan that fits `count` x `gpu` as they are and keeps the method
    (no adapters, except a LoRA job's base held in 4 bits; no network to redesign), None where none does."""
    return next((m for m in mitigations if (m.kind not in _NOT_ON_THE_CARDS or m.keeps_method) and m.gpu in (None, gpu)
                 and m.gpu_count in (None, count) and m.gpu_memory_bytes <= usable), None)


def same_cards_fixes(requirements: Requirements, gpus: Sequence[GpuSpec]) -> dict[str, Mitigation]:
    """Return, for each card of `requirements.per_gpu` the job as given does not fit, the first row of its plan that
    fits the same cards and keeps the method (same_cards_row): "does llama 3 70b lora fit on 8 a100s", sharded."""
    cards = {g.slug: g for g in gpus}
    found = {}
    for row in requirements.per_gpu:
        if not row.fits and row.gpu in cards and (fix := same_cards_row(
                requirements.mitigations, gpu=row.gpu, count=row.gpu_count,
                usable=usable_memory_bytes(cards[row.gpu]))) is not None:
            found[row.gpu] = fix
    return found


def owned_cards_warning(job: JobSpec, rec: Recommendation, catalog: Catalog) -> CodedWarning | None:
    """Return `owned-cards-need-changes` where the team owns cards, none is among the options and the job as given
    does not fit them; None otherwise (an owned card left out for time, money or host memory is in `rejected`)."""
    if not job.constraints.owned_gpus or any(o.pricing is Pricing.OWNED for o in rec.options):
        return None
    gpus = {g.slug: g for g in catalog.gpus}
    said = []
    for card in job.constraints.owned_gpus:
        gpu = gpus.get(card.gpu)
        if gpu is None or left_out_reason(job, gpu):
            continue
        try:
            need = estimate_on_gpus(job, catalog.gpus, slugs=[card.gpu], gpu_count=card.count)
        except SpecError:  # the cards owned cannot run the layout the spec names (tensor parallel 2 on one card)
            continue
        usable = usable_memory_bytes(gpu)
        if need.gpu_memory_bytes <= usable:
            continue
        cards, them = f"{card.count} x {card.gpu}", "them" if card.count > 1 else "it"
        row = same_cards_row(need.mitigations, gpu=card.gpu, count=card.count, usable=usable)
        given = f"Your {cards} cannot hold the job as given ({need.gpu_memory_bytes / GIB:.1f} GiB per GPU"
        if row is None:
            said.append(f"{given}, {usable / GIB:.1f} GiB usable), nor with every change that keeps the method on "
                        f"{them}.")
        else:
            said.append(f"{given}); on {them}, {row.kind.value} ({row.time_factor:.2f}x the time): {row.description}")
    if not said:
        return None
    return CodedWarning("owned-cards-need-changes", " ".join(said) + " The options are rented; say the change in "
                        "the spec to rank your cards beside them.")
