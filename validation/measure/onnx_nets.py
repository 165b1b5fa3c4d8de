"""Ten small networks that are not presets, in plain PyTorch, to check the ONNX importer against.

Each is a kind users export to ONNX (issue 18): MobileNetV2, an EfficientNet-B0-like net with SiLU
and squeeze-excite, a U-Net, an LSTM language model, the M5 audio net, an MLP, a GroupNorm ResNet, a
TransformerEncoder, DenseNet and WideResNet-16-4. Widths are small so the exported files are tiny;
the layouts are the published ones. `CASES` gives each with its input and its loss target.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn


class Dropout(nn.Module):
    """Dropout as CUDA runs it (`native_dropout` keeps a 1-byte mask); plain F.dropout when exporting.

    On the CPU `nn.Dropout` keeps a mask of the input's dtype; the fused CUDA kernel a bool mask.
    The exporter writes an ONNX Dropout node for F.dropout either way.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if torch.onnx.is_in_onnx_export():
            return nn.functional.dropout(x, self.p, True)
        return torch.native_dropout(x, self.p, True)[0]


def conv_bn(cin: int, cout: int, k: int, s: int = 1, groups: int = 1,
            act: type[nn.Module] | None = nn.ReLU6) -> nn.Sequential:
    """Convolution without bias, BatchNorm, then the activation (none for a projection)."""
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    """MobileNetV2's block: 1x1 expand, 3x3 depthwise, 1x1 project, a shortcut at stride 1."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        layers: list[nn.Module] = [conv_bn(cin, mid, 1)] if expand != 1 else []
        layers += [conv_bn(mid, mid, 3, stride, groups=mid), conv_bn(mid, cout, 1, act=None)]
        self.block = nn.Sequential(*layers)
        self.shortcut = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.shortcut else y


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al. 2018) at width 0.25 on small images."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        setting = [(1, 4, 1, 1), (6, 8, 2, 2), (6, 8, 3, 2), (6, 16, 2, 2), (6, 24, 1, 1)]
        layers: list[nn.Module] = [conv_bn(3, 8, 3, 2)]
        cin = 8
        for t, c, n, s in setting:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 64, 1))
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.head(x)


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(self.act(self.fc1(s))))


class MBConv(nn.Module):
    """EfficientNet's block: expand, depthwise, squeeze-excite, project (SiLU throughout)."""

    def __init__(self, cin: int, cout: int, k: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        layers: list[nn.Module] = [conv_bn(cin, mid, 1, act=nn.SiLU)] if expand != 1 else []
        layers += [conv_bn(mid, mid, k, stride, groups=mid, act=nn.SiLU), SqueezeExcite(mid, max(1, cin // 4)),
                   conv_bn(mid, cout, 1, act=None)]
        self.block = nn.Sequential(*layers)
        self.shortcut = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.shortcut else y


class EfficientNetB0(nn.Module):
    """EfficientNet-B0's stages (Tan & Le 2019) at a quarter of the widths."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        setting = [(1, 4, 1, 1, 3), (6, 6, 2, 2, 3), (6, 10, 2, 2, 5), (6, 20, 3, 2, 3), (6, 28, 1, 1, 5)]
        layers: list[nn.Module] = [conv_bn(3, 8, 3, 2, act=nn.SiLU)]
        cin = 8
        for t, c, n, s, k in setting:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 80, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(Dropout(0.2), nn.Linear(80, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


def double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(conv_bn(cin, cout, 3, act=nn.ReLU), conv_bn(cout, cout, 3, act=nn.ReLU))


class UNet(nn.Module):
    """U-Net (Ronneberger et al. 2015): three downs, three transposed-conv ups with skips, 8 base channels."""

    def __init__(self, classes: int = 3, base: int = 8) -> None:
        super().__init__()
        w = [base, base * 2, base * 4, base * 8]
        self.downs = nn.ModuleList([double_conv(3, w[0]), double_conv(w[0], w[1]), double_conv(w[1], w[2])])
        self.bottom = double_conv(w[2], w[3])
        self.ups = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, 2) for i in (2, 1, 0)])
        self.up_convs = nn.ModuleList([double_conv(w[i] * 2, w[i]) for i in (2, 1, 0)])
        self.out = nn.Conv2d(w[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, conv, skip in zip(self.ups, self.up_convs, reversed(skips), strict=True):
            x = conv(torch.cat([up(x), skip], 1))
        return self.out(x)


class LstmLM(nn.Module):
    """A word-level LSTM language model (Zaremba et al. 2014): embedding, 2-layer LSTM, dropout, tied head."""

    def __init__(self, vocab: int = 500, hidden: int = 64) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
        self.drop = Dropout(0.2)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embed(tokens))
        return self.head(self.drop(out))


class M5(nn.Module):
    """M5 (Dai et al. 2017), the raw-audio classifier of PyTorch's speech-command tutorial, 16 channels."""

    def __init__(self, classes: int = 35, channels: int = 16) -> None:
        super().__init__()
        c = channels
        self.net = nn.Sequential(
            nn.Conv1d(1, c, 80, 16), nn.BatchNorm1d(c), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(c, c, 3), nn.BatchNorm1d(c), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(c, 2 * c, 3), nn.BatchNorm1d(2 * c), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(2 * c, 2 * c, 3), nn.BatchNorm1d(2 * c), nn.ReLU(), nn.MaxPool1d(4),
        )
        self.fc = nn.Linear(2 * c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.net(x)
        return self.fc(nn.functional.adaptive_avg_pool1d(x, 1).flatten(1))


class MLP(nn.Module):
    """A three-layer MLP on flattened 28x28 images with dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), Dropout(0.2),
                                 nn.Linear(256, 128), nn.ReLU(), Dropout(0.2), nn.Linear(128, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class GNBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.c1, self.n1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.GroupNorm(4, cout)
        self.c2, self.n2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.GroupNorm(4, cout)
        self.down = None if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.GroupNorm(4, cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.n2(self.c2(torch.relu(self.n1(self.c1(x)))))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class GroupNormResNet(nn.Module):
    """ResNet-18's layout with GroupNorm (Wu & He 2018) instead of BatchNorm, 16 base channels."""

    def __init__(self, classes: int = 10, base: int = 16) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, base, 3, 1, 1, bias=False), nn.GroupNorm(4, base), nn.ReLU())
        blocks: list[nn.Module] = []
        cin = base
        for i, width in enumerate((base, base * 2, base * 4, base * 8)):
            blocks += [GNBlock(cin, width, 1 if i == 0 else 2), GNBlock(width, width, 1)]
            cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1))


