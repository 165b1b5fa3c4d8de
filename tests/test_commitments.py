"""Committed-use pricing kinds: derived from published rates, offered only when asked, costed per term."""

from __future__ import annotations

import dataclasses
import math

import pytest
from flask.testing import FlaskClient

from catalog.commitments import RATES, TERM_HOURS, committed_offers
from catalog.plausibility import PricePoint, find_implausible
from catalog.types import Catalog, Offer, Pricing, Provider
from tests.recommending import recommend_spec
from workers.review.budget import Review, ReviewItem
from workers.review.review import run_review
from workers.review.yearly import CommittedUse, JobYear, committed_rates, job_year, yearly_comparison
from workers.schemas.review_result import ReviewResultSchema
from workers.schemas.specs import load_job

RESNET = {"model": {"preset": "resnet50"}, "training": {"batch_size": 64},
          "dataset": {"samples": 1_281_167}, "objective": "cost", "limit": 200}




def test_committed_offers_are_below_on_demand_and_carry_source_and_date_rule(shipped: Catalog) -> None:
    on_demand = {(o.instance_type, o.region): o for o in shipped.offers if o.pricing is Pricing.ON_DEMAND}
    committed = [o for o in shipped.offers if o.pricing in TERM_HOURS]
    assert committed, "the shipped catalog derives committed offers for the covered GCP families"
    for o in committed:
        od = on_demand[(o.instance_type, o.region)]
        assert 0 < o.price_per_hour_usd < od.price_per_hour_usd
        assert "pricing.yml" in o.source and od.source in o.source
        assert o.as_of is None if od.as_of is None else o.as_of <= od.as_of
    three = {(o.instance_type, o.region): o.price_per_hour_usd for o in committed if o.pricing is Pricing.COMMITTED_3Y}
    assert all(three[(o.instance_type, o.region)] < o.price_per_hour_usd
               for o in committed if o.pricing is Pricing.COMMITTED_1Y)


def test_a_dated_rate_dates_the_committed_offer_by_the_older_date() -> None:
    od = Offer(Provider.GCP, "a3-highgpu-8g", "us-central1", Pricing.ON_DEMAND, 88.0, "page", "2026-09-01")
    (one, three) = committed_offers([od], [r for r in RATES if r.family == "a3-highgpu-"])
    assert one.as_of == "2026-07-30" and three.as_of == "2026-07-30"  # the pricing.yml's generation date
    older = committed_offers([dataclasses.replace(od, as_of="2026-01-01")], RATES)
    assert {o.as_of for o in older} == {"2026-01-01"}
    assert one.price_per_hour_usd == pytest.approx(88.0 * 5601.26008308 / 8074.71249111, abs=1e-4)


def test_plausibility_rejects_a_committed_rate_at_or_above_on_demand_or_at_zero() -> None:
    od = PricePoint(Provider.GCP, "a2-highgpu-1g", "us-central1", Pricing.ON_DEMAND, 3.67)
    high = PricePoint(Provider.GCP, "a2-highgpu-1g", "us-central1", Pricing.COMMITTED_1Y, 3.67)
    zero = PricePoint(Provider.GCP, "a2-highgpu-1g", "us-central1", Pricing.COMMITTED_3Y, 0.0)
    ok = PricePoint(Provider.GCP, "a2-highgpu-1g", "us-central1", Pricing.COMMITTED_3Y, 1.29)
    found = {id(f.point): f.check for f in find_implausible([od, high, zero, ok])}
    assert found == {id(high): "committed-not-below-on-demand", id(zero): "bad-price"}


def test_a_committed_offer_appears_only_when_asked_and_costs_its_whole_term(shipped: Catalog) -> None:
    default = recommend_spec(RESNET, shipped)
    assert default.options and all(o.pricing not in TERM_HOURS for o in default.options)
    asked = recommend_spec({**RESNET, "constraints": {"providers": ["gcp"], "pricing": ["committed_1y"]}}, shipped)
    assert asked.options and all(o.pricing is Pricing.COMMITTED_1Y for o in asked.options)
    top = asked.options[0]
    assert top.training_hours < 8760  # the job is far shorter than the term, yet the whole term is paid
    assert top.training_cost_usd >= top.price_per_hour_usd * 8760 * top.nodes * (1 - 1e-6)
    codes = {w.code: w.message for w in top.warnings}
    assert "commitment" in codes and f"{top.price_per_hour_usd * 8760:,.0f}" in codes["commitment"]


