"""Mobile image classifiers written as layer lists: MobileNetV2 and EfficientNet-B0, torchvision's layouts.

Both are stacks of inverted residual blocks (Sandler et al. 2018): a 1x1 expansion, a depthwise k x k
convolution (`groups` = its channels), a 1x1 projection without activation, and a residual add where the
block keeps its shape. EfficientNet-B0 (Tan & Le 2019) adds squeeze-and-excitation to each block (a global
pool, two 1x1 convolutions written as dense layers on the pooled vector, a sigmoid gate multiplied into the
block's tensor) and SiLU for ReLU6. torchvision's stochastic depth on EfficientNet's residual branches is left
out: it multiplies a branch by one value a sample and keeps only that value, so memory does not change.

Checked in tests/test_presets_mobile.py against the ONNX exports of the same networks that the measurement
harness ran (validation/measure/nets_vision.py, tests/fixtures/onnx/*-64.train.onnx).
"""

from __future__ import annotations

from typing import Any

Layer = dict[str, object]

# (expansion, output channels, blocks, first stride, kernel): Sandler et al. 2018 Table 2, torchvision's
# mobilenetv2.py inverted_residual_setting (kernel 3 throughout).
MOBILENET_V2 = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 32, 3, 2, 3), (6, 64, 4, 2, 3), (6, 96, 3, 1, 3),
                (6, 160, 3, 2, 3), (6, 320, 1, 1, 3))
# Tan & Le 2019 Table 1 (EfficientNet-B0), torchvision's efficientnet.py _efficientnet_conf("efficientnet_b0").
EFFICIENTNET_B0 = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3), (6, 112, 3, 1, 5),
                   (6, 192, 4, 2, 5), (6, 320, 1, 1, 3))
STEM, HEAD = 32, 1280  # both networks' stem and last 1x1 convolution widths
SE_SQUEEZE = 4  # torchvision's MBConv: squeeze channels = the block's input channels // 4


def conv_bn(layers: list[Layer], name: str, out: int, kernel: int, *, stride: int = 1, groups: int = 1,
             act: str | None, inputs: str | None = None) -> str:
    """Append a bias-free convolution, its batchnorm and (unless None) its activation; return the last name."""
    conv: Layer = {"type": "conv2d", "name": f"{name}.conv", "out_channels": out, "kernel": kernel,
                   "stride": stride, "padding": kernel // 2, "groups": groups, "bias": False}
    if inputs is not None:
        conv["inputs"] = [inputs]
    layers += [conv, {"type": "batchnorm", "name": f"{name}.bn"}]
    if act is None:
        return f"{name}.bn"
    layers.append({"type": act, "name": f"{name}.act"})
    return f"{name}.act"


def _squeeze_excite(layers: list[Layer], name: str, tensor: str, channels: int, squeezed: int) -> str:
    """Append EfficientNet's squeeze-and-excitation on `tensor`; return the gated tensor's name."""
    layers += [
        {"type": "global_avg_pool", "name": f"{name}.pool"},
        {"type": "dense", "name": f"{name}.fc1", "out_features": squeezed},
        {"type": "silu", "name": f"{name}.act"},
        {"type": "dense", "name": f"{name}.fc2", "out_features": channels},
        {"type": "sigmoid", "name": f"{name}.gate"},
        {"type": "multiply", "name": name, "inputs": [tensor, f"{name}.gate"]},
    ]
    return name


def _inverted_residuals(settings: tuple[tuple[int, int, int, int, int], ...], *, act: str, excite: bool,
                        classes: int) -> list[Layer]:
    """Return a stem, the inverted residual blocks of `settings`, the 1x1 head and the classifier."""
    layers: list[Layer] = []
    previous, channels, index = conv_bn(layers, "stem", STEM, 3, stride=2, act=act), STEM, 0
    for expansion, out, blocks, first_stride, kernel in settings:
        for i in range(blocks):
            stride, hidden, name = first_stride if i == 0 else 1, channels * expansion, f"block{index}"
            source: str | None = previous
            if expansion != 1:
                conv_bn(layers, f"{name}.expand", hidden, 1, act=act, inputs=previous)
                source = None
            tensor = conv_bn(layers, f"{name}.dw", hidden, kernel, stride=stride, groups=hidden, act=act,
                              inputs=source)
            if excite:
                _squeeze_excite(layers, f"{name}.se", tensor, hidden, max(1, channels // SE_SQUEEZE))
            branch = conv_bn(layers, f"{name}.project", out, 1, act=None)
            if stride == 1 and channels == out:
                layers.append({"type": "add", "name": f"{name}.add", "inputs": [branch, previous]})
                branch = f"{name}.add"
            previous, channels, index = branch, out, index + 1
    conv_bn(layers, "head", HEAD, 1, act=act)
    return [
        *layers,
        {"type": "global_avg_pool", "name": "pool"},
        {"type": "dropout", "name": "dropout", "p": 0.2},
        {"type": "dense", "name": "classifier", "out_features": classes},
    ]


def mobilenet_v2_layers(*, classes: int = 1000) -> list[Layer]:
    """Return MobileNetV2 (width 1.0) as torchvision builds it: ReLU6, no squeeze-and-excitation."""
    return _inverted_residuals(MOBILENET_V2, act="relu6", excite=False, classes=classes)


def efficientnet_b0_layers(*, classes: int = 1000) -> list[Layer]:
    """Return EfficientNet-B0 as torchvision builds it (SiLU, squeeze-and-excitation), stochastic depth aside."""
    return _inverted_residuals(EFFICIENTNET_B0, act="silu", excite=True, classes=classes)


def mobile_presets(preset: type, published: type, torchvision: str) -> list[Any]:
    """Return the mobile presets as registry.Preset values (the registry passes its classes: no import cycle)."""
    return [
        preset(
            "mobilenet-v2",
            "MobileNetV2 (Sandler et al. 2018), torchvision layout (width 1.0, ReLU6), 224x224",
            mobilenet_v2_layers,
            published(3_504_872, 300_000_000, torchvision.format("MobileNet_V2_Weights")),
            input_shape=(3, 224, 224),
            aliases=("mobilenetv2", "mobilenet_v2", "mobilenet", "mobilenet-v2-1.0"),
            # pytorch/vision references/classification/README.md: mobilenet_v2 --epochs 300 (8 GPUs x batch 32)
            recipe_epochs=(300, "imagenet", "torchvision's mobilenet_v2 recipe: --epochs 300"),
        ),
        preset(
            "efficientnet-b0",
            "EfficientNet-B0 (Tan & Le 2019), torchvision layout (SiLU, squeeze-and-excitation), 224x224",
            efficientnet_b0_layers,
            published(5_288_548, 390_000_000, torchvision.format("EfficientNet_B0_Weights")),
            input_shape=(3, 224, 224),
            aliases=("efficientnetb0", "efficientnet_b0", "efficientnet", "effnet-b0", "effnet"),
        ),
    ]
