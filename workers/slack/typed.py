"""What people type to the bot that is no word of a job: typographic characters and emoji, and training methods
the core does not size (each answered with what to ask instead)."""

from __future__ import annotations

import re
import unicodedata

from workers.slack.joined import RUNS_PER_YEAR

# What phones and chat clients type for plain characters: typographic hyphens and quotes; emoji and other symbols
# carry nothing ("fine‑tune “mistral 7b” 🚀").
_TYPED = str.maketrans({**dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212", "-"), "\u2018": "'", "\u2019": "'",
                        **dict.fromkeys("\u201c\u201d\u00ab\u00bb\"", " "), "\u00d7": "x",  # "4×a100"
                        "\u20ac": " eur ", "\u00a3": " gbp "})  # "€500": a currency the budget is not in, said


def plain_text(text: str) -> str:
    """Return the text with typographic hyphens and quotes made plain and symbols (emoji) dropped."""
    return "".join(c for c in text.translate(_TYPED) if not unicodedata.category(c).startswith("S") or c in "$=+<>")


# Training methods the core does not size, with what to ask instead (dpo and orpo are sized: training.preference).
_RL = ("RL fine-tuning (PPO, GRPO) is not sized: it generates samples and runs reward and reference models beside the "
       "policy; ask for the policy's fine-tune (`fine-tune ... lora`) to size its training step")
_SERVING = ("gpugauge sizes training runs; serving a model (its KV cache, batch of requests, latency) is not sized: "
            "ask for the training or fine-tune of the model")
_STEPS = ("a run is sized by its samples, which a count of steps does not fix (a step takes batch x GPUs samples): "
          "say samples=, e.g. 500 steps of batch 8 on one GPU is samples=4000 epochs=1")
_EIGHT_BIT = ("an 8-bit base (bitsandbytes' LLM.int8) is not sized: say `qlora` for adapters on a 4-bit base or "
              "`lora` on a 16-bit one")
_NOT_NVIDIA = ("gpugauge ranks NVIDIA GPUs (the CUDA and cuDNN ecosystem) and the clouds' machines with them; name "
               "one, or drop it for the cards that hold the job")
# A family the presets lack, said as "unknown preset" (a size said beside it, params=, still sizes it: stand_in.py)
_NO_PRESET = ("no preset of that family (wav2vec2, PEGASUS, mBART, DeBERTa, XLM-R, StyleGAN and detectors other than "
              "YOLOv5, YOLOv8 and YOLO11, such as YOLOv7, YOLOX and DETR, have none; T5, FLAN-T5, BART, Whisper, "
              "Stable Diffusion 1.5, 2.1 and XL, YOLOv5, YOLOv8 and YOLO11 n to x do): a language model's "
              "size, e.g. params=780m, is sized as the decoder preset nearest it; any model by its statistics "
              "(params= neurons= madds=), or in the CLI or the API from its ONNX export (`gpugauge estimate "
              "model.onnx`, model.onnx) or its layer list (model.layers)")
# Budgets in another currency: the catalog's prices are US dollars, and no exchange rate is assumed.
CURRENCY = frozenset({"eur", "euro", "euros", "gbp", "pound", "pounds"})
_DOLLARS_ONLY = "budgets are in US dollars, as the catalog's prices are (no exchange rate is assumed): say e.g. $500"
UNSIZED_METHODS = {"rlhf": f"rlhf: {_RL}",
                   "ppo": f"ppo: {_RL}", "grpo": f"grpo: {_RL}",
                   **{word: f"{word}: {_SERVING}" for word in ("inference", "serving", "serve", "deployment")},
                   **{word: f"unknown preset '{word}'; {_NO_PRESET}" for word in (
                       "diffusion", "yolov7", "yolox", "detr",
                       "wav2vec2", "deberta", "xlm-roberta", "pegasus", "mbart")},
                   **{word: f"{word}: {_STEPS}" for word in ("steps", "iterations", "iters")},
                   **{word: f"{word}: {_EIGHT_BIT}" for word in ("8-bit", "8bit", "int8")},
                   **{word: f"{word}: {_DOLLARS_ONLY}" for word in CURRENCY},
                   **{word: f"{word}: {_NOT_NVIDIA}" for word in ("cpu", "cpus", "tpu", "tpus", "macbook", "mac", "mps",
                                                                  "gaudi", "trainium", "mi300x", "mi250")}}


# Families said with a size or version ("yolov8n", "deberta-v3-base", "clip-vit-large"): the family's message, once;
# the size words after it ("deberta v3 base") are part of that name, not presets of their own.
FAMILY_PREFIXES = ("yolox", "yolo", "detr", "wav2vec2", "hubert", "deberta", "xlm-roberta", "clip", "siglip", "pegasus",
                   "mbart", "swin", "convnext", "dinov2", "electra", "stylegan")
_SIZE_WORD = re.compile(r"v\d+(\.\d+)?|base|small|large|tiny|medium|huge|giant|xl|xxl|[nsmlx]|\d+(\.\d+)?[mb]|\d+(px)?")


