"""3 GB cards are not recommended (domain notes §6): the ranking leaves them out unless named or owned.

AWS's g6f.large (an eighth of an L4, 2.8 GiB) is the cheapest machine in the catalog; before this rule it headed
every toy job's answer (the MNIST MLP, the VAE, DCGAN on CelebA) while the same answer warned it was not
recommended.
"""

from __future__ import annotations

from catalog.types import Catalog
from tests.recommending import changed_example, recommend_spec
from workers.ranking.left_out import left_out_reason
from workers.schemas.specs import load_job
from workers.sizing.rules import NOT_RECOMMENDED_GPU_MEMORY_BYTES


def _small(catalog: Catalog) -> set[str]:
    return {g.slug for g in catalog.gpus if g.memory_bytes <= NOT_RECOMMENDED_GPU_MEMORY_BYTES}


def test_toy_jobs_rank_no_3_gb_card_and_say_why(shipped: Catalog) -> None:
    small = _small(shipped)
    assert "l4-eighth" in small and "t4" not in small
    for example in ("mlp-mnist", "vae-mnist", "dcgan-faces"):
        rec = recommend_spec(changed_example(example), shipped)
        assert rec.options and not any(o.gpu in small for o in rec.options), example
        assert rec.options[0].gpu_memory_bytes >= 8 * 2**30  # a card of the individual's tier or more
        out = [r for r in rec.rejected if r.gpu == "l4-eighth"]
        assert out and all("3 GB cards are not recommended" in r.reason and "--gpu l4-eighth" in r.reason
                           for r in out), example


def test_a_3_gb_card_the_user_names_or_owns_is_ranked(shipped: Catalog) -> None:
    named = recommend_spec(changed_example("mlp-mnist", constraints={"gpus": ["l4-eighth"]}), shipped)
    assert named.options and {o.gpu for o in named.options} == {"l4-eighth"}
    assert not any("not recommended" in r.reason for r in named.rejected)
    _, owned = load_job({"model": {"preset": "mlp-mnist"}, "training": {"batch_size": 64},
                         "constraints": {"owned_gpus": [{"gpu": "gtx-1060-3gb", "count": 1}]}})
    gpus = {g.slug: g for g in shipped.gpus}
    assert left_out_reason(owned, gpus["gtx-1060-3gb"]) == ""
    assert "not recommended" in left_out_reason(owned, gpus["l4-eighth"])
    assert left_out_reason(owned, gpus["gtx-1060-6gb"]) == ""  # 6 GB: the individual's tier, ranked
