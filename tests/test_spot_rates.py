"""Spot interruption figures per instance type and region, read from the Spot Instance Advisor table."""

from __future__ import annotations

import json

from catalog.loader import load_catalog
from catalog.types import Pricing, Provider
from workers.ranking.catalog_index import catalog_index
from workers.ranking.spot import BANDS_PATH, DEFAULT, FAMILY, LISTED, interruption_rate

TABLE = json.loads(BANDS_PATH.read_text(encoding="utf-8"))


def test_the_table_states_its_source_and_the_date_it_was_true() -> None:
    src = TABLE["source"]
    assert src["commit"] and len(src["sha256"]) == 64
    assert "2025-06-28" in src["as_of"]
    assert TABLE["labels"] == ["<5%", "5-10%", "10-15%", "15-20%", ">20%"]
    assert all(0 <= band <= 4 for types in TABLE["bands"].values() for band in types.values())


def test_a_listed_offer_takes_its_own_band_and_differs_between_regions() -> None:
    bands = TABLE["bands"]
    # a type whose band differs between two regions of the table
    found = next((t, r1, r2) for r1 in bands for r2 in bands for t in bands[r1]
                 if t in bands[r2] and bands[r1][t] != bands[r2][t])
    t, r1, r2 = found
    a, b = interruption_rate(Provider.AWS, t, r1), interruption_rate(Provider.AWS, t, r2)
    assert a is not None and b is not None
    assert a.basis == b.basis == LISTED
    assert a.band == TABLE["labels"][bands[r1][t]] and b.band == TABLE["labels"][bands[r2][t]]
    assert (a.mtbi_hours < b.mtbi_hours) == (bands[r1][t] > bands[r2][t])


def test_an_unlisted_type_takes_its_familys_worst_band_else_the_worst() -> None:
    region, types = next((r, ts) for r, ts in TABLE["bands"].items() if any(t.startswith("g5.") for t in ts))
    worst = max(b for t, b in types.items() if t.startswith("g5."))
    rate = interruption_rate(Provider.AWS, "g5.99xlarge", region)
    assert rate is not None and rate.basis == FAMILY and rate.band == TABLE["labels"][worst]
    none = interruption_rate(Provider.AWS, "zz9.xlarge", region)
    assert none is not None and none.basis == DEFAULT and none.band == ">20%"


def test_gcp_has_one_stated_default_and_owned_cards_none() -> None:
    rate = interruption_rate(Provider.GCP, "a2-highgpu-1g", "us-central1")
    assert rate is not None and "recalled" in rate.source and rate.share_per_day == 0.15
    assert interruption_rate(Provider.ONPREM, "onprem-rtx-3090-x4", "onprem") is None


def test_spot_machines_are_split_by_band_so_each_region_keeps_its_own_rate() -> None:
    index = catalog_index(load_catalog())
    spot = [m for m in index.machines if m.pricing is Pricing.SPOT and m.provider is Provider.AWS]
    assert spot and all(m.rate is not None for m in spot)
    for m in spot:
        for o in m.offers:
            assert interruption_rate(m.provider, m.instance_type, o.region) == m.rate
    assert len({m.instance_type for m in spot}) < len(spot)  # some type has regions in different bands
    assert all(m.rate is None for m in index.machines if m.pricing is not Pricing.SPOT)


def test_the_derivation_keeps_the_catalogs_spot_offers_with_the_feeds_band() -> None:
    from workers.ranking.data.derive_spot_bands import derive

    raw = {"ranges": [{"index": i, "label": lab} for i, lab in enumerate(["<5%", "5-10%", "10-15%", "15-20%", ">20%"])],
           "spot_advisor": {"us-east-1": {"Linux": {"g5.xlarge": {"s": 60, "r": 3}, "m5.large": {"s": 50, "r": 0}},
                                          "Windows": {"g5.2xlarge": {"s": 1, "r": 1}}}}}
    offers = [{"provider": "aws", "pricing": "spot", "region": "us-east-1", "instance_type": t}
              for t in ("g5.xlarge", "g5.2xlarge")]
    offers.append({"provider": "aws", "pricing": "on_demand", "region": "eu-west-1", "instance_type": "g5.xlarge"})
    table = derive(raw, {"offers": offers}, "0" * 64)
    assert table["bands"] == {"us-east-1": {"g5.xlarge": 3}}  # Linux only, catalog spot offers only
    assert table["not_listed"] == ["us-east-1/g5.2xlarge"]
    assert table["labels"][3] == "15-20%"


def test_the_table_covers_every_aws_spot_offer_of_the_catalog() -> None:
    listed = {(r, t) for r, types in TABLE["bands"].items() for t in types}
    not_listed = {tuple(x.split("/", 1)) for x in TABLE["not_listed"]}
    offers = {(o.region, o.instance_type) for o in load_catalog().offers
              if o.provider is Provider.AWS and o.pricing is Pricing.SPOT}
    assert offers == listed | not_listed  # re-run derive_spot_bands.py when the snapshot changes
    assert not listed & not_listed


def test_a_run_on_several_spot_machines_is_interrupted_as_often_as_all_of_them_together() -> None:
    from workers.ranking.runplan import machine_parts, plan_from_parts
    from workers.schemas.specs import load_job

    _, job = load_job({"model": {"preset": "gpt2"}, "training": {"batch_size": 8, "sequence_length": 1024},
                       "dataset": {"samples": 100_000}})
    rate = interruption_rate(Provider.GCP, "a3-highgpu-8g", "us-central1")
    assert rate is not None
    parts = {k: machine_parts(job, provider=Provider.GCP, family="a3", gpu_count=8, pricing=Pricing.SPOT,
                              network_gbit_per_s=200, local_disk_holds_data=True, rate=rate, machines=k)
             for k in (1, 4)}
    assert parts[4].mtbi_hours == parts[1].mtbi_hours / 4
    assert parts[4].every_hours < parts[1].every_hours  # Young/Daly checkpoints more often
    runs = {k: plan_from_parts(p, training_hours=20.0, provider=Provider.GCP, percentile=0.9).spot
            for k, p in parts.items()}
    assert runs[1] is not None and runs[4] is not None
    assert runs[4].expected_interruptions > 3 * runs[1].expected_interruptions
    assert runs[4].percentile_hours > runs[1].percentile_hours
