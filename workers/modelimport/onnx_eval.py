"""Eval-mode exports: told from their signs, warned with their effect, corrected where the folding shows.

The default `torch.onnx.export(model.eval(), ...)` writes the inference graph: BatchNorm that
follows a convolution is folded into the convolution's weights and bias, BatchNorm elsewhere runs
in inference mode (`training_mode` 0), and Dropout nodes are dropped. A training step keeps more
than that graph shows: each BatchNorm keeps its input (the convolution's output, a tensor of its
own in training) and each Dropout its 1-byte mask and its output. On the check networks of
tests/fixtures/onnx the eval exports come out 18-40% low.

Signs read here:
- training mode shown: a BatchNormalization with `training_mode` 1 (or, before opset 14, with
  its running-statistics outputs) or a Dropout given its `training_mode` input: nothing to do;
- inference mode shown: a BatchNormalization in inference mode;
- folded BatchNorm: convolutions with a bias whose output (larger than 1x1) goes to anything but a
  norm (directly or through views: ConvNeXt's permute before its LayerNorm), in at least half the
  convolutions that could be folds; or any such convolution beside inference-mode norms. A convolution
  whose weight and bias still carry one module's parameter names (`stem.0.weight`, `stem.0.bias`) is
  the module itself, not a fold: folding writes new tensors, which the exporter names itself
  (`onnx::Conv_543`). Networks built with biased convolutions and no BatchNorm (VGG, SqueezeNet,
  ConvNeXt, autoencoders) are told apart so, and such a module's convolutions are left out of the
  share: a detector's biased FPN and head convolutions (run once a pyramid level) outnumber its
  folded backbone (the RetinaNet-like fixture: 16 folded of 40).

Where convolutions look folded and nothing shows training mode, a BatchNormalization node is put
back behind each of them (`unfold_batchnorm`), so the step counts what it keeps; Dropout cannot be
put back (nothing says where it was). Exporting with `training=torch.onnx.TrainingMode.PRESERVE`
from a model in train mode needs no guess (docs/layers.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import NodeProto, helper, numpy_helper

NORMS = frozenset({"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization"})
FOLDED_SHARE = 0.5
EXPORT_HINT = ("export with torch.onnx.export(model.train(), ..., training=torch.onnx.TrainingMode.PRESERVE, "
               "dynamo=False) for sizing (docs/layers.md)")


@dataclass(frozen=True)
class EvalSigns:
    """What the graph says about the mode it was exported in."""

    training_mode: bool  # a node shows training mode
    inference_norms: int  # BatchNormalization nodes in inference mode
    folded: tuple[int, ...]  # convolutions that look like a folded BatchNorm (node indices)
    dropouts: int


def _attr(node: NodeProto, name: str, default: int) -> int:
    """Return an integer attribute of a node."""
    return next((int(a.i) for a in node.attribute if a.name == name), default)


def _bn_training(node: NodeProto, opset: int) -> bool:
    """Say whether a BatchNormalization node runs in training mode."""
    if opset >= 14:
        return _attr(node, "training_mode", 0) == 1
    return len([o for o in node.output if o]) > 1


VIEWS = frozenset({"Transpose", "Reshape", "Squeeze", "Unsqueeze", "Identity", "Flatten"})


def _reaches_norm(name: str, consumers: dict[str, list[NodeProto]]) -> bool:
    """Say whether a tensor goes to a norm, directly or through view operators only."""
    for user in consumers.get(name, []):
        if user.op_type in NORMS or (user.op_type in VIEWS and _reaches_norm(user.output[0], consumers)):
            return True
    return False


def _module_parameters(node: NodeProto, initializers: set[str]) -> bool:
    """Say whether a node's weight and bias are one module's own parameters (`x.weight`, `x.bias`)."""
    weight, bias = node.input[1], node.input[2]
    if weight not in initializers or bias not in initializers:
        return False
    prefix, dot, tail = weight.rpartition(".")
    return bool(dot) and tail == "weight" and bias == f"{prefix}.bias"


def read_signs(model: onnx.ModelProto, dims: dict[str, tuple[int, ...]], batch: int) -> EvalSigns:
    """Read the export mode's signs from a graph whose shapes are known."""
    nodes = list(model.graph.node)
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    consumers: dict[str, list[NodeProto]] = {}
    for node in nodes:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in model.graph.output}
    initializers = {t.name for t in model.graph.initializer}
    batchnorms = [n for n in nodes if n.op_type == "BatchNormalization"]
    dropouts = [n for n in nodes if n.op_type == "Dropout"]
    training = any(_bn_training(n, opset) for n in batchnorms) or any(
        len(n.input) > 2 and n.input[2] for n in dropouts)
    spatial: list[int] = []  # convolutions that could have been folded: a module's own (below) could not
    folded: list[int] = []
    for i, node in enumerate(nodes):
        out = dims.get(node.output[0]) if node.op_type == "Conv" else None
        if out is None or math.prod(out[2:]) <= 1:
            continue
        biased = len(node.input) > 2 and bool(node.input[2])
        if biased and _module_parameters(node, initializers):
            continue  # a detector's or a U-Net's own biased heads say nothing of the backbone's folding
        spatial.append(i)
        users = consumers.get(node.output[0], [])
        if biased and node.output[0] not in outputs and users and not _reaches_norm(node.output[0], consumers):
            folded.append(i)
    inference = sum(not _bn_training(n, opset) for n in batchnorms)
    # With BatchNorm in inference mode the export is an eval one: every such convolution was folded.
    looks_folded = bool(folded) and (inference > 0 or len(folded) >= FOLDED_SHARE * len(spatial))
    return EvalSigns(training_mode=training, inference_norms=inference,
                     folded=tuple(folded) if looks_folded and not training else (), dropouts=len(dropouts))


