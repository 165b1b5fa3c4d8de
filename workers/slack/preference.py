"""How a slash command sizes a preference-tuning run ("dpo llama 3 8b on 60k pairs", "orpo mistral 7b"): as TRL's
DPOTrainer and ORPOTrainer run it (huggingface/trl trl/trainer/dpo_trainer.py, dpo_config.py and orpo_trainer.py,
public copies read 2026-12-07), on top of the decoder fine-tune's defaults (workers/slack/defaults.py sft_step): their
max_length 1024, the Trainer's batch of 8 (pairs) and 3 epochs are the same figures.

- the policy starts from a trained model (`training.from_pretrained`), whatever else is said;
- the loss: `concatenated_forward` holds the policy's logits in the training's 16 bits and takes each sequence's
  log-probabilities from them (DPO row by row: `selective_log_softmax`): the logits and their gradient in 16 bits, no
  fp32 copy and no chunked projection, as `training.loss` fused_cross_entropy sizes them.
"""

from __future__ import annotations

from typing import Any

DPO_LOSS = "fused_cross_entropy"


def preference_step(spec: dict[str, Any]) -> list[str]:
    """Size a DPO or ORPO run's step as TRL's trainers run it where not said; return the words told back."""
    training = spec["training"]
    method = training.get("preference")
    if method not in ("dpo", "orpo"):
        return []
    told = ["dpo: each pair a chosen and a rejected sequence run together, and the reference model's forward "
            "every step (TRL's DPOTrainer; with `lora` the reference is the base with its adapters off, else a "
            "frozen 16-bit copy of the weights)" if method == "dpo" else
            "orpo: each pair a chosen and a rejected sequence run together, no reference model (TRL's ORPOTrainer)"]
    if training.get("from_pretrained") is None:
        training["from_pretrained"] = True
    if "loss" not in training:
        training["loss"] = DPO_LOSS
        told.append("the log-probabilities taken from the 16-bit logits (sized as the logits and their gradient in 16 "
                    "bits)")
    return told
