"""The job spec of CONTRACT.md as marshmallow schemas, with every number bounded."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from marshmallow import RAISE, Schema, ValidationError, fields, pre_load, validate, validates, validates_schema

from catalog.providers import PROVIDER_NAMES
from workers.modelimport.models import FORMS
from workers.schemas.dataset import DatasetSchema
from workers.schemas.fields import GpuName, StrictFloat, bounded_int
from workers.schemas.layer_list import MAX_LAYER_NUMBER, LayerList, unbounded_number_errors
from workers.sizing.errors import UnknownNameError
from workers.sizing.layers.build import ALIASES as LAYER_ALIASES
from workers.sizing.layers.build import RULES as LAYER_RULES
from workers.sizing.presets.hf_config import SUPPORTED_TYPES
from workers.sizing.presets.registry import PRESETS, find_preset
from workers.sizing.presets.transformer import ENCODER_HEADS, HEAD_DESCRIPTION
from workers.sizing.spec import DEFAULT_PROVIDERS, Optimizer

# Bounds: far beyond any real job, tight enough that no figure overflows or loses meaning.
MAX_LAYERS = 20_000  # costed per distinct layer (sizing/timing.py); the body limit binds too
MAX_ONNX_BASE64_CHARS = 48 * 1024 * 1024  # ~36 MiB of ONNX; the HTTP body limit is lower still
MODEL_FORMS = FORMS  # the model forms, as the core resolves them (workers/modelimport/models.py)
# What the OpenAPI document cannot learn from the fields (service/app.py adds it to the "Model"
# component): exactly one form of model, and input_shape only beside layers (JSON Schema 2020-12).
OPENAPI_MODEL_EXTRAS: dict[str, Any] = {
    "oneOf": [{"required": [form]} for form in MODEL_FORMS],
    # input_shape goes with layers or a preset (an image preset at another size), never with stats or onnx
    "dependentSchemas": {"input_shape": {"anyOf": [{"required": ["layers"]}, {"required": ["preset"]}]},
                         "head": {"anyOf": [{"required": ["preset"]}, {"required": ["hf_config"]}]}},
}
_BOUNDED_NUMBER = {"type": "number", "minimum": -MAX_LAYER_NUMBER, "maximum": MAX_LAYER_NUMBER}
# The values of a free-form layer, as ModelSchema checks them: numbers bounded at the top and in lists.
LAYER_VALUE_SCHEMA: dict[str, Any] = {"anyOf": [
    {"type": ["string", "boolean", "null", "object"]}, _BOUNDED_NUMBER,
    {"type": "array", "items": {"anyOf": [{"type": ["string", "boolean", "null", "object", "array"]},
                                          _BOUNDED_NUMBER]}},
]}
# Names the document lists (the core also takes them in other cases and with - for _; it suggests the
# closest for any other): the layer types and their aliases, the presets and theirs.
LAYER_TYPES = tuple(sorted({*LAYER_RULES, *LAYER_ALIASES}))
PRESET_NAMES = tuple(sorted({word for preset in PRESETS.values() for word in (preset.name, *preset.aliases)}))
# Standard base64 with its padding, as base64.b64decode(validate=True) accepts it.
BASE64_PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
PRICING_KINDS = ("on_demand", "spot", "owned", "committed_1y", "committed_3y", "savings_plan_1y", "savings_plan_3y")
DEFAULT_PRICING_KINDS = ("on_demand", "spot", "owned")  # commitments only when asked for


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class StatsSchema(_Strict):
    """The three totals of a network editor's statistics panel, per sample."""

    neurons = bounded_int(minimum=1, maximum=10**13, required=True)
    parameters = bounded_int(minimum=1, maximum=10**13, required=True)
    multiply_adds = bounded_int(minimum=0, maximum=10**17, required=True)


