"""Building blocks the measured networks share: GPU-style dropout and GPT-2's tanh GELU."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Dropout(nn.Module):
    """Dropout as CUDA runs it: `native_dropout` keeps a 1-byte bool mask for backward.

    On the CPU `nn.Dropout` multiplies by a noise tensor of the input's dtype (4 bytes a value in
    fp32); the fused CUDA kernel saves a bool mask. `torch.native_dropout` has the CUDA behaviour
    on both devices, so the CPU measurement keeps what a GPU step keeps.
    """

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        if torch.onnx.is_in_onnx_export():  # the exporter knows dropout, not native_dropout
            return nn.functional.dropout(x, self.p, True)
        out, _mask = torch.native_dropout(x, self.p, True)
        return out


class NewGELU(nn.Module):
    """GPT-2's tanh-form GELU written as primitive ops, as Hugging Face's `gelu_new` computes it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def count_parameters(model: nn.Module, *, trainable_only: bool = False) -> int:
    """Return the number of weights (trainable ones only when asked)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def ce(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Return the cross-entropy of one label a sample, in fp32."""
    return F.cross_entropy(logits.float(), targets)


def flat_ce(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Return the cross-entropy of one label a position (a sequence's tokens), in fp32."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


def mse(output: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Return the mean squared error, in fp32."""
    return F.mse_loss(output.float(), targets)
