"""Hand-built model statistics for the sizing tests (independent of the presets and layer rules)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from catalog.gpus import gpus_by_slug
from catalog.types import GpuSpec
from workers.sizing.spec import Training
from workers.sizing.stats import LayerKind, LayerStats, ModelStats

GIB = 2**30


def gpu(slug: str) -> GpuSpec:
    """Return one GPU of the catalog table."""
    return gpus_by_slug()[slug]


def _conv(name: str, cin: int, cout: int, k: int, hw_in: int, stride: int, *,
          saves_input: bool = False) -> Iterator[LayerStats]:
    """Yield conv + batchnorm + relu rows as PyTorch keeps them (bn: input; relu: output).

    A convolution keeps its input, which is the previous ReLU's kept output, so it adds nothing
    unless told (the network's input).
    """
    hw = hw_in // stride
    out = cout * hw * hw
    params = cin * cout * k * k
    saved = cin * hw_in * hw_in if saves_input else 0
    yield LayerStats(f"{name}.conv", "conv2d", (cout, hw, hw), out, params, params * hw * hw, LayerKind.CONV,
                     saved_values=saved, traffic_values=cin * hw_in * hw_in + out + params)
    yield LayerStats(f"{name}.bn", "batchnorm", (cout, hw, hw), out, 2 * cout, 0, LayerKind.NORM,
                     saved_values=out, traffic_values=2 * out)
    yield LayerStats(f"{name}.relu", "relu", (cout, hw, hw), out, 0, 0, LayerKind.ELEMENTWISE,
                     saved_values=out, traffic_values=2 * out)


def resnet50() -> ModelStats:
    """Return a ResNet-50 (v1.5, 224x224) with conv/bn/relu rows; about 25.6 M params and 4.1 G MACs."""
    rows = list(_conv("stem", 3, 64, 7, 224, 2, saves_input=True))
    rows.append(LayerStats("maxpool", "maxpool", (64, 56, 56), 64 * 56 * 56, 0, 0, LayerKind.POOL,
                           saved_values=64 * 56 * 56, saved_mask_bytes=8 * 64 * 56 * 56,
                           traffic_values=64 * 112 * 112 + 64 * 56 * 56))
    cin, hw = 64, 56
    for stage, (width, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]):
        for block in range(blocks):
            s = stride if block == 0 else 1
            name = f"layer{stage + 1}.{block}"
            rows += _conv(f"{name}.a", cin, width, 1, hw, 1)
            rows += _conv(f"{name}.b", width, width, 3, hw, s)
            rows += list(_conv(f"{name}.c", width, width * 4, 1, hw // s, 1))[:2]
            if block == 0:
                rows += list(_conv(f"{name}.down", cin, width * 4, 1, hw, s))[:2]
            out = width * 4 * (hw // s) ** 2
            rows.append(LayerStats(f"{name}.add", "add", (width * 4, hw // s, hw // s), out, 0, 0,
                                   LayerKind.ELEMENTWISE, saved_values=0, traffic_values=3 * out))
            rows.append(LayerStats(f"{name}.relu", "relu", (width * 4, hw // s, hw // s), out, 0, 0,
                                   LayerKind.ELEMENTWISE, saved_values=out, traffic_values=2 * out))
            cin, hw = width * 4, hw // s
    rows.append(LayerStats("avgpool", "global_avg_pool", (2048,), 2048, 0, 0, LayerKind.POOL,
                           saved_values=0, traffic_values=2048 * 49))
    rows.append(LayerStats("fc", "dense", (1000,), 1000, 2048 * 1000 + 1000, 2048 * 1000, LayerKind.DENSE,
                           saved_values=2048, traffic_values=2048 + 1000 + 2049 * 1000))
    return totals("resnet50", rows)


def mlp(*, width: int = 4096, depth: int = 8) -> ModelStats:
    """Return a stack of dense + relu layers (many parameters, little compute per parameter)."""
    rows: list[LayerStats] = []
    for i in range(depth):
        rows.append(LayerStats(f"fc{i}", "dense", (width,), width, width * width + width, width * width,
                               LayerKind.DENSE, saved_values=width, traffic_values=2 * width + width * width))
        rows.append(LayerStats(f"relu{i}", "relu", (width,), width, 0, 0, LayerKind.ELEMENTWISE,
                               saved_values=width, traffic_values=2 * width))
    return totals("mlp", rows)


def tiny_layers(count: int, *, width: int = 64) -> ModelStats:
    """Return `count` small dense layers: each runs far under 0.1 ms at small batches."""
    rows = [LayerStats(f"fc{i}", "dense", (width,), width, width * width, width * width, LayerKind.DENSE,
                       saved_values=width, traffic_values=2 * width + width * width) for i in range(count)]
    return totals("tiny", rows)


def totals(name: str, rows: list[LayerStats]) -> ModelStats:
    """Return a ModelStats whose totals are the sums of its rows."""
    return ModelStats(name, neurons=sum(r.neurons for r in rows), parameters=sum(r.parameters for r in rows),
                      multiply_adds=sum(r.multiply_adds for r in rows), layers=tuple(rows))


def stats_only(*, neurons: int, parameters: int, multiply_adds: int) -> ModelStats:
    """Return a model given only as totals."""
    return ModelStats("given", neurons=neurons, parameters=parameters, multiply_adds=multiply_adds)


def training(**changes: object) -> Training:
    """Return a Training with batch 64 and the defaults, changed by keyword."""
    return replace(Training(batch_size=64), **changes)  # type: ignore[arg-type]


def transformer(*, seq: int = 512, hidden: int = 768, heads: int = 12, blocks: int = 12) -> ModelStats:
    """Return a BERT-like encoder whose blocks keep Korthikanti's s*h*(34 + 5*a*s/h) bytes at 16 bits."""
    rows: list[LayerStats] = []
    for i in range(blocks):
        dense_params = 12 * hidden * hidden
        rows.append(LayerStats(f"block{i}.dense", "dense", (seq, hidden), 8 * seq * hidden, dense_params,
                               12 * hidden * hidden * seq, LayerKind.DENSE, saved_values=16 * seq * hidden,
                               saved_mask_bytes=2 * seq * hidden,
                               traffic_values=16 * seq * hidden + dense_params))
        rows.append(LayerStats(f"block{i}.attention", "attention", (seq, hidden), 2 * heads * seq * seq, 0,
                               2 * seq * seq * hidden, LayerKind.ATTENTION,
                               saved_values=2 * heads * seq * seq, saved_mask_bytes=heads * seq * seq,
                               traffic_values=4 * heads * seq * seq))
    model = totals("transformer", rows)
    return replace(model, sequence_length=seq)
