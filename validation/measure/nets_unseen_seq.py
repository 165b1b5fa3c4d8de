"""Sequence networks the sizing core was not built on (issue 11's "unseen" records), in plain PyTorch.

A GRU text classifier (two-layer `nn.GRU`, the last step's output to a linear head), a dilated
Conv1d keyword-spotting net over MFCC frames (residual blocks, BatchNorm1d, global max-pool) and a
decoder-only language model in nanoGPT's layout (pre-norm, `scaled_dot_product_attention` with
`is_causal`, exact GELU, the LM head tied to the token embedding).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.common import Dropout


class GruClassifier(nn.Module):
    """Embedding, a two-layer GRU, the last step's hidden output to the classes."""

    def __init__(self, *, vocab: int = 5000, embed: int = 128, hidden: int = 256, classes: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.gru = nn.GRU(embed, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embed(ids))
        return self.head(out[:, -1])


class DilatedBlock(nn.Module):
    """Two dilated 3-tap Conv1d with BatchNorm1d and ReLU, dropout between, and a shortcut."""

    def __init__(self, channels: int, dilation: int, p: float) -> None:
        super().__init__()
        self.c1 = nn.Conv1d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False)
        self.b1, self.drop = nn.BatchNorm1d(channels), Dropout(p)
        self.c2 = nn.Conv1d(channels, channels, 3, padding=dilation, dilation=dilation, bias=False)
        self.b2 = nn.BatchNorm1d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.b2(self.c2(self.drop(F.relu(self.b1(self.c1(x))))))
        return F.relu(x + y)


class KeywordTCN(nn.Module):
    """A temporal convolution net for keyword spotting on 40 MFCC x 101 frames: dilations 1-8, max over time."""

    def __init__(self, *, mfcc: int = 40, channels: int = 96, classes: int = 35) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(mfcc, channels, 5, padding=2, bias=False), nn.BatchNorm1d(channels),
                                  nn.ReLU(inplace=True))
        self.blocks = nn.Sequential(*(DilatedBlock(channels, d, 0.1) for d in (1, 2, 4, 8)))
        self.pool, self.fc = nn.AdaptiveMaxPool1d(1), nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention: one packed projection, split, heads, scaled_dot_product_attention(is_causal)."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.c_attn, self.c_proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.c_attn(x).split(c, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class DecoderBlock(nn.Module):
    """Pre-norm block: x + attn(ln(x)), x + mlp(ln(x)) with an exact-GELU 4x MLP."""

    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.ln_1, self.ln_2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TinyGPT(nn.Module):
    """A decoder-only LM in nanoGPT's layout: vocabulary 4096, 4 layers, 4 heads, width 256, tied head."""

    def __init__(self, *, vocab: int = 4096, positions: int = 256, hidden: int = 256, layers: int = 4,
                 heads: int = 4) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.blocks = nn.Sequential(*(DecoderBlock(hidden, heads) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.lm_head(self.ln_f(self.blocks(self.wte(ids) + self.wpe(pos))))
