"""Generative and dense-prediction networks the core has no preset for (issue 11's unseen set 6), in plain PyTorch.

Three layouts users bring and the sizing core was never built on, measured before any change to the core:
an encoder-decoder Transformer in T5's pre-norm layout (self-attention, cross-attention over the encoder's
output, a tied LM head over the target), a DDPM-style diffusion U-Net (a sinusoidal timestep embedding added
in every residual block, GroupNorm and SiLU, self-attention at 16 x 16 and 8 x 8, skip concatenation), and a
RetinaNet-style one-stage detector (a residual backbone, a feature pyramid built top-down by nearest upsampling
and addition, class and box heads shared over three levels, their outputs concatenated). Each takes one input
tensor, as a single-input ONNX export needs: the encoder-decoder its source and target token ids in one row
(split inside), the U-Net its timestep as a fourth channel.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.common import Dropout, flat_ce, mse
from validation.measure.nets_unseen import conv_norm_act

SOURCE, TARGET = 64, 48  # the encoder-decoder's source and target tokens a sample


class Attention(nn.Module):
    """Multi-head attention by scaled_dot_product_attention: self-attention, or cross-attention over `memory`."""

    def __init__(self, dim: int, heads: int, *, causal: bool = False) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.q, self.kv, self.out = nn.Linear(dim, dim, bias=False), nn.Linear(dim, 2 * dim, bias=False), \
            nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
        b, n, d = x.shape
        src = x if memory is None else memory
        q = self.q(x).view(b, n, self.heads, d // self.heads).transpose(1, 2)
        k, v = self.kv(src).view(b, src.shape[1], 2, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.out(y.transpose(1, 2).reshape(b, n, d))


class Seq2SeqBlock(nn.Module):
    """A pre-norm block: self-attention, cross-attention (decoder only), ReLU feed-forward; dropout on each."""

    def __init__(self, dim: int, heads: int, ffn: int, *, decoder: bool, p: float = 0.1) -> None:
        super().__init__()
        self.n1, self.attn = nn.LayerNorm(dim), Attention(dim, heads, causal=decoder)
        self.n2, self.cross = (nn.LayerNorm(dim), Attention(dim, heads)) if decoder else (None, None)
        self.n3, self.up, self.down = nn.LayerNorm(dim), nn.Linear(dim, ffn), nn.Linear(ffn, dim)
        self.d1, self.d2, self.d3, self.d4 = Dropout(p), Dropout(p), Dropout(p), Dropout(p)

    def forward(self, x: torch.Tensor, memory: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.d1(self.attn(self.n1(x)))
        if self.cross is not None and self.n2 is not None:
            x = x + self.d2(self.cross(self.n2(x), memory))
        return x + self.d4(self.down(self.d3(F.relu(self.up(self.n3(x))))))


class EncoderDecoder(nn.Module):
    """T5-like encoder-decoder: vocabulary 8000, width 256, 3 + 3 blocks, 4 heads, FFN 1024, learned positions."""

    def __init__(self, *, vocab: int = 8000, dim: int = 256, heads: int = 4, layers: int = 3, ffn: int = 1024) -> None:
        super().__init__()
        self.embed, self.pos = nn.Embedding(vocab, dim), nn.Embedding(SOURCE, dim)
        self.drop = Dropout(0.1)
        self.encoder = nn.ModuleList(Seq2SeqBlock(dim, heads, ffn, decoder=False) for _ in range(layers))
        self.decoder = nn.ModuleList(Seq2SeqBlock(dim, heads, ffn, decoder=True) for _ in range(layers))
        self.enc_norm, self.dec_norm = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.embed.weight  # tied, as T5 and BART tie theirs

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        src, tgt = ids[:, :SOURCE], ids[:, SOURCE:]
        memory = self.drop(self.embed(src) + self.pos.weight[:SOURCE])
        for block in self.encoder:
            memory = block(memory)
        memory = self.enc_norm(memory)
        x = self.drop(self.embed(tgt) + self.pos.weight[:TARGET])
        for block in self.decoder:
            x = block(x, memory)
        return self.head(self.dec_norm(x))


def seq2seq_sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Return source and target ids in one row each, and the next-token labels of the target."""
    g = torch.Generator().manual_seed(batch)
    return torch.randint(0, 8000, (batch, SOURCE + TARGET), generator=g), torch.randint(0, 8000, (batch, TARGET),
                                                                                         generator=g)


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Return DDPM's sinusoidal embedding of the timesteps (one per sample)."""
    freqs = torch.exp(-math.log(10000.0) * torch.arange(dim // 2, dtype=torch.float32) / (dim // 2))
    angles = t[:, None] * freqs[None]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


class ResBlock(nn.Module):
    """GroupNorm, SiLU, 3x3 conv; the timestep's projection added; again with dropout; a 1x1 shortcut if needed."""

    def __init__(self, cin: int, cout: int, tdim: int, p: float = 0.1) -> None:
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.drop, self.c2 = nn.GroupNorm(32, cout), Dropout(p), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(temb))[:, :, None, None]
        h = self.c2(self.drop(F.silu(self.n2(h))))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    """Self-attention over the pixels: GroupNorm, a 1x1 conv to Q, K, V, SDPA (4 heads), a 1x1 projection."""

    def __init__(self, channels: int, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.norm, self.qkv, self.proj = nn.GroupNorm(32, channels), nn.Conv2d(channels, 3 * channels, 1), \
            nn.Conv2d(channels, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).view(b, 3, self.heads, c // self.heads, h * w).transpose(-1, -2).unbind(1)
        y = F.scaled_dot_product_attention(q, k, v)
        return x + self.proj(y.transpose(-1, -2).reshape(b, c, h, w))


class DiffusionUNet(nn.Module):
    """DDPM-style U-Net at 32x32: widths 64-128-128, two residual blocks a level, attention at 16 and 8 px."""

    def __init__(self, base: int = 64, mults: tuple[int, ...] = (1, 2, 2), attn_at: tuple[int, ...] = (1, 2)) -> None:
        super().__init__()
        tdim = 4 * base
        self.base = base
        self.time = nn.Sequential(nn.Linear(base, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.stem = nn.Conv2d(3, base, 3, padding=1)
        widths, skips, cin = [base * m for m in mults], [base], base
        self.down = nn.ModuleList()
        for level, width in enumerate(widths):
            for _ in range(2):
                self.down.append(nn.ModuleList([ResBlock(cin, width, tdim),
                                                AttnBlock(width) if level in attn_at else nn.Identity()]))
                skips.append(cin := width)
            if level < len(widths) - 1:
                self.down.append(nn.ModuleList([nn.Conv2d(cin, cin, 3, stride=2, padding=1)]))
                skips.append(cin)
        self.mid = nn.ModuleList([ResBlock(cin, cin, tdim), AttnBlock(cin), ResBlock(cin, cin, tdim)])
        self.up = nn.ModuleList()
        for level, width in reversed(list(enumerate(widths))):
            for _ in range(3):
                self.up.append(nn.ModuleList([ResBlock(cin + skips.pop(), width, tdim),
                                              AttnBlock(width) if level in attn_at else nn.Identity()]))
                cin = width
            if level > 0:
                self.up.append(nn.ModuleList([nn.Upsample(scale_factor=2.0, mode="nearest"),
                                              nn.Conv2d(cin, cin, 3, padding=1)]))
        self.out_norm, self.out = nn.GroupNorm(32, cin), nn.Conv2d(cin, 3, 3, padding=1)

    def forward(self, packed: torch.Tensor) -> torch.Tensor:
        x, t = packed[:, :3], packed[:, 3, 0, 0]
        temb = self.time(timestep_embedding(t, self.base))
        h = self.stem(x)
        hs = [h]
        for step in self.down:
            h = step[0](h, temb) if isinstance(step[0], ResBlock) else step[0](h)
            if len(step) > 1:
                h = step[1](h)
            hs.append(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb)), temb)
        for step in self.up:
            if isinstance(step[0], ResBlock):
                h = step[1](step[0](torch.cat([h, hs.pop()], dim=1), temb))
            else:
                h = step[1](step[0](h))
        return self.out(F.silu(self.out_norm(h)))


def noisy_images(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Return noised 32x32 images with their timestep as a fourth channel, and the noise to predict."""
    g = torch.Generator().manual_seed(batch)
    t = torch.randint(0, 1000, (batch,), generator=g).float()
    images = torch.randn(batch, 3, 32, 32, generator=g)
    return torch.cat([images, t[:, None, None, None].expand(batch, 1, 32, 32)], dim=1), \
        torch.randn(batch, 3, 32, 32, generator=g)


class Stage(nn.Module):
    """A stride-2 basic residual block then one more, as ResNet-18's stages."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.a, self.b = conv_norm_act(cin, cout, 3, 2), conv_norm_act(cout, cout, 3, act=None)
        self.short = conv_norm_act(cin, cout, 1, 2, act=None)
        self.c, self.d = conv_norm_act(cout, cout, 3), conv_norm_act(cout, cout, 3, act=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.b(self.a(x)) + self.short(x))
        return F.relu(self.d(self.c(x)) + x)


class Detector(nn.Module):
    """RetinaNet-like detector at 128x128: backbone 32-64-128-256, FPN width 96 on three levels, 3 anchors, 20
    classes; per level class and box heads (two 3x3 convs each, shared across levels), outputs concatenated."""

    def __init__(self, *, fpn: int = 96, anchors: int = 3, classes: int = 20) -> None:
        super().__init__()
        self.stem, self.classes = conv_norm_act(3, 32, 3, 2), classes
        self.s1, self.s2, self.s3 = Stage(32, 64), Stage(64, 128), Stage(128, 256)
        self.lat = nn.ModuleList(nn.Conv2d(c, fpn, 1) for c in (64, 128, 256))
        self.smooth = nn.ModuleList(nn.Conv2d(fpn, fpn, 3, padding=1) for _ in range(3))
        self.cls = nn.Sequential(nn.Conv2d(fpn, fpn, 3, padding=1), nn.ReLU(), nn.Conv2d(fpn, fpn, 3, padding=1),
                                 nn.ReLU(), nn.Conv2d(fpn, anchors * classes, 3, padding=1))
        self.box = nn.Sequential(nn.Conv2d(fpn, fpn, 3, padding=1), nn.ReLU(), nn.Conv2d(fpn, fpn, 3, padding=1),
                                 nn.ReLU(), nn.Conv2d(fpn, anchors * 4, 3, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c3 = self.s1(self.stem(x))
        c4 = self.s2(c3)
        c5 = self.s3(c4)
        p5 = self.lat[2](c5)
        p4 = self.lat[1](c4) + F.interpolate(p5, scale_factor=2.0, mode="nearest")
        p3 = self.lat[0](c3) + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        outs = []
        for level, p in enumerate((p3, p4, p5)):
            p = self.smooth[level](p)
            b = p.shape[0]
            cls = self.cls(p).permute(0, 2, 3, 1).reshape(b, -1, self.classes)
            box = self.box(p).permute(0, 2, 3, 1).reshape(b, -1, 4)
            outs.append(torch.cat([cls, box], dim=2))
        return torch.cat(outs, dim=1)


def detection_sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Return 128x128 images and a target per anchor (class scores and box offsets): 3 x (1024 + 256 + 64) x 24."""
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 3, 128, 128, generator=g), torch.randn(batch, 3 * (1024 + 256 + 64), 24, generator=g)


NETS: tuple[dict[str, Any], ...] = (  # cases.Net's fields
    {"name": "encdec-s112", "family": "encoder-decoder", "build": EncoderDecoder, "sample": seq2seq_sample,
     "loss": flat_ce, "input_shape": (SOURCE + TARGET,), "sequence_length": SOURCE + TARGET,
     "description": "T5-like encoder-decoder (pre-norm, SDPA self- and cross-attention, ReLU FFN 1024, dropout 0.1, "
                    "tied head): vocabulary 8000, width 256, 3 + 3 blocks; 64 source and 48 target tokens in one row"},
    {"name": "ddpm-unet-32", "family": "diffusion-unet", "build": DiffusionUNet, "sample": noisy_images,
     "loss": mse, "loss_kind": "mse", "input_shape": (4, 32, 32),
     "description": "DDPM-style U-Net at 32x32 (widths 64-128-128, 2 residual blocks a level, GroupNorm, SiLU, "
                    "timestep embedding, attention at 16 and 8 px, skip concat); the timestep as a fourth channel"},
    {"name": "retina-128", "family": "detector", "build": Detector, "sample": detection_sample,
     "loss": mse, "loss_kind": "mse", "input_shape": (3, 128, 128),
     "description": "RetinaNet-like detector at 128x128: residual backbone 32-256, FPN 96 on three levels "
                    "(nearest upsample + add), shared class and box heads, 3 anchors, 20 classes; MSE on the outputs"},
)
