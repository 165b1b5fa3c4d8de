"""The budget review's result as JSON: per job, per team, overall against the budget, sweeps, buy-vs-rent."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, post_dump

from workers.review.budget import SweepKind
from workers.review.words import advice_message, pick_message
from workers.schemas.fields import CATALOG_REF, enum_values, typed_function
from workers.schemas.results import WarningSchema, catalog_stamp


class PlanSchema(Schema):
    """One option with all of a job's runs on it."""

    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    pricing = fields.String()
    gpu = fields.String()
    gpu_count = fields.Integer()
    price_per_hour_usd = fields.Float()
    run_hours = fields.Float()
    run_cost_usd = fields.Float()
    runs = fields.Integer()
    parallel = fields.Integer()
    wall_hours = fields.Float()
    machine_hours = fields.Float()
    gpu_hours = fields.Float()
    cost_usd = fields.Float()
    energy_kwh = fields.Float(metadata={"description": "all runs, kWh at the data centre (PUE included)"})
    co2e_kg = fields.Float(metadata={"description": "all runs, kg CO2e (location-based)"})
    nodes = fields.Integer(metadata={"description": "machines of the instance type one run takes (a strategy "
                                                    "spread over several machines); gpu_count and "
                                                    "price_per_hour_usd are per machine"})


