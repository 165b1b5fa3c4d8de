"""The out-of-memory plan beside the options: where the job as given fits no card, an answer with options still says
every change alone (the adapters a Slack user never named among them), and what each first opens, in words a job
without a sample count can read (its iteration and hourly price, not "0.0 min, $0.0000")."""

from __future__ import annotations

import json

from catalog.types import Catalog
from tests.recommending import recommend_spec
from tests.test_slack_blocks import assert_valid_message, option, result
from workers.schemas import RecommendationSchema
from workers.sizing.requirements import Mitigation
from workers.slack.blocks import render_recommendation

GIB = 2**30

# "can i fine-tune mistral 7b on a 24gb card" as the Slack grammar makes it (TRL's defaults), without samples
MISTRAL_ON_24GB = {
    "model": {"preset": "mistral-7b"},
    "training": {"from_pretrained": True, "sequence_length": 1024, "batch_size": 8, "precision": "bf16-mixed",
                 "optimizer": "adamw", "optimizer_implementation": "fused", "gradient_clipping": "global",
                 "recompute": True, "loss": "fused_linear_cross_entropy"},
    "constraints": {"max_gpus": 1, "gpus": ["a10g", "l4"]},
}


def test_a_plan_beside_options_is_shown_with_what_each_step_first_opens() -> None:
    plan = (Mitigation(kind="adapters", description="train LoRA adapters", gpu_memory_bytes=20 * GIB,
                       opens=("aws g5.xlarge (1x a10g), us-east-1, spot: 2.0 h for $2.00",)),)
    msg = render_recommendation(result((option(1),), plan=plan), title="mistral 7b on a 24gb card")
    assert_valid_message(msg)
    text = json.dumps(msg["blocks"], ensure_ascii=False)
    assert "Adapters fit too" in text and "*adapters*: 20.0 GiB per GPU" in text
    assert "First it opens: aws g5.xlarge (1x a10g), us-east-1, spot: 2.0 h for $2.00." in text
    # where the job as given fits (no plan), or only steps the options already take (or none that opens anything)
    # are in the plan, nothing more is said
    plain = json.dumps(render_recommendation(result((option(1),)), title="x")["blocks"], ensure_ascii=False)
    assert "Adapters fit too" not in plain
    others = (Mitigation(kind="checkpointing", description="still exceeds", gpu_memory_bytes=90 * GIB),
              Mitigation(kind="sharding", description="shard 8 ways", gpu_memory_bytes=20 * GIB,
                         opens=("aws p5.48xlarge (8x h100-sxm), us-east-1, spot: 2.0 h for $20.00",)),
              Mitigation(kind="adapters", description="train LoRA adapters", gpu_memory_bytes=90 * GIB))
    shut = json.dumps(render_recommendation(result((option(1),), plan=others), title="x")["blocks"], ensure_ascii=False)
    assert "still exceeds" not in shut and "shard 8 ways" not in shut and "train LoRA" not in shut


def test_a_7b_full_fine_tune_on_a_24gb_card_names_its_adapters_and_their_iteration(shipped: Catalog) -> None:
    rec = recommend_spec(MISTRAL_ON_24GB, shipped)
    assert rec.options and all(o.parallelism is not None and o.parallelism.adapter == "none" for o in rec.options)
    adapters = next(step for step in rec.plan if step.kind == "adapters")
    assert adapters.opens, "LoRA fits a 24 GB card: the plan says where"
    for line in adapters.opens:  # no sample count: the iteration and the hourly price, never zero hours
        assert "ms an iteration at $" in line and "0.0 min" not in line and "$0.0000" not in line
    msg = render_recommendation(RecommendationSchema().dump(rec), title="can i fine-tune mistral 7b on a 24gb card")
    assert_valid_message(msg)
    assert "LoRA" in json.dumps(msg["blocks"], ensure_ascii=False)
