"""YOLOv8, YOLO11 and YOLOv5 object detectors (n, s, m, l, x) written as layer lists: Ultralytics' yaml layouts.

The network (ultralytics/cfg/models/v8/yolov8.yaml, read in a public copy 2026-12-07): a CSP backbone of
strided 3x3 convolutions and C2f blocks, SPPF, a PAN neck (nearest upsampling and concatenation, then strided
convolutions back down) and the decoupled Detect head on strides 8, 16 and 32. Every `Conv` is a bias-free
convolution, batchnorm and SiLU. A scale multiplies the yaml's channels by its width (capped at its
max_channels, rounded up to a multiple of 8) and its repeats by its depth (rounded, at least 1).

- C2f(c2, n, shortcut): a 1x1 Conv to 2c (c = c2 / 2) split into two halves (views), n Bottlenecks (two 3x3
  Convs, a residual add in the backbone) each on the last piece, all 2 + n pieces concatenated and a 1x1 Conv
  to c2 (ultralytics/nn/modules/block.py C2f, Bottleneck).
- SPPF: a 1x1 Conv to half the channels, three 5x5 stride-1 max-pools in a row, the four concatenated and a
  1x1 Conv.
- Detect: per level a box branch (two 3x3 Convs of max(16, c/4, 64) channels and a 1x1 convolution to 4 x 16
  distribution bins) and a class branch (two 3x3 Convs of max(c, min(classes, 100)) and a 1x1 convolution to the
  classes) (head.py Detect). In training it returns the three levels; the loss concatenates them to
  [64 + classes, anchors] (8,400 anchors at 640 px). The step's loss is written as `mse` on that tensor: it keeps
  the predictions and a target-sized tensor, as BCE on the class scores does; the box terms (CIoU, DFL) read only
  the anchors a target is assigned to. The DFL's fixed 16-weight convolution (frozen; not in the training loss)
  is left out: 16 of 3,157,200 parameters.

YOLOv5 (v6.0 and later: ultralytics/yolov5 models/yolov5*.yaml and models/common.py, read in public copies
2026-12-07) differs in its stem (one 6x6 stride-2 Conv, padding 2), C3 blocks for C2f (two 1x1 Convs to c2 / 2,
n Bottlenecks of a 1x1 and a 3x3 Conv on the first, the two concatenated and a 1x1 Conv), 1x1 Convs before each
upsampling, no channel cap, and a coupled head: one 1x1 convolution a level to 3 anchors x (classes + 5).

YOLO11 (ultralytics/cfg/models/11/yolo11.yaml, nn/modules/block.py and head.py, public copies read 2026-12-07):
C3k2 blocks (C2f with half-width Bottlenecks, or C3k's in the m, l and x scales), C2PSA after SPPF (position-sensitive
attention over the stride-32 map: 1x1 Conv projections around a bare softmax core, a depthwise 3x3 on the values) and
a class branch of depthwise 3x3 and 1x1 Convs. Published figures: the yamls' summary lines (parameters, GFLOPs at 640
px before Conv and batchnorm are fused; Ultralytics counts 2 FLOPs a multiply-add).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from workers.sizing.presets.mobile import conv_bn

Layer = dict[str, object]

YAML = "ultralytics/ultralytics ultralytics/cfg/models/v8/yolov8.yaml (read in a public copy 2026-12-07)"
# scale: depth, width, max_channels, the yaml's summary (parameters, GFLOPs at 640)
SCALES: dict[str, tuple[float, float, int, int, float]] = {
    "n": (0.33, 0.25, 1024, 3_157_200, 8.9),
    "s": (0.33, 0.50, 1024, 11_166_560, 28.8),
    "m": (0.67, 0.75, 768, 25_902_640, 79.3),
    "l": (1.00, 1.00, 512, 43_691_520, 165.7),
    "x": (1.00, 1.25, 512, 68_229_648, 258.5),
}
COCO_CLASSES = 80
REG_MAX = 16  # distribution bins a box side (Detect.reg_max)
IMAGE = 640  # ultralytics/cfg/default.yaml imgsz
V5_README = ("ultralytics/yolov5 README.md, Pretrained Checkpoints table: FLOPs @640 (B){} (read in public copies "
             "2026-12-07)")
V5_LOG = "; parameters from the 'YOLOv5{} summary: ... parameters' line train.py prints (public training logs)"
V5_TABLE = "; params (M) from the same table, rounded to 0.1M"
# scale: depth, width, parameters, GFLOPs at 640 (the README's, to 0.1B), where the parameters were read
V5_SCALES: dict[str, tuple[float, float, int, float, str]] = {
    "n": (0.33, 0.25, 1_872_157, 4.5, V5_LOG.format("n")),
    "s": (0.33, 0.50, 7_235_389, 16.5, V5_LOG.format("s")),
    "m": (0.67, 0.75, 21_200_000, 49.0, V5_TABLE),
    "l": (1.00, 1.00, 46_563_709, 109.1, V5_LOG.format("l")),
    "x": (1.33, 1.25, 86_700_000, 205.7, V5_TABLE),
}
V5_ANCHORS = 3  # anchors a level (the yaml's anchors: three pairs per stride)
V11_YAML = "ultralytics/ultralytics ultralytics/cfg/models/11/yolo11.yaml (read in a public copy 2026-12-07)"
# scale: depth, width, max_channels, the yaml's summary (parameters, GFLOPs at 640)
V11_SCALES: dict[str, tuple[float, float, int, int, float]] = {
    "n": (0.50, 0.25, 1024, 2_624_080, 6.6),
    "s": (0.50, 0.50, 1024, 9_458_752, 21.7),
    "m": (0.50, 1.00, 512, 20_114_688, 68.5),
    "l": (1.00, 1.00, 512, 25_372_160, 87.6),
    "x": (1.00, 1.50, 512, 56_966_176, 196.0),
}
# Ultralytics' epochs on any data set when none are said: YOLOv8's default.yaml epochs: 100, YOLOv5's train.py
# --epochs default=100 (v6.1 and later; public copies read 2026-12-07). COCO from scratch takes each recipe's own.
ULTRALYTICS_EPOCHS = 100
# ultralytics/cfg/default.yaml (read in public copies 2026-12-07): batch 16, epochs 100, amp True; the COCO
# weights were trained 500 epochs (the model's docs), which a user naming no epochs is not assumed to repeat.
RECIPE_BATCH = (16, "Ultralytics' default.yaml: batch=16")
RECIPE_EPOCHS = (100, "coco", "Ultralytics' default.yaml: epochs=100")
# ultralytics/yolov5 train.py --batch-size default 16; the README's COCO commands train 300 epochs
V5_RECIPE_BATCH = (16, "YOLOv5's train.py: --batch-size 16")
V5_RECIPE_EPOCHS = (300, "coco", "YOLOv5's README: its COCO commands train 300 epochs")
# the preset names Ultralytics' trainers and loader go with
YOLO_NAMES = frozenset({*(f"yolov8{scale}" for scale in SCALES), *(f"yolov5{scale}" for scale in V5_SCALES),
                        *(f"yolo11{scale}" for scale in "nsmlx")})


def _channels(channels: int, width: float, most: int) -> int:
    """Scale a yaml channel count as parse_model does: min(c, max_channels) x width, up to a multiple of 8."""
    return math.ceil(min(channels, most) * width / 8) * 8


def _repeats(n: int, depth: float) -> int:
    return max(round(n * depth), 1) if n > 1 else n


def _bottleneck(layers: list[Layer], name: str, source: str, out: int, hidden: int, *, first_kernel: int = 3,
                shortcut: bool = True) -> str:
    """Append a Bottleneck (a `first_kernel` Conv to `hidden`, a 3x3 Conv to `out`, with `shortcut` the residual
    add); return its output's name."""
    conv_bn(layers, f"{name}.cv1", hidden, first_kernel, act="silu", inputs=source)
    branch = conv_bn(layers, f"{name}.cv2", out, 3, act="silu")
    if not shortcut:
        return branch
    layers.append({"type": "add", "name": name, "inputs": [branch, source]})
    return name


