"""Block storage in the ranking: priced in where local disk is short, refused or stood in where a region has none."""

from __future__ import annotations

import copy

import pytest
from ranking_builders import GB, GIB, block_price, catalog, gpu, instance, job, offer, per_gpu, requirements

from catalog.types import Catalog, Provider
from tests.recommending import recommend_spec
from workers.ranking.costing import block_storage_cost_usd
from workers.ranking.ranking import rank_offers
from workers.ranking.recommendation import Recommendation
from workers.ranking.runcost import start_up
from workers.schemas.specs import load_job
from workers.sizing.checkpoint import pretrained_bytes
from workers.sizing.requirements import PerGpu, Requirements
from workers.sizing.spec import JobSpec

AWS, GCP = Provider.AWS, Provider.GCP


def _rank(j: JobSpec, cat: Catalog, table: dict[tuple[str, int], PerGpu],
          req: Requirements | None = None) -> Recommendation:
    return rank_offers(j, requirements=req or requirements(need_gib=20.0), per_gpu=table, catalog=cat)


def test_block_storage_is_priced_in_where_local_disk_is_short() -> None:
    cat = catalog([gpu("a10g", 24)],
                  [instance(AWS, "g5.xlarge", "a10g", disk_gb=250),
                   instance(AWS, "g5.big", "a10g", disk_gb=3800)],
                  [offer(AWS, "g5.xlarge", "us-east-1", 1.0), offer(AWS, "g5.big", "us-east-1", 1.0)],
                  block=[block_price(AWS, "us-east-1", 0.08), block_price(AWS, "us-east-1", 0.045, "st1")])
    rec = _rank(job(), cat, {("a10g", 1): per_gpu("a10g", hours=10.0)},
                requirements(storage_min_gb=450, storage_max_gb=600))
    by_type = {o.instance_type: o for o in rec.options}
    short = by_type["g5.xlarge"]
    expected = 600 * GB / GIB * 0.045 * short.training_hours / 730  # held for the whole run
    assert short.storage_cost_usd == pytest.approx(expected)
    assert block_storage_cost_usd(storage_bytes=600 * GB, price_per_gb_month_usd=0.045,
                                  hours=short.training_hours) == pytest.approx(expected)
    assert short.training_cost_usd == pytest.approx(short.billed_hours + expected)
    assert by_type["g5.big"].storage_cost_usd == 0.0
    assert by_type["g5.big"].training_cost_usd == pytest.approx(by_type["g5.big"].billed_hours)
    # Staging onto block storage (gp3's 125 MiB/s) is slower than onto local NVMe.
    assert short.start_up is not None and by_type["g5.big"].start_up is not None
    assert short.start_up.staging_s > by_type["g5.big"].start_up.staging_s


def test_short_local_disk_without_a_block_storage_price_is_rejected_naming_the_region() -> None:
    cat = catalog([gpu("a10g", 24)], [instance(AWS, "g5.xlarge", "a10g", disk_gb=100)],
                  [offer(AWS, "g5.xlarge", "us-east-1", 1.0), offer(AWS, "g5.xlarge", "ap-east-9", 1.0)],
                  block=[block_price(GCP, "us-central1", 0.04)])
    rec = _rank(job(), cat, {("a10g", 1): per_gpu("a10g")})
    assert rec.options == ()
    [row] = rec.rejected
    assert "block storage price for aws in ap-east-9, us-east-1" in row.reason


def test_a_region_without_a_block_storage_price_falls_back_to_the_dearest_of_the_provider() -> None:
    cat = catalog([gpu("a10g", 24)], [instance(AWS, "g5.xlarge", "a10g", disk_gb=100)],
                  [offer(AWS, "g5.xlarge", "us-east-1", 1.0), offer(AWS, "g5.xlarge", "ap-east-9", 1.0)],
                  block=[block_price(AWS, "us-east-1", 0.08), block_price(AWS, "eu-west-1", 0.11)])
    rec = _rank(job(), cat, {("a10g", 1): per_gpu("a10g", hours=10.0)})
    by_region = {o.region: o for o in rec.options}
    assert by_region["ap-east-9"].storage_cost_usd == pytest.approx(
        by_region["us-east-1"].storage_cost_usd * 0.11 / 0.08)


def test_a_fine_tune_stages_its_pre_trained_weights_before_the_first_step(shipped: Catalog) -> None:
    # A 70B LoRA fine-tune downloads 141 GB of 16-bit weights before it trains; start-up staged only the data
    # set (none given: 0 s), so the run was ten minutes short on a Google balanced disk and every restart cheaper.
    spec = {"model": {"preset": "llama3-8b"}, "dataset": {"samples": 2000},
            "training": {"from_pretrained": True, "batch_size": 4, "sequence_length": 512, "precision": "bf16-mixed",
                         "parallelism": {"adapter": {"kind": "lora"}}},
            "constraints": {"owned_gpus": [{"gpu": "rtx-4090", "count": 1}]}}
    _, tuned = load_job(copy.deepcopy(spec))
    weights = pretrained_bytes(tuned)
    assert weights == pytest.approx(16.06e9, rel=0.01)  # 8.03B parameters at 2 bytes
    rec = recommend_spec(spec, shipped)
    rented = [o for o in rec.options if not o.owned]
    assert rented and any(o.owned for o in rec.options)
    for o in rented:
        assert o.start_up is not None
        assert o.start_up.staging_s * o.start_up.staging_mb_per_s * 1e6 == pytest.approx(weights, rel=1e-6)
    assert all(o.start_up is None or o.start_up.staging_s == 0 for o in rec.options if o.owned)  # held already
    scratch = recommend_spec({**spec, "training": {"from_pretrained": False, "batch_size": 4, "sequence_length": 512,
                                                   "precision": "bf16-mixed", "recompute": True}}, shipped)
    assert scratch.options
    assert all(o.start_up is None or o.start_up.staging_s == 0 for o in scratch.options)
    # the scalar path the run plan uses says the same: a 141 GB model on a Google balanced disk, ten minutes
    boot = start_up(GCP, "a3-highgpu", gpu_count=8, dataset_bytes=0, network_gbit_per_s=200.0,
                    local_disk_holds_data=False, weights_bytes=141 * 10**9)
    assert boot.staging_s == pytest.approx(141e9 / 240e6) and boot.billed_s == pytest.approx(300 + 180 + 141e9 / 240e6)
