"""Energy and carbon per option: the coefficients' table, the power model, the carbon objective and limit."""

from __future__ import annotations

import copy
import json
import math
from dataclasses import replace

import pytest

from catalog.energy import ENERGY_PATH, EnergyDataError, load_energy, parse_energy
from catalog.loader import load_catalog
from catalog.types import Provider
from tests.ranking_builders import catalog, gpu, instance, job, offer, per_gpu, requirements
from workers.ranking.energy import (
    POWER_SHARE_COMPUTE,
    POWER_SHARE_IDLE,
    POWER_SHARE_MEMORY,
    gpu_watts_under_load,
    grid_factor,
    option_energy,
)
from workers.ranking.ranking import rank_offers
from workers.sizing.schedule import MS_PER_HOUR, startup_ms
from workers.sizing.spec import Objective, OnPremAssumptions

AWS, GCP = Provider.AWS, Provider.GCP


def test_every_coefficient_names_its_source_and_the_bundled_table_loads() -> None:
    table = load_energy()
    doc = json.loads(ENERGY_PATH.read_text())
    for section in ("pue", "grid", "countries", "host"):
        assert doc[section], section
        assert all(row["source"].strip() for row in doc[section])
    # Every region of the bundled catalog has a grid intensity and a PUE (a snapshot adding one shows here).
    regions = {(o.provider.value, o.region) for o in load_catalog().offers}
    assert len(regions) > 40
    assert [r for r in sorted(regions) if table.grid_for(*r) is None or table.pue_for(*r) is None] == []


@pytest.mark.parametrize(("section", "index", "field", "value", "message"), [
    ("pue", 0, "pue", 0.5, "outside"),
    ("grid", 0, "g_co2e_per_kwh", 37906.9, "outside"),
    ("grid", 1, "source", "", "needs its source"),
    ("countries", 0, "data_year", "2021", "data_year"),
])
def test_a_bad_row_is_refused_naming_it(section: str, index: int, field: str, value: object, message: str) -> None:
    doc = json.loads(ENERGY_PATH.read_text())
    bad = copy.deepcopy(doc)
    bad[section][index][field] = value
    with pytest.raises(EnergyDataError, match=rf"{section}\[{index}\].*{message}"):
        parse_energy(bad)


def test_a_duplicate_region_is_refused() -> None:
    doc = json.loads(ENERGY_PATH.read_text())
    doc["grid"].append(dict(doc["grid"][0]))
    with pytest.raises(EnergyDataError, match="duplicate"):
        parse_energy(doc)


def test_compute_bound_draws_near_board_power_memory_bound_below_waiting_idle() -> None:
    compute = replace(per_gpu("a"), compute_ms=100.0, memory_ms=0.0)
    memory = replace(per_gpu("a"), compute_ms=0.0, memory_ms=100.0)
    assert gpu_watts_under_load(compute, tdp_watts=300, iteration_ms=100.0) == pytest.approx(300 * POWER_SHARE_COMPUTE)
    assert gpu_watts_under_load(memory, tdp_watts=300, iteration_ms=100.0) == pytest.approx(300 * POWER_SHARE_MEMORY)
    # A CPU that doubles the iteration leaves the card idle for the second half.
    stretched = gpu_watts_under_load(compute, tdp_watts=300, iteration_ms=200.0)
    assert stretched == pytest.approx(300 * (POWER_SHARE_COMPUTE + POWER_SHARE_IDLE) / 2)


