"""Checkpointing and tensor parallel as the step walk sees them: what each row keeps, what backward recomputes.

The walk's own per-row kept bytes (step_walk.kept_per_row) are the job as given; a strategy changes
them per transformer block (the blocks are checkpointing's segments, adapters.block_of):
- selective (Korthikanti et al. 2022, arXiv 2205.05198 §5): the attention core is recomputed, so an
  attention row keeps what a fused kernel keeps (q, k, v and the output); with a fused kernel
  already running there is nothing left to drop;
- selective_ops (torchtitan's op-level policy, pytorch/torchtitan@004b3148
  torchtitan/parallelisms/parallelize_llama.py `_save_list`, the default of its Llama 3 configs,
  train_configs/llama3_8b.toml `selective_ac_option = 'op'`): each block keeps its input, the
  outputs of the attention kernel and of every other matmul in call order (q, v, gate, down of
  q, k, v, o, gate, up, down); backward recomputes the rest of the block before it runs;
- full: each block keeps its input (s x h) and backward recomputes the whole block first;
- tensor parallel t with sequence parallelism divides what the blocks and the head keep by t
  (Korthikanti eq. 5; vocabulary-parallel logits);
- adapters (LoRA, QLoRA) freeze every base weight: backward through a frozen y = x W needs only W
  (autograd saves `mm`'s input only when the weight needs a gradient), so a dense row that is not
  adapted keeps nothing; an adapted one keeps its input for the adapter's A gradient (its 16-bit
  autocast copy, or the bf16 input of QLoRA's bf16 adapters: the activations' width either way).
  Not counted: the adapter's r-wide intermediate and a LoRA dropout's mask and output. Under
  bitsandbytes before 0.44.0 every 4-bit linear keeps its input all the same (types.Adapter
  `quantized_inputs_kept`: MatMul4Bit saved A): the targets are then EVERY_LINEAR.
"""

from __future__ import annotations

import math

from workers.sizing.layers.attention import Attention, kept_for_backward
from workers.sizing.memo import IdentityMemo
from workers.sizing.overheads import ACTIVATION_BYTES, FRAMEWORK_ACTIVATION_FACTOR
from workers.sizing.spec import Precision, Training
from workers.sizing.stats import LayerKind, LayerStats, ModelStats
from workers.sizing.step_walk import Retention, kept_per_row
from workers.sizing.strategies.adapters import MLP_SUFFIXES, block_of
from workers.sizing.strategies.types import Checkpointing

_QKV_SUFFIX = ".qkv"
EVERY_LINEAR = ("*",)  # adapted targets under which every frozen dense row keeps its input


def _block_spans(model: ModelStats) -> list[tuple[int, int]]:
    """Return each attention block's [start, end) rows, in order (the blocks are contiguous)."""
    names = {block_of(row) for row in model.layers if row.kind is LayerKind.ATTENTION}
    spans: list[tuple[int, int]] = []
    current, start = "", 0
    for i, row in enumerate(model.layers):
        block = block_of(row)
        if block != current:
            if current in names:
                spans.append((start, i))
            current, start = block, i
    if current in names:
        spans.append((start, len(model.layers)))
    return spans


def _size(shape: tuple[int, ...]) -> int:
    return math.prod(shape) if shape else 1


def matmul_widths(row: LayerStats, hidden: int) -> list[int]:
    """Return the output widths of a dense row's matmuls in call order (a fused q/k/v row is three)."""
    width = row.output_shape[-1]
    if row.name.endswith(_QKV_SUFFIX) and width > hidden:
        kv = (width - hidden) // 2
        return [hidden, kv, kv]
    return [width]


def _ops_saved_values(rows: list[LayerStats]) -> int:
    """Return the values per sample a block keeps under torchtitan's op-level policy."""
    first = rows[0]
    steps, hidden = first.output_shape[0], first.output_shape[-1]
    saved = _size(first.output_shape)  # the block's input (the first row's output has its shape)
    position = 0
    for row in rows:
        if row.kind is LayerKind.ATTENTION:
            saved += _size(row.output_shape)  # the kernel's output (its log-sum-exp: a float per query row and head)
        elif row.type == "dense":
            for width in matmul_widths(row, hidden):
                position += 1
                if position % 2:  # "Saves output of all compute ops, except every second mm"
                    saved += steps * width
    return saved