def test_an_unknown_pricing_kind_is_422_naming_the_field(embedded_client: FlaskClient) -> None:
    spec = {**RESNET, "constraints": {"pricing": ["reserved_5y"]}}
    answer = embedded_client.post("/v1/estimate", json=spec)
    assert answer.status_code == 422
    assert "constraints" in str(answer.get_json())
    assert "pricing" in str(answer.get_json())


def test_a_review_prices_a_year_of_its_jobs_on_demand_on_spot_and_committed(shipped: Catalog) -> None:
    _, spec = load_job({**RESNET, "constraints": {"providers": ["gcp"], "pricing": ["on_demand", "spot",
                                                                                   "committed_1y"]}})
    review = Review(name="year", providers=("gcp",), items=(
        ReviewItem(name="nightly", team="vision", job=spec, runs=365, parallel=1),
        ReviewItem(name="weekly", team="vision", job=spec, runs=52, parallel=1),
    ))
    result = run_review(review, shipped)
    y = result.yearly
    assert y is not None and y.on_demand_usd > 0 and y.spot_usd > 0 and y.committed_usd > 0
    # committed options never enter the runs' plans: each run would be costed as a whole term
    assert all(j.planned is not None and j.planned.pricing is not Pricing.COMMITTED_1Y for j in result.jobs)
    assert y.committed_machines, "A2/A3 machines carry 1-year rates"
    uncommitted = sum(j.year.on_demand_usd or 0.0 for j in result.jobs
                      if j.year is not None and j.year.committed is None)
    assert y.committed_usd == pytest.approx(
        sum(m.year_usd if m.pays_off else m.on_demand_usd for m in y.committed_machines) + uncommitted)
    for m in y.committed_machines:
        assert m.machines == max(1, math.ceil(m.machine_hours_used / 8760))
        assert m.year_usd == pytest.approx(m.machines * m.price_per_hour_usd * 8760)  # paid used or not
    dumped = ReviewResultSchema().dump(result)
    assert set(dumped["yearly"]) >= {"on_demand_usd", "spot_usd", "committed_usd", "basis"}


def test_the_catalog_listing_shows_committed_prices_only_when_asked(embedded_client: FlaskClient) -> None:
    plain = embedded_client.get("/v1/catalog/instances?provider=gcp&limit=1000").get_json()
    assert all(p["pricing"] in ("on_demand", "spot") for i in plain["instances"] for p in i["prices"])
    asked = embedded_client.get("/v1/catalog/instances?pricing=committed_3y&limit=1000").get_json()
    assert asked["instances"] and all(p["pricing"] == "committed_3y" for i in asked["instances"] for p in i["prices"])
    assert {i["instance_type"].rsplit("-", 1)[0] for i in asked["instances"]} == {
        "a2-highgpu", "a2-megagpu", "a3-highgpu", "a3-megagpu", "g2-standard", "g4-standard"}


def test_families_with_published_rates_are_committed_and_the_others_are_not(shipped: Catalog) -> None:
    rates = {(r.family, r.pricing): r.fraction_of_on_demand for r in RATES}
    # read from pricing.yml: g2-standard-4 us-central1 325.07215214 / 515.98754615, 232.19438719 / 515.98754615
    assert rates[("g2-standard-", Pricing.COMMITTED_1Y)] == pytest.approx(0.63, abs=1e-4)
    assert rates[("g2-standard-", Pricing.COMMITTED_3Y)] == pytest.approx(0.45, abs=1e-4)
    assert rates[("a3-megagpu-", Pricing.COMMITTED_3Y)] == pytest.approx(29555.25790768 / 67844.4393504)
    committed = {o.instance_type for o in shipped.offers if o.pricing in TERM_HOURS}
    assert {"g2-standard-4", "g2-standard-96", "a3-megagpu-8g", "a2-megagpu-16g"} <= committed
    # no committed figure in the source: A2 Ultra, A3 Ultra/Edge, A4, N1 + GPU, and every AWS type
    families = {t.split("+")[0].rsplit("-", 1)[0] for t in committed}
    assert families == {"a2-highgpu", "a2-megagpu", "a3-highgpu", "a3-megagpu", "g2-standard", "g4-standard"}
    assert all(o.provider is Provider.GCP for o in shipped.offers if o.pricing in TERM_HOURS)