class ModelSchema(_Strict):
    """Exactly one of preset, stats, layers (with input_shape), onnx or hf_config."""

    preset = fields.String(validate=validate.Length(min=1, max=64), metadata={
        "enum": list(PRESET_NAMES),
        "description": "A preset name or alias; the server also takes one as people write it: any case, its Hugging "
                       "Face repository (\"meta-llama/Llama-2-7b-hf\"), without -hf, -instruct, -chat or -it "
                       "(docs/contract-additions.md, Model names)."})
    stats = fields.Nested(StatsSchema)
    layers = LayerList(fields.Dict(keys=fields.String(), metadata={
        "additionalProperties": LAYER_VALUE_SCHEMA, "required": ["type"],
        "properties": {"type": {"type": "string", "enum": list(LAYER_TYPES)}}}),
        validate=validate.Length(min=1, max=MAX_LAYERS))
    input_shape = fields.List(bounded_int(minimum=1, maximum=1_000_000), validate=validate.Length(min=1, max=4))
    onnx = fields.String(validate=validate.Length(min=1, max=MAX_ONNX_BASE64_CHARS),
                         metadata={"description": "An ONNX file, base64-encoded.", "pattern": BASE64_PATTERN})
    hf_config = fields.Dict(keys=fields.String(), metadata={
        "description": "A language model's Hugging Face config.json, as the Hub serves it: a decoder, a "
                       "BERT-style encoder (its head: model.head), GPT-2 or a T5 encoder-decoder (its target: "
                       "training.target_length) (model_type "
                       f"one of {', '.join(SUPPORTED_TYPES)}; docs/contract-additions.md, Models from a "
                       "config.json)."})
    head = fields.String(validate=validate.OneOf(ENCODER_HEADS), metadata={"description": HEAD_DESCRIPTION})

    @validates("layers")
    def _finite_layer_numbers(self, layers: list[dict[str, Any]], **_: Any) -> None:
        errors = unbounded_number_errors(layers)
        if errors:
            raise ValidationError(errors)

    @validates_schema
    def _one_form(self, data: dict[str, Any], **_: Any) -> None:
        forms = [k for k in MODEL_FORMS if k in data]
        if len(forms) != 1:
            got = ", ".join(forms) if forms else "none"
            raise ValidationError(f"give exactly one of preset, stats, layers, onnx, hf_config (got {got})", "_schema")
        if "input_shape" in data and "layers" not in data and "preset" not in data:
            # a preset's images at another size (ResNet-18 on 32x32 CIFAR); its layers decide what fits
            raise ValidationError(f"goes with layers or a preset, not with {forms[0]}", "input_shape")
        if "onnx" in data:
            try:
                base64.b64decode(data["onnx"], validate=True)
            except (binascii.Error, ValueError) as exc:
                raise ValidationError("not valid base64", "onnx") from exc


class ProfileSchema(_Strict):
    """A measured iteration time on one GPU."""

    gpu = GpuName(required=True)
    iteration_ms = StrictFloat(minimum=0.001, maximum=1e8, required=True)


class MeasuredMemorySchema(_Strict):
    """One measured training step's tensor memory (gpugauge probe): its intrinsic peak at a batch."""

    tensor_memory_bytes = bounded_int(minimum=1, maximum=10**15, required=True)
    batch_size = bounded_int(minimum=1, maximum=1_000_000, required=True)


DATA_PARALLEL_KINDS = ("auto", "plain", "zero1", "zero2", "zero3", "fsdp", "hybrid_shard", "parameter_server")
CHECKPOINTING_MODES = ("auto", "none", "selective", "selective_ops", "full")
LORA_TARGET_NAMES = ("q", "k", "v", "o", "mlp")


class OffloadSchema(_Strict):
    """What lives in host memory instead of the GPU (ZeRO-Offload, FSDP CPU offload)."""

    optimizer = fields.Boolean(load_default=False, metadata={
        "description": "fp32 master weights, gradients and optimizer state in host memory, updated on the CPU"})
    parameters = fields.Boolean(load_default=False, metadata={
        "description": "the 16-bit weights too (zero3, fsdp or hybrid_shard only)"})