def test_option_energy_is_gpus_at_load_idle_start_up_host_throughout_times_pue() -> None:
    table = load_energy()
    pg = replace(per_gpu("a", 2), compute_ms=60.0, memory_ms=30.0)  # 10 ms of 100 waiting
    factor = grid_factor("aws", "us-east-1", table=table, onprem=OnPremAssumptions())
    assert factor is not None
    e = option_energy(pg, tdp_watts=400, gpu_count=2, hours=10.0, iteration_ms=100.0, vcpus=16,
                      host_memory_bytes=64 * 10**9, provider="aws", factor=factor, table=table)
    watts = 400 * (0.6 * POWER_SHARE_COMPUTE + 0.3 * POWER_SHARE_MEMORY + 0.1 * POWER_SHARE_IDLE)
    host = 16 * (0.74 + 0.5 * (3.5 - 0.74)) + 64 * 0.392
    start_h = startup_ms(gpu_count=2) / MS_PER_HOUR
    it_kwh = (2 * (watts * (10 - start_h) + 400 * POWER_SHARE_IDLE * start_h) + host * 10) / 1000
    assert e.energy_kwh == pytest.approx(it_kwh * 1.135)
    assert e.co2e_kg == pytest.approx(it_kwh * 1.135 * 379.069 / 1000)
    assert e.gpu_watts == pytest.approx(watts) and e.host_watts == pytest.approx(host)


def _two_region_setup() -> tuple[object, dict[tuple[str, int], object]]:
    gpus = [gpu("a", 24)]
    shapes = [instance(AWS, "aws.x", "a"), instance(GCP, "gcp.x", "a")]
    offers = [offer(AWS, "aws.x", "us-east-1", 1.0), offer(GCP, "gcp.x", "europe-west4", 1.5),
              offer(GCP, "gcp.x", "asia-east1", 0.8)]
    return catalog(gpus, shapes, offers), {("a", 1): replace(per_gpu("a"), compute_ms=80.0, memory_ms=20.0)}


def test_carbon_objective_puts_the_least_emitting_region_first_and_cost_the_cheapest() -> None:
    cat, rows = _two_region_setup()
    by_cost = rank_offers(job(objective=Objective.COST), requirements=requirements(), per_gpu=rows,
                          catalog=cat)  # type: ignore[arg-type]
    by_carbon = rank_offers(job(objective=Objective.CARBON), requirements=requirements(), per_gpu=rows,
                            catalog=cat)  # type: ignore[arg-type]
    assert (by_cost.options[0].instance_type, by_cost.options[0].region) == ("gcp.x", "asia-east1")
    assert all(o.energy is not None and o.energy.co2e_kg > 0 for o in by_cost.options)  # shown under any objective
    co2 = [o.energy.co2e_kg for o in by_carbon.options if o.energy is not None]
    assert len(co2) == 3 and co2 == sorted(co2)
    # Same card and hours everywhere: the grid decides. us-east-1 379 g/kWh x PUE 1.135 = 430, below
    # europe-west4 410 x 1.09 = 447 and asia-east1 540 x 1.13 = 610, the cheapest.
    assert [o.region for o in by_carbon.options] == ["us-east-1", "europe-west4", "asia-east1"]
    assert "kg CO2e" in by_carbon.options[0].why


def test_max_co2e_rejects_the_options_over_it_with_the_figure() -> None:
    cat, rows = _two_region_setup()
    free = rank_offers(job(), requirements=requirements(), per_gpu=rows, catalog=cat)  # type: ignore[arg-type]
    co2 = sorted(o.energy.co2e_kg for o in free.options if o.energy is not None)
    limit = (co2[0] + co2[1]) / 2
    rec = rank_offers(job(max_co2e_kg=limit), requirements=requirements(), per_gpu=rows,
                      catalog=cat)  # type: ignore[arg-type]
    assert [o.region for o in rec.options] == ["us-east-1"]
    assert all(o.energy is not None and o.energy.co2e_kg <= limit for o in rec.options)
    reasons = [r.reason for r in rec.rejected]
    assert any("kg CO2e" in r and "over the" in r for r in reasons), reasons


def test_onprem_uses_the_teams_grid_when_given_else_the_countrys() -> None:
    table = load_energy()
    default = grid_factor("onprem", "onprem", table=table, onprem=OnPremAssumptions())
    sweden = grid_factor("onprem", "onprem", table=table, onprem=OnPremAssumptions(country="SWE"))
    own = grid_factor("onprem", "onprem", table=table, onprem=OnPremAssumptions(grid_co2e_g_per_kwh=12.0, pue=1.2))
    assert default is not None and sweden is not None and own is not None
    assert default.grid_g_co2e_per_kwh == table.country_g_per_kwh["USA"].value
    assert sweden.grid_g_co2e_per_kwh == pytest.approx(45.817) and sweden.data_year == 2021
    assert (own.grid_g_co2e_per_kwh, own.pue) == (12.0, 1.2) and "team's own" in own.grid_source
    assert grid_factor("onprem", "onprem", table=table, onprem=OnPremAssumptions(country="XXX")) is None


