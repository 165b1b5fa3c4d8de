"""Live tensor bytes of a training step, seen by a TorchDispatchMode that tracks every storage, and
the bytes each layer keeps for backward, from autograd's saved-tensor hooks.

Each operator's outputs are followed to their storages; a storage counts from the first time it is
seen until Python's weak reference to it dies. Storages alive before the step (weights, optimizer
state, the batch) are seeded by `seed`. Buffers an operator allocates and frees inside its kernel
are not seen here (the profiler's memory timeline sees them, validation/measure/timeline.py); views
and in-place results share a storage and count once. `gpugauge probe` and the measurement harness
(validation/measure/) both use this module; it imports torch, so only they import it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveStorages(TorchDispatchMode):
    """Track live storage bytes and their maximum per phase of the step."""

    def __init__(self, device_type: str = "cpu") -> None:
        super().__init__()
        self.device_type = device_type
        self.live: dict[int, int] = {}
        self.current_bytes = 0
        self.phase = "before"
        self.peak_bytes = 0
        self.peak_phase = "before"
        self.phase_peaks: dict[str, int] = {}

    def seed(self, tensors: list[torch.Tensor]) -> None:
        """Count tensors that exist before the step (weights, gradients, optimizer state, the batch)."""
        for tensor in tensors:
            self._track(tensor)

    def set_phase(self, phase: str) -> None:
        """Start a new phase; its peak starts from what is alive now."""
        self.phase = phase
        self.phase_peaks[phase] = max(self.phase_peaks.get(phase, 0), self.current_bytes)

    def _free(self, key: int) -> None:
        self.current_bytes -= self.live.pop(key, 0)

    def _track(self, tensor: torch.Tensor) -> None:
        if tensor.device.type != self.device_type or tensor.is_meta:
            return
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key in self.live:
            return
        size = storage.nbytes()
        self.live[key] = size
        self.current_bytes += size
        weakref.finalize(storage, self._free, key)
        if self.current_bytes > self.peak_bytes:
            self.peak_bytes, self.peak_phase = self.current_bytes, self.phase
        if self.current_bytes > self.phase_peaks.get(self.phase, 0):
            self.phase_peaks[self.phase] = self.current_bytes

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor):
                self._track(leaf)
        return out


@contextlib.contextmanager
def kept_bytes_by_layer(modules: list[nn.Module], into: dict[str, int]) -> Iterator[None]:
    """Fill `into` with saved bytes per module name while the block runs.

    Every tensor autograd saves is charged to the innermost module running at that moment, once per
    storage (a ReLU output that the next convolution also keeps is charged to the ReLU, as the layer
    list counts it). Weights, and their 16-bit copies under autocast, are charged to "weights".
    """
    names: dict[int, str] = {}
    weights: set[int] = set()
    for k, module in enumerate(modules):
        for name, sub in module.named_modules():
            label = f"{name} ({type(sub).__name__})" if name else type(sub).__name__
            names[id(sub)] = f"{k}:{label}" if len(modules) > 1 else label
        weights.update(p.untyped_storage()._cdata for p in module.parameters())
    stack: list[str] = []
    seen: set[int] = set()

    def pre(module: nn.Module, _args: object) -> None:
        stack.append(names.get(id(module), type(module).__name__))

    def post(_module: nn.Module, _args: object, _out: object) -> None:
        if stack:
            stack.pop()

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        key = storage._cdata
        if key not in seen:
            seen.add(key)
            is_weight = key in weights or (isinstance(t, nn.Parameter)) or (t.requires_grad and t.is_leaf)
            where = "weights" if is_weight else (stack[-1] if stack else "loss")
            into[where] = into.get(where, 0) + storage.nbytes()
        return t

    handles = [nn.modules.module.register_module_forward_pre_hook(pre),
               nn.modules.module.register_module_forward_hook(post)]
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            yield
    finally:
        for h in handles:
            h.remove()
