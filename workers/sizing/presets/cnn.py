"""Image-classification presets written as layer lists: ResNet-18 to -152, VGG-16, AlexNet.

The layouts follow torchvision, the code most people train today: its ResNet bottleneck puts the
downsampling stride on the 3x3 convolution ("ResNet v1.5"), which costs about 7 % more
multiply-adds than He et al. 2016's original (stride on the first 1x1). `resnet_layers(...,
stride_on_1x1=True)` builds the original layout, which is what Table 1 of the paper counts.
"""

from __future__ import annotations

Layer = dict[str, object]

RESNET_BLOCKS: dict[int, tuple[str, tuple[int, ...]]] = {  # He et al. 2016, Table 1
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
}


def _conv_bn(name: str, out: int, kernel: int, stride: int = 1, *, relu: bool = True) -> list[Layer]:
    """Return a bias-free convolution with its batchnorm (and ReLU), as every ResNet layer is built."""
    layers: list[Layer] = [
        {
            "type": "conv2d",
            "name": f"{name}.conv",
            "out_channels": out,
            "kernel": kernel,
            "stride": stride,
            "padding": kernel // 2,
            "bias": False,
        },
        {"type": "batchnorm", "name": f"{name}.bn"},
    ]
    if relu:
        layers.append({"type": "relu", "name": f"{name}.relu"})
    return layers


def resnet_layers(depth: int, *, classes: int = 1000, stride_on_1x1: bool = False,
                  cifar_stem: bool = False) -> list[Layer]:
    """Return a ResNet of the given depth for 224x224 inputs (torchvision layout unless stride_on_1x1).

    `cifar_stem`: the layout CIFAR recipes train on 32x32 images (kuangliu/pytorch-cifar models/resnet.py): a 3x3
    stride-1 stem convolution and no max-pool, so the stages run at 32, 16, 8 and 4 pixels, not 8 down to 1.
    """
    block, counts = RESNET_BLOCKS[depth]
    expansion = 4 if block == "bottleneck" else 1
    layers: list[Layer] = [*_conv_bn("stem", 64, 3, 1)] if cifar_stem else [
        *_conv_bn("stem", 64, 7, 2),
        {"type": "maxpool2d", "name": "stem.pool", "kernel": 3, "stride": 2, "padding": 1},
    ]
    previous, channels = str(layers[-1]["name"]), 64
    for stage, (count, width) in enumerate(zip(counts, (64, 128, 256, 512), strict=True), start=1):
        for index in range(count):
            stride = 2 if stage > 1 and index == 0 else 1
            name, out = f"layer{stage}.{index}", width * expansion
            if block == "basic":
                main = [
                    *_conv_bn(f"{name}.a", width, 3, stride),
                    *_conv_bn(f"{name}.b", width, 3, relu=False),
                ]
            else:
                first, middle = (stride, 1) if stride_on_1x1 else (1, stride)
                main = [
                    *_conv_bn(f"{name}.a", width, 1, first),
                    *_conv_bn(f"{name}.b", width, 3, middle),
                    *_conv_bn(f"{name}.c", out, 1, relu=False),
                ]
            layers += main
            branch = str(main[-1]["name"])
            shortcut = previous
            if stride != 1 or channels != out:  # projection shortcut (option B of the paper)
                layers += [
                    {
                        "type": "conv2d",
                        "name": f"{name}.down",
                        "inputs": [previous],
                        "out_channels": out,
                        "kernel": 1,
                        "stride": stride,
                        "bias": False,
                    },
                    {"type": "batchnorm", "name": f"{name}.down.bn"},
                ]
                shortcut = f"{name}.down.bn"
            layers += [
                {"type": "add", "name": f"{name}.add", "inputs": [branch, shortcut]},
                {"type": "relu", "name": name},
            ]
            previous, channels = name, out
    layers += [
        {"type": "global_avg_pool", "name": "avgpool"},
        {"type": "dense", "name": "fc", "out_features": classes},
    ]
    return layers


def vgg16_layers(*, classes: int = 1000) -> list[Layer]:
    """Return VGG-16 (configuration D of Simonyan & Zisserman 2015) as torchvision builds it."""
    config = (64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0)  # 0: max-pool
    layers: list[Layer] = []
    conv = pool = 0
    for width in config:
        if width:
            conv += 1
            layers += [
                {"type": "conv2d", "name": f"conv{conv}", "out_channels": width, "kernel": 3, "padding": 1},
                {"type": "relu", "name": f"relu{conv}"},
            ]
        else:
            pool += 1
            layers.append({"type": "maxpool2d", "name": f"pool{pool}", "kernel": 2})
    return layers + _classifier(4096, classes, pool_size=7)


def alexnet_layers(*, classes: int = 1000) -> list[Layer]:
    """Return AlexNet as torchvision builds it (Krizhevsky 2014's one-GPU variant: 64-192-384-256-256)."""
    layers: list[Layer] = []
    specs = (
        (64, 11, 4, 2, True),
        (192, 5, 1, 2, True),
        (384, 3, 1, 1, False),
        (256, 3, 1, 1, False),
        (256, 3, 1, 1, True),
    )
    for i, (width, kernel, stride, padding, pooled) in enumerate(specs, start=1):
        layers += [
            {
                "type": "conv2d",
                "name": f"conv{i}",
                "out_channels": width,
                "kernel": kernel,
                "stride": stride,
                "padding": padding,
            },
            {"type": "relu", "name": f"relu{i}"},
        ]
        if pooled:
            layers.append({"type": "maxpool2d", "name": f"pool{i}", "kernel": 3, "stride": 2})
    return layers + _classifier(4096, classes, pool_size=6, dropout_first=True)


def _classifier(width: int, classes: int, *, pool_size: int, dropout_first: bool = False) -> list[Layer]:
    """Return torchvision's VGG / AlexNet head: adaptive pool, flatten, two wide dense layers, output."""
    layers: list[Layer] = [
        {"type": "adaptive_avg_pool2d", "name": "avgpool", "output_size": pool_size},
        {"type": "flatten", "name": "flatten"},
    ]
    for i in (1, 2):
        block: list[Layer] = [
            {"type": "dense", "name": f"fc{i}", "out_features": width},
            {"type": "relu", "name": f"fc{i}.relu"},
        ]
        drop: Layer = {"type": "dropout", "name": f"fc{i}.drop", "p": 0.5}
        layers += [drop, *block] if dropout_first else [*block, drop]
    return [*layers, {"type": "dense", "name": "fc3", "out_features": classes}]
