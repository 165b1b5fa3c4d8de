"""A transformer's shape read from its per-layer rows, and what LoRA and QLoRA add to it or take away.

LoRA (Hu et al. 2021, arXiv 2106.09685) freezes the base weights and trains, beside each chosen
projection W (d_in x d_out), two matrices A (d_in x r) and B (r x d_out): r (d_in + d_out) trainable
parameters per projection. QLoRA (Dettmers et al. 2023, arXiv 2305.14314) also stores the frozen base
weights of the linear layers in 4-bit NormalFloat (NF4) with one quantisation constant per block of
64 weights; double quantisation stores those constants in 8 bits with one fp32 constant per 256 of
them: "reduces the memory footprint of quantization constants ... from 32/64 = 0.5 bits per
parameter to 8/64 + 32/(64 * 256) = 0.127 bits" (QLoRA §3). Embeddings, norms and the output head
stay in 16 bits (bitsandbytes quantises nn.Linear layers inside the blocks; transformers keeps
lm_head in the compute dtype).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from enum import StrEnum

from workers.sizing.memo import IdentityMemo
from workers.sizing.row_table import figures, row_table
from workers.sizing.stats import LayerKind, LayerStats, ModelStats

# QLoRA §3: 4-bit NF4 weights plus 0.127 bits of double-quantised constants per parameter.
NF4_BITS_PER_PARAMETER = 4.0 + 8 / 64 + 32 / (64 * 256)
NF4_BYTES_PER_PARAMETER = NF4_BITS_PER_PARAMETER / 8
# Without double quantisation: one fp32 constant per block of 64, 32/64 = 0.5 bits (QLoRA §3).
NF4_NO_DQ_BYTES_PER_PARAMETER = (4.0 + 32 / 64) / 8


class Target(StrEnum):
    """A projection LoRA can adapt: the attention's query, key, value and output, or the MLP's."""

    Q = "q"
    K = "k"
    V = "v"
    O = "o"  # noqa: E741 - the name the papers and PEFT use
    MLP = "mlp"  # every feed-forward projection (fc1/fc2, or gate/up/down)


# Row-name suffixes of the transformer rule (layer_seq.py) and what each holds.
_QKV, _OUT = "qkv", "proj"
_CROSS_Q, _CROSS_KV, _CROSS_OUT = "cross_q", "cross_kv", "cross_proj"  # a block with memory (layers/cross.py)
MLP_SUFFIXES = frozenset({"fc1", "fc2", "gate", "up", "down",  # and a mixture's shared experts (layers/feedforward.py)
                          "shared_fc1", "shared_fc2", "shared_gate", "shared_up", "shared_down"})
_ROUTER = ".router"  # a mixture of experts' router row (layers/feedforward.py moe_parts): its outputs are the experts


@dataclass(frozen=True)
class TransformerShape:
    """What the strategies need to know about a transformer, read from its rows.

    `units` are the blocks (FSDP's wrapping units, checkpointing's segments); `largest_unit_parameters`
    also counts the embedding and the output head, which FSDP gathers as units of their own.
    """

    hidden: int
    heads: int
    sequence_length: int
    blocks: int
    block_parameters: int  # one block
    block_linear_parameters: int  # the weights of one block's dense rows (what QLoRA quantises)
    largest_unit_parameters: int
    lora_sizes: dict[str, int]  # per target, d_in + d_out summed over the matrices of every trained block


def block_of(layer: LayerStats) -> str:
    """Return the block a row belongs to ("layers.3" of "layers.3.qkv"), or "" for a top-level row."""
    return layer.name.rsplit(".", 1)[0] if "." in layer.name else ""


def _heads(attention: LayerStats, qkv_width: int, steps: int) -> int:
    """Return an attention row's heads: it keeps Q, K, V (s x qkv width) and a s^2 probabilities (x2 with dropout)."""
    per_head = steps * steps * (2 if attention.saved_mask_bytes else 1)
    return max(1, round((attention.saved_values - steps * qkv_width) / per_head))


def _input_width(row: LayerStats, *, hidden: int, widths: set[int], copies: int = 1) -> int:
    """Return a dense row's input width: the one of the block's widths with parameters = copies x d_in x d_out
    (+ bias); `copies`: a mixture's experts, one matrix each."""
    d_out = row.output_shape[-1]
    for d_in in sorted({hidden, *widths}):
        if row.parameters in (copies * d_in * d_out, copies * (d_in * d_out + d_out)):
            return d_in
    return row.parameters // max(copies * d_out, 1)


_KIND = operator.attrgetter("kind")
_KIND_FIGURE = figures("kind")
_SHAPES: IdentityMemo[TransformerShape | None] = IdentityMemo()


def transformer_shape(model: ModelStats) -> TransformerShape | None:
    """Return the model's transformer shape, or None for a model with no attention rows."""
    return _SHAPES.get(model, None, lambda: _transformer_shape(model))


