"""Preference tuning (`training.preference`): what a DPO or ORPO step adds to a fine-tune's, as TRL's trainers run it.

huggingface/trl trl/trainer/dpo_trainer.py and dpo_config.py (public copies read 2026-12-07):
- each sample is a pair, a chosen and a rejected completion of one prompt, and `concatenated_forward` runs both
  through the policy in one batch: per_device_train_batch_size pairs are twice as many sequences (the spec's
  `batch_size` and `dataset.samples` count pairs; the core sizes the sequences, workers/schemas/specs.py);
- the loss compares the policy's log-probabilities of both with a reference model's, which `compute_ref_log_probs`
  computes every step under no_grad (precompute_ref_log_probs=False, the default): one more forward of the same
  sequences, keeping nothing for backward (REFERENCE_FORWARDS);
- the reference is the base with its adapters disabled where the policy is a PEFT model and no ref_model is given
  (no second copy), else a second model: a frozen copy of the weights, which the recipes load in the training's 16
  bits (alignment-handbook's torch_dtype bfloat16) and DeepSpeed ZeRO-3 shards as it shards the policy.

ORPO (Hong et al. 2024; TRL's ORPOTrainer, orpo_trainer.py) runs the pairs the same way and has no reference model:
its odds-ratio term and the chosen sequences' NLL come from the policy's own log-probabilities.

Not modelled: the reference forward's own transient peak (its logits, before the policy's forward: below the step's
peak, which holds the policy's), and precompute_ref_log_probs=True (one pass of the reference over the data before
training, in place of one a step).
"""

from __future__ import annotations

from dataclasses import replace

from workers.sizing.overheads import COMPUTE_WEIGHT_BYTES
from workers.sizing.spec import Training
from workers.sizing.stats import ModelStats

DPO = "dpo"
ORPO = "orpo"
PAIRED = frozenset({DPO, ORPO})  # the methods whose samples are pairs
SEQUENCES_PER_PAIR = 2  # chosen and rejected, run in one batch (concatenated_forward)
REFERENCE_FORWARDS = 1.0  # the reference model's forward of every sequence, once a step


def reference_forwards(training: Training) -> float:
    """Return the forward passes without gradients a step adds for the reference model (0 without preference)."""
    return REFERENCE_FORWARDS if training.preference == DPO else 0.0


def batch_unit(training: Training) -> int:
    """Return the sequences a micro-batch holds at least: a preference pair's two (one forward takes both), else 1."""
    return SEQUENCES_PER_PAIR if training.preference in PAIRED else 1


def reference_weight_bytes(training: Training, *, adapted: bool) -> int:
    """Return the bytes a parameter of the reference model's own copy of the weights takes on the GPU: none without
    preference or where the job trains adapters (the reference is the base with them off), else the weights in
    the training's compute precision (2 bytes in 16-bit mixed precision, 4 in fp32)."""
    if training.preference != DPO or adapted:
        return 0
    return COMPUTE_WEIGHT_BYTES[training.precision]


PREFERENCE_WARNING = "preference-pairs"


def with_preference_warning(stats: ModelStats, training: Training, *, pairs: int, samples: int) -> ModelStats:
    """Return the model with a `preference-pairs` warning saying how a preference job is sized: `pairs` a GPU as twice
    the sequences, `samples` sequences an epoch (0: not given), and for DPO the reference's forward and weights."""
    adapted = training.parallelism.adapter is not None
    copy = reference_weight_bytes(training, adapted=adapted)
    reference = ("the base with its adapters off, no second copy of the weights" if adapted else
                 f"a frozen copy of the weights in {copy * 8} bits ({stats.parameters + stats.frozen_parameters:,} "
                 "parameters), sharded where the weights are (ZeRO-3, FSDP); with LoRA it would be the base with the "
                 "adapters off")
    epoch = f", {samples:,} sequences an epoch" if samples else ""
    then = ("the reference model's forward of the same sequences runs each step without gradients (TRL's "
            f"DPOTrainer, precompute_ref_log_probs=False): {reference}" if training.preference == DPO else
            "ORPO has no reference model (TRL's ORPOTrainer): no forward or weights beyond the policy's")
    message = (f"training.preference {training.preference}: each pair is a chosen and a rejected sequence run in one "
               f"batch, so the step is sized at {pairs * SEQUENCES_PER_PAIR:,} sequences a GPU ({pairs:,} "
               f"pairs){epoch}, every figure per sequence; {then}.")
    return replace(stats, import_warnings=(*stats.import_warnings, (PREFERENCE_WARNING, message)))
