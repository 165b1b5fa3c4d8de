"""Range checks on a job before the core sizes it: every bad value raises SpecError naming its field.

The schemas check the same ranges at the boundary; the core checks again because it must not trust
its callers (tests, the ranking loop, a future caller that builds a JobSpec by hand).
"""

from __future__ import annotations

import math

from workers.sizing.errors import SpecError
from workers.sizing.memo import IdentityMemo
from workers.sizing.row_table import figures, row_table
from workers.sizing.spec import JobSpec
from workers.sizing.stats import ModelStats
from workers.sizing.strategies.checks import check_strategy

# Upper bounds that keep every product finite and every figure meaningful.
MAX_BATCH_SIZE = 2**24
MAX_EPOCHS = 1e6
MAX_COUNT = 10**18  # samples, bytes, neurons, parameters, multiply-adds per sample
MAX_MS = 1e9  # about 11 days for one iteration or one sample's pre-processing
MAX_GPU_COUNT = 4096
MAX_SEQUENCE_LENGTH = 2**24
MAX_NETWORK_GBIT_PER_S = 1e6


def _finite(value: float, field: str) -> float:
    """Return value as a float, or raise SpecError when it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(field, f"{value!r} is not a number")
    if not math.isfinite(value):
        raise SpecError(field, f"{value!r} is not a finite number")
    return float(value)


def _int_in(value: int, field: str, *, low: int, high: int) -> None:
    """Raise SpecError unless value is an int in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(field, f"{value!r} is not a whole number")
    if not low <= value <= high:
        raise SpecError(field, f"{value} is out of range; expected {low} to {high}")


def _float_in(value: float, field: str, *, low: float, high: float, low_open: bool = False) -> None:
    """Raise SpecError unless value is a finite number in [low, high] ((low, high] if low_open)."""
    number = _finite(value, field)
    if number > high or number < low or (low_open and number == low):
        bound = f"more than {low}" if low_open else f"at least {low}"
        raise SpecError(field, f"{value!r} is out of range; expected {bound} and at most {high:g}")


_CHECKED: IdentityMemo[bool] = IdentityMemo()


def check_model(model: ModelStats) -> None:
    """Raise SpecError for model totals that are negative or absurd (each model object checked once)."""
    _CHECKED.get(model, None, lambda: _check_model(model))


def _check_model(model: ModelStats) -> bool:
    """Check the model; return True (for the memo) or raise SpecError."""
    per_token = ("neurons", "multiply_adds")  # what grows with the tokens of a sample
    if model.sequence_length and model.layers and any(
            isinstance(getattr(model, name), int) and getattr(model, name) > MAX_COUNT for name in per_token):
        # A model built from layers at a sequence length the user chose: that length is the field to change
        raise SpecError("training.sequence_length", (
            f"{model.sequence_length:,} tokens make {model.multiply_adds:.3g} multiply-adds and {model.neurons:.3g} "
            f"values per sample, beyond the {MAX_COUNT:.0e} the sizing takes; use a shorter sequence"))
    for name in ("neurons", "parameters", "multiply_adds", "frozen_parameters"):
        _int_in(getattr(model, name), f"model.stats.{name}", low=0, high=MAX_COUNT)
    if model.neurons == 0 and model.parameters == 0:
        raise SpecError("model.stats", "the model has no neurons and no parameters")
    # Each distinct combination of a row's counts once (a 10,000-layer model has a few), taken in C.
    values = [v for counts in map(_COUNTS_OF, row_table(model).distinct) for v in counts]
    if values and not (all(type(v) is int for v in values) and min(values) >= 0 and max(values) <= MAX_COUNT):
        for index, layer in enumerate(model.layers):  # the first wrong one, named
            for name in _LAYER_COUNTS:
                _int_in(getattr(layer, name), f"model.layers[{index}].{name}", low=0, high=MAX_COUNT)
    return True


_LAYER_COUNTS = ("neurons", "parameters", "multiply_adds", "saved_values", "saved_mask_bytes", "traffic_values")
_COUNTS_OF = figures(*_LAYER_COUNTS)


def check_job(job: JobSpec, *, gpu_count: int = 1, inter_node_gbit_per_s: float | None = None) -> None:
    """Raise SpecError for the first out-of-range value of the job, naming its field."""
    check_model(job.model)
    training, dataset = job.training, job.dataset
    _int_in(training.batch_size, "training.batch_size", low=1, high=MAX_BATCH_SIZE)
    _float_in(training.epochs, "training.epochs", low=1.0, high=MAX_EPOCHS)
    _int_in(training.update_interval, "training.update_interval", low=1, high=MAX_BATCH_SIZE)
    _int_in(training.eval_every_epochs, "training.eval_every_epochs", low=0, high=int(MAX_EPOCHS))
    if training.sequence_length is not None:
        _int_in(training.sequence_length, "training.sequence_length", low=1, high=MAX_SEQUENCE_LENGTH)
    if training.learning_rate is not None:
        _float_in(training.learning_rate, "training.learning_rate", low=0.0, high=1e6, low_open=True)
    if training.profile is not None and training.profile.gpu:
        _float_in(training.profile.iteration_ms, "training.profile.iteration_ms", low=0.0, high=MAX_MS,
                  low_open=True)
    _int_in(dataset.samples, "dataset.samples", low=0, high=MAX_COUNT)
    _int_in(dataset.size_bytes, "dataset.bytes", low=0, high=MAX_COUNT)
    _float_in(dataset.preprocess_ms_per_sample, "dataset.preprocess_ms_per_sample", low=0.0, high=MAX_MS)
    _int_in(gpu_count, "gpu_count", low=1, high=MAX_GPU_COUNT)
    check_strategy(job)
    if inter_node_gbit_per_s is not None:
        _float_in(inter_node_gbit_per_s, "inter_node_gbit_per_s", low=0.0, high=MAX_NETWORK_GBIT_PER_S,
                  low_open=True)
