"""A training job as the sizing core sees it: the model's statistics, the run, the data, the limits."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from catalog.providers import PROVIDERS
from workers.sizing.layers.attention import Attention
from workers.sizing.layers.loss import Loss
from workers.sizing.memo import IdentityMemo
from workers.sizing.stats import ModelStats
from workers.sizing.strategies.types import Parallelism


class Precision(StrEnum):
    """Numeric format of activations and gradients during training."""

    FP32 = "fp32"
    FP16_MIXED = "fp16-mixed"
    BF16_MIXED = "bf16-mixed"
    # FP8 matrix products (NVIDIA Transformer Engine, torchao float8): the linear layers' GEMMs in FP8 with
    # per-tensor scales, everything else as bf16-mixed (throughput.py, timing.py).
    FP8_MIXED = "fp8-mixed"


class Optimizer(StrEnum):
    """The update rule; it sets how many extra copies of the parameters the optimizer keeps."""

    SGD = "sgd"
    MOMENTUM = "momentum"
    ADAM = "adam"
    ADAMW = "adamw"
    RMSPROP = "rmsprop"
    ADAMW_8BIT = "adamw_8bit"  # bitsandbytes' AdamW8bit (the HF Trainer's adamw_bnb_8bit, Unsloth's adamw_8bit)


class OptimizerImplementation(StrEnum):
    """How the update runs on the GPU; it sets the optimizer step's temporaries (overheads.py)."""

    FOREACH = "foreach"  # torch.optim's CUDA default since 2.0: each op over every tensor at once
    PER_TENSOR = "per_tensor"  # a Python loop, one tensor at a time (transformers' AdamW, BertAdam)
    FUSED = "fused"  # one kernel per group of tensors (fused=True, apex FusedAdam, DeepSpeed FusedAdam)


class GradientClipping(StrEnum):
    """Whether gradients are clipped before the update, and by which norm; it costs step time (optimizer_time.py)."""

    NONE = "none"
    GLOBAL = "global"  # one norm over every gradient (clip_grad_norm_ on all parameters; the HF Trainer's default)
    PER_TENSOR = "per_tensor"  # each tensor by its own norm, inside the update loop (BertAdam)


class Framework(StrEnum):
    """The training framework; it sets multi-GPU scaling and the memory it reserves."""

    PYTORCH = "pytorch"
    TENSORFLOW = "tensorflow"
    JAX = "jax"
    CNTK = "cntk"


class Objective(StrEnum):
    """What the ranking optimises (docs/ranking.md defines each; cost is the default)."""

    COST = "cost"
    TIME = "time"
    BALANCED = "balanced"
    CARBON = "carbon"  # least CO2e first (workers/ranking/energy.py), ties by cost


@dataclass(frozen=True)
class Profile:
    """What a run measured, used to calibrate the predictions (`gpugauge probe --spec` writes both).

    `gpu` and `iteration_ms` (`training.profile`): a time per iteration on one GPU ("" and 0 when
    none was measured); `tensor_memory_bytes` (`training.measured_memory`): the intrinsic peak of
    live tensor bytes of one step at `batch_size` (0 when not measured), which holds on any GPU;
    the framework's reserve comes on top.
    """

    gpu: str = ""
    iteration_ms: float = 0.0
    tensor_memory_bytes: int = 0
    batch_size: int = 0


@dataclass(frozen=True)
class Training:
    """How the model is trained: batch per GPU, epochs, precision, optimizer and the rest."""

    batch_size: int
    epochs: float = 1.0
    sequence_length: int | None = None
    precision: Precision = Precision.FP32
    optimizer: Optimizer = Optimizer.ADAM
    optimizer_implementation: OptimizerImplementation = OptimizerImplementation.FOREACH
    gradient_clipping: GradientClipping = GradientClipping.NONE
    learning_rate: float | None = None
    update_interval: int = 1
    recompute: bool = False
    framework: Framework = Framework.PYTORCH
    eval_every_epochs: int = 0  # 0: no evaluation passes
    profile: Profile | None = None
    parallelism: Parallelism = field(default_factory=Parallelism)  # auto unless the spec names one
    loss: Loss = Loss.CROSS_ENTROPY  # computed over the model's output (workers.sizing.layers.loss)
    attention: Attention = Attention.AUTO  # the attention kernel (workers.sizing.layers.attention)
    # Hours between checkpoints; None: every hour on demand, the Young/Daly interval on spot
    # (workers/ranking/runcost.py and spot.py).
    checkpoint_every_hours: float | None = None
    # fp32 matrix products on TF32 tensor cores (Ampere on): True or False as the job says; None: the
    # framework's own default (throughput.TF32_MATMUL_BY_FRAMEWORK). Convolutions run TF32 either way.
    tf32_matmul: bool | None = None
    # Tokens per sample the steps compute when batches are padded to their longest sample or binned
    # (at most sequence_length); memory stays at sequence_length, time at this length (JobSpec.timed_model).
    mean_sequence_length: int | None = None
    # Whether the job starts from a pretrained model: False (pre-training) rules adapters out of the
    # out-of-memory plan (a frozen random base learns nothing); None: not said, adapters offered with a caveat.
    from_pretrained: bool | None = None
    ema: bool = False  # an fp32 moving average of the trained weights (overheads.EMA_BYTES), updated every step
    # "dpo": preference pairs with a reference model's forward each step (workers/sizing/preference.py); batch_size
    # counts the sequences (twice the spec's pairs), as every figure does
    preference: str | None = None


