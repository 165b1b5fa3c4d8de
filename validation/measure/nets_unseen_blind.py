"""The second unseen set: networks measured only after the fixes the first set called for, to check them blind.

VGG-11 with BatchNorm (CIFAR), a bidirectional GRU tagger (one class per token), an MLP-Mixer
(token mixing through transposes), a RegNetY-like net (grouped convolutions, squeeze-excite with
sigmoid) and a character CNN for text (embedding, transpose, Conv1d, max-pool). Written here from
the papers; no core change was made after these were measured.
"""

from __future__ import annotations

import torch
from torch import nn

from validation.measure.common import Dropout
from validation.measure.nets_unseen import conv_norm_act


class VGG11BN(nn.Module):
    """VGG-11 with BatchNorm after each (biased) convolution, for 32x32 images, a 512-512 classifier."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for width in (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"):
            if width == "M":
                layers.append(nn.MaxPool2d(2, 2))
                continue
            assert isinstance(width, int)
            layers += [nn.Conv2d(cin, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(inplace=True)]
            cin = width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(512, 512), nn.ReLU(inplace=True), Dropout(0.5),
                                        nn.Linear(512, 512), nn.ReLU(inplace=True), Dropout(0.5),
                                        nn.Linear(512, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


class BiGruTagger(nn.Module):
    """A token tagger: embedding, a bidirectional GRU, dropout, one class per token."""

    def __init__(self, *, vocab: int = 8000, embed: int = 100, hidden: int = 128, tags: int = 17) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.gru = nn.GRU(embed, hidden, batch_first=True, bidirectional=True)
        self.drop, self.out = Dropout(0.3), nn.Linear(2 * hidden, tags)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.out(self.drop(self.gru(self.embed(ids))[0]))


class MixerBlock(nn.Module):
    """MLP-Mixer's block (Tolstikhin et al. 2021): a token-mixing MLP across patches, a channel-mixing MLP."""

    def __init__(self, tokens: int, channels: int, token_hidden: int, channel_hidden: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(channels), nn.LayerNorm(channels)
        self.tokens = nn.Sequential(nn.Linear(tokens, token_hidden), nn.GELU(), nn.Linear(token_hidden, tokens))
        self.channels = nn.Sequential(nn.Linear(channels, channel_hidden), nn.GELU(),
                                      nn.Linear(channel_hidden, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.tokens(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channels(self.norm2(x))


class Mixer(nn.Module):
    """A small MLP-Mixer on 64x64 images: patch 8 (64 tokens), width 256, 6 blocks, mean-pooled head."""

    def __init__(self, *, image: int = 64, patch: int = 8, width: int = 256, depth: int = 6,
                 classes: int = 100) -> None:
        super().__init__()
        tokens = (image // patch) ** 2
        self.stem = nn.Conv2d(3, width, patch, patch)
        self.blocks = nn.Sequential(*(MixerBlock(tokens, width, width // 2, 4 * width) for _ in range(depth)))
        self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.stem(x).flatten(2).transpose(1, 2))
        return self.head(self.norm(x).mean(dim=1))


class RegNetYBlock(nn.Module):
    """RegNetY's X block with squeeze-excite (Radosavovic et al. 2020): 1x1, grouped 3x3, SE (sigmoid), 1x1."""

    def __init__(self, cin: int, cout: int, stride: int, group_width: int = 16) -> None:
        super().__init__()
        self.a, self.b = conv_norm_act(cin, cout, 1), conv_norm_act(cout, cout, 3, stride, groups=cout // group_width)
        squeezed = max(1, cin // 4)
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(cout, squeezed, 1), nn.ReLU(inplace=True),
                                nn.Conv2d(squeezed, cout, 1), nn.Sigmoid())
        self.c = conv_norm_act(cout, cout, 1, act=None)
        self.down = None if stride == 1 and cin == cout else conv_norm_act(cin, cout, 1, stride, act=None)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.b(self.a(x))
        y = self.c(y * self.se(y))
        return self.relu(y + (x if self.down is None else self.down(x)))


class RegNetY(nn.Module):
    """A RegNetY-400MF-like net: stem 32, stages of widths 48-104-208-440 with depths 1-3-6-6."""

    def __init__(self, classes: int = 1000, widths: tuple[int, ...] = (48, 104, 208, 440),
                 depths: tuple[int, ...] = (1, 3, 6, 6)) -> None:
        super().__init__()
        blocks: list[nn.Module] = [conv_norm_act(3, 32, 3, 2)]
        cin = 32
        for width, depth in zip(widths, depths, strict=True):
            for i in range(depth):
                blocks.append(RegNetYBlock(cin, width, 2 if i == 0 else 1, group_width=8))
                cin = width
        self.trunk, self.fc = nn.Sequential(*blocks), nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.trunk(x), 1), 1))


class CharCNN(nn.Module):
    """A character CNN for text classification: embedding, three Conv1d with ReLU and max-pool, a head."""

    def __init__(self, *, alphabet: int = 70, embed: int = 64, channels: int = 256, classes: int = 4) -> None:
        super().__init__()
        self.embed = nn.Embedding(alphabet, embed)
        self.convs = nn.Sequential(
            nn.Conv1d(embed, channels, 7), nn.ReLU(inplace=True), nn.MaxPool1d(3),
            nn.Conv1d(channels, channels, 7), nn.ReLU(inplace=True), nn.MaxPool1d(3),
            nn.Conv1d(channels, channels, 3), nn.ReLU(inplace=True))
        self.head = nn.Sequential(Dropout(0.5), nn.Linear(channels, classes))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.convs(self.embed(ids).transpose(1, 2))
        return self.head(x.amax(dim=2))
