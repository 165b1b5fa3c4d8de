"""Measure Transformers' own T5ForConditionalGeneration: `python -m validation.measure.hf_t5_check`.

The T5 presets and `model.hf_config` of model_type "t5" (workers/sizing/presets/hf_t5.py) are built from
config.json fields; this measures Transformers' module from such a config (narrowed: d_model 256, 4 + 4 blocks,
8 heads of 32, vocabulary 4096), T5 1.0's ReLU feed-forward and T5 1.1's (FLAN-T5) gated GELU, source 128 and
target 32 tokens, in fp32 and bf16 autocast, as run.py measures its cases (two warm-up steps, the profiler's memory
timeline and the storage tracker), with the dropout modules swapped for the harness's (a bool mask, as CUDA keeps).
It needs `transformers` beside torch 2.13.0, which no extra pins (a local wheel here: transformers 5.18.0).

Two attention paths: `sdpa` (Transformers 5's default for T5; attention dropout off, as a GPU's fused kernel keeps
no mask: sized with attention "efficient") and `eager` with its attention dropout on (sized with "math").
`from_config` ties the LM head to the embedding whatever the config says (Transformers 5 unties it only when a
checkpoint holds both), so the records give tie_word_embeddings true. The committed results are
validation/hf_t5_steps.json, which tests/test_t5.py compares with the core.
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

from validation.measure.hf_transformers_check import _swap_dropout
from validation.measure.measure import measure
from validation.measure.step import Supervised

OUT = Path(__file__).resolve().parents[2] / "validation" / "hf_t5_steps.json"
BASE = {"model_type": "t5", "d_model": 256, "d_kv": 32, "d_ff": 1024, "num_layers": 4, "num_decoder_layers": 4,
        "num_heads": 8, "vocab_size": 4096, "relative_attention_num_buckets": 32, "dropout_rate": 0.1,
        "feed_forward_proj": "relu", "tie_word_embeddings": True}
CONFIGS = {"t5-tiny": BASE, "t5v11-tiny": {**BASE, "feed_forward_proj": "gated-gelu"}}
SOURCE, TARGET, BATCH = 128, 32, 8
CASES = [(name, precision, impl) for name in CONFIGS for precision in ("fp32", "bf16-mixed")
         for impl in ("sdpa", "eager")]


class SourceAndTarget(nn.Module):
    """Feed one row of source and target ids to the model as input_ids (with its attention mask) and
    decoder_input_ids, returning the logits."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        src, tgt = ids[:, :SOURCE], ids[:, SOURCE:]
        return self.model(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=tgt).logits


def measure_case(name: str, precision: str, impl: str) -> dict[str, Any]:
    """Build Transformers' T5 from the config, measure one step, and return the record."""
    from transformers import T5Config, T5ForConditionalGeneration

    fields = {k: v for k, v in CONFIGS[name].items() if k != "model_type"}
    config = T5Config(**fields, pad_token_id=0, decoder_start_token_id=0)
    config._attn_implementation = impl
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    _swap_dropout(model)
    if impl == "sdpa":  # a GPU's fused kernel drops inside; the CPU's would fall back to the math path
        for module in model.modules():
            if hasattr(module, "n_heads") and isinstance(getattr(module, "dropout", None), float):
                module.dropout = 0.0
    generator = torch.Generator().manual_seed(BATCH)
    ids = torch.randint(1, BASE["vocab_size"], (BATCH, SOURCE + TARGET), generator=generator)
    labels = torch.randint(1, BASE["vocab_size"], (BATCH, TARGET), generator=generator)

    def loss(out: torch.Tensor, _: Any) -> torch.Tensor:
        return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), labels.reshape(-1))

    step = measure(Supervised(SourceAndTarget(model), ids, None, loss, optimizer="adamw", precision=precision))
    return {"id": f"hf-{name}-b{BATCH}-s{SOURCE}-t{TARGET}-{precision}-{impl}", "model": name,
            "hf_config": CONFIGS[name], "batch_size": BATCH, "sequence_length": SOURCE, "target_length": TARGET,
            "precision": precision, "optimizer": "adamw", "attention": "efficient" if impl == "sdpa" else "math",
            "attn_implementation": impl, "parameters": sum(p.numel() for p in model.parameters()),
            "measured": {"peak_memory_bytes": step.peak_bytes, "peak_phase": step.peak_phase,
                         "tracker_peak_bytes": step.tracker_peak_bytes}}


def main() -> int:
    import transformers

    records = []
    for case in CASES:
        records.append(measure_case(*case))
        print(records[-1]["id"], records[-1]["measured"], flush=True)
    OUT.write_text(json.dumps({
        "method": "intrinsic peak of live tensor bytes over one training step after two warm-up steps "
                  "(validation/measure/measure.py: profiler memory timeline, storage tracker), Transformers' "
                  "own T5ForConditionalGeneration from_config, dropout keeping a bool mask; sdpa with attention "
                  "dropout off, eager with it on",
        "torch": torch.__version__, "transformers": transformers.__version__,
        "measured_on": dt.date.today().isoformat(), "records": records}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