def test_a_region_without_a_grid_figure_has_no_co2e_and_cannot_meet_a_limit() -> None:
    gpus = [gpu("a", 24)]
    cat = catalog(gpus, [instance(AWS, "x.1", "a")], [offer(AWS, "x.1", "mars-north-1", 1.0)])
    rows = {("a", 1): per_gpu("a")}
    free = rank_offers(job(), requirements=requirements(), per_gpu=rows, catalog=cat)
    assert free.options and free.options[0].energy is None
    limited = rank_offers(job(max_co2e_kg=1e6), requirements=requirements(), per_gpu=rows, catalog=cat)
    assert not limited.options
    assert any("no grid carbon intensity" in r.reason for r in limited.rejected)
    assert math.isfinite(free.options[0].training_cost_usd)


def test_slack_takes_carbon_words_and_shows_energy_per_option() -> None:
    from workers.schemas import RecommendationSchema
    from workers.slack.blocks import render_recommendation
    from workers.slack.grammar import parse_command

    command = parse_command("resnet50 batch=64 samples=1.28M carbon co2=50", presets=["resnet50"], gpus=["t4"])
    assert command.spec["objective"] == "carbon" and command.spec["constraints"]["max_co2e_kg"] == 50.0
    cat, rows = _two_region_setup()
    rec = rank_offers(job(objective=Objective.CARBON), requirements=requirements(), per_gpu=rows,
                      catalog=cat)  # type: ignore[arg-type]
    blocks = render_recommendation(RecommendationSchema().dump(rec), title="t")["blocks"]
    fields = [f["text"] for b in blocks if b.get("fields") for f in b["fields"]]
    energy = [f for f in fields if f.startswith("*Energy, CO2e*")]
    assert energy and energy[0].endswith("kg") and "kWh" in energy[0]


def test_a_strategy_option_draws_what_the_same_run_draws_as_a_plain_option() -> None:
    """The strategy ranking's rows carry the iteration's compute and memory split too: a named plain layout on the
    same machine is the same run and draws the same power (it was counted idle, at 15% of board power)."""
    from tests.recommending import changed_example, recommend_spec

    shipped = load_catalog()
    limits = {"gpus": ["l4"], "max_gpus": 1}
    plain = recommend_spec(changed_example("bert-finetune", constraints=limits), shipped).options[0]
    named = recommend_spec(changed_example("bert-finetune", constraints=limits,
                                           training={"parallelism": {"data_parallel": "plain"}}), shipped).options[0]
    assert named.parallelism is not None and plain.parallelism is None
    assert (named.instance_type, named.region, named.pricing) == (plain.instance_type, plain.region, plain.pricing)
    assert plain.energy is not None and named.energy is not None
    assert named.energy.gpu_watts == pytest.approx(plain.energy.gpu_watts, rel=0.02)
    assert named.energy.energy_kwh == pytest.approx(plain.energy.energy_kwh, rel=0.02)
    # a sharded LLM run: its GPUs draw well above idle, at most the compute-bound share of board power
    llm = recommend_spec({"model": {"preset": "llama3-8b"}, "training": {"batch_size": 4, "sequence_length": 2048,
                                                                         "precision": "bf16-mixed"},
                          "dataset": {"samples": 20000}}, shipped).options[0]
    tdp = next(g.tdp_watts for g in shipped.gpus if g.slug == llm.gpu)
    assert llm.parallelism is not None and llm.energy is not None
    assert 2 * POWER_SHARE_IDLE * tdp < llm.energy.gpu_watts <= POWER_SHARE_COMPUTE * tdp
