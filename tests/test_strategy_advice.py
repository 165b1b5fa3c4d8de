"""A job ranked by strategy is advised about the machine it is told to take, not about the reference T4."""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import recommend_spec

LLAMA3_8B = {"model": {"preset": "llama3-8b"},
             "training": {"batch_size": 4, "sequence_length": 2048, "precision": "bf16-mixed", "optimizer": "adamw",
                          "from_pretrained": True},
             "dataset": {"samples": 50_000}}
LLAMA2_70B = {"model": {"preset": "llama2-70b"},
              "training": {"batch_size": 1, "sequence_length": 4096, "precision": "bf16-mixed", "optimizer": "adamw",
                           "from_pretrained": True},
              "dataset": {"samples": 10_000}}




def test_a_sharded_top_option_is_advised_about_its_own_cards_not_the_reference_t4(shipped: Catalog) -> None:
    rec = recommend_spec(LLAMA3_8B, shipped)
    top = rec.options[0]
    assert top.parallelism is not None and top.parallelism.data_parallel != "plain"
    assert top.gpu in {"b200", "h100-sxm", "h200", "a100-80gb", "h100-pcie"}  # a bf16 card, unlike the reference t4
    codes = [w.code for w in rec.requirements.warnings]
    assert "bf16-unsupported" not in codes and "data-parallel-full-copy" not in codes
    # No card holds it as given (batch 4 in plain data parallel): that stays said, beside the reference
    # card's out-of-memory steps, and the memory tier describes the job as given, the requirements' figure.
    assert codes.count("does-not-fit") == 1 and rec.requirements.mitigations
    [tier] = [w for w in rec.requirements.warnings if w.code == "memory-tier"]
    assert f"{rec.requirements.gpu_memory_bytes / 2**30:.1f} GiB" in tier.message
    # ... and says what the top option needs, so that the tier does not contradict the answer's first machine
    needs = top.parallelism.gpu_memory_per_gpu_bytes / 2**30
    assert f"The top option runs it in {needs:.1f} GiB per GPU" in tier.message


def test_a_job_some_card_holds_keeps_no_memory_warning_its_strategy_resolved(shipped: Catalog) -> None:
    # GPT-2 small pre-training at batch 12 x 1,024 (nanoGPT): 19 GiB, more than the reference t4 holds, well
    # within an 80 GB card; more GPUs allowed than one machine has, so the strategy ranking answers.
    spec = {"model": {"preset": "gpt2"},
            "training": {"batch_size": 12, "sequence_length": 1024, "precision": "bf16-mixed", "optimizer": "adamw",
                         "update_interval": 5, "from_pretrained": False},
            "dataset": {"samples": 8_800_000}, "constraints": {"max_gpus": 16}}
    rec = recommend_spec(spec, shipped)
    top = rec.options[0]
    assert top.parallelism is not None and top.gpu != "t4"
    codes = {w.code for w in rec.requirements.warnings}
    assert not codes & {"does-not-fit", "batch-not-the-problem", "bf16-unsupported"}


def test_a_job_one_gpu_cannot_hold_is_never_told_to_run_trials_one_per_gpu(shipped: Catalog) -> None:
    rec = recommend_spec(LLAMA2_70B, shipped)
    assert rec.options and rec.options[0].parallelism is not None
    codes = {w.code for w in rec.requirements.warnings}
    assert "run-trials-in-parallel" not in codes and "parameter-exchange-bound" not in codes
