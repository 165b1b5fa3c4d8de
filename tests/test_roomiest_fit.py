"""A job as given that only cards over 80 GB hold is ranked by the strategy search too (micro-batches, sharding)."""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommend import ROOMY_CARD_BYTES

# Llama 3.2 1B, every weight trained, 8 x 2,048 tokens: 85 GiB as given (B200, H200, RTX PRO 6000 hold it)
SMALL_LLM: dict[str, Any] = {
    "model": {"preset": "llama3.2-1b"},
    "training": {"batch_size": 8, "sequence_length": 2048, "precision": "bf16-mixed", "epochs": 1},
    "dataset": {"samples": 100000}}


def test_a_job_only_the_roomiest_cards_hold_as_given_is_run_with_micro_batches_on_an_80gb_card(
        shipped: Catalog) -> None:
    rec = recommend_spec(SMALL_LLM, shipped)
    assert rec.requirements.gpu_memory_bytes > ROOMY_CARD_BYTES  # no 80 GB card holds it as given
    top = rec.options[0]
    gpus = {g.slug: g for g in shipped.gpus}
    assert gpus[top.gpu].memory_bytes <= ROOMY_CARD_BYTES  # before: 8 x B200 for $4.33 came first
    assert top.parallelism is not None and top.parallelism.update_interval > 1  # the same batch, accumulated
    roomy = [o for o in rec.options if gpus[o.gpu].memory_bytes > ROOMY_CARD_BYTES]
    assert all(top.training_cost_usd <= o.training_cost_usd for o in roomy)


def test_a_scope_of_the_roomiest_cards_alone_is_ranked_as_given(shipped: Catalog) -> None:
    only_b200 = {**SMALL_LLM, "constraints": {"gpus": ["b200"]}}
    rec = recommend_spec(only_b200, shipped)
    assert rec.options and all(o.gpu == "b200" for o in rec.options)
    assert all(o.parallelism is None for o in rec.options)  # no search: the job runs as given there
