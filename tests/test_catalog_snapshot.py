"""The bundled snapshot: generated from SkyPilot's v8 rows, every region and family, honest dates, sourced."""

from __future__ import annotations

import csv
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from catalog.cpu_scores import CPU_SCORES, score_for
from catalog.data.instances import build_snapshot
from catalog.gpus import load_gpus
from catalog.loader import SNAPSHOT_DIR, load_catalog, load_snapshot_rows
from catalog.types import Catalog, Offer, Pricing, Provider
from catalog.validate import check_rows, family_of

SHARED = build_snapshot.DEFAULT_INPUT
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SkyPilot rows are not on this machine")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _offer(catalog: Catalog, itype: str, region: str, pricing: Pricing = Pricing.ON_DEMAND) -> Offer | None:
    return next(
        (o for o in catalog.offers if (o.instance_type, o.region, o.pricing) == (itype, region, pricing)), None
    )


AWS_FAMILIES = {
    "p3", "p3dn", "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "gr6f", "p4d", "p4de", "p5", "p5e", "p5en",
    "p6-b200",
}  # fmt: skip
GCP_FAMILIES = {
    "a2-highgpu", "a2-megagpu", "a2-ultragpu", "a3-highgpu", "a3-edgegpu", "a3-megagpu", "a3-ultragpu",
    "a4-highgpu", "g2-standard",
}  # fmt: skip


def test_the_snapshot_names_its_input_commits_and_says_its_prices_are_undated(catalog: Catalog) -> None:
    assert catalog.version == "skypilot-v8-e385a0d3-8427bbff-cyclenerd-889627bc"
    assert catalog.prices_as_of == "unknown"  # the commits are named, their dates are not: never the build date
    assert dict(catalog.prices_as_of_by_provider) == {"aws": "unknown", "gcp": "unknown"}
    cloud = [o for o in catalog.offers if o.provider is not Provider.ONPREM and "pricing.yml" not in o.source]
    assert cloud and all(o.as_of is None and "skypilot-org/skypilot-catalog@" in o.source for o in cloud)
    # the rows from Cyclenerd's pricing.yml (G4, committed rates, SkyPilot's rows it dates) carry its date
    dated = [o for o in catalog.offers if "pricing.yml" in o.source]
    assert dated and all(o.as_of == "2026-07-30" for o in dated if o.pricing in (Pricing.ON_DEMAND, Pricing.SPOT))
    on_demand = {(o.instance_type, o.region): o.as_of for o in catalog.offers if o.pricing is Pricing.ON_DEMAND}
    committed = [o for o in dated if o.pricing not in (Pricing.ON_DEMAND, Pricing.SPOT)]
    assert committed and all(o.as_of == on_demand[(o.instance_type, o.region)] for o in committed)
    assert any("e385a0d348eda9cefd9806423e7725944dc249e4" in s for s in catalog.sources)
    assert len(catalog.gpus) == len(load_gpus())


def test_every_family_in_the_rows_is_there_and_retired_k80_is_not(catalog: Catalog) -> None:
    families = {family_of(i.provider, i.instance_type) for i in catalog.instances}
    assert families >= AWS_FAMILIES and families >= GCP_FAMILIES
    n1 = {f.split("+")[1] for f in families if f.startswith("n1-")}
    assert n1 == {"nvidia-tesla-t4", "nvidia-tesla-v100", "nvidia-tesla-p100", "nvidia-tesla-p4"}
    assert not any(i.gpu == "k80" for i in catalog.instances)
    assert {"p5.4xlarge", "a3-edgegpu-8g", "a4-highgpu-8g", "p6-b200.48xlarge"} <= {
        i.instance_type for i in catalog.instances
    }


def test_every_region_of_the_rows_is_priced(catalog: Catalog) -> None:
    regions: dict[tuple[Provider, Pricing], set[str]] = defaultdict(set)
    for offer in catalog.offers:
        regions[(offer.provider, offer.pricing)].add(offer.region)
    assert len(regions[(Provider.AWS, Pricing.ON_DEMAND)]) == 23
    assert len(regions[(Provider.GCP, Pricing.ON_DEMAND)]) >= 30
    assert len(regions[(Provider.AWS, Pricing.SPOT)]) >= 20
    assert len([o for o in catalog.offers if o.pricing is Pricing.ON_DEMAND]) > 2500  # full scale


