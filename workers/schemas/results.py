"""Schemas for what gpugauge answers: model statistics, requirements, recommendations."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from marshmallow import Schema, fields, post_dump, pre_dump

from workers.schemas.dumpers import compiled_dump
from workers.schemas.fields import CATALOG_REF, enum_values, typed_function
from workers.sizing.requirements import MEMORY_TERMS, Requirements
from workers.sizing.stats import LayerKind


class LayerRowSchema(Schema):
    """One row of the per-layer statistics table."""

    name = fields.String()
    type = fields.String()
    output_shape = fields.List(fields.Integer())
    neurons = fields.Integer()
    parameters = fields.Integer()
    multiply_adds = fields.Integer()
    kind = typed_function(lambda layer: layer.kind.value, enum_values(LayerKind))
    saved_values = fields.Integer()
    pattern = fields.String()


class ModelStatsSchema(Schema):
    """A model's statistics, in total and per layer (`gpugauge model --json`)."""

    name = fields.String()
    neurons = fields.Integer()
    parameters = fields.Integer()
    multiply_adds = fields.Integer()
    sequence_length = fields.Integer(allow_none=True)
    frozen_parameters = fields.Integer()
    unknown_operators = fields.List(fields.String())
    import_warnings = fields.Function(lambda stats: [{"code": c, "message": m} for c, m in stats.import_warnings])
    layers = fields.List(fields.Nested(LayerRowSchema))


# Peak GPU memory by term: one Integer per term of workers.sizing.requirements.MemoryBreakdown.
MemoryBreakdownSchema = Schema.from_dict(
    {name: fields.Integer(attribute=f"{name}_bytes") for name in MEMORY_TERMS}, name="MemoryBreakdownSchema")


class PerGpuSchema(Schema):
    """Fit and time on one GPU model at one count."""

    gpu = fields.String()
    gpu_count = fields.Integer()
    fits = fields.Boolean()
    gpu_memory_bytes = fields.Integer()
    iteration_ms = fields.Float()
    throughput_samples_per_s = fields.Float()
    training_hours = fields.Float()
    speedup_vs_one_gpu = fields.Float()
    calibrated = fields.Boolean()
    bottleneck = fields.String()
    cpu_single_thread_score = fields.Float()
    calibrated_by = fields.Function(lambda r: _calibrated_by(r), metadata={
        "description": "the reported runs (POST /v1/runs) whose fitted correction scaled this row's time"})
    peak_phase = fields.String()


class WarningSchema(Schema):
    """A coded warning."""

    code = fields.String()
    message = fields.String()


class PlanOffloadSchema(Schema):
    """What a plan step's strategy moves to host memory."""

    optimizer = fields.Boolean()
    parameters = fields.Boolean()


class PlanAdapterSchema(Schema):
    """A plan step's LoRA or QLoRA adapters."""

    kind = fields.String()
    rank = fields.Integer()
    targets = fields.List(fields.String())
    double_quantization = fields.Boolean()


class PlanParallelismSchema(Schema):
    """A plan step's whole strategy, in the shape of the spec's `training.parallelism` (it loads there as is)."""

    data_parallel = fields.String()
    tensor_parallel = fields.Integer()
    pipeline_stages = fields.Integer()
    offload = fields.Nested(PlanOffloadSchema)
    adapter = fields.Nested(PlanAdapterSchema)  # absent: every weight trains
    checkpointing = fields.String()
    allow_adapters = fields.Boolean()

    @post_dump
    def _drop_no_adapter(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data.get("adapter") is None:
            data.pop("adapter", None)
        return data


class MitigationSchema(Schema):
    """One step of the out-of-memory plan."""

    kind = fields.String()
    description = fields.String()
    gpu_memory_bytes = fields.Integer()
    time_factor = fields.Float()
    batch_size = fields.Integer(allow_none=True)
    learning_rate = fields.Float(allow_none=True)
    update_interval = fields.Integer(allow_none=True)
    gpu_count = fields.Integer(allow_none=True)
    layers = fields.List(fields.String())
    gpu = fields.String(allow_none=True)
    opens = fields.List(fields.String())
    parallelism = fields.Nested(PlanParallelismSchema, allow_none=True)  # null: the step names no strategy


def _calibrated_by(row: Any) -> dict[str, Any]:
    return {"runs": len(row.calibrated_by_runs), "gpus": list(row.calibrated_by_gpus)}


def _storage(req: Any) -> dict[str, int]:
    return {"min": req.storage_min_bytes, "max": req.storage_max_bytes}


class RequirementsSchema(Schema):
    """The contract's `requirements` object."""

    gpu_memory_bytes = fields.Integer()
    gpu_memory_breakdown = fields.Nested(MemoryBreakdownSchema)
    peak_phase = fields.String()
    memory_calibrated = fields.Boolean()
    baseline_formula_bytes = fields.Integer()
    host_memory_bytes = fields.Integer()
    storage_bytes = typed_function(_storage, {
        "type": "object", "required": ["min", "max"], "additionalProperties": False,
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}}})
    cpu_single_thread_score = fields.Float()
    loader_workers = fields.Integer()
    flops_per_iteration = fields.Float()
    iterations_per_epoch = fields.Integer()
    iterations_total = fields.Integer()
    per_gpu = fields.List(fields.Nested(PerGpuSchema))
    warnings = fields.List(fields.Nested(WarningSchema))
    mitigations = fields.List(fields.Nested(MitigationSchema))
    calibrated_by = fields.Function(lambda r: _calibrated_by(r), metadata={
        "description": "the reported runs whose corrections this estimate used: {runs: n, gpus: [...]}"})