def unsized(word: str, problems: list[str]) -> str | None:
    """Return what to say of a word gpugauge does not size (a method, a family without a preset), "" for a size word
    that belongs to a family already said, None for any other word."""
    if word in UNSIZED_METHODS:
        return UNSIZED_METHODS[word]
    family = next((p for p in FAMILY_PREFIXES if word.startswith(p)), None)
    if family is not None and (word == family or word[len(family)] in "-v0123456789"):
        return f"unknown preset '{word}'; {_NO_PRESET}"
    return "" if _SIZE_WORD.fullmatch(word) and any(_NO_PRESET in p for p in problems) else None


# Distributed-training frameworks and strategies said by name ("with deepspeed zero 3", "fsdp"). A layout said
# ("zero3", "fsdp", "ddp") is what the team runs: sized as said (training.parallelism.data_parallel; with ZeRO-3 an
# 8B fine-tune holds 25.0 GiB a GPU where the ranking's ZeRO-1 holds 49.4). A framework alone ("deepspeed",
# "accelerate") names no layout: the ranking chooses each option's and names it, said back.
STRATEGY_WORDS = frozenset({"deepspeed", "fsdp", "fsdp2", "zero1", "zero2", "zero3", "ddp", "megatron", "accelerate",
                            "torchtitan", "nemo", "llm-foundry", "llmfoundry", "composer", "nanotron"})
STRATEGY_TOLD = "each option's strategy is the ranking's, named in it (a spec's parallelism.data_parallel pins one)"
PINNED_STRATEGIES = {"zero1": "zero1", "zero2": "zero2", "zero3": "zero3", "fsdp": "fsdp", "fsdp2": "fsdp",
                     "ddp": "plain", "plain": "plain", "hybrid_shard": "hybrid_shard"}


# Words of a fine-tuning recipe that change nothing the core sizes, said back so that the user knows they were read.
SIZED_ALREADY = {
    **dict.fromkeys(("flash-attention", "flash-attn", "fa2", "sdpa"),
                    "flash attention: attention is sized as the fused kernel already (no sequence x sequence matrix)"),
    "packing": "packing: every sample is sized at the full sequence length already",
    "unsloth": "unsloth: sized as Hugging Face TRL runs the same fine-tune; Unsloth's own kernels and offloaded "
               "checkpoints need less memory and time than that (not modelled)",
    "alpha": "lora alpha: it scales the adapters' update; no memory or time",
    **dict.fromkeys(("trl", "sfttrainer"), "trl: TRL's SFTTrainer is how a fine-tune is sized already"),
    "axolotl": "axolotl: sized as TRL runs the same fine-tune (Axolotl drives transformers and PEFT)",
    "mlm": "mlm: an encoder pre-trained from scratch is sized with its masked-LM head already",
    **dict.fromkeys(("warmup", "cosine", "schedule", "scheduler"),
                    "learning-rate schedule: it changes no memory or time"),
    "torch.compile": "torch.compile: not modelled, the time is eager PyTorch's (compiling fuses element-wise ops and "
                     "is often faster)",
    "channels-last": "channels last: not modelled apart, the time is the layout-neutral model's (cuDNN's NHWC kernels "
                     "often speed up 16-bit convolutions)",
    "evaluate": "evaluation: not counted here (the API's training.eval_every_epochs counts its passes)",
    "dropout": "dropout: a model's own is in its layers (a preset's are); LoRA's (PEFT's lora_dropout) is not sized: "
               "it keeps a dropped copy of each adapted layer's input, more activation memory without checkpointing",
    **{word: f"{word}: one run is sized and costed; a purchase answer says after how many runs owning pays off "
             "(a budget review's `runs` counts a year's)" for word in (*RUNS_PER_YEAR, "recurring", "regularly")},
}
# A managed training service said by name: ranked on its cloud's machines at their own (EC2, Compute Engine) prices.
MANAGED = {"sagemaker": ("aws", "SageMaker's ml.* instances cost more than the EC2 prices ranked here"),
           "vertex": ("gcp", "Vertex AI training costs more than the Compute Engine prices ranked here")}
ALIASED_KEYS = {"r": "rank", "lora_r": "rank", "lora-r": "rank", "alpha": "", "lora_alpha": "", "lora-alpha": ""}
# Pricing said in words: GCP's older name for spot, and the commitments (AWS reserved instances and savings plans,
# GCP committed use discounts), for 1 year unless 3 are said ("a 3 year commitment": joined.py makes it one word).
PRICING_WORDS = {"preemptible": ("pricing", "spot"),
                 **dict.fromkeys(("reserved", "committed", "commitment", "commitments", "1y-committed"),
                                 ("pricing", "committed_1y")),
                 "3y-committed": ("pricing", "committed_3y"), "savings-plan": ("pricing", "savings_plan_1y"),
                 "3y-savings-plan": ("pricing", "savings_plan_3y")}
