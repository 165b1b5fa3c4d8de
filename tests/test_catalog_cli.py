"""`gpugauge catalog ...` run through its own parser: tables, the API's JSON, one-line errors, refresh."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from catalog.fetchers.result import CredentialsError
from catalog.loader import load_catalog
from catalog.providers import PROVIDERS
from service.catalog_listing import list_instances
from service.commands import catalog as catalog_cli
from tests.test_catalog_refresh import aws_result


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="gpugauge")
    catalog_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["catalog", *argv])
    code: int = args.func(args)
    return code


@pytest.fixture(autouse=True)
def no_configured_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.delenv("GPUGAUGE_CATALOG_DIR", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


def test_v100_instances_on_aws_list_p3_with_prices_by_region(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("instances", "--gpu", "v100-16gb", "--provider", "aws") == 0
    out = capsys.readouterr().out
    for itype in ("p3.2xlarge", "p3.8xlarge", "p3.16xlarge"):
        assert itype in out
    for region in ("us-east-1", "us-west-2", "eu-west-1"):
        assert region in out
    assert "$3.06" in out and "p3dn" not in out  # p3dn carries v100-32gb


def test_json_is_exactly_the_api_payload(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("instances", "--gpu", "t4", "--region", "us-central1", "--max-price", "$1", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == list_instances(
        load_catalog(), gpu="t4", region="us-central1", max_price_per_hour_usd=1.0
    )
    assert printed["instances"] and all(
        p["price_per_hour_usd"] <= 1.0 for i in printed["instances"] for p in i["prices"]
    )


def test_instances_list_a_commitment_kind_only_when_asked_as_the_api_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("instances", "--provider", "gcp", "--gpu", "l4", "--pricing", "committed_1y", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == list_instances(load_catalog(), provider="gcp", gpu="l4", pricing="committed_1y")
    assert printed["instances"] and {p["pricing"] for i in printed["instances"] for p in i["prices"]} == {
        "committed_1y"}
    # the snapshot carries no Savings Plans (only a refresh reads them): asked for, none is listed
    assert run("instances", "--provider", "aws", "--pricing", "savings_plan_1y", "--json") == 0
    assert json.loads(capsys.readouterr().out)["instances"] == []
    assert run("instances", "--pricing", "reserved") == 2
    err = capsys.readouterr().err
    assert "--pricing" in err and "savings_plan_3y" in err and err.count("\n") == 1


def test_info_json_names_version_date_and_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("info", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert set(info) == {"version", "prices_as_of", "sources", "prices_as_of_by_provider"} and info["sources"]


def test_gpus_filter_by_human_memory_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("gpus", "--min-memory", "40GB", "--json") == 0
    slugs = {g["slug"] for g in json.loads(capsys.readouterr().out)["gpus"]}
    assert {"a100-80gb", "h200"} <= slugs and "t4" not in slugs


def test_min_gpu_memory_filters_instances(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("instances", "--provider", "gcp", "--min-gpu-memory", "70GiB", "--json") == 0
    gpus = {i["gpu"] for i in json.loads(capsys.readouterr().out)["instances"]}
    assert gpus and gpus <= {"a100-80gb", "h100-sxm", "h200", "b200", "rtx-pro-6000"}  # G4: 96 GB


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("instances", "--provider", "azure"), "valid: aws, gcp, onprem"),
        (
            ("instances", "--provider", "aws", "--region", "us-central1"),
            "unknown region 'us-central1'",
        ),
        (("instances", "--gpu", "v100-61gb"), "did you mean v100-16gb"),
        (("instances", "--min-gpu-memory=-3GB"), "negative"),
        (("instances", "--max-price", "cheap"), "--max-price"),
        (("gpus", "--min-memory", "16XB"), "unknown size unit"),
        (("refresh", "--provider", "azure"), "valid: aws, gcp"),
    ],
)
def test_bad_input_is_one_line_on_stderr_with_exit_2(
    argv: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(*argv) == 2
    captured = capsys.readouterr()
    assert needle in captured.err and captured.err.count("\n") == 1 and captured.out == ""


def test_onprem_lists_cards_to_buy(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("instances", "--provider", "onprem", "--json") == 0
    cards = {c["gpu"]: c for c in json.loads(capsys.readouterr().out)["onprem_cards"]}
    assert cards["rtx-4090"]["price_usd"] == 1599 and cards["rtx-4090"]["power_watts"] == 450


def _fake(result: Any) -> Any:
    def fetch(**kwargs: Any) -> Any:
        kwargs["progress"]("aws: fake", 0, 1)
        if isinstance(result, Exception):
            raise result
        return result

    return fetch


def test_refresh_makes_a_new_version_that_info_then_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    throttled = _fake(aws_result(failed=(("eu-west-1", "throttled"),)))
    monkeypatch.setitem(PROVIDERS, "aws", replace(PROVIDERS["aws"], fetch=throttled))
    assert run("refresh", "--provider", "aws", "--data-dir", str(tmp_path), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failed_regions"] == [{"region": "eu-west-1", "reason": "throttled"}]
    monkeypatch.setenv("GPUGAUGE_CATALOG_DIR", str(tmp_path))
    assert run("info", "--json") == 0
    assert json.loads(capsys.readouterr().out)["version"] == report["version"]


def test_refresh_without_credentials_says_so_in_one_line_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    no_credentials = _fake(CredentialsError("no AWS credentials found: run `aws configure`"))
    monkeypatch.setitem(PROVIDERS, "aws", replace(PROVIDERS["aws"], fetch=no_credentials))
    assert run("refresh", "--provider", "aws", "--data-dir", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no AWS credentials" in err
    assert not list(tmp_path.rglob("version-*.json"))


def test_a_rejected_refresh_exits_1_and_says_the_catalog_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(PROVIDERS, "aws", replace(PROVIDERS["aws"], fetch=_fake(aws_result(factor=-1.0))))
    assert run("refresh", "--provider", "aws", "--data-dir", str(tmp_path)) == 1
    assert "unchanged" in capsys.readouterr().err
    assert not list(tmp_path.rglob("version-*.json"))


SHARED_ROWS = Path(__file__).resolve().parents[2] / "shared" / "data" / "skypilot-catalog-v8"


@pytest.mark.skipif(not SHARED_ROWS.is_dir(), reason="the shared SkyPilot rows are not on this machine")
def test_import_of_a_sky_catalogs_directory_becomes_current_dated_by_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import os
    import shutil

    sky = tmp_path / "sky" / "v8"
    for provider in ("aws", "gcp"):
        (sky / provider).mkdir(parents=True)
        target = sky / provider / "vms.csv"
        shutil.copy(SHARED_ROWS / f"{provider}-gpu-vms.csv", target)
        os.utime(target, (1764547200, 1764547200))  # 2025-12-01 UTC: the day SkyPilot downloaded it
    store = tmp_path / "store"
    assert run("import", "--skypilot", str(sky.parent), "--data-dir", str(store), "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["providers"] == ["aws", "gcp"] and report["prices_as_of"] == "2025-12-01"
    assert any("H100 x8 in us-central1" in why for why in report["excluded"])
    monkeypatch.setenv("GPUGAUGE_CATALOG_DIR", str(store))
    assert run("info", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert (info["version"], info["prices_as_of"]) == (report["version"], "2025-12-01")
    assert info["prices_as_of_by_provider"] == {"aws": "2025-12-01", "gcp": "2025-12-01"}
    # GCP G4 is not in SkyPilot's rows: the import keeps it, with its own source and date
    from catalog.store import FileCatalogStore

    current = FileCatalogStore(store).current()
    assert current is not None
    g4 = [o for o in current.offers if o.instance_type == "g4-standard-48" and o.region == "us-central1"]
    assert g4 and all(o.as_of == "2026-07-30" for o in g4)
    # as in the snapshot's build, Cyclenerd's on-demand price stands in where a check left out SkyPilot's part
    # (A100 in europe-west4 at half the US price; H100 at $4.20/GPU in us-central1), with its own source and date
    on_demand = {(o.instance_type, o.region): o for o in current.offers
                 if o.provider.value == "gcp" and o.pricing.value == "on_demand"}
    for machine, region in (("a2-highgpu-8g", "europe-west4"), ("a3-highgpu-8g", "us-central1")):
        stand_in = on_demand[(machine, region)]
        assert "in place of SkyPilot's on-demand row" in stand_in.source and stand_in.as_of == "2026-07-30"
    snapshot = {(o.instance_type, o.region): o.price_per_hour_usd for o in load_catalog().offers
                if "in place of SkyPilot" in o.source and o.pricing.value == "on_demand"}
    assert {k: o.price_per_hour_usd for k, o in on_demand.items() if "in place of SkyPilot" in o.source} == snapshot


def test_an_import_that_would_collapse_the_catalog_exits_1_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header = (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"
    )
    info = "\"{'Gpus': [{'Name': 'T4', 'Manufacturer': 'NVIDIA', 'Count': 1}]}\""
    (tmp_path / "aws").mkdir()
    (tmp_path / "aws" / "vms.csv").write_text(f"{header}\ng4dn.xlarge,T4,1,4,16,{info},0.526,0.2,us-east-1,a\n")
    assert run("import", "--skypilot", str(tmp_path), "--data-dir", str(tmp_path / "store")) == 1
    assert "unchanged" in capsys.readouterr().err and not list(tmp_path.rglob("version-*.json"))


@pytest.mark.parametrize(("argv", "needle"), [
    (("import", "--skypilot", "/nonexistent/sky"), "is not a directory"),
    (("import", "--skypilot", ".", "--as-of", "yesterday"), "--as-of"),
])  # fmt: skip
def test_bad_import_input_is_one_line_exit_2(
    argv: tuple[str, ...], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(*argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