def _bottlenecks(layers: list[Layer], name: str, source: str, hidden: int, n: int, *, first_kernel: int,
                 shortcut: bool) -> list[str]:
    """Append n Bottlenecks in a row on `source` (a `first_kernel` Conv then a 3x3 one, a residual add with
    `shortcut`: C2f's take 3x3 first, C3's 1x1); return each one's output name."""
    outputs, previous = [], source
    for i in range(n):
        previous = _bottleneck(layers, f"{name}.m{i}", previous, hidden, hidden, first_kernel=first_kernel,
                               shortcut=shortcut)
        outputs.append(previous)
    return outputs


def _c2f(layers: list[Layer], name: str, source: str, out: int, n: int, *, shortcut: bool) -> str:
    """Append a C2f block reading `source`; return its output's name."""
    hidden = out // 2
    split = conv_bn(layers, f"{name}.cv1", 2 * hidden, 1, act="silu", inputs=source)
    pieces = [f"{name}.y0", f"{name}.y1"]
    layers += [{"type": "chunk", "name": piece, "chunks": 2, "index": i, "inputs": [split]}
               for i, piece in enumerate(pieces)]
    pieces += _bottlenecks(layers, name, pieces[-1], hidden, n, first_kernel=3, shortcut=shortcut)
    layers.append({"type": "concat", "name": f"{name}.cat", "inputs": pieces})
    return conv_bn(layers, f"{name}.cv2", out, 1, act="silu")