class TransformerClassifier(nn.Module):
    """nn.TransformerEncoder over token embeddings (post-norm, ReLU, dropout 0.1), mean-pooled head."""

    def __init__(self, vocab: int = 500, d: int = 64, heads: int = 4, layers: int = 2, classes: int = 10) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True)
        for name in ("dropout", "dropout1", "dropout2"):  # the GPU's 1-byte masks (see Dropout)
            setattr(layer, name, Dropout(0.1))
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d, classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(self.encoder(self.embed(tokens)).mean(1))


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, 4 * growth, 1, bias=False),
            nn.BatchNorm2d(4 * growth), nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, 1, 1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.net(x)], 1)


class DenseNet(nn.Module):
    """DenseNet-BC (Huang et al. 2017): three dense blocks of 6 layers, growth 8, transitions halving."""

    def __init__(self, classes: int = 10, growth: int = 8, per_block: int = 6) -> None:
        super().__init__()
        c = 2 * growth
        layers: list[nn.Module] = [nn.Conv2d(3, c, 3, 1, 1, bias=False)]
        for block in range(3):
            for _ in range(per_block):
                layers.append(DenseLayer(c, growth))
                c += growth
            if block < 2:
                layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False), nn.AvgPool2d(2)]
                c //= 2
        layers += [nn.BatchNorm2d(c), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


class WideBlock(nn.Module):
    """WRN's pre-activation block: BN-ReLU-conv3x3-dropout-BN-ReLU-conv3x3 with a shortcut."""

    def __init__(self, cin: int, cout: int, stride: int, p: float) -> None:
        super().__init__()
        self.bn1, self.c1 = nn.BatchNorm2d(cin), nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.c2 = nn.BatchNorm2d(cout), nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.drop = Dropout(p)
        self.short = None if stride == 1 and cin == cout else nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = torch.relu(self.bn1(x))
        y = self.c2(torch.relu(self.bn2(self.drop(self.c1(o)))))
        return y + (x if self.short is None else self.short(o))


class WideResNet(nn.Module):
    """WideResNet-16-4 (Zagoruyko & Komodakis 2016), dropout 0.3, at a quarter of the base widths."""

    def __init__(self, classes: int = 10, depth: int = 16, widen: int = 4, base: int = 4) -> None:
        super().__init__()
        n = (depth - 4) // 6
        widths = [base * 4, base * widen, 2 * base * widen, 4 * base * widen]
        layers: list[nn.Module] = [nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)]
        cin = widths[0]
        for stage, width in enumerate(widths[1:]):
            for i in range(n):
                layers.append(WideBlock(cin, width, 2 if stage and not i else 1, 0.3))
                cin = width
        layers += [nn.BatchNorm2d(cin), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(nn.functional.adaptive_avg_pool2d(self.features(x), 1).flatten(1))


@dataclass(frozen=True)
class Case:
    """One network with the shape of one sample, its input kind and its number of classes."""

    name: str
    build: Callable[[], nn.Module]
    sample_shape: tuple[int, ...]  # per sample; token ids for sequence models
    classes: int
    tokens: bool = False  # the input is int64 token ids
    target_shape: tuple[int, ...] = ()  # per sample: () one class, (32,) one per token, (64, 64) per pixel
    vocab: int = 500
    # Values per sample whose dropout mask the CPU keeps as fp32 and a GPU as bool, where no module
    # can be swapped: the attention dropout inside scaled_dot_product_attention's math path.
    cpu_float_mask_values: int = 0

    def batch(self, batch_size: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Return an input batch and its targets."""
        if self.tokens:
            x = torch.randint(0, self.vocab, (batch_size, *self.sample_shape), generator=generator)
        else:
            x = torch.randn((batch_size, *self.sample_shape), generator=generator)
        return x, torch.randint(0, self.classes, (batch_size, *self.target_shape), generator=generator)


CASES: tuple[Case, ...] = (
    Case("mobilenetv2", MobileNetV2, (3, 64, 64), 10),
    Case("efficientnet-b0", EfficientNetB0, (3, 64, 64), 10),
    Case("unet", UNet, (3, 64, 64), 3, target_shape=(64, 64)),
    Case("lstm-lm", LstmLM, (32,), 500, tokens=True, target_shape=(32,)),
    Case("m5", M5, (1, 8000), 35),
    Case("mlp", MLP, (1, 28, 28), 10),
    Case("groupnorm-resnet", GroupNormResNet, (3, 32, 32), 10),
    Case("transformer-encoder", TransformerClassifier, (32,), 10, tokens=True,
         cpu_float_mask_values=2 * 4 * 32 * 32),  # layers x heads x sequence^2
    Case("densenet", DenseNet, (3, 32, 32), 10),
    Case("wideresnet-16-4", WideResNet, (3, 32, 32), 10),
)
