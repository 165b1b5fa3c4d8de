"""Measure Transformers' own encoder-decoders: `python -m validation.measure.hf_seq2seq_check`.

The T5 and BART presets and `model.hf_config` of model_type "t5" and "bart" (workers/sizing/presets/hf_seq2seq.py)
are built from config.json fields; this measures Transformers' modules from such configs, narrowed: T5 1.0's ReLU
feed-forward and T5 1.1's (FLAN-T5) gated GELU at d_model 256, 4 + 4 blocks, 8 heads of 32; BART at d_model 256,
3 + 3 post-norm blocks, 8 heads; vocabulary 4096, source 128 and target 32 tokens, batch 8, AdamW, in fp32 and
bf16 autocast, as run.py measures its cases (two warm-up steps, the profiler's memory timeline and the storage
tracker). Dropout keeps a bool mask, as CUDA's kernel does: the dropout modules are swapped for the harness's and
`torch.nn.functional.dropout` (BART's, and both models' eager attention) runs `native_dropout` while a step is
measured (on the CPU it multiplies by a noise tensor of the input's dtype, 4 bytes a value in fp32). It needs
`transformers` beside torch 2.13.0, which no extra pins (a local wheel here: transformers 5.18.0). Whisper (narrowed:
d_model 256, 2 + 2 blocks, 4 heads) reads random log-mel frames, 300 of 80 mel bins, and 32 target tokens.

Two attention paths: `sdpa` (Transformers 5's default for both; attention dropout off, as a GPU's fused kernel keeps
no mask: sized with attention "efficient") and `eager` with its attention dropout on (sized with "math").
`from_config` ties T5's LM head to the embedding whatever the config says (Transformers 5 unties it only when a
checkpoint holds both), so the records give tie_word_embeddings true. The committed results are
validation/hf_seq2seq_steps.json, which tests/test_seq2seq.py compares with the core.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.hf_transformers_check import _swap_dropout, measure_all, measured
from validation.measure.measure import measure
from validation.measure.step import Supervised

OUT = Path(__file__).resolve().parents[2] / "validation" / "hf_seq2seq_steps.json"
BASE = {"model_type": "t5", "d_model": 256, "d_kv": 32, "d_ff": 1024, "num_layers": 4, "num_decoder_layers": 4,
        "num_heads": 8, "vocab_size": 4096, "relative_attention_num_buckets": 32, "dropout_rate": 0.1,
        "feed_forward_proj": "relu", "tie_word_embeddings": True}
BART = {"model_type": "bart", "d_model": 256, "encoder_layers": 3, "decoder_layers": 3, "encoder_attention_heads": 8,
        "decoder_attention_heads": 8, "encoder_ffn_dim": 1024, "decoder_ffn_dim": 1024, "vocab_size": 4096,
        "max_position_embeddings": 256, "dropout": 0.1, "attention_dropout": 0.1, "activation_dropout": 0.1,
        "activation_function": "gelu"}
WHISPER = {"model_type": "whisper", "d_model": 256, "encoder_layers": 2, "decoder_layers": 2,
           "encoder_attention_heads": 4, "decoder_attention_heads": 4, "encoder_ffn_dim": 1024, "decoder_ffn_dim": 1024,
           "num_mel_bins": 80, "max_source_positions": 150, "max_target_positions": 64, "vocab_size": 4096,
           "dropout": 0.0, "attention_dropout": 0.0, "activation_dropout": 0.0}
CONFIGS = {"t5-tiny": BASE, "t5v11-tiny": {**BASE, "feed_forward_proj": "gated-gelu"}, "bart-tiny": BART,
           "whisper-tiny": WHISPER}
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


class AudioAndTarget(nn.Module):
    """Feed log-mel frames to Whisper as input_features and fixed target ids as decoder_input_ids."""

    def __init__(self, model: nn.Module, target: torch.Tensor) -> None:
        super().__init__()
        self.model, self.target = model, target

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.model(input_features=features, decoder_input_ids=self.target).logits


def _native_dropout(x: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> torch.Tensor:
    """F.dropout as CUDA runs it: a bool mask kept (common.Dropout)."""
    if not training or p == 0:
        return x
    return torch.native_dropout(x, p, True)[0]


def measure_case(name: str, precision: str, impl: str) -> dict[str, Any]:
    """Build Transformers' model from the config, measure one step, and return the record."""
    import transformers

    fields = {k: v for k, v in CONFIGS[name].items() if k != "model_type"}
    kind = {"t5": "T5", "bart": "Bart", "whisper": "Whisper"}[CONFIGS[name]["model_type"]]
    config = getattr(transformers, f"{kind}Config")(**fields, pad_token_id=0, decoder_start_token_id=0)
    config._attn_implementation = impl
    torch.manual_seed(0)
    model = getattr(transformers, f"{kind}ForConditionalGeneration")(config)
    _swap_dropout(model)
    if impl == "sdpa":  # a GPU's fused kernel drops inside; the CPU's would fall back to the math path
        for module in model.modules():
            if type(module).__name__.endswith("Attention") and isinstance(getattr(module, "dropout", None), float):
                module.dropout = 0.0
    generator = torch.Generator().manual_seed(BATCH)
    ids = torch.randint(1, BASE["vocab_size"], (BATCH, SOURCE + TARGET), generator=generator)
    labels = torch.randint(1, BASE["vocab_size"], (BATCH, TARGET), generator=generator)

    def loss(out: torch.Tensor, _: Any) -> torch.Tensor:
        return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), labels.reshape(-1))

    net: nn.Module = SourceAndTarget(model)
    source: int | None = SOURCE
    if kind == "Whisper":  # 2 x max_source_positions frames of its mel bins
        frames = (fields["num_mel_bins"], 2 * fields["max_source_positions"])
        ids = torch.randn((BATCH, *frames), generator=generator)
        net, source = AudioAndTarget(model, torch.randint(1, BASE["vocab_size"], (BATCH, TARGET),
                                                          generator=generator)), None
    functional_dropout, F.dropout = F.dropout, _native_dropout
    try:
        step = measure(Supervised(net, ids, None, loss, optimizer="adamw", precision=precision))
    finally:
        F.dropout = functional_dropout
    return {"id": f"hf-{name}-b{BATCH}-s{source or 'audio'}-t{TARGET}-{precision}-{impl}", "model": name,
            "hf_config": CONFIGS[name], "batch_size": BATCH, "sequence_length": source, "target_length": TARGET,
            "precision": precision, "optimizer": "adamw", "attention": "efficient" if impl == "sdpa" else "math",
            "attn_implementation": impl, "parameters": sum(p.numel() for p in model.parameters()),
            "measured": measured(step)}


def main() -> int:
    return measure_all(OUT, "own T5ForConditionalGeneration and BartForConditionalGeneration from_config, dropout "
                            "keeping a bool mask (nn.Dropout and F.dropout); sdpa with attention dropout off, eager "
                            "with it on", CASES, measure_case)


if __name__ == "__main__":
    sys.exit(main())