@dataclass(frozen=True)
class EstimateAnswer:
    """POST /v1/estimate's answer: the requirements, and the catalog version whose GPU table they used."""

    requirements: Requirements
    catalog_version: str
    prices_as_of: str


class EstimateAnswerSchema(RequirementsSchema):
    """The requirements plus `catalog: {version, prices_as_of}`, as a recommendation carries (CONTRACT.md)."""

    catalog = fields.Dict(keys=fields.String(), values=fields.String(), dump_only=True, metadata=CATALOG_REF)

    @pre_dump
    def _requirements(self, answer: EstimateAnswer, **_: Any) -> Requirements:
        return answer.requirements

    @post_dump(pass_original=True)
    def _with_catalog(self, data: dict[str, Any], answer: EstimateAnswer, **_: Any) -> dict[str, Any]:
        return {**data, "catalog": {"version": answer.catalog_version, "prices_as_of": answer.prices_as_of}}


class StrategyChoiceSchema(Schema):
    """How an option spreads the job over its GPUs."""

    data_parallel = fields.String()
    tensor_parallel = fields.Integer()
    pipeline_stages = fields.Integer()
    offload_optimizer = fields.Boolean()
    offload_parameters = fields.Boolean()
    adapter = fields.String()
    adapter_rank = fields.Integer()
    checkpointing = fields.String()
    batch_size = fields.Integer()
    update_interval = fields.Integer()
    total_gpus = fields.Integer()
    gpu_memory_per_gpu_bytes = fields.Integer()
    host_offload_bytes_per_node = fields.Integer()
    bottleneck = fields.String()
    communication_ms = fields.Float()
    strategies_considered = fields.Integer()


class ScalingPointSchema(Schema):
    """The top option's machine type and strategy on n machines."""

    nodes = fields.Integer()
    total_gpus = fields.Integer()
    training_hours = fields.Float()
    training_cost_usd = fields.Float()
    speedup = fields.Float()
    efficiency = fields.Float()
    strategy = fields.String(metadata={
        "description": "the fastest strategy that fits this machine count, in words; fewer machines may need a "
                       "slower one (offload, checkpointing), which is what an efficiency above 1 reflects"})

class CarbonSchema(Schema):
    """What an option's energy and CO2e were worked out from, each coefficient with its source."""

    pue = fields.Float(attribute="factor.pue")
    pue_source = fields.String(attribute="factor.pue_source")
    grid_g_co2e_per_kwh = fields.Float(attribute="factor.grid_g_co2e_per_kwh")
    grid_source = fields.String(attribute="factor.grid_source")
    grid_data_year = fields.Integer(attribute="factor.data_year", allow_none=True)
    gpu_watts = fields.Float(metadata={"description": "average draw of one GPU while training"})
    host_watts = fields.Float(metadata={"description": "the host's CPUs and memory"})


def _energy_value(name: str) -> Any:
    return fields.Function(lambda o: getattr(o.energy, name) if o.energy is not None else None, allow_none=True)


class StartUpSchema(Schema):
    """The seconds before a run's first step: provisioning, boot, environment, data staging."""

    provisioning_s = fields.Float()
    boot_s = fields.Float()
    environment_s = fields.Float()
    staging_s = fields.Float()
    staging_mb_per_s = fields.Float()
    billed_s = fields.Float()
    total_s = fields.Float()


class CheckpointsSchema(Schema):
    """A run's checkpoints: the interval, how many, and the seconds each takes to write."""

    every_hours = fields.Float()
    count = fields.Integer()
    write_s = fields.Float()


class PurchaseSchema(Schema):
    """One machine a team could buy for the job (\"what would we buy\"), against the best rental."""

    gpu = fields.String()
    gpu_count = fields.Integer()
    instance_type = fields.String()
    cards_usd = fields.Float()
    host_usd = fields.Float()
    purchase_usd = fields.Float()
    power_watts = fields.Float()
    electricity_usd_per_kwh = fields.Float()
    job_hours = fields.Float()
    power_cost_usd = fields.Float()
    rental_cost_usd = fields.Float(allow_none=True)
    rental = fields.String()
    break_even_runs = fields.Float(allow_none=True)
    break_even_hours = fields.Float(allow_none=True)
    lifetime_years = fields.Float()
    utilisation = fields.Float()
    hours_of_use = fields.Float()
    pays_off = fields.Boolean()
    meets_deadline = fields.Boolean()
    source = fields.String()
    as_of = fields.String()
    strategy = fields.String(metadata={
        "description": "How the job runs on these cards where it needs more than the job as given (a strategy "
                       "the search found: micro-batches, checkpointing, sharding); empty where it runs as given."})
    run_cost_usd = fields.Float(metadata={
        "description": "What one run costs on these cards: the purchase price times the run's hours over the hours "
                       "of use (lifetime_years x utilisation), plus its power; with no rental to compare, the order."})
    samples_per_second = fields.Float(metadata={
        "description": "The job's training samples a second on these cards; with job_hours 0 (dataset.samples not "
                       "given) the order: the least a sample costs over the cards' life, price and power."})


