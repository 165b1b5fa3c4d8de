"""A framework that cannot use a GPU generation is never sent to one: CNTK (CUDA 10) before Ampere."""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from workers.schemas.specs import load_job
from workers.sizing.estimate import estimate_requirements
from workers.sizing.rules import CUDA11_ARCHITECTURES


def _arch(catalog: Catalog) -> dict[str, str]:
    return {g.slug: g.architecture for g in catalog.gpus}


def test_a_cntk_job_ranks_only_cards_before_ampere_and_says_why_the_others_are_out(shipped: Catalog) -> None:
    arch = _arch(shipped)
    cntk = recommend_spec(changed_example("bert-finetune", training={"framework": "cntk"}), shipped)
    assert cntk.options and all(arch[o.gpu] not in CUDA11_ARCHITECTURES for o in cntk.options)
    out = [r for r in cntk.rejected if arch.get(r.gpu, "") in CUDA11_ARCHITECTURES]
    assert out and all("CNTK's last release" in r.reason and "CUDA 10" in r.reason for r in out)
    # the same job in PyTorch keeps those cards in play (none is rejected for the framework)
    torch = recommend_spec(changed_example("bert-finetune"), shipped)
    assert not any("CNTK" in r.reason for r in torch.rejected)


def test_a_cntk_job_searched_over_strategies_leaves_ampere_and_later_out_too(shipped: Catalog) -> None:
    arch = _arch(shipped)
    spec = changed_example("gpt2-pretrain", training={"framework": "cntk"},
                           constraints={"max_gpus": 16, "deadline_hours": 5000})
    rec = recommend_spec(spec, shipped)
    assert all(arch[o.gpu] not in CUDA11_ARCHITECTURES for o in rec.options)
    assert any("CNTK's last release" in r.reason for r in rec.rejected)


def test_an_estimate_named_on_an_ampere_card_warns_that_cntk_cannot_use_it(shipped: Catalog) -> None:
    _, job = load_job({"model": {"preset": "bert-base"}, "training": {"batch_size": 8, "framework": "cntk"}})
    gpus = {g.slug: g for g in shipped.gpus}
    req = estimate_requirements(job, gpus=(gpus["a100-80gb"], gpus["v100-16gb"]), known_gpus=gpus)
    [warning] = [w for w in req.warnings if w.code == "framework-gpu-unsupported"]
    assert warning.message.startswith("a100-80gb is Ampere") and "v100" not in warning.message.split(".")[0]
