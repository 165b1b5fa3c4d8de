"""The out-of-memory plan's `combined` row: the same-card changes that keep the method, together.

Each row of the plan starts from the job as given, so a job that fits a card only with several of them read "no" in
every row: a QLoRA Llama 3 8B at its 8,192-token context on one RTX 3090 (the Slack question "does llama 3 8b fit on
a 3090 with qlora") needs 108 GiB at batch 1, 710 GiB with checkpointing, 2,083 GiB in bf16, each alone.
"""

from __future__ import annotations

from typing import Any

from catalog.types import Catalog
from tests.recommending import estimate_spec, recommend_spec, usable_bytes
from workers.schemas import RequirementsSchema
from workers.sizing.requirements import MitigationKind
from workers.slack.blocks import render_fit

QLORA_8B: dict[str, Any] = {"model": {"preset": "llama3-8b"}, "dataset": {"samples": 10000},
                            "training": {"batch_size": 32, "parallelism": {"adapter": {"kind": "qlora"}}}}



def test_a_qlora_8b_that_no_single_row_fits_on_a_3090_fits_with_them_together() -> None:
    result = estimate_spec(QLORA_8B, "rtx-3090")
    usable = usable_bytes("rtx-3090")
    one_card = [m for m in result.mitigations if m.kind is not MitigationKind.COMBINED and m.gpu_count in (None, 1)]
    assert one_card and all(m.gpu_memory_bytes > usable for m in one_card)
    [combined] = [m for m in result.mitigations if m.kind is MitigationKind.COMBINED]
    print(f"\ncombined: {combined.gpu_memory_bytes / 2**30:.1f} GiB, time x{combined.time_factor:.2f}: "
          f"{combined.description}")
    assert combined.gpu_memory_bytes <= usable and combined.gpu == "rtx-3090" and combined.gpu_count == 1
    micro = combined.batch_size
    assert micro is not None and micro * combined.update_interval == 32  # the same effective batch
    for change in ("bf16-mixed", "full checkpointing", "fused linear cross-entropy"):
        assert change in combined.description
    assert "fused Adam update" not in combined.description  # an adapter's optimizer state is a few MB
    # the row is the estimate of the job with those settings, as a user would write it
    def written(batch: int) -> dict[str, Any]:
        return {**QLORA_8B, "training": {"batch_size": batch, "update_interval": 32 // batch, "precision": "bf16-mixed",
                                         "loss": "fused_linear_cross_entropy",
                                         "parallelism": {"adapter": {"kind": "qlora"}, "checkpointing": "full"}}}

    assert estimate_spec(written(micro), "rtx-3090").gpu_memory_bytes == combined.gpu_memory_bytes
    assert estimate_spec(written(2 * micro), "rtx-3090").gpu_memory_bytes > usable  # the largest micro-batch that fits


def test_the_combined_row_keeps_the_batch_as_given_where_the_other_changes_suffice() -> None:
    # QLoRA Llama 3 8B, batch 4 x 2,048 on an RTX 4090: checkpointing alone 24.8 GiB, the fused loss alone 57.6 GiB;
    # together 11.5 GiB at batch 4. The row went to micro-batch 2 x 2 (9.3 GiB), an accumulation it did not need
    # (the micro-batch search stopped below the batch as given).
    spec = {**QLORA_8B, "training": {**QLORA_8B["training"], "batch_size": 4, "sequence_length": 2048,
                                     "precision": "bf16-mixed"}}
    [combined] = [m for m in estimate_spec(spec, "rtx-4090").mitigations if m.kind is MitigationKind.COMBINED]
    assert (combined.batch_size, combined.update_interval) == (4, 1) and "micro-batch" not in combined.description
    assert combined.gpu_memory_bytes <= usable_bytes("rtx-4090")


