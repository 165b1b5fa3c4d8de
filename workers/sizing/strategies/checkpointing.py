"""Activation memory of a transformer under each checkpointing mode and tensor-parallel degree.

Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models", arXiv
2205.05198, §4-5), per layer with 16-bit activations: s b h (34 + 5 a s / h) bytes kept for backward;
- selective recomputation drops the attention core (scores, softmax, its dropout: the 5 a s / h
  term) and recomputes it, keeping 34 s b h;
- full recomputation keeps only each layer's input, 2 s b h, and recomputes one layer at a time;
- tensor parallel over t GPUs with sequence parallelism divides all of it by t (their eq. 5); the
  output head is split over the vocabulary (vocab-parallel cross entropy), so its logits are too.
We apply these to the per-layer rows the layer rules produce (layer_seq.py keeps exactly the
values Korthikanti counts), so a model's own shape, not the closed form, sets the bytes.
"""

from __future__ import annotations

from workers.sizing.memo import IdentityMemo
from workers.sizing.overheads import ACTIVATION_BYTES, RECOMPUTE_SHARE_STATS_ONLY
from workers.sizing.spec import Precision
from workers.sizing.stats import LayerKind, LayerStats, ModelStats
from workers.sizing.strategies.adapters import block_of
from workers.sizing.strategies.types import Checkpointing


def _saved_bytes(layer: LayerStats, value_bytes: int, *, selective: bool) -> float:
    """Return what one row keeps for backward; selective recompute keeps only the attention's Q, K, V."""
    if selective and layer.kind is LayerKind.ATTENTION:  # keeps Q, K and V (its input) only
        # The row's outputs are the context (s h), the scores and probabilities (2 a s^2) and, with
        # dropout, the dropped probabilities (a s^2); it keeps Q, K, V plus the probabilities (x2).
        steps, hidden = layer.output_shape[0], layer.output_shape[-1]
        copies = 2 if layer.saved_mask_bytes else 1
        probs = (layer.neurons - steps * hidden) // (copies + 1)
        return float(layer.saved_values - copies * probs) * value_bytes
    return float(layer.saved_values * value_bytes + layer.saved_mask_bytes)


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


_KEPT: IdentityMemo[float] = IdentityMemo(size=256)


def activation_bytes_per_sample(model: ModelStats, precision: Precision, *, mode: Checkpointing,
                                tensor_parallel: int = 1) -> float:
    """Return the activation bytes one sample keeps for backward on one GPU (no transient buffers)."""
    return _KEPT.get(model, (precision, mode, tensor_parallel),
                     lambda: _activation_bytes_per_sample(model, precision, mode=mode, tensor_parallel=tensor_parallel))


def _activation_bytes_per_sample(model: ModelStats, precision: Precision, *, mode: Checkpointing,
                                 tensor_parallel: int) -> float:
    """Compute activation_bytes_per_sample.

    A model without attention blocks (or given as totals) has no blocks to checkpoint selectively:
    selective keeps everything, full keeps the sizing core's stats-only share.
    """
    value_bytes = ACTIVATION_BYTES[precision]
    blocks, before, after = _blocks(model)
    if not blocks:
        every = sum(_saved_bytes(layer, value_bytes, selective=False) for layer in model.layers)
        if not model.layers:
            every = model.neurons * value_bytes
        return every * (RECOMPUTE_SHARE_STATS_ONLY if mode is Checkpointing.FULL else 1.0)
    t = max(1, tensor_parallel)
    selective = mode is Checkpointing.SELECTIVE
    per_block = [sum(_saved_bytes(r, value_bytes, selective=selective) for r in rows) for rows in blocks.values()]
    if mode is Checkpointing.FULL:
        # Each block keeps its input (s x h values); the block being recomputed holds its own in full.
        first = next(iter(blocks.values()))[0]
        block_input = first.output_shape[0] * first.output_shape[-1] * value_bytes
        kept = block_input * len(per_block) + max(per_block)
    else:
        kept = sum(per_block)
    head = sum(_saved_bytes(r, value_bytes, selective=False) for r in after)
    start = sum(_saved_bytes(r, value_bytes, selective=False) for r in before)
    return start + (kept + head) / t


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
    return sum(r.multiply_adds * r.passes for r in rows) / total
