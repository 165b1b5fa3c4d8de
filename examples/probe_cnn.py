"""A model builder for `gpugauge probe` (README, "Measure your own model"): a small CIFAR-style CNN."""

from __future__ import annotations

from typing import Any


def build() -> Any:
    """Return the network to measure; `gpugauge probe` calls this with no arguments."""
    from torch import nn

    def block(cin: int, cout: int) -> list[Any]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    return nn.Sequential(*block(3, 32), *block(32, 32), nn.MaxPool2d(2), *block(32, 64), *block(64, 64),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.3), nn.Linear(64 * 8 * 8, 10))


def sample(index: int) -> Any:
    """Load and augment one CIFAR-style training sample, as a Dataset's __getitem__ would (`--sample`).

    Here the image is made from the index; a real one reads its file: that read and decode is part of what
    `gpugauge probe --sample` should time.
    """
    import numpy as np
    from PIL import Image, ImageOps

    rng = np.random.default_rng(index)
    image = ImageOps.expand(Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)), border=4)
    left, top = (int(v) for v in rng.integers(0, 9, 2))  # RandomCrop(32, padding=4)
    image = image.crop((left, top, left + 32, top + 32))
    if index % 2:
        image = ImageOps.mirror(image)  # RandomHorizontalFlip
    return np.asarray(image, dtype=np.float32).transpose(2, 0, 1) / 255.0