def test_a_commitment_that_costs_more_than_its_jobs_on_demand_is_not_bought() -> None:
    busy = JobYear(on_demand_usd=8000 * 1.6, spot_usd=None,
                   committed=CommittedUse("gcp", "g2-standard-4", "us-east4", 1.0, 8000.0))
    idle = JobYear(on_demand_usd=10 * 92.0, spot_usd=None,
                   committed=CommittedUse("gcp", "a3-highgpu-8g", "us-east4", 63.3, 10.0))
    y = yearly_comparison([("nightly", busy), ("one-off", idle)])
    bought = {m.instance_type: m for m in y.committed_machines}
    assert bought["g2-standard-4"].pays_off and bought["g2-standard-4"].year_usd == pytest.approx(8760.0)
    assert not bought["a3-highgpu-8g"].pays_off  # $554,508 for the year against $920 on demand
    assert bought["a3-highgpu-8g"].on_demand_usd == pytest.approx(920.0)
    assert y.committed_usd == pytest.approx(8760.0 + 920.0)
    assert "only where" in y.basis


def test_a_years_picks_meet_the_jobs_deadline(shipped: Catalog) -> None:
    """GPT-2 pre-training due in a week: one L4 at its committed rate is the least committed cost but takes
    months, so it is no pick; the year's on-demand, spot and committed picks each finish by the deadline."""
    spec_json = {"model": {"preset": "gpt2"},
                 "training": {"batch_size": 12, "epochs": 33, "sequence_length": 1024, "precision": "bf16-mixed",
                              "optimizer": "adamw", "update_interval": 5},
                 "dataset": {"samples": 8_800_000, "bytes": 17_000_000_000},
                 "constraints": {"providers": ["gcp"], "max_gpus": 8,
                                 "pricing": ["on_demand", "spot", "committed_1y"]},
                 "objective": "cost", "limit": 200}
    fitting = [o for o in recommend_spec(spec_json, shipped).options if o.fits]
    rates = committed_rates(shipped)
    unbound = job_year(fitting, runs=1, rates=rates)
    assert unbound.committed is not None and unbound.committed.machine_hours > 168  # what a deadline rules out
    year = job_year(fitting, runs=1, rates=rates, deadline_hours=168.0)
    in_time = [o for o in fitting if o.training_hours <= 168.0]
    assert year.committed is not None and year.committed.machine_hours <= 168.0
    assert year.on_demand_usd == pytest.approx(min(o.training_cost_usd for o in in_time
                                                   if o.pricing is Pricing.ON_DEMAND))
    assert year.spot_usd == pytest.approx(min(o.training_cost_usd for o in in_time if o.pricing is Pricing.SPOT))
    # two runs one after the other must both end by the deadline: the picks take half as long at most
    twice = job_year(fitting, runs=2, rates=rates, deadline_hours=168.0, parallel=1)
    assert twice.committed is not None and twice.committed.machine_hours <= 168.0
    # and a review passes the spec's deadline through
    _, spec = load_job({**spec_json, "constraints": {**spec_json["constraints"], "deadline_hours": 168}})
    review = Review(name="year", providers=("gcp",), items=(ReviewItem(name="gpt2", team="nlp", job=spec),))
    reviewed = run_review(review, shipped).jobs[0].year
    assert reviewed is not None and reviewed.committed is not None and reviewed.committed.machine_hours <= 168.0
