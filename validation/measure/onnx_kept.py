"""Measure what one training step keeps for the ten ONNX check networks, and export each four ways.

    .venv/bin/python -m validation.measure.onnx_kept            # writes tests/fixtures/onnx/

For each network of `onnx_nets.CASES` (fp32, batch 8, SGD, after two warm-up steps) a
TorchDispatchMode follows every storage the step creates (the batch and its targets included) until
its last reference dies, and records:

- `kept_bytes`: what is alive once the loss is computed, before backward: everything autograd keeps
  for backward, the model's output, the loss's log-softmax. This is the figure the importer's
  per-layer kept values plus the loss rule predict.
- `gpu_kept_bytes`: `kept_bytes` less what only the CPU keeps: the attention dropout mask inside
  scaled_dot_product_attention is fp32 on the CPU and bool on a GPU (3 bytes a value less).
- `backward_peak_bytes`: the most alive at once from the forward's start to the end of backward
  (kept tensors, gradient buffers, parameter gradients allocated as backward goes, set_to_none).

PyTorch's oneDNN (mkldnn) LSTM is switched off: its CPU workspace (66 bytes per unit and step
here) is no GPU's; the native cell keeps what PyTorch's own cell ops keep.

Then it exports the network with `torch.onnx.export(..., dynamo=False)` (the TorchScript exporter,
opset 14) four ways: training-preserving (`training=TrainingMode.PRESERVE`, the model in train
mode) and the default eval export, each with a fixed batch of 2 and a dynamic batch axis. Each
weight tensor is filled with one value of its own before export (values do not matter for sizing;
equal tensors would be merged by the eval export's de-duplication), so the gzipped files are tiny.
"""

from __future__ import annotations

import gzip
import io
import json
import weakref
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from validation.measure.onnx_nets import CASES, Case

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "onnx"
BATCH = 8
EXPORT_BATCH = 2
OPSET = 14
SEED = 18


class NewStorages(TorchDispatchMode):
    """Live bytes of the storages created while the mode is on (each counted once, views included)."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0
        self.before: set[int] = set()

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def track(self, tensor: torch.Tensor) -> None:
        storage = tensor.untyped_storage()
        key = storage._cdata
        if key in self.live or key in self.before:
            return
        self.live[key] = storage.nbytes()
        self.current += storage.nbytes()
        self.peak = max(self.peak, self.current)
        weakref.finalize(storage, self._free, key)

    def seed(self, tensors: list[torch.Tensor]) -> None:
        """Name the storages that exist before the step (weights, buffers): their views are not new."""
        self.before = {t.untyped_storage()._cdata for t in tensors}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for leaf in tree_leaves(out):
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu":
                self.track(leaf)
        return out


def loss_of(case: Case, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the output, per token for the language model."""
    if case.tokens and case.target_shape:
        return nn.functional.cross_entropy(out.flatten(0, 1), target.flatten())
    return nn.functional.cross_entropy(out, target)


def measure(case: Case) -> dict[str, Any]:
    """Run two warm-up steps and one measured step; return the step's figures."""
    torch.manual_seed(SEED)
    generator = torch.Generator().manual_seed(SEED)
    model = case.build().train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        x, y = case.batch(BATCH, generator)
        optimizer.zero_grad(set_to_none=True)
        loss_of(case, model(x), y).backward()
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    mode = NewStorages()
    mode.seed([*model.parameters(), *model.buffers()])
    with torch.backends.mkldnn.flags(enabled=False), mode:
        x, y = case.batch(BATCH, generator)
        out = model(x)
        loss = loss_of(case, out, y)
        kept = mode.current
        loss.backward()
        del out, loss, x, y
        backward_peak = mode.peak
    parameters = sum(p.numel() for p in model.parameters())
    return {"model": case.name, "batch_size": BATCH, "precision": "fp32", "optimizer": "sgd",
            "parameters": parameters, "kept_bytes": kept,
            "gpu_kept_bytes": kept - 3 * case.cpu_float_mask_values * BATCH, "backward_peak_bytes": backward_peak,
            "parameter_bytes": 4 * parameters}


def export(case: Case, *, train: bool, dynamic: bool) -> bytes:
    """Export the network to ONNX bytes, training-preserving or default eval, fixed or dynamic batch."""
    torch.manual_seed(SEED)
    model = case.build()
    with torch.no_grad():  # one value per tensor: compresses like zeros, and no two tensors are equal
        for index, p in enumerate(model.parameters()):
            p.fill_(1e-3 * (index + 1))
    model.train(train)
    x, _ = case.batch(EXPORT_BATCH, torch.Generator().manual_seed(SEED))
    buffer = io.BytesIO()
    kwargs: dict[str, Any] = {"training": torch.onnx.TrainingMode.PRESERVE} if train else {}
    if dynamic:
        kwargs["dynamic_axes"] = {"input": {0: "batch_size"}, "output": {0: "batch_size"}}
    torch.onnx.export(model, (x,), buffer, dynamo=False, opset_version=OPSET, input_names=["input"],
                      output_names=["output"], do_constant_folding=not train, **kwargs)
    return buffer.getvalue()


def main() -> None:
    """Measure every case and write the fixtures and the measured figures."""
    OUT.mkdir(parents=True, exist_ok=True)
    records = []
    for case in CASES:
        record = measure(case)
        records.append(record)
        print(json.dumps(record))
        for train in (True, False):
            for dynamic in (False, True):
                data = export(case, train=train, dynamic=dynamic)
                name = f"{case.name}.{'train' if train else 'eval'}.{'dynamic' if dynamic else 'fixed'}.onnx.gz"
                (OUT / name).write_bytes(gzip.compress(data, mtime=0))
    meta = {"method": __doc__.split("\n\n")[1].strip() if __doc__ else "", "torch": torch.__version__,
            "export": {"exporter": "torch.onnx.export(dynamo=False)", "opset": OPSET, "fixed_batch": EXPORT_BATCH},
            "records": records}
    (OUT / "measured.json").write_text(json.dumps(meta, indent=1) + "\n")


if __name__ == "__main__":
    main()
