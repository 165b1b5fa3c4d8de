"""Measure a mixture-of-experts step against its dense twin: `python -m validation.measure.moe_check`.

Two small decoder LMs, alike but for the feed-forward: SwiGLU dense, or a sparse mixture of SwiGLU experts
written as Hugging Face's MixtralSparseMoeBlock runs it (router, softmax, top-k, weights renormalised,
each expert over the tokens routed to it, outputs weighted and summed back with index_add_). Each step
is measured as validation/measure/run.py measures its cases (two warm-up steps, the profiler's memory
timeline and the storage tracker); the mixture's extra over its twin isolates what the experts keep.
Writes validation/moe_step.json, which tests/test_moe.py compares with the core's layers.
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

from validation.measure.measure import measure
from validation.measure.step import Supervised

OUT = Path(__file__).resolve().parents[2] / "validation" / "moe_step.json"
VOCAB, HIDDEN, HEADS, FFN, LAYERS, SEQ, BATCH = 2048, 256, 4, 512, 2, 128, 8
EXPERTS, TOP_K = 8, 2


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (x.shape[-1],), self.weight, 1e-5)


class SwiGLU(nn.Module):
    def __init__(self, hidden: int, ffn: int) -> None:
        super().__init__()
        self.gate, self.up = nn.Linear(hidden, ffn, bias=False), nn.Linear(hidden, ffn, bias=False)
        self.down = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class SparseMoE(nn.Module):
    """Mixtral's sparse block (transformers' MixtralSparseMoeBlock, eager): a loop over the experts."""

    def __init__(self, hidden: int, ffn: int, experts: int, top_k: int) -> None:
        super().__init__()
        self.router = nn.Linear(hidden, experts, bias=False)
        self.experts = nn.ModuleList(SwiGLU(hidden, ffn) for _ in range(experts))
        self.top_k = top_k

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, hidden = x.shape
        flat = x.reshape(-1, hidden)
        weights = F.softmax(self.router(flat), dim=-1, dtype=torch.float)
        weights, chosen = torch.topk(weights, self.top_k, dim=-1)
        weights = (weights / weights.sum(dim=-1, keepdim=True)).to(x.dtype)
        out = torch.zeros_like(flat)
        mask = F.one_hot(chosen, num_classes=len(self.experts)).permute(2, 1, 0)
        for e, expert in enumerate(self.experts):
            slot, token = torch.where(mask[e])
            routed = expert(flat[token]) * weights[token, slot, None]
            out = out.index_add(0, token, routed.to(x.dtype))
        return out.reshape(batch, seq, hidden)


class Block(nn.Module):
    def __init__(self, *, moe: bool) -> None:
        super().__init__()
        self.ln1, self.ln2 = RMSNorm(HIDDEN), RMSNorm(HIDDEN)
        self.qkv = nn.Linear(HIDDEN, 3 * HIDDEN, bias=False)
        self.proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.ffn: nn.Module = SparseMoE(HIDDEN, FFN, EXPERTS, TOP_K) if moe else SwiGLU(HIDDEN, FFN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(h, dim=-1)
        q, k, v = (t.view(b, s, HEADS, h // HEADS).transpose(1, 2) for t in (q, k, v))
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, h)
        x = x + self.proj(attn)
        return x + self.ffn(self.ln2(x))


class DecoderLM(nn.Module):
    def __init__(self, *, moe: bool) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(Block(moe=moe) for _ in range(LAYERS))
        self.norm, self.head = RMSNorm(HIDDEN), nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def layers(*, moe: bool) -> list[dict[str, Any]]:
    """Return the same network as a gpugauge layer list."""
    block: dict[str, Any] = {"type": "transformer_block", "heads": HEADS, "ffn": FFN, "norm": "pre",
                             "norm_type": "rmsnorm", "activation": "swiglu", "dropout": 0.0, "bias": False,
                             "causal": True}
    if moe:
        block |= {"experts": EXPERTS, "experts_per_token": TOP_K}
    return [{"type": "embedding", "name": "embed", "vocab": VOCAB, "dim": HIDDEN},
            *({**block, "name": f"blocks.{i}"} for i in range(LAYERS)),
            {"type": "rmsnorm", "name": "norm"},
            {"type": "dense", "name": "head", "out_features": VOCAB, "bias": False},
            {"type": "log_softmax", "name": "loss"}]


def _lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def main() -> int:
    torch.set_num_threads(1)
    records = []
    for moe in (False, True):
        torch.manual_seed(0)
        ids = torch.randint(0, VOCAB, (BATCH, SEQ))
        targets = torch.randint(0, VOCAB, (BATCH, SEQ))
        for optimizer in ("sgd", "adamw"):
            model = DecoderLM(moe=moe)
            got = measure(Supervised(model, ids, targets, _lm_loss, optimizer=optimizer, precision="fp32"))
            records.append({
                "id": f"{'moe' if moe else 'dense'}-{optimizer}", "moe": moe, "optimizer": optimizer,
                "batch_size": BATCH, "sequence_length": SEQ, "precision": "fp32",
                "parameters": sum(p.numel() for p in model.parameters()),
                "peak_bytes": got.peak_bytes, "peak_phase": got.peak_phase,
                "tracker_peak_bytes": got.tracker_peak_bytes,
                "phase_peaks": got.phase_peaks, "layers": layers(moe=moe)})
            print(records[-1]["id"], got.peak_bytes, got.peak_phase, got.tracker_peak_bytes, flush=True)
    OUT.write_text(json.dumps({
        "method": "intrinsic peak of live tensor bytes over one training step after two warm-up steps "
                  "(validation/measure/measure.py: profiler memory timeline, storage tracker); fp32, "
                  "torch CPU, the experts' loop as transformers' MixtralSparseMoeBlock (eager)",
        "torch": torch.__version__, "measured_on": dt.date.today().isoformat(),
        "shape": {"vocab": VOCAB, "hidden": HIDDEN, "heads": HEADS, "ffn": FFN, "layers": LAYERS,
                  "sequence": SEQ, "batch": BATCH, "experts": EXPERTS, "top_k": TOP_K},
        "records": records}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
