"""Run a few training steps of a user's model on their own device and measure what the core predicts.

Phases as the training console's Profile shows them (domain.md §3): data loading (making the batch
and moving it to the device), forward, loss, backward, update. Times are medians over the measured
steps, after two warm-up steps (so the optimizer state exists); on a GPU each phase ends with a
synchronise. Memory is the intrinsic peak of live tensor bytes of the last step (tracking.py), and
per layer what autograd keeps for backward. Needs torch; nothing here runs at import.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from service.probe.tracking import LiveStorages, kept_bytes_by_layer

PHASES = ("data", "forward", "loss", "backward", "update")
WARMUP_STEPS = 2


class ProbeError(Exception):
    """A probe the user asked for cannot run (bad callable, input or device); one line for the CLI."""


@dataclass(frozen=True)
class ProbeResult:
    """What a few measured steps showed."""

    device: str
    batch_size: int
    steps: int
    phase_ms: dict[str, float]
    iteration_ms: float
    peak_bytes: int
    peak_phase: str
    kept_by_layer: list[tuple[str, int]]
    parameters: int  # trainable
    frozen_parameters: int
    neurons: int  # per sample: output values of every leaf module
    multiply_adds: int  # per sample, forward (torch.utils.flop_counter, FLOPs / 2)
    cuda_max_allocated_bytes: int | None


def load_callable(target: str) -> Callable[[], nn.Module]:
    """Return the model builder named "module.path:function" or "path/to/file.py:function"."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ProbeError(f"{target!r}: give the builder as module:function or file.py:function")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise ProbeError(f"{module_name}: no such file")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise ProbeError(f"{module_name}: cannot be imported")
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ProbeError(f"{module_name}: cannot be imported ({exc})") from None
    builder = getattr(module, attr, None)
    if not callable(builder):
        raise ProbeError(f"{target}: {attr!r} is not a callable of {module_name}")
    return builder  # type: ignore[no-any-return]


def _optimizer(name: str, params: list[nn.Parameter], implementation: str = "foreach") -> torch.optim.Optimizer:
    """Return the optimizer as the user's code runs it: foreach (torch.optim's CUDA default), fused or a per-tensor
    loop (foreach=False); fused applies to Adam and AdamW (SGD updates in place either way)."""
    if implementation == "fused" and name in ("adam", "adamw"):
        kind = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
        return kind(params, lr=1e-3, fused=True)
    if name == "rmsprop":  # no fused kernel in torch (the CLI refuses fused): foreach or a per-tensor loop
        return torch.optim.RMSprop(params, lr=1e-3, foreach=implementation != "per_tensor")
    if implementation == "per_tensor":
        if name in ("sgd", "momentum"):
            return torch.optim.SGD(params, lr=1e-3, momentum=0.9 if name == "momentum" else 0.0, foreach=False)
        kind = torch.optim.AdamW if name == "adamw" else torch.optim.Adam
        return kind(params, lr=1e-3, foreach=False)
    if name == "sgd":
        return torch.optim.SGD(params, lr=1e-3, foreach=True)
    if name == "momentum":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, foreach=True)
    return torch.optim.Adam(params, lr=1e-3, foreach=True)


def _loss(output: Any, generator: torch.Generator) -> torch.Tensor:
    """Cross-entropy over the last axis for classifier-shaped outputs, else mean squared error."""
    if isinstance(output, tuple | list):
        output = output[0]
    if not isinstance(output, torch.Tensor) or not output.is_floating_point():
        raise ProbeError("the model's output must be a float tensor (or a tuple starting with one)")
    if output.dim() >= 2:
        classes = output.shape[-1]
        logits = output.float().reshape(-1, classes)
        targets = torch.randint(0, classes, (logits.shape[0],), generator=generator).to(output.device)
        return F.cross_entropy(logits, targets)
    return F.mse_loss(output.float(), torch.zeros_like(output, dtype=torch.float32))


