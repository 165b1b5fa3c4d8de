"""Small PyTorch models for the `gpugauge probe` tests (torch is imported only when a builder runs)."""

from __future__ import annotations

from typing import Any


def small_cnn() -> Any:
    """Return a conv-BN-ReLU-pool classifier for 3x16x16 images."""
    from torch import nn

    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 10))


def wide_mlp() -> Any:
    """Return an MLP whose weights dwarf its activations at a small batch."""
    from torch import nn

    return nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 8))


def not_a_model() -> int:
    """Return something that is not a module."""
    return 3


def one_sample(index: int) -> list[int]:
    """Load and pre-process one sample: deterministic CPU work, as a Dataset's __getitem__ does."""
    return sorted((j * 7919 + index) % 1000 for j in range(4000))


def failing_sample(index: int) -> list[int]:
    """Fail on the fourth sample, as a corrupt file would."""
    if index == 3:
        raise OSError("image file is truncated")
    return [index]
