"""Measure Hugging Face's own encoder and GPT-2 modules: `python -m validation.measure.hf_transformers_check`.

The other harness cases are modules written here as Transformers composes them; these are Transformers'
own (BertForSequenceClassification, XLMRobertaForSequenceClassification, DistilBertForSequenceClassification,
GPT2LMHeadModel), built from the config.json fields `model.hf_config` reads (tests/test_hf_encoders.py) with
`from_config` (random weights, no download). It needs the `transformers` package beside torch 2.13.0, which
no extra of this project pins (a local wheel here: transformers 5.25.0); the committed results are
validation/hf_encoder_steps.json, which tests/test_hf_encoders.py compares with the core.

Each step is measured as run.py measures its cases (two warm-up steps, the profiler's memory timeline and
the storage tracker), with the dropout modules swapped for the harness's (a bool mask, as CUDA keeps) and
attention dropout off, so that SDPA's fused CPU kernel runs (the core sized with `attention: flash`).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.common import Dropout
from validation.measure.measure import measure
from validation.measure.step import Supervised

OUT = Path(__file__).resolve().parents[2] / "validation" / "hf_encoder_steps.json"
ENCODERS = ("bert", "roberta", "xlm-roberta", "camembert", "distilbert")
# Measured steps the core does not size as they ran (tests/test_hf_encoders.py prints their error, asserts none)
NOT_MODELLED = {"mixtral-tiny": (
    "Transformers 5's default experts implementation (grouped_mm) casts the tokens to the experts' weight dtype "
    "and runs outside autocast: with fp32 master weights the experts compute and keep fp32 (4 bytes a value) "
    "where the core sizes them in 16 bits. Sharded or 16-bit weights (FSDP param_dtype, DeepSpeed, an adapter's "
    "16-bit base: every MoE preset's strategies) run them in 16 bits; not modelled")}
_BASE = {"attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768,
         "intermediate_size": 3072, "max_position_embeddings": 512, "num_attention_heads": 12,
         "num_hidden_layers": 12, "type_vocab_size": 2, "vocab_size": 30522, "pad_token_id": 0}
_XLMR = {**_BASE, "model_type": "xlm-roberta", "vocab_size": 250002, "max_position_embeddings": 514,
         "type_vocab_size": 1, "pad_token_id": 1}
_GPT2 = {"model_type": "gpt2", "activation_function": "gelu_new", "n_embd": 768, "n_head": 12, "n_layer": 6,
         "n_positions": 1024, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "vocab_size": 50257}
_DECODER = {"hidden_size": 256, "intermediate_size": 704, "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 2, "vocab_size": 4096, "max_position_embeddings": 4096, "hidden_act": "silu",
            "tie_word_embeddings": False, "pad_token_id": 0, "attention_dropout": 0.0}
# The Hub's config.json fields of each model (stored public copies, read 2026-12-06).
CONFIGS: dict[str, dict[str, Any]] = {
    "bert-base-multilingual-cased": {**_BASE, "model_type": "bert", "vocab_size": 119547},
    "xlm-roberta-base": _XLMR,
    "xlm-roberta-large": {**_XLMR, "hidden_size": 1024, "intermediate_size": 4096, "num_attention_heads": 16,
                          "num_hidden_layers": 24},
    "distilbert-base-uncased": {"model_type": "distilbert", "activation": "gelu", "dim": 768, "dropout": 0.1,
                                "hidden_dim": 3072, "max_position_embeddings": 512, "n_heads": 12, "n_layers": 6,
                                "pad_token_id": 0, "sinusoidal_pos_embds": False, "vocab_size": 30522},
    "distilgpt2": _GPT2,
    "phi3-tiny": {"model_type": "phi3", "hidden_size": 256, "intermediate_size": 704, "num_hidden_layers": 4,
                  "num_attention_heads": 4, "num_key_value_heads": 4, "vocab_size": 4096, "hidden_act": "silu",
                  "max_position_embeddings": 4096, "tie_word_embeddings": False, "resid_pdrop": 0.0,
                  "embd_pdrop": 0.0, "attention_dropout": 0.0, "pad_token_id": 0},
    # Narrowed decoders of the other model types `model.hf_config` reads, Transformers' own modules as the Hub's
    # configs set them (use_cache as the configs have it: true, so a training step without gradient
    # checkpointing builds the KV cache too)
    **{f"{kind}-tiny": {**_DECODER, "model_type": kind, **extra} for kind, extra in (
        ("llama", {}), ("qwen2", {"use_sliding_window": False}), ("qwen3", {"head_dim": 64}),
        ("mistral", {"sliding_window": None}),
        ("gemma", {"head_dim": 64, "hidden_activation": "gelu_pytorch_tanh", "tie_word_embeddings": True}),
        ("gpt_neox", {"intermediate_size": 1024, "num_key_value_heads": 4, "hidden_act": "gelu", "rotary_pct": 0.25,
                      "use_parallel_residual": True, "hidden_dropout": 0.0}),
        ("mixtral", {"intermediate_size": 352, "num_local_experts": 4, "num_experts_per_tok": 2}))},
    "bert-base-uncased": {**_BASE, "model_type": "bert"},
    "roberta-base": {**_BASE, "model_type": "roberta", "vocab_size": 50265, "max_position_embeddings": 514,
                     "type_vocab_size": 1, "pad_token_id": 1},
}
# (model, batch, sequence, precision, optimizer): activations ahead of the weights in most, both precisions.
CASES = [
    ("xlm-roberta-base", 4, 128, "fp32", "adamw"), ("xlm-roberta-base", 4, 128, "bf16-mixed", "adamw"),
    ("xlm-roberta-base", 16, 256, "fp32", "sgd"), ("xlm-roberta-base", 16, 128, "bf16-mixed", "sgd"),
    ("xlm-roberta-large", 8, 128, "bf16-mixed", "sgd"),
    ("bert-base-multilingual-cased", 8, 128, "fp32", "adamw"),
    ("bert-base-multilingual-cased", 32, 128, "bf16-mixed", "momentum"),
    ("distilbert-base-uncased", 8, 128, "fp32", "sgd"), ("distilbert-base-uncased", 32, 128, "bf16-mixed", "momentum"),
    ("distilgpt2", 2, 256, "fp32", "adamw"), ("distilgpt2", 8, 512, "fp32", "sgd"),
    ("distilgpt2", 8, 256, "bf16-mixed", "sgd"),
    # Phi-3's packed qkv_proj and gate_up_proj: one autocast cast of each one's input (a Phi-3-mini shape, narrowed)
    ("phi3-tiny", 8, 256, "bf16-mixed", "sgd"), ("phi3-tiny", 8, 256, "fp32", "sgd"),
    *((f"{kind}-tiny", 8, 256, "bf16-mixed", "sgd")
      for kind in ("llama", "qwen2", "qwen3", "mistral", "gemma", "gpt_neox", "mixtral")),
    ("llama-tiny", 8, 256, "fp32", "sgd"),
]
# Masked-LM pre-training steps (...ForMaskedLM, model.head masked_lm), the loss over 15% of the positions as
# run_mlm.py's collator labels them (-100 elsewhere): the logits at every position are the step's largest tensors.
MLM_CASES = [
    ("bert-base-uncased", 8, 128, "fp32", "adamw"), ("bert-base-uncased", 16, 128, "bf16-mixed", "sgd"),
    ("roberta-base", 8, 128, "fp32", "sgd"), ("distilbert-base-uncased", 16, 128, "bf16-mixed", "momentum"),
]


def _swap_dropout(module: nn.Module) -> None:
    for name, child in module.named_children():
        if isinstance(child, nn.Dropout):
            setattr(module, name, Dropout(child.p))
        else:
            _swap_dropout(child)


def _lm_loss(ids: torch.Tensor) -> Any:
    labels = F.pad(ids, (0, 1), value=-100)[:, 1:]
    return lambda out, _: F.cross_entropy(out.logits.float().view(-1, out.logits.shape[-1]), labels.reshape(-1),
                                          ignore_index=-100)


def _masked_lm_loss(ids: torch.Tensor) -> Any:
    generator = torch.Generator().manual_seed(1)
    labels = torch.where(torch.rand(ids.shape, generator=generator) < 0.15, ids, torch.full_like(ids, -100))
    return lambda out, _: F.cross_entropy(out.logits.float().view(-1, out.logits.shape[-1]), labels.reshape(-1),
                                          ignore_index=-100)


def measure_case(name: str, batch: int, sequence: int, precision: str, optimizer: str,
                 head: str = "classifier") -> dict[str, Any]:
    """Build Transformers' module from the config, measure one step, and return the record."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSequenceClassification

    fields = dict(CONFIGS[name])
    kind = fields.pop("model_type")
    off = {"attention_probs_dropout_prob": 0.0} if kind in ENCODERS else {"attn_pdrop": 0.0}
    if (kind not in ENCODERS and kind != "gpt2") or kind == "distilbert":
        off = {"attention_dropout": 0.0}
    config = AutoConfig.for_model(kind, **{**fields, **off})
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    if kind not in ENCODERS:
        model = AutoModelForCausalLM.from_config(config)
        ids, targets = torch.randint(0, fields["vocab_size"], (batch, sequence)), None
        loss = _lm_loss(ids)
    elif head == "masked_lm":
        model = AutoModelForMaskedLM.from_config(config)
        ids, targets = torch.randint(3, fields["vocab_size"], (batch, sequence)), None
        loss = _masked_lm_loss(ids)
    else:
        model = AutoModelForSequenceClassification.from_config(config)
        ids = torch.randint(3, fields["vocab_size"], (batch, sequence))
        targets = torch.randint(0, 2, (batch,))
        loss = lambda out, t: F.cross_entropy(out.logits.float(), t)  # noqa: E731
    _swap_dropout(model)
    step = measure(Supervised(model, ids, targets, loss, optimizer=optimizer, precision=precision))
    mlm = "-mlm" if head == "masked_lm" else ""
    return {"id": f"hf-{name}{mlm}-b{batch}-s{sequence}-{precision}-{optimizer}", "model": name,
            "hf_config": CONFIGS[name], **({"head": head} if head != "classifier" else {}),
            **({"not_modelled": NOT_MODELLED[name]} if name in NOT_MODELLED else {}),
            "batch_size": batch, "sequence_length": sequence, "precision": precision, "optimizer": optimizer,
            "attention": "flash", "parameters": sum(p.numel() for p in model.parameters()), "measured": measured(step)}


