"""Sequence networks in plain PyTorch: BERT, GPT-2 and ViT blocks, an LSTM language model, small others.

Attention is written out (scores, softmax, dropout, context: the "eager" attention of Hugging Face
transformers and of the original BERT and GPT-2 code) unless `attention="sdpa"` asks for
`scaled_dot_product_attention`, which on the CPU runs a flash kernel that keeps no scores.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.common import Dropout, NewGELU


class SelfAttention(nn.Module):
    """Multi-head self-attention with one packed QKV projection."""

    def __init__(self, hidden: int, heads: int, dropout: float, *, causal: bool, attention: str = "math") -> None:
        super().__init__()
        self.heads, self.causal, self.attention, self.p = heads, causal, attention, dropout
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.drop = Dropout(dropout)
        self.proj = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, h = x.shape
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2) for t in self.qkv(x).split(h, dim=2))
        if self.attention == "sdpa":
            ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0,
                                                 is_causal=self.causal)
        else:
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(h // self.heads)
            if self.causal:
                mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
                scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
            ctx = torch.matmul(self.drop(scores.softmax(dim=-1)), v)
        return self.proj(ctx.transpose(1, 2).reshape(b, s, h))


class Block(nn.Module):
    """A transformer layer: attention and a 4h feed-forward, pre- or post-norm, with residual dropout."""

    def __init__(self, hidden: int, heads: int, *, dropout: float, pre_norm: bool, causal: bool = False,
                 gelu: str = "erf", attention: str = "math") -> None:
        super().__init__()
        self.pre = pre_norm
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.attn = SelfAttention(hidden, heads, dropout, causal=causal, attention=attention)
        self.drop1, self.drop2 = Dropout(dropout), Dropout(dropout)
        self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
        self.act: nn.Module = NewGELU() if gelu == "new" else nn.GELU(approximate="tanh" if gelu == "tanh" else "none")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.pre:
            x = x + self.drop1(self.attn(self.ln1(x)))
            return x + self.drop2(self.fc2(self.act(self.fc1(self.ln2(x)))))
        x = self.ln1(x + self.drop1(self.attn(x)))
        return self.ln2(x + self.drop2(self.fc2(self.act(self.fc1(x)))))


class Bert(nn.Module):
    """BERT with a 2-class sentence head (the bert-base / bert-large presets)."""

    def __init__(self, *, layers: int = 12, hidden: int = 768, heads: int = 12, vocab: int = 30522,
                 positions: int = 512, classes: int = 2, attention: str = "math") -> None:
        super().__init__()
        self.words, self.positions = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden)
        self.ln, self.drop = nn.LayerNorm(hidden), Dropout(0.1)
        self.blocks = nn.Sequential(*(Block(hidden, heads, dropout=0.1, pre_norm=False, attention=attention)
                                      for _ in range(layers)))
        self.pooler, self.head_drop = nn.Linear(hidden, hidden), Dropout(0.1)
        self.classifier = nn.Linear(hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.drop(self.ln(self.words(ids) + self.positions(pos) + self.types(torch.zeros_like(ids))))
        x = self.blocks(x)
        return self.classifier(self.head_drop(torch.tanh(self.pooler(x[:, 0]))))


class GPT2(nn.Module):
    """GPT-2 (pre-norm, learned positions, LM head tied to the token embedding)."""

    def __init__(self, *, layers: int = 12, hidden: int = 768, heads: int = 12, vocab: int = 50257,
                 positions: int = 1024, gelu: str = "new", attention: str = "math") -> None:
        super().__init__()
        self.wte, self.wpe, self.drop = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden), Dropout(0.1)
        self.blocks = nn.Sequential(*(Block(hidden, heads, dropout=0.1, pre_norm=True, causal=True, gelu=gelu,
                                            attention=attention) for _ in range(layers)))
        self.ln_f = nn.LayerNorm(hidden)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        x = self.ln_f(self.blocks(self.drop(self.wte(ids) + self.wpe(pos))))
        return F.linear(x, self.wte.weight)


class ViT(nn.Module):
    """ViT-B/16 as torchvision builds it: 16x16 patches, a class token, 12 pre-norm blocks, no dropout."""

    def __init__(self, *, image: int = 224, layers: int = 12, hidden: int = 768, heads: int = 12,
                 classes: int = 1000, attention: str = "math") -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, 16, 16)
        self.cls = nn.Parameter(torch.zeros(1, 1, hidden))
        self.pos = nn.Parameter(torch.zeros(1, (image // 16) ** 2 + 1, hidden))
        self.blocks = nn.Sequential(*(Block(hidden, heads, dropout=0.0, pre_norm=True, attention=attention)
                                      for _ in range(layers)))
        self.ln, self.head = nn.LayerNorm(hidden), nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.ln(self.blocks(x))[:, 0])


class LstmLM(nn.Module):
    """A word-level LSTM language model (pytorch/examples word_language_model, untied)."""

    def __init__(self, *, vocab: int = 5000, embed: int = 256, hidden: int = 512, layers: int = 2,
                 dropout: float = 0.2) -> None:
        super().__init__()
        self.embed, self.drop = nn.Embedding(vocab, embed), Dropout(dropout)
        # One nn.LSTM per layer with dropout between: the same network as nn.LSTM(num_layers, dropout),
        # which the ONNX exporter refuses in training mode.
        self.lstms = nn.ModuleList(nn.LSTM(embed if i == 0 else hidden, hidden, batch_first=True)
                                   for i in range(layers))
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        for lstm in self.lstms:
            x = lstm(self.drop(x))[0]
        return self.out(self.drop(x))


class TransformerClassifier(nn.Module):
    """nn.TransformerEncoder over embedded tokens, mean-pooled into a classifier (a text classifier)."""

    def __init__(self, *, vocab: int = 8000, hidden: int = 256, heads: int = 4, layers: int = 4, classes: int = 4,
                 positions: int = 512) -> None:
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(ids.shape[1], device=ids.device).unsqueeze(0)
        return self.head(self.encoder(self.embed(ids) + self.pos(pos)).mean(dim=1))


class MLP(nn.Module):
    """A multilayer perceptron on flattened 28x28 images with dropout."""

    def __init__(self, *, widths: tuple[int, ...] = (784, 1024, 1024, 10), dropout: float = 0.2) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Flatten()]
        for i in range(len(widths) - 2):
            layers += [nn.Linear(widths[i], widths[i + 1]), nn.ReLU(inplace=True), Dropout(dropout)]
        self.net = nn.Sequential(*layers, nn.Linear(widths[-2], widths[-1]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class M5(nn.Module):
    """The M5 raw-audio classifier (Dai et al. 2017) of the torchaudio speech-commands tutorial, 8 kHz input."""

    def __init__(self, *, channels: int = 32, classes: int = 35) -> None:
        super().__init__()
        c = channels

        def stage(cin: int, cout: int, kernel: int, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv1d(cin, cout, kernel, stride), nn.BatchNorm1d(cout), nn.ReLU(inplace=True), nn.MaxPool1d(4)]

        self.features = nn.Sequential(*stage(1, c, 80, 16), *stage(c, c, 3), *stage(c, 2 * c, 3),
                                      *stage(2 * c, 2 * c, 3))
        self.pool = nn.AdaptiveAvgPool1d(1)
        self.fc = nn.Linear(2 * c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))