def test_fractional_l4_shapes_carry_their_slice(catalog: Catalog) -> None:
    shapes = {i.instance_type: i for i in catalog.instances}
    assert (shapes["g6f.large"].gpu, shapes["g6f.large"].gpu_count) == ("l4-eighth", 1)
    assert shapes["g6f.2xlarge"].gpu == "l4-quarter" and shapes["gr6f.4xlarge"].gpu == "l4-half"
    assert catalog.gpu("l4-eighth").memory_bytes == 2861 * 2**20
    assert shapes["g5g.xlarge"].gpu == "t4g"


def test_gcp_n1_memory_is_3_75_gib_per_vcpu(catalog: Catalog) -> None:
    shapes = {i.instance_type: i for i in catalog.instances}
    assert shapes["n1-standard-8+1xnvidia-tesla-t4"].host_memory_bytes == 30 * 2**30
    assert shapes["n1-highmem-8+1xnvidia-tesla-t4"].host_memory_bytes == 52 * 2**30


def test_aws_p4_and_p5_prices_are_the_catalogs_not_the_pre_cut_ones(catalog: Catalog) -> None:
    p5 = _offer(catalog, "p5.48xlarge", "us-east-1")
    p4d = _offer(catalog, "p4d.24xlarge", "us-east-2")
    assert p5 is not None and p5.price_per_hour_usd == 55.04
    assert p4d is not None and p4d.price_per_hour_usd == 21.95764


def test_the_three_known_gcp_errors_are_left_out_with_their_reasons(catalog: Catalog) -> None:
    reasons = {(e.item, e.region, e.pricing, e.check) for e in catalog.excluded}
    assert ("accelerator A100 x1", "europe-west4", Pricing.ON_DEMAND, "regional-outlier") in reasons
    assert ("accelerator A100-80GB x1", "us-central1", Pricing.ON_DEMAND, "spot-not-below-on-demand") in reasons
    assert ("accelerator H100 x8", "us-central1", Pricing.ON_DEMAND, "regional-outlier") in reasons
    # SkyPilot's price for those machines there is gone; Google's own list price from Cyclenerd's pricing.yml
    # (dated 2026-07-30) stands in, e.g. A3 High x8 in us-central1 at $88.49/h, not 8 x $4.20 + host
    extract = json.loads((SNAPSHOT_DIR / "cyclenerd-gcp.json").read_text())["machines"]
    for itype, region in (("a2-highgpu-1g", "europe-west4"), ("a2-ultragpu-1g", "us-central1"),
                          ("a3-highgpu-8g", "us-central1")):
        stand_in = _offer(catalog, itype, region)
        assert stand_in is not None and "in place of SkyPilot's on-demand row" in stand_in.source
        assert stand_in.price_per_hour_usd == extract[itype]["prices"][region]["hour"]
        assert stand_in.as_of == "2026-07-30"
    a3 = _offer(catalog, "a3-highgpu-8g", "us-central1")
    assert a3 is not None and 85 < a3.price_per_hour_usd < 92
    east = _offer(catalog, "a3-highgpu-8g", "us-east4")
    assert east is not None and "skypilot-org" in east.source  # kept rows keep SkyPilot's price
    assert all(e.reason.strip() for e in catalog.excluded)


def test_the_snapshot_passes_every_check_including_plausibility(catalog: Catalog) -> None:
    assert check_rows(load_snapshot_rows(), gpus=catalog.gpus) == []


def test_every_row_names_a_source(catalog: Catalog) -> None:
    rows = [*catalog.instances, *catalog.offers, *catalog.block_storage, *catalog.onprem_cards]
    assert all(row.source.strip() for row in rows)
    assert {r.source for r in rows} <= set(catalog.sources)
    assert all(re.match(r"^\d{4}-\d{2}$", c.as_of) for c in catalog.onprem_cards)  # launch month
    for disk in catalog.block_storage:
        assert "recalled" in disk.source and disk.as_of is None


def test_instances_use_known_gpus_and_sourced_cpu_scores(catalog: Catalog) -> None:
    for inst in catalog.instances:
        score = score_for(inst.cpu_model)
        assert score is not None and score.single_thread_score == inst.cpu_single_thread_score
        assert catalog.gpu(inst.gpu).memory_bytes > 0
    assert all(row.source and row.as_of for row in CPU_SCORES)


