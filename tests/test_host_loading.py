"""An option whose host cannot load the pre-trained weights gives way to one of the same GPUs at about its price."""

from __future__ import annotations

from dataclasses import replace

from catalog.types import Catalog
from tests.recommending import recommend_spec
from workers.ranking.host_loading import LOADING_TIE_SHARE, host_loading_first
from workers.ranking.recommendation import RankedOption

SDXL_LORA = {"model": {"preset": "sdxl"}, "dataset": {"samples": 1000},
             "training": {"from_pretrained": True, "batch_size": 1, "epochs": 2, "precision": "fp16-mixed",
                          "optimizer": "adamw", "gradient_clipping": "global",
                          "parallelism": {"adapter": {"kind": "lora", "rank": 4, "targets": ["q", "k", "v", "o"]}}}}


def _short(option: RankedOption) -> bool:
    return any(w.code == "host-memory-loading" for w in option.warnings)


def test_the_first_option_loads_the_weights_where_the_same_gpus_on_a_roomier_host_cost_about_the_same(
        shipped: Catalog) -> None:
    # SDXL LoRA at batch 1: gcp n1-standard-2 + T4 (7.5 GiB of host memory, the load needs 10.9 GiB) came first and
    # n1-highmem-2 + T4 (13 GiB) third, at the same $0.09 and 45 minutes.
    rec = recommend_spec(SDXL_LORA, shipped)
    top, second = rec.options[0], rec.options[1]
    print(f"\n#1 {top.instance_type} {top.host_memory_bytes / 2**30:.1f} GiB ${top.training_cost_usd:.4f}; "
          f"#2 {second.instance_type} {second.host_memory_bytes / 2**30:.1f} GiB ${second.training_cost_usd:.4f}")
    assert not _short(top) and _short(second)
    assert (top.gpu, top.gpu_count) == (second.gpu, second.gpu_count)
    assert top.training_cost_usd <= second.training_cost_usd * (1 + LOADING_TIE_SHARE)
    assert top.host_memory_bytes > second.host_memory_bytes
    note = next(w.message for w in second.warnings if w.code == "host-memory-loading")
    assert f"({top.instance_type}, spot, {top.region})" in note and "is ranked ahead of this one" in note
    assert [o.rank for o in rec.options] == list(range(1, len(rec.options) + 1))


def test_an_option_with_no_like_alternative_keeps_its_place(shipped: Catalog) -> None:
    rec = recommend_spec(SDXL_LORA, shipped)
    short = next(o for o in rec.options if _short(o))
    alone = replace(rec, options=(replace(short, rank=1), *(replace(o, rank=n) for n, o in enumerate(
        (o for o in rec.options if o is not short and o.gpu != short.gpu), start=2))))
    assert host_loading_first(alone) == alone  # no option of the same GPUs: nothing to move
    dearer = replace(alone, options=(alone.options[0], replace(
        rec.options[0], rank=2, training_cost_usd=short.training_cost_usd * (1 + 2 * LOADING_TIE_SHARE))))
    assert host_loading_first(dearer) == dearer  # the roomier host costs a fifth more: the choice is the user's
