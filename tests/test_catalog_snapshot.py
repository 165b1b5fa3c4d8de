"""The bundled snapshot: offline, every GPU family, prices in 3 regions per provider, every row sourced."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from catalog.cpu_scores import CPU_SCORES, score_for
from catalog.data.instances import build_snapshot
from catalog.gpus import load_gpus
from catalog.loader import SNAPSHOT_DIR, load_catalog
from catalog.payload import rows_to_payload
from catalog.types import Catalog, Pricing, Provider
from catalog.validate import check_rows


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


AWS_FAMILIES = (
    "p2",
    "p3",
    "p3dn",
    "g3",
    "g3s",
    "g4dn",
    "g5",
    "g6",
    "gr6",
    "g6e",
    "p4d",
    "p4de",
    "p5",
    "p5e",
    "p5en",
    "p6-b200",
)
GCP_FAMILIES = (
    "a2-highgpu",
    "a2-megagpu",
    "a2-ultragpu",
    "a3-highgpu",
    "a3-megagpu",
    "a3-ultragpu",
    "g2-standard",
    "a4-highgpu",
)
N1_GPUS = ("nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-tesla-p100", "nvidia-tesla-p4", "nvidia-tesla-k80")


def test_the_snapshot_loads_offline_with_a_version_and_a_date(catalog: Catalog) -> None:
    assert re.match(r"^\d{4}-\d{2}-\d{2}\.\d+$", catalog.version)
    assert re.match(r"^\d{4}-\d{2}-\d{2}$", catalog.prices_as_of)
    assert catalog.sources and len(catalog.gpus) == len(load_gpus())


def test_every_gpu_family_of_both_providers_is_there(catalog: Catalog) -> None:
    aws = {i.instance_type.split(".")[0] for i in catalog.instances if i.provider is Provider.AWS}
    gcp = {i.instance_type.rsplit("-", 1)[0] for i in catalog.instances if i.provider is Provider.GCP}
    assert set(AWS_FAMILIES) <= aws
    assert set(GCP_FAMILIES) <= gcp
    n1 = {i.instance_type.split("x", 1)[1] for i in catalog.instances if i.instance_type.startswith("n1-")}
    assert n1 == set(N1_GPUS)
    counts = {i.gpu_count for i in catalog.instances if i.instance_type.startswith("n1-") and i.gpu == "t4"}
    assert counts == {1, 2, 4}


@pytest.mark.parametrize("provider", [Provider.AWS, Provider.GCP])
def test_each_provider_has_on_demand_and_spot_prices_in_three_regions(
    catalog: Catalog, provider: Provider
) -> None:
    regions: dict[Pricing, set[str]] = defaultdict(set)
    for offer in catalog.offers:
        if offer.provider is provider:
            regions[offer.pricing].add(offer.region)
    assert len(regions[Pricing.ON_DEMAND]) >= 3
    assert len(regions[Pricing.SPOT]) >= 3


def test_p3_v100_16gb_is_priced_by_region(catalog: Catalog) -> None:
    p3 = {i.instance_type for i in catalog.instances if i.gpu == "v100-16gb" and i.provider is Provider.AWS}
    assert p3 == {"p3.2xlarge", "p3.8xlarge", "p3.16xlarge"}
    regions = {o.region for o in catalog.offers if o.instance_type == "p3.2xlarge"}
    assert regions == {"us-east-1", "us-west-2", "eu-west-1"}


def test_every_row_names_a_source_and_a_date(catalog: Catalog) -> None:
    rows = [*catalog.instances, *catalog.offers, *catalog.block_storage, *catalog.onprem_cards]
    for row in rows:
        assert row.source.strip(), row
    dates = [getattr(r, "as_of", None) or getattr(r, "source_date", "") for r in rows]
    assert all(re.match(r"^\d{4}-\d{2}-\d{2}$", d) for d in dates)
    assert set(catalog.sources) == {r.source for r in rows}


def test_prices_not_read_from_a_source_are_labelled_as_such(catalog: Catalog) -> None:
    for offer in catalog.offers:
        assert (
            "SkyPilot catalog" in offer.source or "recalled" in offer.source or "estimate" in offer.source
        ), offer


def test_instances_use_known_gpus_and_sourced_cpu_scores(catalog: Catalog) -> None:
    assert check_rows(build_snapshot.build(), gpus=catalog.gpus) == []
    for inst in catalog.instances:
        score = score_for(inst.cpu_model)
        assert score is not None and score.single_thread_score == inst.cpu_single_thread_score, (
            inst.instance_type
        )
        assert catalog.gpu(inst.gpu).memory_bytes > 0
    assert all(row.source and row.as_of for row in CPU_SCORES)


def test_every_consumer_and_workstation_card_can_be_bought(catalog: Catalog) -> None:
    buyable = {g.slug for g in catalog.gpus if g.segment in ("consumer", "workstation")}
    assert {c.gpu for c in catalog.onprem_cards} == buyable
    assert all(c.price_usd > 0 and c.power_watts > 0 for c in catalog.onprem_cards)


def test_block_storage_is_priced_where_instances_are(catalog: Catalog) -> None:
    priced = {(s.provider, s.region) for s in catalog.block_storage}
    assert {(o.provider, o.region) for o in catalog.offers} <= priced


def test_the_committed_snapshot_is_what_the_tables_build() -> None:
    manifest = json.loads((SNAPSHOT_DIR / "manifest.json").read_text())
    committed = json.loads((SNAPSHOT_DIR / manifest["file"]).read_text())
    assert committed == json.loads(json.dumps(rows_to_payload(build_snapshot.build())))


def test_fractional_shapes_are_not_in_the_snapshot(catalog: Catalog) -> None:
    assert all(i.gpu_count >= 1 for i in catalog.instances)
    assert not any(i.instance_type.startswith("g6f.") for i in catalog.instances)