class AdapterSchema(_Strict):
    """LoRA or QLoRA: only adapter weights train; the base stays frozen (in 4-bit NF4 for QLoRA)."""

    kind = fields.String(required=True, validate=validate.OneOf(("lora", "qlora")))
    rank = bounded_int(minimum=1, maximum=4096, load_default=8)
    targets = fields.List(fields.String(validate=validate.OneOf(LORA_TARGET_NAMES)),
                          validate=validate.Length(min=1, max=len(LORA_TARGET_NAMES)), load_default=["q", "v"])
    double_quantization = fields.Boolean(load_default=True)


class ParallelismSchema(_Strict):
    """How the job spreads over GPUs; every field's `auto` (0 for the degrees) lets the ranking choose."""

    data_parallel = fields.String(load_default="auto", validate=validate.OneOf(DATA_PARALLEL_KINDS))
    tensor_parallel = bounded_int(minimum=0, maximum=64, load_default=0, metadata={
        "description": "GPUs of one machine that split each layer (0: auto, 1: none)"})
    pipeline_stages = bounded_int(minimum=0, maximum=64, load_default=0, metadata={
        "description": "stages the layers are split into (0: auto, 1: none)"})
    offload = fields.Nested(OffloadSchema)
    adapter = fields.Nested(AdapterSchema)
    checkpointing = fields.String(load_default="auto", validate=validate.OneOf(CHECKPOINTING_MODES))
    allow_adapters = fields.Boolean(load_default=False, metadata={
        "description": "let the automatic search train LoRA/QLoRA adapters instead of every weight"})

    @pre_load
    def _fill_offload(self, data: Any, **_: Any) -> Any:
        if isinstance(data, dict) and "offload" not in data:
            data = {**data, "offload": {}}
        return data