def test_every_consumer_and_workstation_card_can_be_bought(catalog: Catalog) -> None:
    buyable = {g.slug for g in catalog.gpus if g.segment in ("consumer", "workstation")}
    assert {c.gpu for c in catalog.onprem_cards} == buyable
    assert all(c.price_usd > 0 and c.power_watts > 0 for c in catalog.onprem_cards)


def test_block_storage_is_priced_where_instances_are(catalog: Catalog) -> None:
    priced = {(s.provider, s.region) for s in catalog.block_storage}
    assert {(o.provider, o.region) for o in catalog.offers} <= priced


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@needs_shared
def test_the_committed_snapshot_is_what_the_shared_rows_build() -> None:
    assert build_snapshot.main(["--check"]) == 0
    manifest = json.loads((SNAPSHOT_DIR / "manifest.json").read_text())
    assert manifest["file"] == f"snapshot-{manifest['current']}.json"


@needs_shared
@pytest.mark.parametrize(("itype", "region"), [("g4dn.xlarge", "us-east-1"), ("p5.48xlarge", "us-east-1"),
                                               ("g6e.xlarge", "eu-north-1"), ("p3.2xlarge", "ap-northeast-1")])
def test_aws_prices_are_the_rows_on_demand_and_the_median_spot_over_zones(
    catalog: Catalog, itype: str, region: str
) -> None:
    rows = [r for r in _rows(SHARED / "aws-gpu-vms.csv") if (r["InstanceType"], r["Region"]) == (itype, region)]
    on_demand, spot = _offer(catalog, itype, region), _offer(catalog, itype, region, Pricing.SPOT)
    assert on_demand is not None and on_demand.price_per_hour_usd == float(rows[0]["Price"])
    zones = [float(r["SpotPrice"]) for r in rows if r["SpotPrice"]]
    assert spot is not None and spot.price_per_hour_usd == pytest.approx(statistics.median(zones))


@needs_shared
def test_gcp_prices_are_host_plus_gpus_from_the_rows(catalog: Catalog) -> None:
    rows = _rows(SHARED / "gcp-gpu-vms.csv")
    host = next(r for r in rows if (r["InstanceType"], r["Region"]) == ("a2-highgpu-1g", "us-central1"))
    gpu = next(
        r
        for r in rows
        if (r["AcceleratorName"], r["AcceleratorCount"], r["Region"]) == ("A100", "1", "us-central1")
    )
    offer = _offer(catalog, "a2-highgpu-1g", "us-central1")
    assert offer is not None
    assert offer.price_per_hour_usd == pytest.approx(float(host["Price"]) + float(gpu["Price"]), abs=1e-6)
    t4 = next(
        r for r in rows if (r["AcceleratorName"], r["AcceleratorCount"], r["Region"]) == ("T4", "1", "us-central1")
    )
    n1 = next(r for r in rows if (r["InstanceType"], r["Region"]) == ("n1-standard-8", "us-central1"))
    combo = _offer(catalog, "n1-standard-8+1xnvidia-tesla-t4", "us-central1")
    assert combo is not None
    assert combo.price_per_hour_usd == pytest.approx(float(n1["Price"]) + float(t4["Price"]), abs=1e-6)


@needs_shared
def test_no_aws_spot_price_sits_on_the_placeholder_floor_and_each_left_out_one_says_why(catalog: Catalog) -> None:
    rows = _rows(SHARED / "aws-gpu-vms.csv")
    on_demand = {(r["InstanceType"], r["Region"]): float(r["Price"]) for r in rows if r["Price"]}
    floored = {(r["InstanceType"], r["Region"]) for r in rows if r["SpotPrice"] and (r["InstanceType"], r["Region"])
               in on_demand and float(r["SpotPrice"]) <= 0.1 * on_demand[(r["InstanceType"], r["Region"])] + 5e-5}
    assert len(floored) >= 25  # 45 zone rows of SkyPilot's v8 AWS file, plus p5e against p5en
    reasons = {(e.item, e.region): e.reason for e in catalog.excluded
               if e.check == "spot-at-floor" and e.provider is Provider.AWS}
    assert floored | {("p5e.48xlarge", "ap-southeast-3")} == set(reasons)
    for itype, region in floored:
        spot = _offer(catalog, itype, region, Pricing.SPOT)
        assert spot is None or spot.price_per_hour_usd > 0.1 * on_demand[(itype, region)] * 1.01
    # the two answers the placeholders used to win: 8 x H200 at $8.73/h and a T4 at $0.07/h
    assert _offer(catalog, "p5e.48xlarge", "ap-southeast-3", Pricing.SPOT) is None
    assert _offer(catalog, "g4dn.xlarge", "af-south-1", Pricing.SPOT) is None
    assert "p5en.48xlarge" in reasons[("p5e.48xlarge", "ap-southeast-3")]
    # Google's floor (91 % off): P100 in asia-east1 has no spot price, P100 in europe-west4 keeps its 17 %
    assert _offer(catalog, "n1-highmem-2+1xnvidia-tesla-p100", "asia-east1", Pricing.SPOT) is None
    assert _offer(catalog, "n1-highmem-2+1xnvidia-tesla-p100", "europe-west4", Pricing.SPOT) is not None
    spot_ratios = [
        s.price_per_hour_usd / od.price_per_hour_usd
        for s in catalog.offers if s.provider is Provider.AWS and s.pricing is Pricing.SPOT
        if (od := _offer(catalog, s.instance_type, s.region)) is not None
    ]
    assert min(spot_ratios) > 0.1 and max(spot_ratios) < 1.0


