"""The schema's largest GPU limit is reachable: `constraints.max_gpus` 1024 ranks 128 machines of 8 GPUs. The search
stopped at 64 machines: Llama 3 8B on 15T tokens, ranked by time within 1,024 GPUs, answered 512 B200 for 20.4 days
where 1,024 take 10.2 days for the same money, and said nothing of the cap."""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.strategy_ranking import MAX_NODES
from workers.ranking.wider import MAX_GPUS_LIMIT

LLAMA_15T = {"model": {"preset": "llama3-8b"},
             "training": {"from_pretrained": False, "batch_size": 2, "sequence_length": 8192,
                          "precision": "bf16-mixed", "optimizer": "adamw"},
             "dataset": {"tokens": 15_000_000_000_000}, "constraints": {"max_gpus": 1024, "pricing": ["on_demand"],
                                                                        "providers": ["gcp"]},
             "objective": "time", "limit": 3}


def test_the_node_limit_reaches_the_schemas_gpu_limit_on_eight_gpu_machines() -> None:
    assert MAX_NODES * 8 >= MAX_GPUS_LIMIT


def test_a_time_ranked_pretrain_within_1024_gpus_uses_them(shipped: Catalog) -> None:
    top = recommend_spec(LLAMA_15T, shipped).options[0]
    assert top.nodes * top.gpu_count == 1024
    half = recommend_spec({**LLAMA_15T, "constraints": {**LLAMA_15T["constraints"], "max_gpus": 512}},
                          shipped).options[0]
    assert top.training_hours < 0.6 * half.training_hours