class TrainingSchema(_Strict):
    """How the model is trained."""

    batch_size = bounded_int(minimum=1, maximum=1_000_000, required=True)
    epochs = StrictFloat(minimum=1, maximum=1_000_000, load_default=1.0)
    sequence_length = bounded_int(minimum=1, maximum=4_194_304)
    target_length = bounded_int(
        minimum=1, maximum=4_194_304,
        metadata={"description": "An encoder-decoder's (T5, FLAN-T5) target tokens per sample, which its decoder "
                                 "reads (the labels); sequence_length is the source's. Default: sequence_length."})
    mean_sequence_length = bounded_int(
        minimum=1, maximum=4_194_304,
        metadata={"description": "Tokens per sample the steps compute when batches are padded to their "
                                 "longest sample or binned; at most sequence_length. Memory is sized at "
                                 "sequence_length, time at this length."})
    precision = fields.String(
        load_default="fp32", validate=validate.OneOf(("fp32", "fp16-mixed", "bf16-mixed", "fp8-mixed")),
        metadata={"description": "fp8-mixed: the linear layers' matrix products in FP8 (Transformer Engine, "
                                 "torchao float8), the rest as bf16-mixed; on cards without FP8 (before Ada) "
                                 "estimated as bf16-mixed. Memory is sized as bf16-mixed."})
    optimizer = fields.String(load_default="adam", validate=validate.OneOf([o.value for o in Optimizer]), metadata={
        "description": "rmsprop: torch.optim.RMSprop's and Keras' defaults (momentum 0, not centered: one state); "
                       "adamw_8bit: bitsandbytes' AdamW8bit (the HF Trainer's optim adamw_bnb_8bit), its two states "
                       "in 1 byte each, updated one tensor at a time"})
    optimizer_implementation = fields.String(
        load_default="foreach", validate=validate.OneOf(("foreach", "per_tensor", "fused")),
        metadata={"description": "How the update runs, which sets the optimizer step's temporaries: foreach "
                                 "(default, torch.optim's CUDA default since 2.0: one fp32 copy of every trainable "
                                 "parameter for Adam/AdamW); per_tensor (a loop over tensors: transformers' AdamW, "
                                 "the HF Trainer's adamw_hf, BertAdam, foreach=False: copies of the largest tensor "
                                 "only); fused (fused=True, apex FusedAdam, DeepSpeed FusedAdam: none)."})
    gradient_clipping = fields.String(
        load_default="none", validate=validate.OneOf(("none", "global", "per_tensor")),
        metadata={"description": "Whether gradients are clipped before each update, which costs step time: none "
                                 "(default); global (one norm over every gradient: clip_grad_norm_ on all "
                                 "parameters, the HF Trainer's default max_grad_norm=1.0); per_tensor (each tensor "
                                 "by its own norm inside the update loop, as BertAdam does)."})
    learning_rate = StrictFloat(minimum=1e-12, maximum=100.0)
    update_interval = bounded_int(minimum=1, maximum=65_536, load_default=1)
    recompute = fields.Boolean(load_default=False)
    framework = fields.String(load_default="pytorch", validate=validate.OneOf(("pytorch", "tensorflow", "jax", "cntk")))
    eval_every_epochs = bounded_int(minimum=0, maximum=1_000_000, load_default=0)
    profile = fields.Nested(ProfileSchema)
    measured_memory = fields.Nested(MeasuredMemorySchema)
    parallelism = fields.Nested(ParallelismSchema)
    loss = fields.String(load_default="cross_entropy",
                         validate=validate.OneOf(("cross_entropy", "mse", "none", "fused_linear_cross_entropy",
                                                  "fused_cross_entropy")),
                         metadata={"description": "The loss over the model's output; none: the model computes it; "
                                                  "fused_linear_cross_entropy: the output projection and the "
                                                  "cross-entropy as one chunked kernel that never holds the logits "
                                                  "(Liger Kernel; Hugging Face Trainer use_liger_kernel=True); "
                                                  "fused_cross_entropy: a kernel that reads the logits in their own "
                                                  "dtype and writes their gradient in one pass, no fp32 copy "
                                                  "(flash-attn's CrossEntropyLoss, llm-foundry's default, Megatron's "
                                                  "cross-entropy fusion)."})
    attention = fields.String(load_default="auto", validate=validate.OneOf(("auto", "efficient", "flash", "math")),
                              metadata={"description": "The attention kernel; auto: PyTorch's memory-efficient "
                                                       "kernel (SDPA) from Maxwell on in any precision; the "
                                                       "math path on Kepler and for TensorFlow, JAX and CNTK."})
    tf32_matmul = fields.Boolean(
        allow_none=True, load_default=None,
        metadata={"description": "fp32 jobs on Ampere and later: true runs matrix products on TF32 tensor "
                                 "cores, false on CUDA cores; null (default): the framework's default (PyTorch "
                                 "off since 1.12, TensorFlow and JAX on). Convolutions run TF32 either way."})
    ema = fields.Boolean(metadata={"description": "an exponential moving average of the trained weights, updated after "
                                                  "every step (diffusers' --use_ema, timm's --model-ema): one fp32 "
                                                  "copy of each on the GPU and in each checkpoint; default false"})
    preference = fields.String(validate=validate.OneOf(("dpo", "orpo")), metadata={
        "description": "Preference tuning as TRL's trainers run it: batch_size and dataset.samples count pairs, each a "
                       "chosen and a rejected sequence run in one batch; dpo also runs a reference model's forward a "
                       "step (the base with its adapters off, else a frozen 16-bit weight copy), orpo has none"})
    from_pretrained = fields.Boolean(
        allow_none=True, load_default=None,
        metadata={"description": "true: the job fine-tunes a pretrained model (LoRA/QLoRA adapters are an "
                                 "option); false: it trains from scratch (pre-training), so adapters are never "
                                 "offered, since a frozen random base learns nothing, and a BERT-style encoder "
                                 "gets its masked-LM head (model.head); null (default): not said, "
                                 "adapters are offered with the caveat that they change the method."})
    checkpoint_every_hours = StrictFloat(
        minimum=0.001, maximum=1e6,
        metadata={"description": "Hours between checkpoints. Default: every hour on demand, the Young/Daly "
                                 "interval sqrt(2 x checkpoint time x mean time between interruptions) on spot."})

    @validates_schema
    def _adapters_need_a_pretrained_base(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("from_pretrained") is not False:
            return
        parallelism = data.get("parallelism") or {}
        if parallelism.get("adapter"):
            raise ValidationError("adapters train beside a pretrained base, but from_pretrained is false "
                                  "(training from scratch): drop parallelism.adapter or set from_pretrained "
                                  "to true", "from_pretrained")
        if parallelism.get("allow_adapters"):
            raise ValidationError("allow_adapters lets the search train adapters on a pretrained base, but "
                                  "from_pretrained is false (training from scratch)", "from_pretrained")

    @validates_schema
    def _eight_bit_runs_on_pytorch(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("optimizer") == "adamw_8bit" and data.get("framework", "pytorch") != "pytorch":
            raise ValidationError(f"adamw_8bit is bitsandbytes' optimizer, a PyTorch library; {data['framework']} has "
                                  "no such update: say adam or adamw", "optimizer")

    @validates_schema
    def _mean_within_sequence(self, data: dict[str, Any], **_: Any) -> None:
        mean = data.get("mean_sequence_length")
        if mean is None:
            return
        longest = data.get("sequence_length")
        if longest is None:
            raise ValidationError("mean_sequence_length needs sequence_length (the longest sample)",
                                  "mean_sequence_length")
        if mean > longest:
            raise ValidationError(f"mean_sequence_length {mean} exceeds sequence_length {longest}",
                                  "mean_sequence_length")

class OnPremSchema(_Strict):
    """How a bought card becomes an hourly cost."""

    lifetime_years = StrictFloat(minimum=0.1, maximum=20.0, load_default=3.0)
    utilisation = StrictFloat(minimum=0.01, maximum=1.0, load_default=0.5)
    electricity_usd_per_kwh = StrictFloat(minimum=0.0, maximum=10.0, load_default=0.15,
                                          metadata={"description": "Power price, USD per kWh."})
    host_price_usd = StrictFloat(minimum=0.0, maximum=1e7, load_default=1500.0)
    grid_co2e_g_per_kwh = StrictFloat(minimum=0.0, maximum=1500.0, metadata={
        "description": "The team's own grid carbon intensity, g CO2e per kWh; absent: the country's."})
    country = fields.String(validate=validate.Regexp(r"^[A-Z]{3}$"), metadata={
        "description": "ISO 3166 alpha-3 country of the team's machines, for its grid intensity (default USA)."})
    pue = StrictFloat(minimum=1.0, maximum=3.0, metadata={
        "description": "The server room's power usage effectiveness; absent: the industry average."})


class OwnedGpusSchema(_Strict):
    """Cards the team already has (GPU slug and how many); only these are costed as owned."""

    gpu = GpuName(required=True)
    count = bounded_int(minimum=1, maximum=4096, required=True)


class ConstraintsSchema(_Strict):
    """What the user allows."""

    budget_usd = StrictFloat(minimum=0.0, maximum=1e10)
    max_co2e_kg = StrictFloat(minimum=0.0, maximum=1e10, metadata={
        "description": "Reject options whose estimated emissions exceed this many kg CO2e."})
    deadline_hours = StrictFloat(minimum=0.001, maximum=1e6)
    providers = fields.List(fields.String(validate=validate.OneOf(PROVIDER_NAMES)),
                            validate=validate.Length(min=1, max=len(PROVIDER_NAMES)),
                            load_default=list(DEFAULT_PROVIDERS),
                            metadata={"description": "Default: the clouds. \"onprem\" adds the separate "
                                                     "purchase question (what would we buy)."})
    regions = fields.List(fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=64),
                          load_default=list, metadata={"description": "Region names; \"eu-*\": each it starts"})
    pricing = fields.List(fields.String(validate=validate.OneOf(PRICING_KINDS)),
                          validate=validate.Length(min=1, max=len(PRICING_KINDS)),
                          load_default=list(DEFAULT_PRICING_KINDS))
    max_gpus = bounded_int(minimum=1, maximum=1024, load_default=8)
    gpus = fields.List(fields.String(validate=validate.Length(min=1, max=64)), validate=validate.Length(max=64),
                       load_default=list, metadata={
                           "description": "Only machines with these GPUs (slugs, or names as people write them: "
                                          "\"A100\" is each A100, \"24GB\" each 24 GB card); absent: every GPU."})
    onprem = fields.Nested(OnPremSchema)
    owned_gpus = fields.List(fields.Nested(OwnedGpusSchema), validate=validate.Length(max=64), load_default=list,
                             metadata={"description": "Cards the team owns; ranked first, costed at power only."})
    spot_percentile = StrictFloat(minimum=0.5, maximum=0.999, load_default=0.9,
                                  metadata={"description": "Spot runs meet the deadline and budget at this "
                                                           "percentile of their time and cost."})

    @pre_load
    def _fill_onprem(self, data: Any, **_: Any) -> Any:
        if isinstance(data, dict) and "onprem" not in data:
            data = {**data, "onprem": {}}
        return data


class JobSpecSchema(_Strict):
    """A whole job spec; everything but model and training.batch_size has a default."""

    model = fields.Nested(ModelSchema, required=True)
    training = fields.Nested(TrainingSchema, required=True)
    dataset = fields.Nested(DatasetSchema)
    constraints = fields.Nested(ConstraintsSchema)
    objective = fields.String(load_default="cost", validate=validate.OneOf(("cost", "time", "balanced", "carbon")),
                              metadata={"description": "cost (default): the cheapest option meeting the deadline; "
                                                       "time: the fastest within the budget; balanced: the knee "
                                                       "of the cost/time Pareto front first; carbon: the least "
                                                       "CO2e."})
    limit = bounded_int(minimum=1, maximum=1000, load_default=10)
    # A recommendation's requirements.per_gpu: the rows its options use ("options", the default when
    # absent) or every (GPU model, count) estimated ("all"). No default is filled in, so a spec that
    # leaves it out names the same job as before the field existed.
    per_gpu = fields.String(validate=validate.OneOf(("options", "all")), metadata={
        "description": "recommendations: per-GPU rows of the ranked options only (default) or of all"})

    @pre_load
    def _fill_sections(self, data: Any, **_: Any) -> Any:
        # Nested defaults are only applied to a section that is present, so make them present.
        if isinstance(data, dict):
            data = {**data, **{k: {} for k in ("dataset", "constraints") if k not in data}}
            data = _preset_loss(data)
        return data


def _preset_loss(data: dict[str, Any]) -> dict[str, Any]:
    """Fill training.loss with the loss a preset's step computes (a diffusion U-Net's mse) where the spec names none."""
    model, training = data.get("model"), data.get("training")
    name = model.get("preset") if isinstance(model, dict) else None
    if not isinstance(name, str) or not isinstance(training, dict) or "loss" in training:
        return data
    try:
        loss = find_preset(name).loss
    except UnknownNameError:
        return data  # the model field's own check names it
    return data if loss == "cross_entropy" else {**data, "training": {**training, "loss": loss}}


MAX_ESTIMATE_GPUS = 256


class EstimateRequestSchema(JobSpecSchema):
    """A job spec plus the GPUs to fit and time it on."""

    # Up to 256 GPUs: `gpugauge estimate --gpu all` sends every card of the catalog (76 on 2026-12-01).
    gpus = fields.List(fields.String(validate=validate.Length(min=1, max=64)),
                       validate=validate.Length(max=MAX_ESTIMATE_GPUS), load_default=list)
    gpu_count = bounded_int(minimum=1, maximum=1024, load_default=None, metadata={
        "description": "GPUs of each model to fit and time the job on; default: the fewest its named split runs on "
                       "(tensor parallel x pipeline stages), 1 without one"})
