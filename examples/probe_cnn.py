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
