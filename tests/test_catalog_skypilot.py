"""Reading SkyPilot catalogs (v7 and v8 columns, the layouts ~/.sky/catalogs uses): prices, dates, errors."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catalog.skypilot import SkyPilotFormatError, import_skypilot
from catalog.types import Pricing, Provider

AWS_V8 = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch"
)
GCP_V8 = "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice"
T4 = "\"{'Gpus': [{'Name': 'T4', 'Manufacturer': 'NVIDIA', 'Count': 1, 'MemoryInfo': {'SizeInMiB': 16384}}]}\""
AMD = "\"{'Gpus': [{'Name': 'Radeon Pro V520', 'Manufacturer': 'AMD', 'Count': 1}]}\""
AWS_ROWS = [
    f"g4dn.xlarge,T4,1.0,4.0,16.0,{T4},0.526,0.2000,us-east-1,use1-az1,x86_64",
    f"g4dn.xlarge,T4,1.0,4.0,16.0,{T4},0.526,0.1800,us-east-1,use1-az2,x86_64",
    f"g4dn.xlarge,T4,1.0,4.0,16.0,{T4},0.526,,us-east-1,use1-az3,x86_64",
    f"g4dn.xlarge,T4,1.0,4.0,16.0,{T4},0.587,0.2658,eu-west-1,euw1-az1,x86_64",
    f"g4ad.xlarge,Radeon Pro V520,1.0,4.0,16.0,{AMD},0.379,0.1,us-east-1,use1-az1,x86_64",
]
GCP_ROWS = [
    "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.379998,0.08",
    "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-b,0.379998,0.08",
    ",,,T4,1,,us-central1,us-central1-a,0.35,0.175",
    "n1-standard-8,8.0,30.0,,,,europe-west4,europe-west4-a,0.41,0.09",
    ",,,T4,1,,europe-west4,europe-west4-b,0.37,0.17",  # the GPU in another zone than the host: no offer
    ",,,tpu-v4-8,1,,us-central2,us-central2-b,12.88,3.86",
    ",,,K80,1,,us-central1,us-central1-a,0.45,0.0375",
]


def _write(path: Path, header: str, rows: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_sky_catalogs_directory_is_read_with_spot_as_the_median_over_zones(tmp_path: Path) -> None:
    aws = _write(tmp_path / "v8" / "aws" / "vms.csv", AWS_V8, AWS_ROWS)
    _write(tmp_path / "v8" / "gcp" / "vms.csv", GCP_V8, GCP_ROWS)
    day = datetime(2026, 11, 30, 12, tzinfo=UTC).timestamp()
    os.utime(aws, (day, day))
    read = import_skypilot(tmp_path)
    prices = {(o.provider, o.instance_type, o.region, o.pricing): o for o in read.offers}
    spot = prices[(Provider.AWS, "g4dn.xlarge", "us-east-1", Pricing.SPOT)]
    assert spot.price_per_hour_usd == pytest.approx(0.19)  # median of 0.20 and 0.18; the empty zone is left out
    assert spot.as_of == "2026-11-30"  # the day SkyPilot downloaded the file
    assert prices[(Provider.AWS, "g4dn.xlarge", "eu-west-1", Pricing.ON_DEMAND)].price_per_hour_usd == 0.587
    assert not any(o.instance_type.startswith("g4ad") for o in read.offers)  # AMD rows are not ours
    combo = prices[(Provider.GCP, "n1-standard-8+1xnvidia-tesla-t4", "us-central1", Pricing.ON_DEMAND)]
    assert combo.price_per_hour_usd == pytest.approx(0.379998 + 0.35)
    assert (Provider.GCP, "n1-standard-8+1xnvidia-tesla-t4", "europe-west4", Pricing.ON_DEMAND) not in prices
    assert any("K80" in line and "retired" in line for line in read.skipped)
    shapes = {i.instance_type: i for i in read.instances}
    assert shapes["n1-standard-8+1xnvidia-tesla-t4"].host_memory_bytes == 30 * 2**30
    assert read.providers == ("aws", "gcp")


def test_v7_columns_without_arch_read_the_same(tmp_path: Path) -> None:
    header = AWS_V8.rsplit(",", 1)[0]
    _write(tmp_path / "v7" / "aws" / "vms.csv", header, [r.rsplit(",", 1)[0] for r in AWS_ROWS])
    read = import_skypilot(tmp_path, as_of="2026-11-01")
    assert read.providers == ("aws",) and "v7 columns" in read.files[0]
    assert {o.as_of for o in read.offers} == {"2026-11-01"}


def test_a_provenance_that_names_the_commit_but_not_its_date_gives_no_date(tmp_path: Path) -> None:
    _write(tmp_path / "aws-gpu-vms.csv", AWS_V8, AWS_ROWS)
    commit = "e385a0d348eda9cefd9806423e7725944dc249e4"
    (tmp_path / "PROVENANCE.md").write_text(f"- AWS source file: `catalogs/v8/aws/vms.csv`, commit `{commit}` (x)\n")
    read = import_skypilot(tmp_path)
    assert {o.as_of for o in read.offers} == {None}
    assert all(f"@{commit[:12]}" in o.source for o in read.offers) and commit in read.files[0]


@pytest.mark.parametrize(
    ("header", "row", "needle"),
    [
        ("InstanceType,Price,Region", "g4dn.xlarge,0.5,us-east-1", "missing columns"),
        (AWS_V8, f"g4dn.xlarge,T4,1.0,4.0,16.0,{T4},cheap,,us-east-1,use1-az1,x86_64", ":2 Price"),
        (AWS_V8, "g4dn.xlarge,T4,1.0", "expected 11 fields"),
    ],
)
def test_a_malformed_file_names_the_file_line_and_field(tmp_path: Path, header: str, row: str, needle: str) -> None:
    _write(tmp_path / "aws" / "vms.csv", header, [row])
    with pytest.raises(SkyPilotFormatError, match=needle):
        import_skypilot(tmp_path)


def test_a_directory_without_a_catalog_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(SkyPilotFormatError, match=r"no SkyPilot vms\.csv"):
        import_skypilot(tmp_path)