_RETENTION: IdentityMemo[Retention | None] = IdentityMemo(size=512)


# Which adapter target adapts a dense row of a block, by the row's suffix (adapters.py's names).
_TARGETS_OF_SUFFIX = {"qkv": frozenset({"q", "k", "v"}), "proj": frozenset({"o"}),
                      **{suffix: frozenset({"mlp"}) for suffix in MLP_SUFFIXES}}


def _adapted(row: LayerStats, targets: tuple[str, ...]) -> bool:
    """Return whether LoRA with these targets adapts the dense row (a top-level row, the head: never)."""
    if not block_of(row):
        return False
    return bool(_TARGETS_OF_SUFFIX.get(row.name.rsplit(".", 1)[-1], frozenset()) & set(targets))


def layout_retention(model: ModelStats, training: Training, *, precision: Precision, attention: Attention,
                     mode: Checkpointing, tensor_parallel: int = 1,
                     adapted: tuple[str, ...] | None = None) -> Retention | None:
    """Return the walk's per-row retention under the mode and tensor-parallel degree, or None for the walk's own.

    `adapted`: the LoRA/QLoRA targets when the base weights are frozen (None: the base weights train).
    """
    key = (training.batch_size, training.framework, precision, attention, mode, tensor_parallel, adapted)
    return _RETENTION.get(model, key, lambda: _layout_retention(model, training, precision=precision,
                                                                attention=attention, mode=mode,
                                                                tensor_parallel=tensor_parallel, adapted=adapted))


def _layout_retention(model: ModelStats, training: Training, *, precision: Precision, attention: Attention,
                      mode: Checkpointing, tensor_parallel: int, adapted: tuple[str, ...] | None) -> Retention | None:
    """Compute layout_retention."""
    spans = _block_spans(model)
    plain = mode in (Checkpointing.NONE, Checkpointing.AUTO)
    if not model.layers or not spans or (plain and tensor_parallel <= 1 and adapted is None):
        return None
    base = kept_per_row(model, training, precision=precision, attention=attention)
    if adapted is not None and adapted != EVERY_LINEAR:  # frozen base weights: a dense row not adapted keeps none
        base = [0 if row.type == "dense" and not _adapted(row, adapted) else b
                for row, b in zip(model.layers, base, strict=True)]
    kept = [float(b) for b in base]
    recomputed = [0.0] * len(base)
    ends = list(range(len(base)))
    per_value = ACTIVATION_BYTES[precision] * training.batch_size * FRAMEWORK_ACTIVATION_FACTOR[training.framework]
    layers = model.layers
    for start, end in spans:
        rows = list(layers[start:end])
        whole = float(sum(base[start:end]))
        if mode is Checkpointing.SELECTIVE:
            for i in range(start, end):
                if layers[i].kind is LayerKind.ATTENTION:
                    values, mask = kept_for_backward(layers[i], Attention.FLASH)
                    fused = (values * ACTIVATION_BYTES[precision] + mask) * training.batch_size \
                        * FRAMEWORK_ACTIVATION_FACTOR[training.framework]
                    kept[i] = min(float(base[i]), fused)
                    recomputed[i] = base[i] - kept[i]
        elif mode in (Checkpointing.FULL, Checkpointing.SELECTIVE_OPS):
            values = _size(rows[0].output_shape) if mode is Checkpointing.FULL \
                else _ops_saved_values(rows)
            held = min(whole, values * per_value)
            share = (whole - held) / whole if whole > 0 else 0.0
            for i in range(start, end):
                kept[i] = 0.0
                recomputed[i] = base[i] * share
                ends[i] = end - 1
            kept[start] = held
    if tensor_parallel > 1:  # the blocks (contiguous) and the head after them
        for i in range(spans[0][0], len(base)):
            kept[i] /= tensor_parallel
            recomputed[i] /= tensor_parallel
    return Retention(kept=tuple(round(k) for k in kept), recomputed=tuple(round(r) for r in recomputed),
                     segment_end=tuple(ends))
