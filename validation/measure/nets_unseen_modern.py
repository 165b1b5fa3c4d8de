"""More networks the sizing core was not built on (issue 11's "unseen" records), in plain PyTorch.

MobileNetV3-small (hardswish, squeeze-excite with hardsigmoid), a ConvNeXt (depthwise 7x7,
LayerNorm over channels through permutes, GELU, layer scale), a ViT laid out as torchvision's
(`nn.MultiheadAttention`, which trains through `scaled_dot_product_attention`) and a convolutional
autoencoder (strided convolutions down; a transposed convolution and a nearest upsample up).
Written here from the papers; the layouts follow torchvision where it has the network.
"""

from __future__ import annotations

import torch
from torch import nn

from validation.measure.common import Dropout
from validation.measure.nets_unseen import conv_norm_act


def make_divisible(value: float, divisor: int = 8) -> int:
    """Round a width to a multiple of 8, never more than 10% below it (the MobileNet rounding)."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class SqueezeExcitation(nn.Module):
    """Squeeze-excite: global mean, 1x1 down with ReLU, 1x1 up with hardsigmoid, scale the input."""

    def __init__(self, channels: int, squeezed: int) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(channels, squeezed, 1), nn.Conv2d(squeezed, channels, 1)
        self.relu, self.gate = nn.ReLU(), nn.Hardsigmoid()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.relu(self.fc1(s))))


class MobileV3Block(nn.Module):
    """MobileNetV3's block: 1x1 expand, k x k depthwise, squeeze-excite, 1x1 project, a shortcut at stride 1."""

    def __init__(self, cin: int, k: int, mid: int, cout: int, se: bool, act: type[nn.Module], stride: int) -> None:
        super().__init__()
        layers: list[nn.Module] = [conv_norm_act(cin, mid, 1, act=act)] if mid != cin else []
        layers.append(conv_norm_act(mid, mid, k, stride, groups=mid, act=act))
        if se:
            layers.append(SqueezeExcitation(mid, make_divisible(mid // 4)))
        layers.append(conv_norm_act(mid, cout, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.shortcut = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.shortcut else y


RE, HS = nn.ReLU, nn.Hardswish
# (in, kernel, expanded, out, squeeze-excite, activation, stride): Howard et al. 2019, table 2
MOBILENET_V3_SMALL = (
    (16, 3, 16, 16, True, RE, 2), (16, 3, 72, 24, False, RE, 2), (24, 3, 88, 24, False, RE, 1),
    (24, 5, 96, 40, True, HS, 2), (40, 5, 240, 40, True, HS, 1), (40, 5, 240, 40, True, HS, 1),
    (40, 5, 120, 48, True, HS, 1), (48, 5, 144, 48, True, HS, 1), (48, 5, 288, 96, True, HS, 2),
    (96, 5, 576, 96, True, HS, 1), (96, 5, 576, 96, True, HS, 1),
)


class MobileNetV3Small(nn.Module):
    """MobileNetV3-small (width 1.0): stem, eleven blocks, a 1x1 to 576, a 1024-wide hardswish head."""

    def __init__(self, classes: int = 1000) -> None:
        super().__init__()
        blocks = [MobileV3Block(*row) for row in MOBILENET_V3_SMALL]
        self.features = nn.Sequential(conv_norm_act(3, 16, 3, 2, act=HS), *blocks, conv_norm_act(96, 576, 1, act=HS))
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(inplace=True), Dropout(0.2),
                                        nn.Linear(1024, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor: permute to NHWC, normalise, permute back."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    """ConvNeXt's block (Liu et al. 2022): depthwise 7x7, channels-last LayerNorm, 4x MLP with GELU, layer scale."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1, self.act, self.fc2 = nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        y = self.gamma * self.fc2(self.act(self.fc1(y)))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    """A ConvNeXt at half the tiny widths (48-384) and depths 2-2-4-2: patchify stem, LayerNorm2d downsampling."""

    def __init__(self, classes: int = 1000, dims: tuple[int, ...] = (48, 96, 192, 384),
                 depths: tuple[int, ...] = (2, 2, 4, 2)) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(3, dims[0], 4, 4), LayerNorm2d(dims[0], eps=1e-6)]
        for i, (dim, depth) in enumerate(zip(dims, depths, strict=True)):
            if i:
                layers += [LayerNorm2d(dims[i - 1], eps=1e-6), nn.Conv2d(dims[i - 1], dim, 2, 2)]
            layers += [ConvNeXtBlock(dim) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm, self.head = LayerNorm2d(dims[-1], eps=1e-6), nn.Linear(dims[-1], classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(nn.functional.adaptive_avg_pool2d(self.features(x), 1))
        return self.head(torch.flatten(x, 1))


class EncoderBlock(nn.Module):
    """torchvision's ViT encoder block: pre-norm nn.MultiheadAttention and a GELU MLP, dropout 0."""

    def __init__(self, hidden: int, heads: int, mlp: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden, eps=1e-6)
        self.attention = nn.MultiheadAttention(hidden, heads, dropout=0.0, batch_first=True)
        self.ln_2 = nn.LayerNorm(hidden, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(hidden, mlp), nn.GELU(), nn.Linear(mlp, hidden))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.ln_1(x)
        x = x + self.attention(y, y, y, need_weights=False)[0]
        return x + self.mlp(self.ln_2(x))


class VisionTransformer(nn.Module):
    """A ViT in torchvision's layout (class token, learned positions): patch 8, hidden 192, 6 layers, 3 heads."""

    def __init__(self, *, image: int = 64, patch: int = 8, hidden: int = 192, layers: int = 6, heads: int = 3,
                 classes: int = 1000) -> None:
        super().__init__()
        self.conv_proj = nn.Conv2d(3, hidden, patch, patch)
        self.class_token = nn.Parameter(torch.zeros(1, 1, hidden))
        self.pos_embedding = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, hidden) * 0.02)
        self.layers = nn.Sequential(*(EncoderBlock(hidden, heads, 4 * hidden) for _ in range(layers)))
        self.ln, self.head = nn.LayerNorm(hidden, eps=1e-6), nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv_proj(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        return self.head(self.ln(self.layers(x))[:, 0])


class ConvAutoencoder(nn.Module):
    """A convolutional autoencoder on 1x64x64 images: three stride-2 convolutions down, a transposed
    convolution and two nearest-upsample convolutions up, sigmoid output (trained with MSE)."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 32, 3, 2, 1), nn.ReLU(inplace=True), nn.Conv2d(32, 64, 3, 2, 1), nn.ReLU(inplace=True),
            nn.Conv2d(64, 128, 3, 2, 1), nn.ReLU(inplace=True))
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.ReLU(inplace=True),
            nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(64, 32, 3, 1, 1), nn.ReLU(inplace=True),
            nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(32, 1, 3, 1, 1), nn.Sigmoid())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decoder(self.encoder(x))