def _sppf(layers: list[Layer], name: str, source: str, channels: int) -> str:
    """Append SPPF (kernel 5) reading `source` of `channels`; return its output's name."""
    first = conv_bn(layers, f"{name}.cv1", channels // 2, 1, act="silu", inputs=source)
    pieces = [first]
    for i in range(3):
        layers.append({"type": "maxpool2d", "name": f"{name}.m{i}", "kernel": 5, "stride": 1, "padding": 2})
        pieces.append(f"{name}.m{i}")
    layers.append({"type": "concat", "name": f"{name}.cat", "inputs": pieces})
    return conv_bn(layers, f"{name}.cv2", channels, 1, act="silu")


def _detect(layers: list[Layer], levels: list[tuple[str, int]], classes: int, *, depthwise: bool = False) -> None:
    """Append the Detect head on `levels` (name, channels) and the loss's [64 + classes, anchors] tensor; YOLO11's
    (`depthwise`, head.py's legacy=False) class branch is a depthwise 3x3 and a 1x1 Conv, twice."""
    box = max(16, levels[0][1] // 4, REG_MAX * 4)
    cls = max(levels[0][1], min(classes, 100))
    flat = []
    for i, (source, channels) in enumerate(levels):
        ends = []
        for branch, width, out in (("box", box, 4 * REG_MAX), ("cls", cls, classes)):
            name = f"detect.{branch}{i}"
            if depthwise and branch == "cls":
                conv_bn(layers, f"{name}.0.dw", channels, 3, groups=channels, act="silu", inputs=source)
                conv_bn(layers, f"{name}.0.pw", width, 1, act="silu")
                conv_bn(layers, f"{name}.1.dw", width, 3, groups=width, act="silu")
                conv_bn(layers, f"{name}.1.pw", width, 1, act="silu")
            else:
                conv_bn(layers, f"{name}.0", width, 3, act="silu", inputs=source)
                conv_bn(layers, f"{name}.1", width, 3, act="silu")
            layers.append({"type": "conv2d", "name": f"{name}.2", "out_channels": out, "kernel": 1})
            ends.append(f"{name}.2")
        layers += [{"type": "concat", "name": f"detect.out{i}", "inputs": ends},
                   {"type": "reshape", "name": f"detect.flat{i}", "shape": [4 * REG_MAX + classes, -1]}]
        flat.append(f"detect.flat{i}")
    layers.append({"type": "concat", "name": "detect.predictions", "axis": 1, "inputs": flat})


def _backbone(layers: list[Layer], block: Callable[..., str], ch: Callable[[int], int], depth: float, *,
              middle: int) -> tuple[str, str, str]:
    """Append the CSP backbone after the stem (layers b1 to b9, `block` C2f or C3, `middle` the stride-16 stage's
    repeats); return the stride-8, stride-16 and SPPF outputs' names."""
    x = conv_bn(layers, "b1", ch(128), 3, stride=2, act="silu")
    x = block(layers, "b2", x, ch(128), _repeats(3, depth), shortcut=True)
    x = conv_bn(layers, "b3", ch(256), 3, stride=2, act="silu", inputs=x)
    p3 = block(layers, "b4", x, ch(256), _repeats(6, depth), shortcut=True)
    x = conv_bn(layers, "b5", ch(512), 3, stride=2, act="silu", inputs=p3)
    p4 = block(layers, "b6", x, ch(512), _repeats(middle, depth), shortcut=True)
    x = conv_bn(layers, "b7", ch(1024), 3, stride=2, act="silu", inputs=p4)
    x = block(layers, "b8", x, ch(1024), _repeats(3, depth), shortcut=True)
    return p3, p4, _sppf(layers, "b9", x, ch(1024))


def _neck(layers: list[Layer], block: Callable[..., str], ch: Callable[[int], int], depth: float,
          levels: tuple[str, str, str], *, lateral: bool) -> tuple[str, str, str]:
    """Append the PAN neck on the backbone's stride-8, stride-16 and SPPF outputs: up by nearest upsampling and
    concatenation, back down by strided 3x3 Convs; YOLOv5's (`lateral`) puts a 1x1 Conv before each upsampling, whose
    output the way down joins. Return the stride-8, 16 and 32 outputs' names."""
    p3, p4, p5 = levels
    n = _repeats(3, depth)
    top = conv_bn(layers, "neck.lateral5", ch(512), 1, act="silu", inputs=p5) if lateral else p5
    layers += [{"type": "upsample", "name": "neck.up4", "scale": 2, "inputs": [top]},
               {"type": "concat", "name": "neck.cat4", "inputs": ["neck.up4", p4]}]
    x = block(layers, "neck.td4", "neck.cat4", ch(512), n, shortcut=False)
    mid = conv_bn(layers, "neck.lateral4", ch(256), 1, act="silu", inputs=x) if lateral else x
    layers += [{"type": "upsample", "name": "neck.up3", "scale": 2, "inputs": [mid]},
               {"type": "concat", "name": "neck.cat3", "inputs": ["neck.up3", p3]}]
    small = block(layers, "neck.out3", "neck.cat3", ch(256), n, shortcut=False)
    down = conv_bn(layers, "neck.down3", ch(256), 3, stride=2, act="silu", inputs=small)
    layers.append({"type": "concat", "name": "neck.bu4", "inputs": [down, mid]})
    medium = block(layers, "neck.out4", "neck.bu4", ch(512), n, shortcut=False)
    down = conv_bn(layers, "neck.down4", ch(512), 3, stride=2, act="silu", inputs=medium)
    layers.append({"type": "concat", "name": "neck.bu5", "inputs": [down, top]})
    return small, medium, block(layers, "neck.out5", "neck.bu5", ch(1024), n, shortcut=False)


def yolov8_layers(scale: str, *, classes: int = COCO_CLASSES) -> list[Layer]:
    """Return YOLOv8 at `scale` (n, s, m, l, x) with `classes` classes, as Ultralytics builds it for training."""
    depth, width, most, _, _ = SCALES[scale]

    def ch(c: int) -> int:
        return _channels(c, width, most)

    layers: list[Layer] = []
    conv_bn(layers, "b0", ch(64), 3, stride=2, act="silu")
    p3, p4, p5 = _backbone(layers, _c2f, ch, depth, middle=6)
    small, medium, large = _neck(layers, _c2f, ch, depth, (p3, p4, p5), lateral=False)
    _detect(layers, [(small, ch(256)), (medium, ch(512)), (large, ch(1024))], classes)
    return layers


def _c3(layers: list[Layer], name: str, source: str, out: int, n: int, *, shortcut: bool) -> str:
    """Append YOLOv5's C3 block reading `source`; return its output's name."""
    hidden = out // 2
    first = conv_bn(layers, f"{name}.cv1", hidden, 1, act="silu", inputs=source)
    previous = _bottlenecks(layers, name, first, hidden, n, first_kernel=1, shortcut=shortcut)[-1]
    other = conv_bn(layers, f"{name}.cv2", hidden, 1, act="silu", inputs=source)
    layers.append({"type": "concat", "name": f"{name}.cat", "inputs": [previous, other]})
    return conv_bn(layers, f"{name}.cv3", out, 1, act="silu")


def yolov5_layers(scale: str, *, classes: int = COCO_CLASSES) -> list[Layer]:
    """Return YOLOv5 (v6.0 and later) at `scale` with `classes` classes, as its train.py builds it."""
    depth, width, _, _, _ = V5_SCALES[scale]

    def ch(c: int) -> int:
        return math.ceil(c * width / 8) * 8

    layers: list[Layer] = [{"type": "conv2d", "name": "b0.conv", "out_channels": ch(64), "kernel": 6, "stride": 2,
                            "padding": 2, "bias": False}, {"type": "batchnorm", "name": "b0.bn"},
                           {"type": "silu", "name": "b0.act"}]
    p3, p4, p5 = _backbone(layers, _c3, ch, depth, middle=9)
    small, medium, large = _neck(layers, _c3, ch, depth, (p3, p4, p5), lateral=True)
    out = V5_ANCHORS * (classes + 5)
    for i, level in enumerate((small, medium, large)):
        layers += [{"type": "conv2d", "name": f"detect.m{i}", "out_channels": out, "kernel": 1, "inputs": [level]},
                   {"type": "reshape", "name": f"detect.flat{i}", "shape": [out, -1]}]
    layers.append({"type": "concat", "name": "detect.predictions", "axis": 1,
                   "inputs": [f"detect.flat{i}" for i in range(3)]})
    return layers


def _c3k2(layers: list[Layer], name: str, source: str, out: int, n: int, *, c3k: bool, e: float = 0.5) -> str:
    """Append YOLO11's C3k2 reading `source`: C2f's split and concatenation of 2 + n pieces, each inner block a
    Bottleneck of half width (e=0.5) or, with `c3k`, a C3k (a C3 of two full-width 3x3 Bottlenecks); residual adds."""
    c = int(out * e)
    split = conv_bn(layers, f"{name}.cv1", 2 * c, 1, act="silu", inputs=source)
    pieces = [f"{name}.y0", f"{name}.y1"]
    layers += [{"type": "chunk", "name": piece, "chunks": 2, "index": i, "inputs": [split]}
               for i, piece in enumerate(pieces)]
    for i in range(n):
        block, previous = f"{name}.m{i}", pieces[-1]
        if c3k:
            half = c // 2
            x = conv_bn(layers, f"{block}.cv1", half, 1, act="silu", inputs=previous)
            for j in range(2):
                x = _bottleneck(layers, f"{block}.m{j}", x, half, half)
            other = conv_bn(layers, f"{block}.cv2", half, 1, act="silu", inputs=previous)
            layers.append({"type": "concat", "name": f"{block}.cat", "inputs": [x, other]})
            pieces.append(conv_bn(layers, f"{block}.cv3", c, 1, act="silu"))
        else:
            pieces.append(_bottleneck(layers, block, previous, c, c // 2))
    layers.append({"type": "concat", "name": f"{name}.cat", "inputs": pieces})
    return conv_bn(layers, f"{name}.cv2", out, 1, act="silu")


def _psa_block(layers: list[Layer], name: str, source: str, c: int) -> str:
    """Append a PSABlock on `source` of `c` channels: x + Attention(x), then x + FFN(x) (1x1 Convs to 2c and back)."""
    heads = max(c // 64, 1)
    head_dim = c // heads
    qkv = conv_bn(layers, f"{name}.attn.qkv", 2 * c, 1, act=None, inputs=source)  # q, k of head_dim / 2; v
    layers += [{"type": "chunk", "name": f"{name}.attn.v", "chunks": 2, "index": 1, "inputs": [qkv]},
               {"type": "to_sequence", "name": f"{name}.attn.seq", "inputs": [qkv]},
               {"type": "attention_core", "name": f"{name}.attn.core", "heads": heads, "key_dim": head_dim // 2,
                "head_dim": head_dim},
               {"type": "to_feature_map", "name": f"{name}.attn.map", "inputs": [f"{name}.attn.core", source]}]
    pe = conv_bn(layers, f"{name}.attn.pe", c, 3, groups=c, act=None, inputs=f"{name}.attn.v")
    layers.append({"type": "add", "name": f"{name}.attn.sum", "inputs": [f"{name}.attn.map", pe]})
    proj = conv_bn(layers, f"{name}.attn.proj", c, 1, act=None)
    layers.append({"type": "add", "name": f"{name}.x1", "inputs": [source, proj]})
    conv_bn(layers, f"{name}.ffn.0", 2 * c, 1, act="silu", inputs=f"{name}.x1")
    ffn = conv_bn(layers, f"{name}.ffn.1", c, 1, act=None)
    layers.append({"type": "add", "name": name, "inputs": [f"{name}.x1", ffn]})
    return name


def _c2psa(layers: list[Layer], name: str, source: str, channels: int, n: int) -> str:
    """Append C2PSA: a 1x1 Conv to 2c (c = channels / 2) split in two, n PSABlocks on the second half, the halves
    concatenated and a 1x1 Conv back to `channels`."""
    c = channels // 2
    split = conv_bn(layers, f"{name}.cv1", 2 * c, 1, act="silu", inputs=source)
    layers += [{"type": "chunk", "name": f"{name}.a", "chunks": 2, "index": 0, "inputs": [split]},
               {"type": "chunk", "name": f"{name}.b", "chunks": 2, "index": 1, "inputs": [split]}]
    x = f"{name}.b"
    for i in range(n):
        x = _psa_block(layers, f"{name}.m{i}", x, c)
    layers.append({"type": "concat", "name": f"{name}.cat", "inputs": [f"{name}.a", x]})
    return conv_bn(layers, f"{name}.cv2", channels, 1, act="silu")


def yolo11_layers(scale: str, *, classes: int = COCO_CLASSES) -> list[Layer]:
    """Return YOLO11 at `scale` (n, s, m, l, x) with `classes` classes, as Ultralytics builds it for training: the m,
    l and x scales take C3k blocks in every C3k2 (parse_model's `if scale in "mlx"`)."""
    depth, width, most, _, _ = V11_SCALES[scale]
    deep = scale in "mlx"

    def ch(c: int) -> int:
        return _channels(c, width, most)

    n = _repeats(2, depth)
    layers: list[Layer] = []
    conv_bn(layers, "b0", ch(64), 3, stride=2, act="silu")
    x = conv_bn(layers, "b1", ch(128), 3, stride=2, act="silu")
    x = _c3k2(layers, "b2", x, ch(256), n, c3k=deep, e=0.25)
    x = conv_bn(layers, "b3", ch(256), 3, stride=2, act="silu", inputs=x)
    p3 = _c3k2(layers, "b4", x, ch(512), n, c3k=deep, e=0.25)
    x = conv_bn(layers, "b5", ch(512), 3, stride=2, act="silu", inputs=p3)
    p4 = _c3k2(layers, "b6", x, ch(512), n, c3k=True)
    x = conv_bn(layers, "b7", ch(1024), 3, stride=2, act="silu", inputs=p4)
    x = _c3k2(layers, "b8", x, ch(1024), n, c3k=True)
    p5 = _c2psa(layers, "b10", _sppf(layers, "b9", x, ch(1024)), ch(1024), n)
    layers += [{"type": "upsample", "name": "neck.up4", "scale": 2, "inputs": [p5]},
               {"type": "concat", "name": "neck.cat4", "inputs": ["neck.up4", p4]}]
    mid = _c3k2(layers, "neck.td4", "neck.cat4", ch(512), n, c3k=deep)
    layers += [{"type": "upsample", "name": "neck.up3", "scale": 2, "inputs": [mid]},
               {"type": "concat", "name": "neck.cat3", "inputs": ["neck.up3", p3]}]
    small = _c3k2(layers, "neck.out3", "neck.cat3", ch(256), n, c3k=deep)
    down = conv_bn(layers, "neck.down3", ch(256), 3, stride=2, act="silu", inputs=small)
    layers.append({"type": "concat", "name": "neck.bu4", "inputs": [down, mid]})
    medium = _c3k2(layers, "neck.out4", "neck.bu4", ch(512), n, c3k=deep)
    down = conv_bn(layers, "neck.down4", ch(512), 3, stride=2, act="silu", inputs=medium)
    layers.append({"type": "concat", "name": "neck.bu5", "inputs": [down, p5]})
    large = _c3k2(layers, "neck.out5", "neck.bu5", ch(1024), n, c3k=True)
    _detect(layers, [(small, ch(256)), (medium, ch(512)), (large, ch(1024))], classes, depthwise=True)
    return layers


def detector_presets(preset: type, published: type) -> list[Any]:
    """Return the YOLOv8, YOLO11 and YOLOv5 presets as registry.Preset values (the registry passes its classes: no
    import cycle)."""
    presets = []
    for scale, (_, _, _, parameters, gflops) in SCALES.items():
        presets.append(preset(
            f"yolov8{scale}",
            f"YOLOv8{scale} object detector (Ultralytics), {COCO_CLASSES} classes, {IMAGE}x{IMAGE}",
            lambda scale=scale: yolov8_layers(scale),
            published(parameters, round(gflops * 1e9 / 2), f"{YAML}: the {scale} scale's summary line (GFLOPs / 2)"),
            input_shape=(3, IMAGE, IMAGE),
            aliases=(f"yolov8-{scale}", f"yolo-v8{scale}", f"yolov8_{scale}",
                     *(("yolov8", "yolo") if scale == "n" else ())),  # Ultralytics' quickstart trains yolov8n
            recipe_batch=RECIPE_BATCH,
            recipe_epochs=RECIPE_EPOCHS,
            loss="mse",
            input_rule="YOLOv8 takes images whose sides are a multiple of 32",
        ))
    for scale, (_, _, _, parameters, gflops) in V11_SCALES.items():
        presets.append(preset(
            f"yolo11{scale}",
            f"YOLO11{scale} object detector (Ultralytics), {COCO_CLASSES} classes, {IMAGE}x{IMAGE}",
            lambda scale=scale: yolo11_layers(scale),
            published(parameters, round(gflops * 1e9 / 2), f"{V11_YAML}: the {scale} scale's summary (GFLOPs / 2)"),
            input_shape=(3, IMAGE, IMAGE),
            aliases=(f"yolo11-{scale}", f"yolov11{scale}", f"yolo-11{scale}", f"yolo11_{scale}",
                     *(("yolo11", "yolov11", "yolo-11") if scale == "n" else ())),  # its docs' quickstart: yolo11n
            recipe_batch=RECIPE_BATCH,
            recipe_epochs=RECIPE_EPOCHS,
            loss="mse",
            input_rule="YOLO11 takes images whose sides are a multiple of 32",
        ))
    for scale, (_, _, parameters, gflops, read) in V5_SCALES.items():
        presets.append(preset(
            f"yolov5{scale}",
            f"YOLOv5{scale} object detector (Ultralytics, v6.0 and later), {COCO_CLASSES} classes, {IMAGE}x{IMAGE}",
            lambda scale=scale: yolov5_layers(scale),
            published(parameters, round(gflops * 1e9 / 2), V5_README.format(read)),
            input_shape=(3, IMAGE, IMAGE),
            aliases=(f"yolov5-{scale}", f"yolo-v5{scale}", f"yolov5_{scale}", *(("yolov5",) if scale == "s" else ())),
            recipe_batch=V5_RECIPE_BATCH,
            recipe_epochs=V5_RECIPE_EPOCHS,
            loss="mse",
            input_rule="YOLOv5 takes images whose sides are a multiple of 32",
        ))
    return presets