def test_no_combined_row_where_one_change_already_fits_the_card() -> None:
    spec = {"model": {"preset": "resnet50"}, "dataset": {"samples": 10000}, "training": {"batch_size": 512}}
    result = estimate_spec(spec, "t4")
    assert result.gpu_memory_bytes > usable_bytes("t4")
    assert any(m.kind is MitigationKind.SMALLER_BATCH and m.gpu_memory_bytes <= usable_bytes("t4")
               for m in result.mitigations)
    assert not any(m.kind is MitigationKind.COMBINED for m in result.mitigations)


def test_a_bf16_job_on_a_card_without_bf16_is_never_made_fp16_in_the_combined_row() -> None:
    spec = {**QLORA_8B, "training": {**QLORA_8B["training"], "precision": "bf16-mixed"}}
    [combined] = [m for m in estimate_spec(spec, "t4").mitigations if m.kind is MitigationKind.COMBINED]
    assert "fp16" not in combined.description and "bf16-mixed;" not in combined.description


def test_slack_says_the_combined_row_first() -> None:
    requirements = RequirementsSchema().dump(estimate_spec(QLORA_8B, "rtx-3090"))
    blocks = render_fit(requirements, title="fit")["blocks"]
    plan = next(b["text"]["text"] for b in blocks if "Out-of-memory plan" in (b.get("text") or {}).get("text", ""))
    assert plan.split("\n")[1].startswith("• *combined*")


def test_the_recommendation_plan_carries_the_fused_loss_and_combined_rows_with_the_machines_they_open(
        shipped: Catalog) -> None:
    # A QLoRA Llama 3 8B at 8,192 tokens on the plain cross-entropy, only L4 machines of one GPU: no layout of the
    # strategy search holds it, and every single row of the plan fails. The plan (the ranked steps with what each
    # opens) left out the fused loss and the changes together, the one row that opens an L4: "no option" and
    # nothing that worked.
    spec = {**QLORA_8B, "training": {**QLORA_8B["training"], "sequence_length": 8192, "precision": "bf16-mixed"},
            "constraints": {"gpus": ["l4"], "max_gpus": 1}}
    rec = recommend_spec(spec, shipped)
    assert not rec.options
    kinds = [m.kind for m in rec.plan]
    assert kinds[-1] is MitigationKind.COMBINED and MitigationKind.FUSED_LOSS in kinds
    assert kinds.index(MitigationKind.FUSED_LOSS) < kinds.index(MitigationKind.SMALLER_BATCH)  # the plan's order
    combined = rec.plan[-1]
    print(f"\ncombined: {combined.gpu_memory_bytes / 2**30:.1f} GiB, opens {combined.opens}")
    assert combined.gpu_memory_bytes <= usable_bytes("l4") and combined.opens
    assert all("(1x l4)" in line for line in combined.opens)
    assert not any(m.opens for m in rec.plan[:-1])  # alone, no change opens a machine


def test_the_recommendation_plan_says_the_changes_together_fit_where_only_a_deadline_leaves_no_option(
        shipped: Catalog) -> None:
    # Pre-training Llama 3 8B on 1T tokens at its 8,192 context, batch 32, within 30 days on 8 GPUs at most: the
    # deadline rules every layout out (constraints-conflict says so); the plan's single rows all "still exceed"
    # the roomiest card, which read as if the memory could not be solved on it.
    spec = {"model": {"preset": "llama-3-8b"}, "dataset": {"samples": 122_070_313},
            "training": {"from_pretrained": False, "batch_size": 32, "precision": "bf16-mixed"},
            "constraints": {"deadline_hours": 720}}
    rec = recommend_spec(spec, shipped)
    assert not rec.options
    assert any(w.code == "constraints-conflict" for w in rec.requirements.warnings)
    combined = rec.plan[-1]
    assert combined.kind is MitigationKind.COMBINED and combined.gpu_memory_bytes <= usable_bytes(combined.gpu or "")
    assert not combined.opens  # the deadline, not the memory
