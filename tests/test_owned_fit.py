"""Where the team's own cards cannot hold the job as given, the answer says what would make it fit them."""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec

QLORA_ON_MY_3090: dict[str, Any] = {
    "model": {"preset": "llama3-8b"}, "dataset": {"samples": 10000},
    "training": {"batch_size": 32, "from_pretrained": True, "parallelism": {"adapter": {"kind": "qlora"}}},
    "constraints": {"owned_gpus": [{"gpu": "rtx-3090", "count": 1}]},
}


def _owned_warning(rec: Any) -> str:
    return next((w.message for w in rec.requirements.warnings if w.code == "owned-cards-need-changes"), "")


def test_can_i_fine_tune_llama_3_8b_on_my_3090_with_qlora_names_the_changes_that_fit_it(shipped: Catalog) -> None:
    rec = recommend_spec(QLORA_ON_MY_3090, shipped)
    assert rec.options and not any(o.pricing.value == "owned" for o in rec.options)  # as given, rented
    said = _owned_warning(rec)
    print(f"\n{said}")
    assert said.startswith("Your 1 x rtx-3090 cannot hold the job as given")
    assert "combined" in said and "fits the 21.6 GiB usable on rtx-3090" in said
    assert "bf16-mixed" in said and "full checkpointing" in said and "fused linear cross-entropy" in said


def test_no_such_warning_where_an_owned_card_is_ranked(shipped: Catalog) -> None:
    rec = recommend_spec(changed_example("team-owns-4x3090"), shipped)
    assert any(o.pricing.value == "owned" for o in rec.options)
    assert _owned_warning(rec) == ""
