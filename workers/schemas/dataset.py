"""The job spec's `dataset` section: its size in samples or in tokens, its bytes, loading and location."""

from __future__ import annotations

from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from workers.schemas.fields import StrictFloat, bounded_int

MAX_SAMPLES = 10**13
MAX_TOKENS = 10**15  # 66x Llama 3's 15T tokens


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class DataLocationSchema(_Strict):
    """Where the data set lives, so that moving it to the machine's region is priced and timed."""

    provider = fields.String(required=True, validate=validate.OneOf(("aws", "gcp", "internet", "anywhere")),
                             metadata={"description": "aws or gcp (with region): its object storage there; "
                                                      "internet: outside both clouds (the team's servers, "
                                                      "another provider); anywhere: it can be put in any "
                                                      "region at no cost (a public data set)."})
    region = fields.String(validate=validate.Regexp(r"^[a-z][a-z0-9-]{1,63}$"),
                           metadata={"description": "The region of the bucket, e.g. us-east-1 or us-central1; "
                                                    "required for aws and gcp, not allowed otherwise."})

    @validates_schema
    def _region_goes_with_a_cloud(self, data: dict[str, Any], **_: Any) -> None:
        cloud = data.get("provider") in ("aws", "gcp")
        if cloud and not data.get("region"):
            raise ValidationError(f"a data set in {data['provider']} needs its region", "region")
        if not cloud and data.get("region"):
            raise ValidationError(f"a region goes with aws or gcp, not {data.get('provider')}", "region")


class DatasetSchema(_Strict):
    """The training data."""

    samples = bounded_int(minimum=0, maximum=MAX_SAMPLES, load_default=0)
    # A language model's corpus is said in tokens ("pre-train on 100B tokens"): build_job makes them samples
    # of training.mean_sequence_length tokens, else training.sequence_length (a preset's context when absent).
    tokens = bounded_int(minimum=1, maximum=MAX_TOKENS, metadata={
        "description": "Training tokens per epoch, instead of samples, for a model that reads token sequences: "
                       "samples = ceil(tokens / tokens a sample), a sample being training.mean_sequence_length "
                       "tokens where given, else training.sequence_length (a preset's context when absent); "
                       "told back in the warning samples-from-tokens."})
    bytes = bounded_int(minimum=0, maximum=10**17, load_default=0)
    in_memory = fields.Boolean(load_default=True)
    preprocess_ms_per_sample = StrictFloat(
        minimum=0.0, maximum=1e6, load_default=0.0,
        metadata={"description": "Pre-processing per sample, ms on one core of PassMark single-thread 2000."})
    loader_workers = bounded_int(
        minimum=1, maximum=1024, allow_none=True, load_default=None,
        metadata={"description": "Data-loader worker processes per GPU (PyTorch num_workers). Default: "
                                 "what the instance's vCPUs per GPU allow, one vCPU kept for training."})
    preprocess_serial = fields.Boolean(
        load_default=False,
        metadata={"description": "Pre-processing cannot be split across workers: one core per GPU does it."})
    location = fields.Nested(DataLocationSchema, metadata={
        "description": "Where the data set lives. Absent: unknown; moving it is then not priced and each "
                       "cloud option warns what it would cost (data-location-unknown)."})

    @validates_schema
    def _samples_or_tokens(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("tokens") and data.get("samples"):
            raise ValidationError("give dataset.samples or dataset.tokens, not both (tokens are made samples "
                                  "of the training's sequence length)", "tokens")
