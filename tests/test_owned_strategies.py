"""A team's own cards are ranked under a strategy too: their host is taken to hold what the job keeps there."""

from __future__ import annotations

from catalog.loader import load_catalog
from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.recommend import recommend
from workers.schemas.specs import load_job


def test_qlora_of_llama_7b_on_the_teams_two_rtx_3090s_comes_first_at_its_power_cost() -> None:
    spec = {"model": {"preset": "llama-7b"},
            "training": {"batch_size": 4, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw",
                         "from_pretrained": True, "parallelism": {"adapter": {"kind": "qlora", "rank": 16}}},
            "dataset": {"samples": 20_000},
            "constraints": {"providers": ["onprem", "aws", "gcp"], "owned_gpus": [{"gpu": "rtx-3090", "count": 2}]}}
    _, job = load_job(spec)
    rec = recommend(job, load_catalog())
    owned = [o for o in rec.options if o.owned]
    # QLoRA keeps a little on the host (its paged optimizer state); the team's host was sized to the job
    # without it, and every owned machine was rejected as if no strategy fitted a 24 GB card.
    assert owned and rec.options[0].owned
    assert {o.instance_type for o in owned} == {"onprem-1x-rtx-3090", "onprem-2x-rtx-3090"}
    assert all(o.parallelism is not None and o.parallelism.adapter == "qlora" for o in owned)
    assert not [r for r in rec.rejected if r.provider == "onprem"]


def test_a_strategy_ranked_answer_names_each_rejected_instance_type_once_smallest_first(shipped: Catalog) -> None:
    spec = {"model": {"preset": "llama3-8b"},
            "training": {"batch_size": 4, "sequence_length": 4096, "precision": "bf16-mixed", "optimizer": "adamw",
                         "from_pretrained": True},
            "dataset": {"samples": 50_000}}
    rec = recommend_spec(spec, shipped)
    unfit = [r for r in rec.rejected if r.reason.startswith("no strategy fits")]
    assert unfit
    for r in unfit:  # one machine per region and pricing had listed g4dn.xlarge 6 times
        names = r.instance_type.split(", ")
        assert len(names) == len(set(names)), r.instance_type
    t4 = next(r for r in unfit if r.gpu == "t4" and r.provider == "aws")
    assert t4.instance_type.startswith("g4dn.xlarge, g4dn.2xlarge") and t4.gpu_count == 1