def unfold_batchnorm(model: onnx.ModelProto, signs: EvalSigns, dims: dict[str, tuple[int, ...]]) -> int:
    """Put a training-mode BatchNormalization back behind each folded convolution; return how many."""
    nodes = list(model.graph.node)
    rebuilt: list[NodeProto] = []
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    folded = set(signs.folded)
    for i, node in enumerate(nodes):
        if i not in folded:
            rebuilt.append(node)
            continue
        out = node.output[0]
        channels = dims[out][1]
        raw = f"{out}__before_folded_batchnorm"
        node.output[0] = raw
        params = []
        for key, value in (("scale", 1.0), ("bias", 0.0), ("mean", 0.0), ("var", 1.0)):
            name = f"{out}__folded_batchnorm_{key}"
            model.graph.initializer.append(numpy_helper.from_array(np.full(channels, value, np.float32), name))
            params.append(name)
        norm = helper.make_node("BatchNormalization", [raw, *params], [out], name=f"{node.name}/folded_batchnorm")
        if opset >= 14:
            norm.attribute.append(helper.make_attribute("training_mode", 1))
        value_info = helper.make_tensor_value_info(raw, onnx.TensorProto.FLOAT, list(dims[out]))
        model.graph.value_info.append(value_info)
        rebuilt.extend([node, norm])
    del model.graph.node[:]
    model.graph.node.extend(rebuilt)
    return len(folded)


def eval_warnings(signs: EvalSigns, *, restored_values: int) -> tuple[tuple[str, str], ...]:
    """Return the warnings an export's mode calls for, with their effect."""
    if signs.training_mode:
        return ()
    if signs.folded or signs.inference_norms:
        what = []
        if signs.folded:
            what.append(f"{len(signs.folded)} convolutions carry a folded BatchNorm")
        if signs.inference_norms:
            what.append(f"{signs.inference_norms} BatchNormalization nodes run in inference mode")
        restored = (f" Counted back: {len(signs.folded)} BatchNorm layers, which keep their input "
                    f"({restored_values:,} values per sample)." if signs.folded else "")
        return (("onnx-eval-export", (
            f"This ONNX file is an eval-mode export: {' and '.join(what)}, and no Dropout is left. Such an "
            f"export hides what training keeps (each BatchNorm's input, each Dropout's mask and output) and "
            f"comes out 13-40% low.{restored} Dropout cannot be recovered; {EXPORT_HINT}.")),)
    if signs.dropouts == 0:
        return (("onnx-training-mode-unknown", (
            "No node of this ONNX file shows that it was exported in training mode (no Dropout, no "
            "BatchNorm in training mode). If it came from an eval-mode export, any Dropout layers were "
            f"dropped and their masks and outputs are not counted; {EXPORT_HINT}.")),)
    return ()