def test_gcp_g4_rtx_pro_6000_comes_from_cyclenerds_pricing_file_dated_by_it(catalog: Catalog) -> None:
    extract = json.loads((SNAPSHOT_DIR / "cyclenerd-gcp.json").read_text())
    shapes = {i.instance_type: i for i in catalog.instances if i.instance_type.startswith("g4-")}
    assert set(shapes) == {"g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384"}
    g4 = shapes["g4-standard-48"]
    assert (g4.gpu, g4.gpu_count, g4.vcpus, g4.host_memory_bytes) == ("rtx-pro-6000", 1, 48, 180 * 2**30)
    on_demand = _offer(catalog, "g4-standard-48", "us-central1")
    spot = _offer(catalog, "g4-standard-48", "us-central1", Pricing.SPOT)
    row = extract["machines"]["g4-standard-48"]["prices"]["us-central1"]
    assert on_demand is not None and on_demand.price_per_hour_usd == row["hour"]
    assert spot is not None and spot.price_per_hour_usd == row["hour_spot"]
    assert on_demand.as_of == extract["as_of"] == "2026-07-30" and "889627bc" in on_demand.source
    committed = _offer(catalog, "g4-standard-48", "us-central1", Pricing.COMMITTED_1Y)
    assert committed is not None and committed.price_per_hour_usd == pytest.approx(row["hour"] * 0.69, rel=1e-3)
    # a share of one GPU has no slice in our table: skipped, and said so
    assert any("g4-standard-6:" in s and "no slice" in s for s in catalog.sources)


def test_the_cyclenerd_extract_copies_the_family_rows_and_the_files_date() -> None:
    from catalog.data.instances.extract_cyclenerd import extract

    doc = {"about": {"generated": "Thu Jul 30 06:13:17 2026"}, "compute": {"instance": {
        "g4-standard-48": {"cpu": 48, "ram": 180, "rtx6000": 1,
                           "cost": {"us-east1": {"hour": 4.5, "hour_spot": 1.8, "month": 3285.0}}},
        "g2-standard-4": {"cpu": 4, "ram": 16, "l4": 1, "cost": {"us-east1": {"hour": 0.7}}},
        "n1-standard-4": {"cpu": 4, "ram": 15, "cost": {"us-east1": {"hour": 0.19}}},  # GPUs attach: no key
        "g4-other": {"cpu": 1, "ram": 1, "cost": {}},
    }}}
    data = extract(doc, commit="abc")
    assert data["as_of"] == "2026-07-30" and data["source"].endswith("/blob/abc/pricing.yml")
    assert data["machines"] == {"g4-standard-48": {"cpu": 48, "ram": 180, "gpu": "rtx6000", "gpus": 1,
                                                   "prices": {"us-east1": {"hour": 4.5, "hour_spot": 1.8}}},
                                "g2-standard-4": {"cpu": 4, "ram": 16, "gpu": "l4", "gpus": 1,
                                                  "prices": {"us-east1": {"hour": 0.7}}}}


