"""The time side of checkpointing: the share of a forward pass that backward runs again, per mode.

What each mode keeps is the step walk's (retention.py); what it recomputes costs time:
- selective (Korthikanti et al. 2022, arXiv 2205.05198 §5) recomputes the attention core, its
  score and context matmuls;
- selective_ops (torchtitan's op-level policy) recomputes every matmul it does not save, every
  other one in call order (k, o and up of q, k, v, o, gate, up, down), and the cheap ops around them;
- full recomputes every block.
"""

from __future__ import annotations

from workers.sizing.memo import IdentityMemo
from workers.sizing.stats import LayerKind, LayerStats, ModelStats
from workers.sizing.strategies.adapters import block_of
from workers.sizing.strategies.retention import matmul_widths
from workers.sizing.strategies.types import Checkpointing


def _blocks(model: ModelStats) -> tuple[dict[str, list[LayerStats]], list[LayerStats], list[LayerStats]]:
    """Split the rows into attention blocks, the rows before the first block and those after the last."""
    blocks: dict[str, list[LayerStats]] = {}
    names = {block_of(layer) for layer in model.layers if layer.kind is LayerKind.ATTENTION}
    before: list[LayerStats] = []
    after: list[LayerStats] = []
    for layer in model.layers:
        block = block_of(layer)
        if block in names:
            blocks.setdefault(block, []).append(layer)
        elif blocks:
            after.append(layer)
        else:
            before.append(layer)
    return blocks, before, after


_SHARE: IdentityMemo[float] = IdentityMemo()


def recomputed_forward_share(model: ModelStats, mode: Checkpointing) -> float:
    """Return the share of a forward pass's multiply-adds that backward runs again.

    Full recomputes every block; selective only the attention core (its score and context matmuls).
    """
    return _SHARE.get(model, mode, lambda: _recomputed_forward_share(model, mode))


def _recomputed_forward_share(model: ModelStats, mode: Checkpointing) -> float:
    """Compute recomputed_forward_share."""
    if mode in (Checkpointing.NONE, Checkpointing.AUTO):
        return 0.0
    total = sum(layer.multiply_adds * layer.passes for layer in model.layers) or model.multiply_adds
    if total <= 0:
        return 0.0
    blocks, _, _ = _blocks(model)
    if not blocks:
        return 1.0 if mode is Checkpointing.FULL else 0.0
    rows = [r for block in blocks.values() for r in block]
    if mode is Checkpointing.SELECTIVE:
        rows = [r for r in rows if r.kind is LayerKind.ATTENTION]
    if mode is Checkpointing.SELECTIVE_OPS:
        return sum(_unsaved_matmul_work(block) for block in blocks.values()) / total
    return sum(r.multiply_adds * r.passes for r in rows) / total


def _unsaved_matmul_work(rows: list[LayerStats]) -> float:
    """Return the multiply-adds of a block's matmuls the op-level policy does not save (every second one)."""
    hidden = rows[0].output_shape[-1]
    work, position = 0.0, 0
    for row in rows:
        if row.type != "dense":
            continue
        widths = matmul_widths(row, hidden)
        for width in widths:
            position += 1
            if position % 2 == 0:
                work += row.multiply_adds * row.passes * width / sum(widths)
    return work
