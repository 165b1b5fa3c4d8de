"""Export the non-preset networks to ONNX the ways users do, small enough to commit as test fixtures.

Each network is exported four ways with the TorchScript exporter (`dynamo=False`, opset 17):
`train` (training=TrainingMode.PRESERVE: BatchNormalization in training mode, Dropout kept) and
`eval` (the default: `model.eval()`, BatchNorm folded into the convolutions, Dropout dropped),
each with a fixed batch and with a dynamic batch axis ("batch"). Weights are written as external
data that is not committed: the importer reads only the graph and the weights' dims, so a fixture
is a few kilobytes. `manifest.json` lists every file with what it is.
"""

from __future__ import annotations

import hashlib
import io
import json
import warnings
from pathlib import Path
from typing import Any

import onnx
import torch

from validation.measure.cases import CASES, NETS, Net

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "onnx"
OPSET = 17
VARIANTS = (("train", True, False), ("train-dynamic", True, True), ("eval", False, False),
            ("eval-dynamic", False, True))


def _export(net: Net, batch: int, *, training: bool, dynamic: bool) -> onnx.ModelProto:
    """Export one network and return the model with its weights moved out to (uncommitted) external data."""
    torch.manual_seed(0)
    model = net.build().train(training)
    inputs, _ = net.sample(batch)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, (inputs,), buffer, dynamo=False, opset_version=OPSET,
            training=torch.onnx.TrainingMode.PRESERVE if training else torch.onnx.TrainingMode.EVAL,
            do_constant_folding=not training, input_names=["input"], output_names=["output"],
            dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}} if dynamic else None,
        )
    proto = onnx.load_model_from_string(buffer.getvalue())
    for node in proto.graph.node:
        node.doc_string = ""  # the exporter's Python stack per node: most of the file, read by nobody
    for tensor in proto.graph.initializer:
        if tensor.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16) and len(tensor.raw_data) > 1024:
            offset, length = 0, len(tensor.raw_data)
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
            for key, value in (("location", "weights.bin (not committed)"), ("offset", str(offset)),
                               ("length", str(length))):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, value
    return proto


def export_all(names: set[str] | None = None) -> list[dict[str, Any]]:
    """Write the fixtures of these nets (None: every one) and the manifest; return the manifest rows.

    The manifest keeps the rows of nets not exported this time, in NETS order.
    """
    FIXTURES.mkdir(parents=True, exist_ok=True)
    manifest = FIXTURES / "manifest.json"
    old = json.loads(manifest.read_text()) if names is not None and manifest.exists() else []
    rows: list[dict[str, Any]] = [r for r in old if r["net"] in NETS and r["net"] not in names]
    for name, net in NETS.items():
        if not net.onnx or (names is not None and name not in names):
            continue
        batch = next(c.batch_size for c in CASES if c.net == name)
        for label, training, dynamic in VARIANTS:
            data = _export(net, batch, training=training, dynamic=dynamic).SerializeToString()
            path = FIXTURES / f"{name}.{label}.onnx"
            path.write_bytes(data)
            rows.append({
                "file": path.name, "net": name, "family": net.family, "description": net.description,
                "export": "training=TrainingMode.PRESERVE" if training else "default (model.eval(), EVAL)",
                "batch_axis": "dynamic ('batch')" if dynamic else f"fixed {batch}",
                "input_shape": list(net.input_shape or ()), "sequence_length": net.sequence_length,
                "opset": OPSET, "exporter": f"torch.onnx.export(dynamo=False), torch {torch.__version__}",
                "weights": "external data, not committed (the importer reads dims only)",
                "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            })
    order = {name: i for i, name in enumerate(NETS)}
    rows.sort(key=lambda r: order[r["net"]])
    manifest.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return rows
