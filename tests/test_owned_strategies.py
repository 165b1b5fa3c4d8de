"""A team's own cards are ranked under a strategy too: their host is taken to hold what the job keeps there."""

from __future__ import annotations

from catalog.loader import load_catalog
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
