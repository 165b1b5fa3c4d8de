"""What frozen linears, LoRA adapters and an fp32 loss keep for backward: the measurements behind the walk's rules.

Run: `PYTHONPATH=. .venv/bin/python -m validation.measure.frozen_and_loss` (torch 2.13.0, CPU). A two-block
transformer (h 256, seq 128, batch 4, vocab 1000, AdamW foreach), measured by `measure()`: per layer
kept bytes and the step's peak, for full fine-tuning, a frozen base, LoRA r8 on qkv and on qkv + MLP;
then the loss's kept bytes under bf16 autocast with and without torchtitan's `.float()` upcast.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.measure import measure
from validation.measure.step import Mark, autocast, backward_and_update, make_optimizer

H, S, B, L, V, R = 256, 128, 4, 2, 1000, 8


class LoRALinear(nn.Module):
    """A bias-free linear with an optional LoRA pair beside it (B starts at zero, as in the paper)."""

    def __init__(self, d_in: int, d_out: int, rank: int) -> None:
        super().__init__()
        self.base = nn.Linear(d_in, d_out, bias=False)
        self.a = nn.Linear(d_in, rank, bias=False) if rank else None
        self.b = nn.Linear(rank, d_out, bias=False) if rank else None
        if self.b is not None:
            nn.init.zeros_(self.b.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        return y if self.a is None or self.b is None else y + self.b(self.a(x))


class Block(nn.Module):
    """Pre-norm attention and GELU MLP."""

    def __init__(self, rank_attention: int, rank_mlp: int) -> None:
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.proj = LoRALinear(H, 3 * H, rank_attention), LoRALinear(H, H, 0)
        self.fc1, self.fc2 = LoRALinear(H, 4 * H, rank_mlp), LoRALinear(4 * H, H, rank_mlp)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (t.transpose(1, 2) for t in self.qkv(self.n1(x)).view(B, S, 3, 4, H // 4).unbind(2))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(B, S, H))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class Net(nn.Module):
    """Embedding, blocks, final norm and an untied head."""

    def __init__(self, rank_attention: int, rank_mlp: int) -> None:
        super().__init__()
        self.emb, self.norm, self.head = nn.Embedding(V, H), nn.LayerNorm(H), nn.Linear(H, V, bias=False)
        self.blocks = nn.ModuleList(Block(rank_attention, rank_mlp) for _ in range(L))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.emb(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


class Trainer:
    """One language-model step; `frozen` trains only the adapters (or the embedding when there are none)."""

    def __init__(self, *, frozen: bool, ranks: tuple[int, int], precision: str, upcast: bool = True) -> None:
        torch.manual_seed(0)
        self.net, self.precision, self.upcast = Net(*ranks), precision, upcast
        if frozen:
            for name, p in self.net.named_parameters():
                p.requires_grad_(".a." in name or ".b." in name or (not any(ranks) and name == "emb.weight"))
        self.modules: list[nn.Module] = [self.net]
        self.optimizers = [make_optimizer("adamw", [p for p in self.net.parameters() if p.requires_grad])]
        self.ids = torch.randint(0, V, (B, S))
        self.out: torch.Tensor | None = None

    def step(self, mark: Mark) -> None:
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=True)
        with mark("forward"), autocast(self.precision):
            self.out = self.net(self.ids)
            logits = self.out.flatten(0, 1)
            loss = F.cross_entropy(logits.float() if self.upcast else logits, self.ids.flatten())
        backward_and_update(loss, mark, self.optimizers)

    def held(self) -> list[torch.Tensor]:
        return [self.ids]


def _mib(value: float) -> float:
    return round(value / 2**20, 3)


def main() -> None:
    """Print the kept bytes per layer and the peaks."""
    cases: list[tuple[str, dict[str, Any]]] = [
        ("full fine-tune", {"frozen": False, "ranks": (0, 0)}), ("frozen base", {"frozen": True, "ranks": (0, 0)}),
        ("LoRA qkv", {"frozen": True, "ranks": (R, 0)}), ("LoRA qkv+mlp", {"frozen": True, "ranks": (R, R)})]
    for precision in ("fp32", "bf16-mixed"):
        for name, kwargs in cases:
            m = measure(Trainer(precision=precision, **kwargs))
            kept = {k: _mib(v) for k, v in m.kept_by_layer.items() if v and "Linear" in k}
            print(f"{precision} {name}: peak {_mib(m.peak_bytes)} MiB ({m.peak_phase}); linears keep {kept}")
    for upcast in (False, True):
        m = measure(Trainer(frozen=False, ranks=(0, 0), precision="bf16-mixed", upcast=upcast))
        print(f"bf16 autocast, upcast={upcast}: the loss keeps {_mib(m.kept_by_layer.get('loss', 0))} MiB "
              f"({B * S * V} logits); peak {_mib(m.peak_bytes)} MiB ({m.peak_phase})")


if __name__ == "__main__":
    main()
