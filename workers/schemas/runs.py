"""Schemas of a reported run (POST /v1/runs, `gpugauge runs add`) and of the runs as stored and listed."""

from __future__ import annotations

from marshmallow import RAISE, Schema, fields, validate

from workers.schemas.fields import GpuName, StrictFloat, bounded_int
from workers.schemas.spec import JobSpecSchema


class RunReportSchema(Schema):
    """A measured run: the job as specified, where it ran, what it took."""

    class Meta:
        unknown = RAISE

    spec = fields.Nested(JobSpecSchema, required=True,
                         metadata={"description": "the job spec, as for a recommendation"})
    gpu = GpuName(required=True)
    gpu_count = bounded_int(minimum=1, maximum=1024, load_default=1)
    iteration_ms = StrictFloat(minimum=0.001, maximum=1e8, required=True,
                               metadata={"description": "measured time of one training iteration (one optimizer "
                                                        "step's forward and backward on every GPU)"})
    peak_memory_bytes = bounded_int(minimum=1, maximum=10**14, metadata={
        "description": "measured peak GPU memory of one GPU, when known (nvidia-smi or max_memory_reserved)"})
    source = fields.String(validate=validate.Length(max=500), load_default="",
                           metadata={"description": "where the figure comes from (a profiler run, a log URL)"})


class RunSchema(RunReportSchema):
    """A stored run, with its id and what the plain model predicted for it when it was recorded."""

    id = fields.String()
    recorded_at = fields.String()
    predicted_iteration_ms = fields.Float()
    ratio = fields.Float(metadata={"description": "measured / predicted iteration time"})


class CorrectionSchema(Schema):
    """One fitted correction: a GPU generation and layer kind, its time factor, the runs behind it."""

    architecture = fields.String()
    kind = fields.Function(lambda c: c.kind.value)
    factor = fields.Float(metadata={"description": "measured / predicted iteration time, fitted and bounded"})
    measured = fields.Float(metadata={"description": "the runs' own median measured / predicted ratio, before the "
                                                     "bounds (factor_bounds): where it lies outside them, estimates "
                                                     "warn calibration-bounded"})
    runs = fields.Function(lambda c: len(c.runs))
    run_ids = fields.List(fields.String(), attribute="runs")
    gpus = fields.List(fields.String())


class RunListSchema(Schema):
    """Every stored run and the corrections fitted from them."""

    runs = fields.List(fields.Nested(RunSchema))
    corrections = fields.List(fields.Nested(CorrectionSchema))
    factor_bounds = fields.List(fields.Float())
    absurd_ratio = fields.Float()