def _count_per_sample(model: nn.Module, inputs: torch.Tensor, batch: int) -> tuple[int, int]:
    """Return (neurons, multiply-adds) per sample from one forward without gradient."""
    outputs = 0

    def hook(_m: nn.Module, _a: object, out: object) -> None:
        nonlocal outputs
        if isinstance(out, torch.Tensor):
            outputs += out.numel()

    leaves = [m for m in model.modules() if not list(m.children())]
    handles = [m.register_forward_hook(hook) for m in leaves]
    counter = FlopCounterMode(display=False)
    try:
        with torch.no_grad(), counter:
            model(inputs)
    finally:
        for h in handles:
            h.remove()
    return outputs // batch, counter.get_total_flops() // 2 // batch


def probe(build: Callable[[], nn.Module], *, input_shape: tuple[int, ...], batch_size: int, steps: int = 3,
          device: str = "cpu", optimizer: str = "adam", precision: str = "fp32", token_vocab: int | None = None,
          seed: int = 0, optimizer_implementation: str = "foreach") -> ProbeResult:
    """Build the model, run warm-up and measured steps on `device`, and return what was measured."""
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ProbeError(f"device {device!r}: no CUDA device is available to this torch")
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = build()
    if not isinstance(model, nn.Module):
        raise ProbeError("the builder must return a torch.nn.Module")
    model = model.to(device).train()
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise ProbeError("the model has no trainable parameters")
    opt = _optimizer(optimizer, params, optimizer_implementation)
    on_gpu = device.startswith("cuda")
    cast = torch.autocast(device.split(":")[0], dtype=torch.bfloat16 if precision == "bf16-mixed"
                          else torch.float16) if precision != "fp32" else contextlib.nullcontext()

    def batch() -> torch.Tensor:
        if token_vocab:
            x = torch.randint(0, token_vocab, (batch_size, *input_shape), generator=generator)
        else:
            x = torch.randn(batch_size, *input_shape, generator=generator)
        return x.to(device)

    times: dict[str, list[float]] = {name: [] for name in PHASES}
    tracker = LiveStorages(device.split(":")[0])
    kept: dict[str, int] = {}

    @contextlib.contextmanager
    def phase(name: str, record: bool) -> Iterator[None]:
        tracker.set_phase({"data": "forward", "loss": "forward", "update": "optimizer_step"}.get(name, name))
        start = time.perf_counter()
        yield
        if on_gpu:
            torch.cuda.synchronize()
        if record:
            times[name].append((time.perf_counter() - start) * 1000)

    def step(record: bool) -> None:
        with phase("data", record):
            x = batch()
        with phase("forward", record):
            opt.zero_grad(set_to_none=True)
            with cast:
                out = model(x)
        with phase("loss", record), cast:
            loss = _loss(out, generator)
        with phase("backward", record):
            loss.backward()
        with phase("update", record):
            opt.step()

    try:
        neurons, macs = _count_per_sample(model, batch(), batch_size)
        for _ in range(WARMUP_STEPS):
            step(False)
        for _ in range(max(1, steps) - 1):
            step(True)
        if on_gpu:
            torch.cuda.reset_peak_memory_stats()
        with tracker:
            tracker.seed([*model.parameters(), *model.buffers(),
                          *(p.grad for p in model.parameters() if p.grad is not None),
                          *(v for s in opt.state.values() for v in s.values() if isinstance(v, torch.Tensor))])
            with kept_bytes_by_layer([model], kept):
                step(True)
    except RuntimeError as exc:  # shape mismatches, out of memory: the user's model and input
        raise ProbeError(f"the training step failed: {str(exc).splitlines()[0]}") from None
    phase_ms = {name: statistics.median(v) for name, v in times.items()}
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    return ProbeResult(
        device=device, batch_size=batch_size, steps=max(1, steps), phase_ms=phase_ms,
        iteration_ms=sum(phase_ms.values()), peak_bytes=tracker.peak_bytes, peak_phase=tracker.peak_phase,
        kept_by_layer=sorted(((k, v) for k, v in kept.items() if k != "weights"), key=lambda kv: -kv[1]),
        parameters=sum(p.numel() for p in params), frozen_parameters=frozen, neurons=neurons,
        multiply_adds=macs, cuda_max_allocated_bytes=torch.cuda.max_memory_allocated() if on_gpu else None,
    )