def _transformer_shape(model: ModelStats) -> TransformerShape | None:
    """Compute transformer_shape."""
    if LayerKind.ATTENTION not in map(_KIND_FIGURE, row_table(model).distinct):  # most models have no attention row
        return None
    blocks: dict[str, list[LayerStats]] = {}
    for layer in model.layers:
        blocks.setdefault(block_of(layer), []).append(layer)
    attention_blocks = [name for name, rows in blocks.items()
                        if name and any(r.kind is LayerKind.ATTENTION for r in rows)]
    if not attention_blocks:
        return None
    # the trained ones (a diffusion step's frozen text encoder gets no adapters), each with its own widths
    trained = [name for name in attention_blocks if not all(r.frozen for r in blocks[name])] or attention_blocks
    rows = blocks[trained[0]]
    attention = next(r for r in rows if r.kind is LayerKind.ATTENTION)
    steps, inner = attention.output_shape[0], attention.output_shape[-1]  # heads x head_dim
    # the model's width: the output projection's (it maps the heads back), the attention's without one
    hidden = next((r.output_shape[-1] for r in rows if r.name.endswith(f".{_OUT}")), inner)
    sizes = {target.value: 0 for target in Target}
    for name in trained:
        for target, size in _lora_sizes(blocks[name]).items():
            sizes[target] += size
    qkv_width = next((r.output_shape[-1] for r in rows if r.name.endswith(f".{_QKV}")), 3 * inner)
    outside = [layer.parameters for layer in blocks.get("", [])]
    block_parameters = sum(r.parameters for r in rows)
    return TransformerShape(
        hidden=hidden, heads=_heads(attention, qkv_width, steps), sequence_length=steps,
        blocks=len(attention_blocks), block_parameters=block_parameters,
        block_linear_parameters=sum(r.parameters for r in rows if r.type == "dense"),
        largest_unit_parameters=max([block_parameters, *outside]),
        lora_sizes=sizes,
    )


def _lora_sizes(rows: list[LayerStats]) -> dict[str, int]:
    """Return one block's d_in + d_out per LoRA target: Q, K, V and O of its self-attention and of its cross-attention
    (an encoder-decoder's, a diffusion U-Net's: PEFT's q/k/v/o and diffusers' to_q/to_k/to_v/to_out match both)."""
    attention = next(r for r in rows if r.kind is LayerKind.ATTENTION)
    steps, inner = attention.output_shape[0], attention.output_shape[-1]  # heads x head_dim
    hidden = next((r.output_shape[-1] for r in rows if r.name.endswith(f".{_OUT}")), inner)
    sizes = {target.value: 0 for target in Target}
    widths = {r.output_shape[-1] for r in rows if r.type == "dense"}
    experts = next((r.output_shape[-1] for r in rows if r.name.endswith(_ROUTER)), 1)
    biased = 0  # whether the cross-attention's projections have biases (its Q's tells)
    for r in rows:
        suffix = r.name.rsplit(".", 1)[-1]
        if r.type != "dense":
            continue
        d_out = r.output_shape[-1]
        # a mixture's expert rows run over the routed copies of the tokens (more rows than the sequence)
        copies = experts if r.output_shape[0] != steps else 1
        if suffix == _CROSS_KV:  # K and V of the memory: d_in is the memory's width, less Q's bias (layers/cross.py)
            d_in = r.parameters // d_out - biased
            sizes[Target.K.value] += d_in + d_out // 2
            sizes[Target.V.value] += d_in + d_out // 2
            continue
        d_in = _input_width(r, hidden=hidden, widths=widths, copies=copies)
        biased = int(r.parameters > d_in * d_out) if suffix == _CROSS_Q else biased
        if suffix == _QKV:
            kv_width = (d_out - inner) // 2  # grouped-query attention: K and V narrower than Q
            sizes[Target.Q.value] += d_in + inner
            sizes[Target.K.value] += d_in + kv_width
            sizes[Target.V.value] += d_in + kv_width
        elif suffix == _CROSS_Q:
            sizes[Target.Q.value] += d_in + d_out
        elif suffix in (_OUT, _CROSS_OUT):
            sizes[Target.O.value] += d_in + d_out
        elif suffix in MLP_SUFFIXES:  # one adapter per expert in a mixture of experts
            sizes[Target.MLP.value] += copies * (d_in + d_out)
    return sizes


def lora_parameters(shape: TransformerShape, *, rank: int, targets: tuple[str, ...]) -> int:
    """Return the trainable LoRA parameters: r x (d_in + d_out) per adapted matrix, over every trained block."""
    return rank * sum(shape.lora_sizes[t] for t in set(targets))


def quantized_parameters(shape: TransformerShape) -> int:
    """Return the base parameters QLoRA stores in NF4: every block's linear weights."""
    return shape.blocks * shape.block_linear_parameters
