"""How a slash command sizes a preference-tuning run ("dpo llama 3 8b on 60k pairs"): as TRL's DPOTrainer runs it
(huggingface/trl trl/trainer/dpo_trainer.py and dpo_config.py, public copies read 2026-12-07), on top of the decoder
fine-tune's defaults (workers/slack/defaults.py sft_step): its max_length 1024, the Trainer's batch of 8 (pairs) and
3 epochs are the same figures.

- the policy starts from a trained model (`training.from_pretrained`), whatever else is said;
- the loss: `concatenated_forward` holds the policy's logits in the training's 16 bits and takes each sequence's
  log-probabilities row by row (`selective_log_softmax`): the logits and their gradient in 16 bits, no fp32 copy and
  no chunked projection, as `training.loss` fused_cross_entropy sizes them.
"""

from __future__ import annotations

from typing import Any

DPO_LOSS = "fused_cross_entropy"


def dpo_step(spec: dict[str, Any]) -> list[str]:
    """Size a DPO run's step as TRL's DPOTrainer runs it where not said; return the words told back."""
    training = spec["training"]
    if training.get("preference") != "dpo":
        return []
    told = ["dpo: each pair a chosen and a rejected sequence run together, and the reference model's forward "
            "every step (TRL's DPOTrainer; with `lora` the reference is the base with its adapters off, else a "
            "frozen 16-bit copy of the weights)"]
    if training.get("from_pretrained") is None:
        training["from_pretrained"] = True
    if "loss" not in training:
        training["loss"] = DPO_LOSS
        told.append("the log-probabilities taken from the 16-bit logits row by row (TRL's selective_log_softmax; "
                    "sized as the logits and their gradient in 16 bits)")
    return told