def main() -> int:
    only = sys.argv[1:]  # ids' prefixes to measure again (the others kept from the committed file)
    kept = {r["id"]: r for r in json.loads(OUT.read_text())["records"]} if only and OUT.exists() else {}
    records = []
    for case, head in [*((c, "classifier") for c in CASES), *((c, "masked_lm") for c in MLM_CASES)]:
        mlm = "-mlm" if head == "masked_lm" else ""
        key = f"hf-{case[0]}{mlm}-b{case[1]}-s{case[2]}-{case[3]}-{case[4]}"
        if key in kept and not any(key.startswith(prefix) for prefix in only):
            records.append(kept[key])
            continue
        records.append(measure_case(*case, head=head))
        print(records[-1]["id"], records[-1]["measured"], flush=True)
    write_records(OUT, "own modules from_config, dropout keeping a bool mask, attention dropout off (SDPA's fused "
                       "kernel)", records)
    return 0


def measured(step: Any) -> dict[str, Any]:
    """Return a record's `measured` figures from a StepMeasurement (measure.py)."""
    return {"peak_memory_bytes": step.peak_bytes, "peak_phase": step.peak_phase,
            "tracker_peak_bytes": step.tracker_peak_bytes}


def measure_all(path: Path, how: str, cases: list[tuple[Any, ...]], measure_case: Any, *,
                library: str = "Transformers'", versions: dict[str, str] | None = None) -> int:
    """Measure each case (measure_case(*case) gives its record), print it, and write the records."""
    records = []
    for case in cases:
        records.append(measure_case(*case))
        print(records[-1]["id"], records[-1]["measured"], flush=True)
    write_records(path, how, records, library=library, versions=versions)
    return 0


def write_records(path: Path, how: str, records: list[dict[str, Any]], *, library: str = "Transformers'",
                  versions: dict[str, str] | None = None) -> None:
    """Write measured steps of a library's modules with their method (`how`: what ran), versions and date."""
    import transformers

    path.write_text(json.dumps({
        "method": "intrinsic peak of live tensor bytes over one training step after two warm-up steps "
                  f"(validation/measure/measure.py: profiler memory timeline, storage tracker), {library} {how}",
        "torch": torch.__version__, "transformers": transformers.__version__, **(versions or {}),
        "measured_on": dt.date.today().isoformat(), "records": records}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
