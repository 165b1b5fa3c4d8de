"""The fused linear cross-entropy against the plain loss: measured steps beside the sizing core's walk.

Run: `PYTHONPATH=. .venv/bin/python -m validation.measure.fused_loss [--json PATH]` (torch 2.13.0, CPU).
A two-block pre-norm decoder (hidden 256, 4 heads, vocabulary 32,000, sequence 256, batch 2; AdamW foreach, whose
step sets the fused runs' peak, and plain SGD, where the activations set it),
its loss either Hugging Face's (the head's logits upcast to fp32, then cross-entropy) or a fused linear
cross-entropy written here in PyTorch after Liger Kernel's algorithm (linkedin/Liger-Kernel
src/liger_kernel/ops/fused_linear_cross_entropy.py@00eba634: chunks of next_power_of_2(ceil(BT / ceil(V / H)))
tokens; each chunk's logits become their own gradient in place, multiplied into the input's and the
weight's gradients in forward; backward hands those back). Liger's Triton kernel does the softmax in place
in one pass; the PyTorch here does it in place op by op, so the chunk's transient is the same tensor.

Each case is measured by `measure()` (profiler timeline and storage tracker, as every step record) and sized
by the core from the matching layer list, with `training.loss` cross_entropy or fused_linear_cross_entropy.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.measure import measure
from validation.measure.step import Mark, autocast, backward_and_update, make_optimizer

H, HEADS, S, B, L, V = 256, 4, 256, 2, 2, 32_000


class FusedLinearCrossEntropy(torch.autograd.Function):
    """Mean cross-entropy of x @ w.T against targets, the logits never held whole (Liger's chunking)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, w: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        bt, h = x.shape
        chunk = min(bt, 1 << max(0, math.ceil(math.log2(math.ceil(bt / math.ceil(w.shape[0] / h))))))
        grad_x = torch.zeros_like(x)
        grad_w = torch.zeros_like(w)
        total = torch.zeros((), dtype=torch.float32)
        for start in range(0, bt, chunk):
            xc, tc = x[start:start + chunk], target[start:start + chunk]
            logits = xc @ w.t()  # under autocast: 16-bit, as Liger's matmul
            top = logits.amax(dim=1, keepdim=True)
            logits.sub_(top).exp_()
            norm = logits.sum(dim=1, keepdim=True)
            rows = torch.arange(len(tc))
            total -= (logits[rows, tc] / norm.squeeze(1)).float().log().sum()
            logits.div_(norm)  # the probabilities, in place: now the logits' gradient
            logits[rows, tc] -= 1.0
            logits.div_(bt)
            grad_x[start:start + chunk] = logits @ w.to(logits.dtype)
            with torch.autocast("cpu", enabled=False):  # into the fp32 accumulator in place, as Liger's addmm
                grad_w.addmm_(logits.t().to(grad_w.dtype), xc.to(grad_w.dtype))
            del logits
        ctx.save_for_backward(grad_x, grad_w)
        return total / bt

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
        grad_x, grad_w = ctx.saved_tensors
        if torch.ne(grad_out, 1.0):
            grad_x.mul_(grad_out)
            grad_w.mul_(grad_out)
        return grad_x, grad_w, None


class Block(nn.Module):
    """Pre-norm attention (fused QKV, SDPA, causal) and a GELU MLP, biases off."""

    def __init__(self) -> None:
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.proj = nn.Linear(H, 3 * H, bias=False), nn.Linear(H, H, bias=False)
        self.fc1, self.fc2 = nn.Linear(H, 4 * H, bias=False), nn.Linear(4 * H, H, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (t.transpose(1, 2) for t in self.qkv(self.n1(x)).view(B, S, 3, HEADS, H // HEADS).unbind(2))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, S, H))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class Net(nn.Module):
    """Embedding, blocks, final norm and an untied head."""

    def __init__(self) -> None:
        super().__init__()
        self.emb, self.norm, self.head = nn.Embedding(V, H), nn.LayerNorm(H), nn.Linear(H, V, bias=False)
        self.blocks = nn.ModuleList(Block() for _ in range(L))

    def hidden(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


class Trainer:
    """One language-model step with the plain (upcast) loss or the fused one."""

    def __init__(self, *, fused: bool, precision: str, optimizer: str) -> None:
        torch.manual_seed(0)
        self.net, self.fused, self.precision = Net(), fused, precision
        self.modules: list[nn.Module] = [self.net]
        self.optimizers = [make_optimizer(optimizer, list(self.net.parameters()))]
        self.ids = torch.randint(0, V, (B, S), generator=torch.Generator().manual_seed(0))
        self.out: torch.Tensor | None = None

    def step(self, mark: Mark) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)
        with mark("forward"), autocast(self.precision):
            h = self.net.hidden(self.ids).flatten(0, 1)
            if self.fused:
                self.out = None
                loss = FusedLinearCrossEntropy.apply(h, self.net.head.weight, self.ids.flatten())
            else:  # Hugging Face's ForCausalLMLoss: logits.float(), then cross-entropy
                self.out = self.net.head(h)
                loss = F.cross_entropy(self.out.float(), self.ids.flatten())
        backward_and_update(loss, mark, self.optimizers)

    def held(self) -> list[torch.Tensor]:
        return [self.ids]


def layers() -> list[dict[str, Any]]:
    """Return the same network as the core's layer list (ending in the presets' log-softmax "loss" row)."""
    block = {"type": "transformer_block", "heads": HEADS, "norm": "pre", "activation": "gelu", "bias": False,
             "causal": True}
    return [{"type": "embedding", "name": "emb", "vocab": V, "dim": H},
            *({**block, "name": f"h{i}"} for i in range(L)),
            {"type": "layernorm", "name": "norm"},
            {"type": "dense", "name": "head", "out_features": V, "bias": False},
            {"type": "log_softmax", "name": "loss"}]


def predicted(*, fused: bool, precision: str, optimizer: str) -> tuple[int, str]:
    """Return the core's tensor memory (the peak less framework_reserve) for the case, and its phase."""
    from workers.schemas.specs import load_job
    from workers.sizing.memory import step_peak

    spec = {"model": {"layers": layers()},
            "training": {"batch_size": B, "sequence_length": S, "precision": precision, "optimizer": optimizer,
                         "loss": "fused_linear_cross_entropy" if fused else "cross_entropy", "attention": "efficient"}}
    job = load_job(spec)[1]
    peak = step_peak(job.model, job.training)
    return int(peak.breakdown.total_bytes - peak.breakdown.framework_reserve_bytes), peak.phase.value


def run() -> list[dict[str, Any]]:
    """Measure and predict the eight cases."""
    rows = []
    for optimizer in ("adamw", "sgd"):
        for precision in ("fp32", "bf16-mixed"):
            for fused in (False, True):
                m = measure(Trainer(fused=fused, precision=precision, optimizer=optimizer))
                size, phase = predicted(fused=fused, precision=precision, optimizer=optimizer)
                rows.append({"optimizer": optimizer, "precision": precision,
                             "loss": "fused_linear_cross_entropy" if fused else "cross_entropy",
                             "measured_peak_bytes": m.peak_bytes, "measured_peak_phase": m.peak_phase,
                             "tracker_peak_bytes": m.tracker_peak_bytes, "predicted_bytes": size,
                             "predicted_peak_phase": phase})
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print each case's measured and predicted peak, and the saving of the fused loss."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args(argv)
    rows = run()
    for r in rows:
        error = (r["predicted_bytes"] - r["measured_peak_bytes"]) / r["measured_peak_bytes"]
        print(f"{r['optimizer']:5s} {r['precision']:10s} {r['loss']:27s} measured "
              f"{r['measured_peak_bytes'] / 2**20:7.1f} MiB ({r['measured_peak_phase']}), "
              f"tracker {r['tracker_peak_bytes'] / 2**20:7.1f}, predicted "
              f"{r['predicted_bytes'] / 2**20:7.1f} MiB ({r['predicted_peak_phase']}, {error:+.1%})")
    for optimizer in ("adamw", "sgd"):
        for precision in ("fp32", "bf16-mixed"):
            plain, fused = (r for r in rows if (r["optimizer"], r["precision"]) == (optimizer, precision))
            saved_m = plain["measured_peak_bytes"] - fused["measured_peak_bytes"]
            saved_p = plain["predicted_bytes"] - fused["predicted_bytes"]
            print(f"{optimizer} {precision}: the fused loss saves {saved_m / 2**20:.1f} MiB measured, "
                  f"{saved_p / 2**20:.1f} predicted")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