_STEP_TRAININGS: IdentityMemo[Training] = IdentityMemo(256)


def step_training(training: Training) -> Training:
    """Return the training as one step's memory and time read it: a key for the memos of per-step work.

    How long the run goes and how it is scheduled (epochs, evaluation passes, the checkpoint interval,
    the learning rate) are set to their defaults: no step figure reads them, so jobs differing only
    in those (a procurement tool asking again with another data size or deadline) share their walks,
    searches and times. Never passed to the work itself, which reads the job's own training.
    """
    return _STEP_TRAININGS.get(training, None, lambda: replace(
        training, epochs=1.0, eval_every_epochs=0, checkpoint_every_hours=None, learning_rate=None))


@dataclass(frozen=True)
class Dataset:
    """The training data: how many samples, how many bytes, and its pre-processing cost."""

    samples: int = 0  # 0: unknown, time per epoch cannot be given
    tokens: int = 0  # the spec's dataset.tokens, made `samples` (0: the samples were given)
    size_bytes: int = 0  # the spec's dataset.bytes
    in_memory: bool = True
    preprocess_ms_per_sample: float = 0.0  # on one core of the reference score (sizing/machine.py)
    loader_workers: int | None = None  # loader processes per GPU; None: what the vCPUs per GPU allow
    preprocess_serial: bool = False  # pre-processing cannot be split across workers: one core per GPU
    # Where the data set lives: ("aws" | "gcp", region), ("internet", "") or ("anywhere", ""); None: unknown.
    location: tuple[str, str] | None = None


@dataclass(frozen=True)
class OnPremAssumptions:
    """How a bought card becomes an hourly cost (all overridable per request)."""

    lifetime_years: float = 3.0
    utilisation: float = 0.5
    electricity_usd_per_kwh: float = 0.15
    host_price_usd: float = 1500.0
    # The team's own grid carbon intensity; None: the country's (catalog/data/energy.json).
    grid_co2e_g_per_kwh: float | None = None
    country: str | None = None  # ISO 3166 alpha-3; None: the energy table's default country
    pue: float | None = None  # the team's server room; None: the industry average in the energy table


@dataclass(frozen=True)
class OwnedGpus:
    """Cards a team already has: only these are costed as owned (power only, the purchase is sunk)."""

    gpu: str  # GpuSpec.slug
    count: int


# The clouds; "onprem" in `providers` asks the separate question "what would we buy".
DEFAULT_PROVIDERS: tuple[str, ...] = tuple(name for name, entry in PROVIDERS.items() if entry.rents)


@dataclass(frozen=True)
class Constraints:
    """What the user allows: money, time, providers, regions, pricing kinds, GPU count, cards owned."""

    budget_usd: float | None = None
    max_co2e_kg: float | None = None  # options emitting more are rejected, like those over the budget
    deadline_hours: float | None = None
    providers: tuple[str, ...] = DEFAULT_PROVIDERS
    regions: tuple[str, ...] = ()  # empty: every region
    pricing: tuple[str, ...] = ("on_demand", "spot", "owned")
    max_gpus: int = 8
    onprem: OnPremAssumptions = field(default_factory=OnPremAssumptions)
    owned_gpus: tuple[OwnedGpus, ...] = ()
    gpus: tuple[str, ...] = ()  # GPU names the user allows (a family is each member); empty: every GPU
    # Spot runs are held to the deadline and budget at this percentile of their time and cost.
    spot_percentile: float = 0.9


@dataclass(frozen=True)
class JobSpec:
    """A whole job, with its model already resolved to statistics."""

    model: ModelStats
    training: Training
    dataset: Dataset = field(default_factory=Dataset)
    constraints: Constraints = field(default_factory=Constraints)
    objective: Objective = Objective.COST
    limit: int = 10
    # The model resolved at training.mean_sequence_length: what an iteration computes, for its time
    # (None: `model`, at sequence_length). Memory is always sized from `model`.
    timed_model: ModelStats | None = None

    @property
    def time_model(self) -> ModelStats:
        """Return the model whose work sets the iteration's time."""
        return self.timed_model if self.timed_model is not None else self.model
