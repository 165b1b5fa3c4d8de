"""Image networks in plain PyTorch (torchvision is not usable here), laid out as torchvision builds them.

The presets' layer lists (workers/sizing/preset_cnn.py, preset_transformer.py) follow the same
layouts, so a measured step and a predicted one describe the same network.
"""

from __future__ import annotations

import torch
from torch import nn

from validation.measure.common import Dropout


class BasicBlock(nn.Module):
    """ResNet's two 3x3 convolutions with a shortcut."""

    expansion = 1

    def __init__(self, cin: int, width: int, stride: int, norm: type[nn.Module] | None = None) -> None:
        super().__init__()
        bn = norm or nn.BatchNorm2d
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = bn(width)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = bn(width)
        self.down = None
        if stride != 1 or cin != width:
            self.down = nn.Sequential(nn.Conv2d(cin, width, 1, stride, bias=False), bn(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.down is None else self.down(x)
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """ResNet v1.5's 1x1-3x3-1x1 block, stride on the 3x3."""

    expansion = 4

    def __init__(self, cin: int, width: int, stride: int, norm: type[nn.Module] | None = None) -> None:
        super().__init__()
        out = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != out:
            self.down = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.down is None else self.down(x)
        return self.relu(out + identity)


def _group_norm(channels: int) -> nn.Module:
    return nn.GroupNorm(min(32, channels // 4), channels)


class ResNet(nn.Module):
    """torchvision's ResNet: stem, four stages, global pool, classifier."""

    def __init__(self, depth: int, *, classes: int = 1000, width: int = 64, group_norm: bool = False) -> None:
        super().__init__()
        block, counts = {18: (BasicBlock, (2, 2, 2, 2)), 34: (BasicBlock, (3, 4, 6, 3)),
                         50: (Bottleneck, (3, 4, 6, 3)), 101: (Bottleneck, (3, 4, 23, 3))}[depth]
        norm = _group_norm if group_norm else nn.BatchNorm2d
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = norm(width)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(3, 2, 1)
        layers: list[nn.Module] = []
        cin = width
        for stage, count in enumerate(counts):
            w = width * 2**stage
            for i in range(count):
                layers.append(block(cin, w, 2 if stage and i == 0 else 1, norm))
                cin = w * block.expansion
        self.layers = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.avgpool(self.layers(x))
        return self.fc(torch.flatten(x, 1))


def _classifier(features: int, width: int, classes: int, *, dropout_first: bool) -> nn.Sequential:
    if dropout_first:  # AlexNet
        return nn.Sequential(Dropout(0.5), nn.Linear(features, width), nn.ReLU(inplace=True), Dropout(0.5),
                             nn.Linear(width, width), nn.ReLU(inplace=True), nn.Linear(width, classes))
    return nn.Sequential(nn.Linear(features, width), nn.ReLU(inplace=True), Dropout(0.5),
                         nn.Linear(width, width), nn.ReLU(inplace=True), Dropout(0.5), nn.Linear(width, classes))


class VGG16(nn.Module):
    """torchvision's vgg16 (configuration D, no batchnorm)."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for w in (64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0):
            if w:
                layers += [nn.Conv2d(cin, w, 3, padding=1), nn.ReLU(inplace=True)]
                cin = w
            else:
                layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(7)
        self.classifier = _classifier(512 * 49, 4096, classes, dropout_first=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class AlexNet(nn.Module):
    """torchvision's alexnet (the one-GPU variant)."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        r = nn.ReLU
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 11, 4, 2), r(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(64, 192, 5, padding=2), r(inplace=True), nn.MaxPool2d(3, 2),
            nn.Conv2d(192, 384, 3, padding=1), r(inplace=True),
            nn.Conv2d(384, 256, 3, padding=1), r(inplace=True),
            nn.Conv2d(256, 256, 3, padding=1), r(inplace=True), nn.MaxPool2d(3, 2))
        self.avgpool = nn.AdaptiveAvgPool2d(6)
        self.classifier = _classifier(256 * 36, 4096, classes, dropout_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


class InvertedResidual(nn.Module):
    """MobileNetV2's expand-depthwise-project block (ReLU6), or EfficientNet's MBConv (SiLU, squeeze-excite)."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int, *, kernel: int = 3, efficient: bool = False):
        super().__init__()
        hidden = cin * expand
        act: type[nn.Module] = nn.SiLU if efficient else nn.ReLU6
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), act(inplace=not efficient)]
        layers += [nn.Conv2d(hidden, hidden, kernel, stride, kernel // 2, groups=hidden, bias=False),
                   nn.BatchNorm2d(hidden), act(inplace=not efficient)]
        if efficient:
            layers.append(SqueezeExcite(hidden, max(1, cin // 4)))
        layers += [nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.block(x)
        return x + out if self.residual else out


class SqueezeExcite(nn.Module):
    """Squeeze-and-excitation with SiLU and a sigmoid gate (EfficientNet)."""

    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(channels, squeezed, 1)
        self.act = nn.SiLU()
        self.fc2 = nn.Conv2d(squeezed, channels, 1)
        self.gate = nn.Sigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gate(self.fc2(self.act(self.fc1(self.pool(x)))))


class MobileNetV2(nn.Module):
    """MobileNetV2 (Sandler et al. 2018), torchvision's layout, at a width multiplier."""

    def __init__(self, *, classes: int = 1000, width: float = 1.0, efficient: bool = False) -> None:
        super().__init__()
        act: type[nn.Module] = nn.SiLU if efficient else nn.ReLU6

        def w(c: int) -> int:
            return max(8, int(c * width + 4) // 8 * 8)

        if efficient:  # EfficientNet-B0: (expand, channels, repeats, stride, kernel)
            settings = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3),
                        (6, 112, 3, 1, 5), (6, 192, 4, 2, 5), (6, 320, 1, 1, 3)]
            stem, last = 32, 1280
        else:
            settings = [(1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 32, 3, 2, 3), (6, 64, 4, 2, 3),
                        (6, 96, 3, 1, 3), (6, 160, 3, 2, 3), (6, 320, 1, 1, 3)]
            stem, last = 32, 1280
        layers: list[nn.Module] = [nn.Conv2d(3, w(stem), 3, 2, 1, bias=False), nn.BatchNorm2d(w(stem)),
                                   act(inplace=not efficient)]
        cin = w(stem)
        for expand, c, n, s, k in settings:
            for i in range(n):
                layers.append(InvertedResidual(cin, w(c), s if i == 0 else 1, expand, kernel=k, efficient=efficient))
                cin = w(c)
        layers += [nn.Conv2d(cin, last, 1, bias=False), nn.BatchNorm2d(last), act(inplace=not efficient)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(Dropout(0.2), nn.Linear(last, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class DenseLayer(nn.Module):
    """DenseNet's BN-ReLU-1x1-BN-ReLU-3x3 layer whose output is concatenated to its input."""

    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(inplace=True), nn.Conv2d(cin, 4 * growth, 1, bias=False),
                                  nn.BatchNorm2d(4 * growth), nn.ReLU(inplace=True),
                                  nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], 1)


class DenseNet(nn.Module):
    """DenseNet-BC (Huang et al. 2017) with the given growth rate and block sizes (121: 32, (6, 12, 24, 16))."""

    def __init__(self, *, growth: int = 32, blocks: tuple[int, ...] = (6, 12, 24, 16), classes: int = 1000) -> None:
        super().__init__()
        c = 2 * growth
        layers: list[nn.Module] = [nn.Conv2d(3, c, 7, 2, 3, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True),
                                   nn.MaxPool2d(3, 2, 1)]
        for i, n in enumerate(blocks):
            for _ in range(n):
                layers.append(DenseLayer(c, growth))
                c += growth
            if i < len(blocks) - 1:
                layers += [nn.BatchNorm2d(c), nn.ReLU(inplace=True), nn.Conv2d(c, c // 2, 1, bias=False),
                           nn.AvgPool2d(2)]
                c //= 2
        layers += [nn.BatchNorm2d(c), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class WideBlock(nn.Module):
    """WideResNet's pre-activation block (BN-ReLU-conv, twice) with dropout between."""

    def __init__(self, cin: int, cout: int, stride: int, dropout: float) -> None:
        super().__init__()
        self.bn1, self.relu1 = nn.BatchNorm2d(cin), nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn2, self.relu2 = nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
        self.drop = Dropout(dropout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.short = None if stride == 1 and cin == cout else nn.Conv2d(cin, cout, 1, stride, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = self.relu1(self.bn1(x))
        y = self.conv2(self.drop(self.relu2(self.bn2(self.conv1(o)))))
        return y + (x if self.short is None else self.short(o))


class WideResNet(nn.Module):
    """WideResNet-depth-k for 32x32 CIFAR images (Zagoruyko & Komodakis 2016)."""

    def __init__(self, *, depth: int = 16, k: int = 4, dropout: float = 0.3, classes: int = 10) -> None:
        super().__init__()
        n = (depth - 4) // 6
        widths = (16, 16 * k, 32 * k, 64 * k)
        layers: list[nn.Module] = [nn.Conv2d(3, 16, 3, padding=1, bias=False)]
        cin = 16
        for stage in range(3):
            for i in range(n):
                layers.append(WideBlock(cin, widths[stage + 1], 2 if stage and i == 0 else 1, dropout))
                cin = widths[stage + 1]
        layers += [nn.BatchNorm2d(cin), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class UNet(nn.Module):
    """A U-Net (Ronneberger et al. 2015) with batchnorm, max-pool down and transposed-conv up, per-pixel classes."""

    def __init__(self, *, base: int = 16, depth: int = 4, classes: int = 2) -> None:
        super().__init__()

        def double(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                                 nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                                 nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

        widths = [base * 2**i for i in range(depth + 1)]
        self.down = nn.ModuleList([double(3, widths[0])] + [double(widths[i], widths[i + 1]) for i in range(depth)])
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList([nn.ConvTranspose2d(widths[i + 1], widths[i], 2, 2) for i in reversed(range(depth))])
        self.merge = nn.ModuleList([double(2 * widths[i], widths[i]) for i in reversed(range(depth))])
        self.head = nn.Conv2d(widths[0], classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else self.pool(x))
            skips.append(x)
        skips.pop()
        for up, merge in zip(self.up, self.merge, strict=True):
            x = merge(torch.cat([skips.pop(), up(x)], 1))
        return self.head(x)