class OptionSchema(Schema):
    """One ranked option."""

    rank = fields.Integer()
    provider = fields.String()
    instance_type = fields.String()
    region = fields.String()
    pricing = fields.String()
    gpu = fields.String()
    gpu_count = fields.Integer()
    gpu_memory_bytes = fields.Integer()
    vcpus = fields.Integer()
    host_memory_bytes = fields.Integer()
    storage_bytes = fields.Integer()
    cpu_single_thread_score = fields.Float()
    price_per_hour_usd = fields.Float()
    training_hours = fields.Float()
    training_cost_usd = fields.Float()
    fits = fields.Boolean()
    why = fields.String()
    warnings = fields.List(fields.Nested(WarningSchema))
    pareto = fields.Boolean()
    storage_cost_usd = fields.Float()
    iteration_ms = fields.Float()
    energy_kwh = _energy_value("energy_kwh")
    co2e_kg = _energy_value("co2e_kg")
    carbon = fields.Nested(CarbonSchema, attribute="energy", allow_none=True)
    nodes = fields.Integer()
    parallelism = fields.Nested(StrategyChoiceSchema, allow_none=True)
    compute_hours = fields.Float()
    billed_hours = fields.Float()
    start_up = fields.Nested(StartUpSchema, allow_none=True)
    checkpoints = fields.Nested(CheckpointsSchema, allow_none=True)
    loader_workers = fields.Integer()
    threads_per_core = fields.Integer(metadata={
        "description": "vCPUs per physical core of the instance: 2 on x86 cloud hosts (two hardware threads "
                       "share a core; a loader worker on the second adds about 30%, not a core), 1 on Arm "
                       "and on the team's own machines"})
    percentile = fields.Float()
    percentile_hours = fields.Float()
    percentile_cost_usd = fields.Float()
    expected_interruptions = fields.Float()
    mtbi_hours = fields.Float()
    interruption_source = fields.String()
    owned = fields.Boolean()
    data_transfer_cost_usd = fields.Float(metadata={
        "description": "Moving the data set into the option's region (dataset.location), in training_cost_usd."})
    data_transfer = fields.String(metadata={
        "description": "From where the data set is moved, at what USD per GB and staging rate, with the source; "
                       "empty where dataset.location is absent."})
    price_source = fields.String(metadata={
        "description": "Where price_per_hour_usd comes from: the catalog offer's source (a catalog file at a "
                       "commit, a provider's price API), or for the team's own cards \"power only: ...\" with "
                       "the board power's source."})
    price_as_of = fields.String(allow_none=True, metadata={
        "description": "The ISO date the price source says the price was true; null where the source carries "
                       "no date (SkyPilot's catalog rows name a commit, not a day) and for the team's own cards "
                       "(power at the user's electricity rate, which has no market date)."})


class RejectedSchema(Schema):
    """An offer family that cannot run the job."""

    instance_type = fields.String()
    reason = fields.String()
    provider = fields.String()
    gpu = fields.String()
    gpu_count = fields.Integer()


def catalog_stamp(rec: Any) -> dict[str, str]:
    """Return the contract's `catalog` object of an answer: the catalog version and how old its prices are."""
    return {"version": rec.catalog_version, "prices_as_of": rec.prices_as_of}


class RecommendationSchema(Schema):
    """A recommendation job's result."""

    requirements = fields.Nested(RequirementsSchema)
    options = fields.List(fields.Nested(OptionSchema))
    rejected = fields.List(fields.Nested(RejectedSchema))
    catalog = typed_function(catalog_stamp, CATALOG_REF)
    plan = fields.List(fields.Nested(MitigationSchema))
    scaling = fields.List(fields.Nested(ScalingPointSchema))
    purchase = fields.List(fields.Nested(PurchaseSchema))


_RECOMMENDATION_SCHEMA = RecommendationSchema()
_DUMP_RECOMMENDATION = compiled_dump(_RECOMMENDATION_SCHEMA)


def dump_recommendation(rec: Any) -> dict[str, Any]:
    """Return a recommendation dumped as RecommendationSchema dumps it, by the schema's compiled dump.

    One shared instance: a fresh RecommendationSchema builds its dozen nested schemas (deep copies of
    their fields) on its first dump, 2 ms of a 3 ms dump. The compiled dump (workers/schemas/dumpers.py)
    then skips marshmallow's per-value dispatch: 2.7 -> 0.8 ms CPU for examples/resnet50-imagenet.json.
    """
    result: dict[str, Any] = _DUMP_RECOMMENDATION(rec)
    return result