class PickSchema(Schema):
    """A pick under a deadline or a budget, or why there is none (with `message`)."""

    plan = fields.Nested(PlanSchema, allow_none=True)
    reason = fields.String()
    limit = fields.Float(allow_none=True)
    limit_source = fields.String()
    closest = fields.Nested(PlanSchema, allow_none=True)
    # Written by _message below; declared so that the OpenAPI document names it.
    message = fields.String(dump_only=True, metadata={"description": "The pick, or why there is none, in words"})

    @post_dump
    def _message(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        data["message"] = pick_message(data)
        return data


class SweepSpecSchema(Schema):
    """The sweep a job declares."""

    kind = typed_function(lambda s: s.kind.value, enum_values(SweepKind))
    parameters = fields.Integer()


class SweepAdviceSchema(Schema):
    """Grid or random for this many parameters."""

    parameters = fields.Integer()
    kind = typed_function(lambda a: a.kind.value, enum_values(SweepKind))
    advised = typed_function(lambda a: a.advised.value, enum_values(SweepKind))
    follows_advice = fields.Boolean()
    log_scale = fields.Boolean()
    values_per_parameter = fields.Float()
    # Written by _message below; declared so that the OpenAPI document names it.
    message = fields.String(dump_only=True, metadata={"description": "The advice in words"})

    @post_dump
    def _message(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        data["message"] = advice_message(data)
        return data


class SweepScheduleSchema(Schema):
    """All trials on one machine, at once or in turn."""

    mode = fields.String()
    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    pricing = fields.String()
    gpu = fields.String()
    gpu_count = fields.Integer()
    machine_price_per_hour_usd = fields.Float()
    trials_at_once = fields.Integer()
    waves = fields.Integer()
    trial_hours = fields.Float()
    wall_hours = fields.Float()
    cost_usd = fields.Float()


class SweepComparisonSchema(Schema):
    """Trials in parallel on small GPUs against in turn on one large GPU."""

    trials = fields.Integer()
    sequential = fields.Nested(SweepScheduleSchema, allow_none=True)
    parallel = fields.Nested(SweepScheduleSchema, allow_none=True)
    sequential_reason = fields.String()
    parallel_reason = fields.String()
    speedup = fields.Float()
    extra_cost_usd = fields.Float()
    advice = fields.Nested(SweepAdviceSchema, allow_none=True)


class CommittedUseSchema(Schema):
    """The machine a job would run on under a 1-year commitment, and the hours its runs keep it busy."""

    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    price_per_hour_usd = fields.Float()
    machine_hours = fields.Float()


class JobYearSchema(Schema):
    """One job's runs priced on demand and on spot, and its committed machine (workers/review/yearly.py)."""

    on_demand_usd = fields.Float(allow_none=True)
    spot_usd = fields.Float(allow_none=True)
    committed = fields.Nested(CommittedUseSchema, allow_none=True)


class JobReviewSchema(Schema):
    """One job of the review."""

    name = fields.String()
    team = fields.String()
    runs = fields.Integer()
    parallel = fields.Integer()
    status = fields.String()
    cheapest = fields.Nested(PickSchema)
    fastest = fields.Nested(PickSchema)
    planned = fields.Nested(PlanSchema, allow_none=True)
    planned_basis = fields.String()
    front = fields.List(fields.Nested(PlanSchema))
    sample = fields.List(fields.Nested(PlanSchema))
    options_count = fields.Integer()
    sweep = fields.Nested(SweepSpecSchema, allow_none=True)
    sweep_comparison = fields.Nested(SweepComparisonSchema, allow_none=True)
    gpu_memory_bytes = fields.Integer()
    warnings = fields.List(fields.Nested(WarningSchema))
    year = fields.Nested(JobYearSchema, allow_none=True)
    error = fields.Method("_error")

    def _error(self, job: Any) -> dict[str, str] | None:
        return {"field": job.error_field, "reason": job.error_reason} if job.status == "failed" else None


class TotalSchema(Schema):
    """Sums over a team's jobs, or over all."""

    team = fields.String()
    jobs = fields.Integer()
    runs = fields.Integer()
    cost_usd = fields.Float()
    machine_hours = fields.Float()
    gpu_hours = fields.Float()
    fastest_cost_usd = fields.Float()
    unplanned_jobs = fields.Integer()
    jobs_missing_deadline = fields.Integer()
    share_of_cost = fields.Float()
    energy_kwh = fields.Float()
    co2e_kg = fields.Float()
    rental_cost_usd = fields.Float(metadata={"description": "planned cost on rented machines"})
    owned_power_usd = fields.Float(metadata={"description": "planned power on the team's own cards"})


class StandingSchema(Schema):
    """The overall cost against the budget."""

    budget_usd = fields.Float(allow_none=True)
    cost_usd = fields.Float()
    remaining_usd = fields.Float(allow_none=True)
    over_budget = fields.Boolean()
    used_share = fields.Float(allow_none=True)


class CommittedMachinesSchema(Schema):
    """Machines of one type and region on a 1-year commitment, paid for the whole year."""

    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    machines = fields.Integer()
    price_per_hour_usd = fields.Float()
    machine_hours_used = fields.Float()
    year_usd = fields.Float()
    on_demand_usd = fields.Float()
    pays_off = fields.Boolean()


class YearlyComparisonSchema(Schema):
    """A year of the review's jobs on demand, on spot and committed (workers/review/yearly.py)."""

    on_demand_usd = fields.Float()
    spot_usd = fields.Float()
    committed_usd = fields.Float()
    committed_machines = fields.List(fields.Nested(CommittedMachinesSchema))
    uncommitted_jobs = fields.List(fields.String())
    missing_on_demand_jobs = fields.Integer()
    missing_spot_jobs = fields.Integer()
    basis = fields.String()


class CloudRateSchema(Schema):
    """The cloud GPU-hour a card is held against."""

    gpu = fields.String()
    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    gpu_count = fields.Integer()
    price_per_gpu_hour_usd = fields.Float()


class BuyVsRentSchema(Schema):
    """One card bought against renting."""

    gpu = fields.String()
    card_price_usd = fields.Float()
    host_price_usd = fields.Float()
    purchase_usd = fields.Float()
    power_watts = fields.Integer()
    power_usd_per_hour = fields.Float()
    owned_price_per_hour_usd = fields.Float()
    cloud = fields.Nested(CloudRateSchema, allow_none=True)
    same_gpu = fields.Boolean()
    break_even_hours = fields.Float(allow_none=True)
    busy_hours_per_year = fields.Float()
    break_even_years = fields.Float(allow_none=True)
    pays_off_within_lifetime = fields.Boolean()
    review_hours = fields.Float()
    review_jobs = fields.Integer()
    pays_off_for_review = fields.Boolean()
    reason = fields.String()
    cloud_hours_per_card_hour = fields.Float()
    rent_per_card_hour_usd = fields.Float()


class OnPremAssumptionsSchema(Schema):
    """The assumptions that turn a bought card into an hourly cost."""

    lifetime_years = fields.Float()
    utilisation = fields.Float()
    electricity_usd_per_kwh = fields.Float()
    host_price_usd = fields.Float()


class ReviewResultSchema(Schema):
    """A whole budget review (the JSON format of `POST /v1/reports` and `gpugauge report`)."""

    name = fields.String()
    budget_usd = fields.Float(allow_none=True)
    providers = fields.List(fields.String())
    onprem = fields.Nested(OnPremAssumptionsSchema)
    standing = fields.Nested(StandingSchema)
    total = fields.Nested(TotalSchema)
    teams = fields.List(fields.Nested(TotalSchema))
    jobs = fields.List(fields.Nested(JobReviewSchema))
    buy_vs_rent = fields.List(fields.Nested(BuyVsRentSchema))
    yearly = fields.Nested(YearlyComparisonSchema, allow_none=True)
    catalog = typed_function(catalog_stamp, CATALOG_REF)
