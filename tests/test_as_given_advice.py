"""What a recommendation says of the job as given when only a strategy holds it, and the FLOPs it reports
for adapters."""

from __future__ import annotations

from dataclasses import replace

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.schemas.specs import load_job
from workers.sizing.strategies.types import Adapter, AdapterKind
from workers.sizing.timing import training_flops

BIG = {"model": {"preset": "llama-7b"},
       "training": {"batch_size": 64, "epochs": 1, "sequence_length": 2048, "precision": "bf16-mixed",
                    "optimizer": "adamw", "framework": "pytorch"},
       "dataset": {"samples": 5200, "bytes": 10_000_000, "in_memory": True},
       "constraints": {"providers": ["aws", "gcp"], "max_gpus": 8}}


def test_does_not_fit_names_the_roomiest_card_in_scope_and_the_top_options_strategy(shipped: Catalog) -> None:
    rec = recommend_spec(BIG, shipped)
    assert rec.options and rec.options[0].parallelism is not None
    said = [w.message for w in rec.requirements.warnings if w.code == "does-not-fit"]
    assert len(said) == 1
    roomiest = max((g for g in shipped.gpus if any(r.gpu == g.slug for r in rec.requirements.per_gpu)),
                   key=lambda g: g.memory_bytes)
    assert f"on {roomiest.slug}, the roomiest card in scope" in said[0]
    assert "t4" not in said[0].split()  # not the reference card nobody would pick for a 7B fine-tune
    top = rec.options[0].parallelism
    assert f"{top.gpu_memory_per_gpu_bytes / 2**30:.1f} GiB per GPU" in said[0]
    assert not any(w.code == "batch-not-the-problem" for w in rec.requirements.warnings)


def test_a_job_that_fits_as_given_is_not_told_it_does_not_fit(shipped: Catalog) -> None:
    # GPT-2 XL at batch 4 fits one card as given; max_gpus beyond one machine still has strategies searched
    small = {**BIG, "model": {"preset": "gpt2-xl"}, "constraints": {**BIG["constraints"], "max_gpus": 16},
             "training": {**BIG["training"], "batch_size": 4, "sequence_length": 1024}}
    rec = recommend_spec(small, shipped)
    assert rec.options and any(row.fits for row in rec.requirements.per_gpu)
    assert not any(w.code in ("does-not-fit", "batch-not-the-problem") for w in rec.requirements.warnings)


def test_adapters_report_the_flops_their_backward_runs() -> None:
    _, job = load_job({"model": {"preset": "llama3-8b"}, "training": {"batch_size": 2, "sequence_length": 1024}})
    full = training_flops(job.model, job.training)
    lora = replace(job.training, parallelism=replace(job.training.parallelism,
                                                     adapter=Adapter(kind=AdapterKind.LORA, rank=8)))
    # forward 1 + backward 2 passes in full; backward without the frozen weights' gradients: 1 + 1
    assert training_flops(job.model, lora) == full * 2 / 3


def test_does_not_fit_describes_the_job_as_it_was_given(shipped: Catalog) -> None:
    # Llama 3 70B with LoRA and checkpointing was described as "plain data parallel, no checkpointing"
    lora = {"model": {"preset": "llama3-70b"},
            "training": {"from_pretrained": True, "sequence_length": 2048, "batch_size": 4, "epochs": 3,
                         "precision": "bf16-mixed", "optimizer": "adamw", "recompute": True,
                         "parallelism": {"adapter": {"kind": "lora"}}},
            "dataset": {"samples": 10000}}
    said = [w.message for w in recommend_spec(lora, shipped).requirements.warnings if w.code == "does-not-fit"]
    assert len(said) == 1 and "(batch 4 per GPU, plain data parallel, LoRA rank 8, full checkpointing)" in said[0]
    plain = [w.message for w in recommend_spec(BIG, shipped).requirements.warnings if w.code == "does-not-fit"]
    assert "(batch 64 per GPU, plain data parallel, no checkpointing)" in plain[0]