def test_skypilots_undated_gcp_rows_take_the_dated_files_date_or_price(catalog: Catalog) -> None:
    extract = json.loads((SNAPSHOT_DIR / "cyclenerd-gcp.json").read_text())["machines"]
    # on demand, the two agree: SkyPilot's price stays, dated by the file, both sources named
    g2 = _offer(catalog, "g2-standard-8", "us-central1")
    file_g2 = extract["g2-standard-8"]["prices"]["us-central1"]
    assert g2 is not None and g2.as_of == "2026-07-30"
    assert "skypilot-org" in g2.source and "the same list price (within 1%)" in g2.source
    assert g2.price_per_hour_usd == pytest.approx(file_g2["hour"], rel=0.01)
    # spot: the dated price in place of the undated one, which the source quotes
    spot = _offer(catalog, "g2-standard-8", "us-central1", Pricing.SPOT)
    assert spot is not None and spot.as_of == "2026-07-30" and spot.price_per_hour_usd == file_g2["hour_spot"]
    assert "in place of SkyPilot's undated spot row (median over zones $" in spot.source
    # N1 with attached GPUs: the file has no attached-GPU prices, so they stay undated
    n1 = [o for o in catalog.offers if o.instance_type.startswith("n1-") and "+" in o.instance_type]
    assert n1 and all(o.as_of is None for o in n1)
    dated = [o for o in catalog.offers if o.provider is Provider.GCP and o.as_of is not None
             and o.pricing in (Pricing.ON_DEMAND, Pricing.SPOT)]
    assert {o.instance_type.split("-")[0] for o in dated} == {"a2", "a3", "g2", "g4"}


def test_dating_keeps_an_agreeing_price_and_replaces_one_that_differs(tmp_path: Path) -> None:
    from catalog.cyclenerd import dated_by_file
    from catalog.payload import CatalogRows

    extract = {"source": "https://github.com/x/y/blob/0123456789ab/pricing.yml", "generated": "Thu Jul 30 2026",
               "as_of": "2026-07-30", "machines": {"g2-standard-4": {
                   "cpu": 4, "ram": 16, "gpu": "l4", "gpus": 1,
                   "prices": {"us-east1": {"hour": 0.70, "hour_spot": 0.28}, "us-west1": {"hour": 0.80}}}}}
    path = tmp_path / "extract.json"
    path.write_text(json.dumps(extract))
    sky = "SkyPilot catalog skypilot-org/skypilot-catalog@abc"
    offers = (Offer(Provider.GCP, "g2-standard-4", "us-east1", Pricing.ON_DEMAND, 0.703, sky, None),
              Offer(Provider.GCP, "g2-standard-4", "us-east1", Pricing.SPOT, 0.21, sky, None),
              Offer(Provider.GCP, "g2-standard-4", "us-west1", Pricing.ON_DEMAND, 0.90, sky, None),
              Offer(Provider.GCP, "g2-standard-4", "europe-west1", Pricing.ON_DEMAND, 0.75, sky, None),
              Offer(Provider.AWS, "g6.xlarge", "us-east-1", Pricing.ON_DEMAND, 0.80, sky, None))
    rows = CatalogRows(version="v", prices_as_of="unknown", sources=(), instances=(), offers=offers,
                       block_storage=(), onprem_cards=(), excluded=())
    got = {(o.provider.value, o.region, o.pricing.value): o for o in dated_by_file(rows, path).offers}
    agreed = got[("gcp", "us-east1", "on_demand")]
    assert (agreed.price_per_hour_usd, agreed.as_of) == (0.703, "2026-07-30") and sky in agreed.source
    spot = got[("gcp", "us-east1", "spot")]
    assert (spot.price_per_hour_usd, spot.as_of) == (0.28, "2026-07-30") and "$0.2100/h" in spot.source
    differs = got[("gcp", "us-west1", "on_demand")]  # 12% apart: the dated price, the undated one quoted
    assert (differs.price_per_hour_usd, differs.as_of) == (0.80, "2026-07-30") and "$0.9000/h" in differs.source
    assert got[("gcp", "europe-west1", "on_demand")].as_of is None  # a region the file does not price
    assert got[("aws", "us-east-1", "on_demand")].as_of is None


def test_a_card_priced_from_a_read_source_agrees_with_the_gpu_table(catalog: Catalog) -> None:
    read = [c for c in catalog.onprem_cards if "recalled" not in c.source]
    assert len(read) >= 30
    for card in read:
        gpu = catalog.gpu(card.gpu)
        assert (card.price_usd, card.power_watts) == (gpu.launch_price_usd, gpu.tdp_watts), card.gpu
        assert card.as_of[:4] == str(gpu.year), card.gpu
