"""Where the data set lives: moving it into an option's region is priced, timed and shown; bad values are 422."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from catalog.loader import load_catalog
from catalog.types import Catalog, Provider
from tests.service_helpers import example_spec
from workers.ranking.recommend import recommend
from workers.ranking.runcost import start_up
from workers.ranking.transfer import BYTES_PER_GB, CROSS_REGION_MB_PER_S, transfer_into
from workers.schemas.specs import load_job
from workers.sizing.spec import Dataset, JobSpec

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@cache
def _catalog() -> Catalog:
    return load_catalog()


def _resnet(location: dict[str, str] | None) -> JobSpec:
    spec = json.loads((EXAMPLES / "resnet50-imagenet.json").read_text())
    if location is not None:
        spec["dataset"]["location"] = location
    spec["limit"] = 40
    return load_job(spec)[1]


def test_transfer_prices_follow_the_sender_and_are_free_within_a_region() -> None:
    same = transfer_into(("aws", "us-east-1"), Provider.AWS, "us-east-1")
    assert same.usd_per_gb == 0 and same.kind == "same-region"
    out_of_virginia = transfer_into(("aws", "us-east-1"), Provider.AWS, "af-south-1")
    out_of_cape_town = transfer_into(("aws", "af-south-1"), Provider.AWS, "us-east-1")
    assert 0 < out_of_virginia.usd_per_gb < out_of_cape_town.usd_per_gb  # the sending region's price
    to_google = transfer_into(("aws", "us-east-1"), Provider.GCP, "us-central1")
    assert to_google.kind == "other-cloud" and to_google.usd_per_gb > out_of_virginia.usd_per_gb
    within_us = transfer_into(("gcp", "us-central1"), Provider.GCP, "us-east1")
    across = transfer_into(("gcp", "us-central1"), Provider.GCP, "europe-west4")
    assert 0 < within_us.usd_per_gb < across.usd_per_gb
    assert transfer_into(("internet", ""), Provider.AWS, "us-east-1").usd_per_gb == 0
    assert transfer_into(("anywhere", ""), Provider.GCP, "us-east1").usd_per_gb == 0


def test_staging_from_another_region_is_capped_at_the_measured_rate_where_the_disk_is_faster() -> None:
    fast = start_up(Provider.AWS, "p4d", gpu_count=8, dataset_bytes=10**11, network_gbit_per_s=400,
                    local_disk_holds_data=True)
    capped = start_up(Provider.AWS, "p4d", gpu_count=8, dataset_bytes=10**11, network_gbit_per_s=400,
                      local_disk_holds_data=True, cap_mb_per_s=CROSS_REGION_MB_PER_S[(Provider.AWS, Provider.AWS)])
    assert capped.staging_mb_per_s < fast.staging_mb_per_s and capped.staging_s > fast.staging_s
    block = start_up(Provider.AWS, "g5", gpu_count=1, dataset_bytes=10**11, network_gbit_per_s=25,
                     local_disk_holds_data=False, cap_mb_per_s=CROSS_REGION_MB_PER_S[(Provider.AWS, Provider.AWS)])
    assert block.staging_mb_per_s < CROSS_REGION_MB_PER_S[(Provider.AWS, Provider.AWS)]  # EBS is slower still


def test_a_data_set_in_one_region_makes_options_elsewhere_pay_to_move_it() -> None:
    job = _resnet({"provider": "gcp", "region": "us-central1"})
    rec = recommend(job, _catalog())
    gb = job.dataset.size_bytes / BYTES_PER_GB
    assert rec.options
    for o in rec.options:
        moved = transfer_into(("gcp", "us-central1"), Provider(o.provider), o.region)
        assert o.data_transfer_cost_usd >= gb * moved.usd_per_gb * 0.999
        assert (o.data_transfer_cost_usd > 0) == (moved.usd_per_gb > 0)
        assert o.data_transfer_cost_usd <= o.training_cost_usd and o.data_transfer
        assert ("data-transfer" in {w.code for w in o.warnings}) == (o.data_transfer_cost_usd > 0)
    home = [o for o in rec.options if o.provider == "gcp" and o.region == "us-central1"]
    assert home and home[0].data_transfer_cost_usd == 0


def test_the_same_machine_costs_more_the_farther_its_data_set_comes_from() -> None:
    near, far = (recommend(_resnet({"provider": "aws", "region": r}), _catalog()) for r in ("us-east-1", "af-south-1"))
    cost = {(o.instance_type, o.region, o.pricing): o.training_cost_usd for o in near.options}
    shared = [(o, cost[(o.instance_type, o.region, o.pricing)]) for o in far.options
              if (o.instance_type, o.region, o.pricing) in cost and o.region not in ("us-east-1", "af-south-1")
              and o.provider == "aws"]
    assert shared
    assert all(far_o.training_cost_usd > near_cost for far_o, near_cost in shared)


def test_without_a_location_each_cloud_option_warns_what_moving_the_data_would_cost() -> None:
    rec = recommend(_resnet(None), _catalog())
    clouds = [o for o in rec.options if o.provider in ("aws", "gcp")]
    assert clouds
    for o in clouds:
        assert o.data_transfer_cost_usd == 0 and o.data_transfer == ""
        warning = next(w for w in o.warnings if w.code == "data-location-unknown")
        assert o.region in warning.message and "dataset.location" in warning.message
    no_bytes = recommend(replace(_resnet(None), dataset=Dataset(samples=1_281_167)), _catalog())
    assert all("data-location-unknown" not in {w.code for w in o.warnings} for o in no_bytes.options)


@pytest.mark.parametrize(("location", "field"), [
    ({"provider": "aws"}, "dataset.location.region"),
    ({"provider": "internet", "region": "us-east-1"}, "dataset.location.region"),
    ({"provider": "azure", "region": "eastus"}, "dataset.location.provider"),
    ({"provider": "aws", "region": "us-east-9"}, "dataset.location.region"),
    ({"provider": "gcp", "region": "us-east-1"}, "dataset.location.region"),
])
def test_a_bad_location_is_a_422_naming_the_field(embedded_client: FlaskClient, location: dict[str, Any],
                                                 field: str) -> None:
    spec = example_spec("bert-finetune")
    spec["dataset"] = {**spec["dataset"], "location": location}
    answer = embedded_client.post("/v1/recommendations", json=spec)
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert field in json.dumps(answer.get_json()), answer.get_json()


def test_options_on_several_machines_pay_to_move_the_data_set_to_each() -> None:
    spec = {"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024,
                                                      "precision": "bf16-mixed", "optimizer": "adamw"},
            "dataset": {"samples": 400_000, "bytes": 200 * 10**9,
                        "location": {"provider": "aws", "region": "us-east-1"}},
            "objective": "time", "limit": 12,
            "constraints": {"providers": ["aws"], "pricing": ["on_demand"], "max_gpus": 32,
                            "regions": ["us-west-2", "eu-west-1"]}}  # away from the data
    rec = recommend(load_job(spec)[1], _catalog())
    several = [o for o in rec.options if o.nodes > 1]
    assert several
    for o in several:
        one_copy = 200 * transfer_into(("aws", "us-east-1"), Provider.AWS, o.region).usd_per_gb
        assert abs(o.data_transfer_cost_usd - one_copy * o.nodes) < 1e-6 * one_copy * o.nodes
        assert o.data_transfer.startswith("data set from aws us-east-1")


def test_the_cli_takes_the_location_as_a_flag_and_refuses_a_bad_one_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    from service.cli import main

    spec = str(EXAMPLES / "resnet50-imagenet.json")
    assert main(["recommend", spec, "--data-in", "aws:us-east-1", "--json"]) == 0
    out, _ = capsys.readouterr()
    options = json.loads(out)["options"]
    assert options and all("data_transfer_cost_usd" in o for o in options)
    assert any(o["data_transfer"].startswith("data set from aws us-east-1") for o in options)
    for bad in ("aws", "aws:us-east-9", "azure:eastus"):
        assert main(["recommend", spec, "--data-in", bad]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "dataset.location" in err


def test_the_openapi_document_states_that_a_cloud_location_needs_a_region(embedded_client: FlaskClient) -> None:
    doc = embedded_client.get("/openapi.json").get_json()
    location = doc["components"]["schemas"]["DataLocation"]
    clouds, elsewhere = location["oneOf"]
    assert set(clouds["properties"]["provider"]["enum"]) == {"aws", "gcp"} and "region" in clouds["required"]
    assert elsewhere["not"] == {"required": ["region"]}


def test_a_copy_too_small_to_matter_gives_no_location_warning() -> None:
    spec = json.loads((EXAMPLES / "mlp-mnist.json").read_text())
    job = load_job(spec)[1]
    assert 0 < job.dataset.size_bytes < 10**9 and job.dataset.location is None
    rec = recommend(job, _catalog())
    assert rec.options
    assert all("data-location-unknown" not in {w.code for w in o.warnings} for o in rec.options)


def test_only_an_nvswitch_board_pays_the_fabric_managers_boot() -> None:
    def boot(provider: Provider, family: str, gpus: int) -> float:
        return start_up(provider, family, gpu_count=gpus, dataset_bytes=0, network_gbit_per_s=0,
                        local_disk_holds_data=False).boot_s

    assert boot(Provider.AWS, "p5", 8) == boot(Provider.AWS, "p6-b200", 8) == boot(Provider.GCP, "a4-highgpu", 8)
    assert boot(Provider.GCP, "a2-highgpu", 8) == boot(Provider.GCP, "a2-ultragpu", 8) > boot(Provider.AWS, "g5", 8)
    # a 1-GPU shape of an HGX family has no switch to start: it boots as any single-GPU machine
    assert boot(Provider.GCP, "a2-ultragpu", 1) == boot(Provider.AWS, "p5", 1) == boot(Provider.AWS, "g5", 1)


@pytest.mark.parametrize("location", [None, {"provider": "gcp", "region": "us-central1"}])
def test_options_of_the_strategy_search_say_what_moving_the_data_costs_as_plain_options_do(
        location: dict[str, str] | None) -> None:
    """A named layout ranks through the strategy search; its options carry the same transfer warnings."""
    plain = _resnet(location)
    named = replace(plain, training=replace(plain.training, parallelism=load_job(
        {"model": {"preset": "resnet50"}, "training": {"batch_size": 1, "parallelism": {"data_parallel": "plain"}}}
    )[1].training.parallelism))
    codes = {"data-transfer", "data-location-unknown"}

    def warned(job: JobSpec) -> dict[tuple[str, str, str], set[str]]:
        return {(o.instance_type, o.region, o.pricing): {w.code for w in o.warnings} & codes
                for o in recommend(job, _catalog()).options}

    searched, given = warned(named), warned(plain)
    shared = set(searched) & set(given)
    assert shared and any(searched[k] for k in shared)
    assert all(searched[k] == given[k] for k in shared)
