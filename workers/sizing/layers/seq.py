"""Layer rules for sequence models: LSTM, GRU, self-attention, the transformer block, a meta-learner.

Sequences are [sequence, features] per sample. Attention counts the projections as dense rows and
its core (Q K^T and probabilities x V, 2 * s^2 * h multiply-adds) as an attention row. A transformer
block with the defaults (pre-norm, GELU, FFN 4h, dropout) keeps exactly the activations of
Korthikanti et al. 2022: s*h*(34 + 5*a*s/h) bytes per sample at 16-bit, i.e.
saved_values * 2 + saved_mask_bytes == 34*s*h + 5*a*s^2 over its rows.
"""

from __future__ import annotations

from dataclasses import replace

from workers.sizing.errors import SpecError
from workers.sizing.layers.basic import (
    LAYERNORM_PARTS_EXTRA_KEPT,
    LAYERNORM_PARTS_TRAFFIC_PER_VALUE,
    RMSNORM_PARTS_TRAFFIC_PER_VALUE,
    rmsnorm_part,
)
from workers.sizing.layers.cross import LSE_BYTES, cross_attention_parts, score_bias
from workers.sizing.layers.feedforward import MAX_EXPERTS, ffn_parts, moe_parts
from workers.sizing.layers.fields import Fields, Part, Rule, Shape, show, size
from workers.sizing.stats import LayerKind

SEQUENCE = "[sequence, features]"
# Values a recurrent cell keeps per step and hidden unit: LSTM 4 gates + previous cell + tanh(cell) +
# previous hidden. This is what PyTorch's own LSTM cell keeps: measured for a 2-layer LSTM language
# model with oneDNN off (tests/fixtures/onnx, within 0.1%). GRU (ATen's GRUCell over precomputed input
# gates): the three hidden-side gate pre-activations, kept as one storage by the in-place sigmoids of the
# reset and update gates (3), the clone `mul_(reset_gate)` saves of the candidate's hidden term (1), the
# candidate tanh(.) (1), the clone `(hidden - new_gate).mul_(update_gate)` saves (1) and the new hidden,
# which the next step's matrix product keeps (1): 7, measured on the unseen GRU classifier (2 layers,
# 16 x 64 steps of 256 units: 14.0 MiB for 14 MiB counted; validation/step_kept_bytes.json). Neither is
# checked against cuDNN's reserve space: the one public cuDNN figure found (pytorch/pytorch#2895, P100:
# reserve 736,000,000 bytes for an LSTM, 864,000,000 for a GRU of the same shapes) lacks the sequence
# length and batch, so cuDNN's reserve may well differ; a GPU measurement is still owed.
KEPT_PER_UNIT = {"lstm": 7, "gru": 7}
GATES = {"lstm": 4, "gru": 3}


def _recurrent(cell: str) -> Rule:
    """Build the rule of a stacked, optionally bidirectional LSTM or GRU over [sequence, features]."""

    def compute(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
        (x,) = inputs
        f.rank(x, (2,), SEQUENCE)
        steps, features = x
        hidden, layers = f.whole("hidden"), f.whole("num_layers", 1)
        dirs = 2 if f.flag("bidirectional", False) else 1
        gates = GATES[cell]
        params = macs = 0
        for layer in range(layers):
            fan_in = features if layer == 0 else hidden * dirs
            per_step = gates * hidden * (fan_in + hidden)
            macs += steps * dirs * per_step
            # PyTorch keeps two bias vectors per gate (b_ih and b_hh).
            params += dirs * (per_step + (2 * gates * hidden if f.flag("bias", True) else 0))
        width = hidden * dirs
        shape = (steps, width) if f.flag("return_sequences", True) else (width,)
        kept = steps * dirs * layers * KEPT_PER_UNIT[cell] * hidden
        return [
            Part(
                cell,
                LayerKind.RECURRENT,
                shape,
                parameters=params,
                multiply_adds=macs,
                keeps_input=True,  # the input weights' gradient needs the input sequence
                extra_saved_values=kept,
                traffic_values=size(x) + kept + params,
                neurons=steps * width * layers,  # every layer's hidden state at every step
            )
        ]

    return Rule(compute, frozenset({"hidden", "num_layers", "bidirectional", "return_sequences", "bias"}))


def meta_lstm(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Update a learner's parameters coordinate-wise with an LSTM (Ravi & Larochelle 2017).

    Each of `coordinates` learner parameters gets its own state; the weights are shared: an LSTM
    cell (input: preprocessed loss and gradient, `input_features` values) and the meta cell's
    forget and input gates over [hidden, parameter, previous gate]. The learned initial parameters
    (cI in the reference code) are trainable too and counted here. One row is one update step.
    """
    coords = f.whole("coordinates", f.trainable_before or None)
    hidden, fan_in = f.whole("hidden", 20), f.whole("input_features", 4)
    lstm_weights = 4 * hidden * (fan_in + hidden)
    gate_weights = 2 * (hidden + 2)  # W_F and W_I over [h, theta, previous gate]
    params = lstm_weights + 8 * hidden + gate_weights + 2 + coords
    # Per coordinate: the LSTM's input and 7 values per unit, the gates' two inputs of hidden + 2,
    # their two sigmoid outputs and the gradient they scale.
    kept = coords * (fan_in + KEPT_PER_UNIT["lstm"] * hidden + 2 * (hidden + 2) + 3)
    return [
        Part(
            "meta_lstm",
            LayerKind.RECURRENT,
            (coords,),
            parameters=params,
            multiply_adds=coords * (lstm_weights + gate_weights),
            extra_saved_values=kept,
            traffic_values=2 * kept,
            neurons=coords * (2 * hidden + 3),  # h and c of the LSTM; forget, input and new value
        )
    ]


def attention_parts(f: Fields, x: Shape, *, heads: int, dropout: float, bias: bool, prefix: str = "",
                    kv_heads: int | None = None, qkv_bias: bool | None = None,
                    head_dim: int | None = None, causal: bool = False, qk_norm: bool = False,
                    qk_norm_parts: bool = False, kv_repeat: bool = False, fused_qkv: bool = False,
                    qkv_projections: int = 1) -> list[Part]:
    """Return the rows of multi-head self-attention: QKV projection, attention core, output projection.

    With `kv_heads` below `heads` (grouped-query attention, Ainslie et al. 2023, arXiv 2305.13245; LLaMA 2
    70B, LLaMA 3, Mistral) K and V have kv_heads heads each: the projection is h + 2 h kv/heads wide.
    `qkv_bias` (default: `bias`): biases on Q, K and V alone, as Qwen2 has them. `head_dim` (default
    hidden / heads): each head's width where the model sets it apart (Qwen3's 128 at hidden 2048 with 32
    heads): Q and the attention's output are heads x head_dim wide, K and V kv_heads x head_dim, and the
    output projection maps heads x head_dim back to the hidden size. `causal`: a decoder's mask; the math
    path multiplies the whole s x s matrices and masks them (the same count), a fused kernel (flash,
    memory-efficient) skips the tiles above the diagonal: s (s + 1) / 2 products of each (tile edges
    left out), its `fused_multiply_adds`. `qk_norm` (Qwen3, OLMo 2): an RMSNorm over each head of Q and K
    (head_dim weights each), which keeps its input: Q's and K's values before the norm; `qk_norm_parts`:
    Transformers' composed RMSNorm (Qwen3RMSNorm), which keeps a float32 copy of them and the normalised
    values cast back (4 bytes a value plus one in the activation dtype). `kv_repeat`: grouped K and V are
    copied to every head before the attention kernel (Transformers' `repeat_kv` in its eager and SDPA paths),
    which keeps the copies: 2 (heads - kv_heads) head_dim more values a token than K and V themselves.
    `fused_qkv`: one projection's output viewed per head and chunked into Q, K and V (GPT-NeoX's
    `query_key_value`): V is a view of it, so what the kernel keeps of V keeps the whole [q | k | v] output,
    beside the rotated copies of Q and K: the width of Q and K more values a token.
    `qkv_projections`: the modules the QKV row stands for, 3 where Q, K and V are separate linear layers
    (BERT, Llama in Transformers), 1 where one packed projection makes them (GPT-2's c_attn, torch's
    MultiheadAttention): under autocast each keeps its own 16-bit cast of a float32 input (autocast.py).
    """
    steps, hidden = x
    kv = heads if kv_heads is None else kv_heads
    if heads % kv:
        raise f.shape_error(f"kv_heads {kv} must divide heads {heads}")
    if head_dim is None:
        if hidden % heads:
            raise f.shape_error(f"{heads} heads must divide the hidden size {hidden} (input {show(x)}), "
                                "or give head_dim")
        head_dim = hidden // heads
    inner = heads * head_dim  # Q's width and the attention's output (the hidden size unless head_dim says)
    b = 1 if bias else 0
    bq = b if qkv_bias is None else int(qkv_bias)
    qkv = (steps, inner + 2 * kv * head_dim)
    probs = heads * steps * steps
    dropped = probs if dropout > 0 else 0
    core = (steps, inner)
    normed = steps * (inner + kv * head_dim)  # Q and K, each normed per head (qk_norm)
    repeated = 2 * steps * (heads - kv) * head_dim if kv_repeat else 0  # K and V copied up to every head
    viewed = steps * (inner + kv * head_dim) if fused_qkv else 0  # Q and K's share of the output V views
    norms = [Part("rmsnorm", LayerKind.NORM, qkv, parameters=2 * head_dim, extra_saved_values=normed,
                  saved_mask_bytes=4 * normed if qk_norm_parts else 0,
                  traffic_values=(RMSNORM_PARTS_TRAFFIC_PER_VALUE if qk_norm_parts else 2) * normed + 2 * head_dim,
                  suffix=f"{prefix}qk_norm")] if qk_norm else []
    return [
        Part(
            "dense",
            LayerKind.DENSE,
            qkv,
            parameters=qkv[1] * (hidden + bq),
            multiply_adds=steps * hidden * qkv[1],
            keeps_input=True,
            traffic_values=size(x) + size(qkv) + qkv[1] * (hidden + bq),
            suffix=f"{prefix}qkv",
            casts=qkv_projections,
        ),
        *norms,
        # Keeps Q, K and V (its input), the softmax output and, with dropout, the dropped
        # probabilities (the AV matmul's input) and their 1-byte mask: Korthikanti et al. 2022.
        # A fused kernel (memory-efficient, flash) keeps Q, K, V, its output (which the output
        # projection keeps too) and a float32 log-sum-exp per head and query row.
        Part(
            "attention",
            LayerKind.ATTENTION,
            core,
            multiply_adds=2 * steps * steps * inner,
            fused_multiply_adds=steps * (steps + 1) * inner if causal else -1,
            keeps_input=True,
            extra_saved_values=probs + dropped + repeated + viewed,
            saved_mask_bytes=dropped,
            traffic_values=size(qkv) + size(core) + 4 * probs + 2 * dropped + 2 * repeated,
            neurons=size(core) + 2 * probs + dropped,
            suffix=f"{prefix}attn",
            fused_extra_saved_values=repeated + viewed,
            fused_mask_bytes=LSE_BYTES * heads * steps,
        ),
        Part(
            "dense",
            LayerKind.DENSE,
            x,
            parameters=hidden * (inner + b),
            multiply_adds=steps * inner * hidden,
            keeps_input=True,
            traffic_values=size(core) + size(x) + hidden * (inner + b),
            suffix=f"{prefix}proj",
        ),
    ]


def multihead_attention(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Apply multi-head self-attention to [sequence, features] (causal: see attention_parts)."""
    (x,) = inputs
    f.rank(x, (2,), SEQUENCE)
    return attention_parts(f, x, heads=f.whole("heads"), dropout=f.fraction("dropout", 0.0), bias=f.flag("bias", True),
                           causal=f.flag("causal", False))


def _dropout_part(x: Shape, p: float, suffix: str) -> list[Part]:
    """Return a dropout row (a 1-byte mask per value), or none when p is 0."""
    if p == 0:
        return []
    return [
        Part(
            "dropout",
            LayerKind.ELEMENTWISE,
            x,
            saved_mask_bytes=size(x),
            traffic_values=2 * size(x),
            suffix=suffix,
        )
    ]


def _norm_part(x: Shape, norm_type: str, bias: bool, suffix: str) -> Part:
    """Return a layernorm or rmsnorm row that keeps its input (`layernorm_parts`: and its pieces;
    `rmsnorm_parts`: Transformers' composed RMSNorm, basic.rmsnorm_part)."""
    if norm_type == "rmsnorm_parts":
        return rmsnorm_part(x, parts=True, suffix=suffix)
    parts = norm_type == "layernorm_parts"
    params = x[1] * (2 if norm_type in ("layernorm", "layernorm_parts") and bias else 1)
    return Part(
        "layernorm" if parts else norm_type,
        LayerKind.NORM,
        x,
        parameters=params,
        keeps_input=True,
        extra_saved_values=LAYERNORM_PARTS_EXTRA_KEPT * size(x) if parts else 0,
        traffic_values=(LAYERNORM_PARTS_TRAFFIC_PER_VALUE if parts else 2) * size(x) + params,
        suffix=suffix,
    )


def _add_part(x: Shape, suffix: str) -> Part:
    """Return a residual add row (keeps nothing)."""
    return Part("add", LayerKind.ELEMENTWISE, x, traffic_values=3 * size(x), suffix=suffix)


def transformer_block(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Expand one transformer layer (attention + feed-forward, residuals, norms) into its rows; with `memory` a
    decoder block of an encoder-decoder, whose cross-attention reads that earlier layer's output (cross.py)."""
    x, memory = inputs[0], (inputs[1] if len(inputs) > 1 else None)
    f.rank(x, (2,), SEQUENCE, hint="start with an embedding, or give input_shape as [sequence, features]")
    if f.has("hidden") and f.whole("hidden") != x[1]:
        raise f.shape_error(f"hidden {f.whole('hidden')} does not match the input's features {show(x)}")
    if f.has("ffn") and f.has("ffn_multiplier"):
        raise f.shape_error("give ffn or ffn_multiplier, not both")
    ffn = f.whole("ffn") if f.has("ffn") else round(x[1] * f.number("ffn_multiplier", 4.0, minimum=0.01))
    # sandwich (Gemma 2): pre-norms as `pre`, and a norm on each sub-layer's output before its residual add;
    # parallel (GPT-NeoX): x + attention(ln1(x)) + ffn(ln2(x)); parallel_shared (Phi, GPT-J): one norm feeds both
    placement = f.choice("norm", ("pre", "post", "sandwich", "parallel", "parallel_shared"), "pre")
    pre = placement != "post"
    norm_type = f.choice("norm_type", ("layernorm", "layernorm_parts", "rmsnorm", "rmsnorm_parts"), "layernorm")
    activation = f.choice("activation", ("gelu", "gelu_new", "relu", "silu", "swiglu", "geglu", "geglu_new"), "gelu")
    p = f.fraction("dropout", 0.1)  # GPT-2 and BERT train with 0.1 (resid, attention, embedding)
    bias = f.flag("bias", True)
    causal = f.flag("causal", False)  # decoder or encoder: the same kept values; a fused causal core does less
    fused = f.flag("fused_qkv", False)
    projections = f.whole("qkv_projections", 1 if fused else 3)
    if projections not in (1, 3):
        raise SpecError(f.path("qkv_projections"), f"must be 1 (one packed Q/K/V projection) or 3 (separate ones), "
                                                   f"got {projections}")
    heads = f.whole("heads")
    kv_heads = f.whole("kv_heads") if f.has("kv_heads") else heads
    attention = attention_parts(f, x, heads=heads, dropout=p, bias=bias, kv_heads=kv_heads,
                                qkv_bias=f.flag("qkv_bias", bias),
                                head_dim=f.whole("head_dim") if f.has("head_dim") else None, causal=causal,
                                qk_norm=f.flag("qk_norm", False), qk_norm_parts=norm_type == "rmsnorm_parts",
                                kv_repeat=f.flag("kv_repeat", False), fused_qkv=fused,
                                qkv_projections=projections)
    if f.flag("attention_bias", False):  # T5: a relative-position bias and the mask added to the scores
        attention = score_bias(attention, heads, x[0], buckets=f.whole("relative_buckets", 0, minimum=0))
    elif f.has("relative_buckets"):
        raise f.shape_error("relative_buckets (T5's position-bias table) goes with attention_bias: true")
    cross_half: list[Part] = []
    if memory is not None:
        if placement not in ("pre", "post"):
            raise f.shape_error(f"a block with memory (cross-attention) takes norm pre or post, not {placement}")
        cross = cross_attention_parts(f, x, memory, heads=heads, dropout=p, bias=bias,
                                      head_dim=f.whole("head_dim") if f.has("head_dim") else None,
                                      kv_projections=2 if projections == 3 else 1,
                                      qkv_bias=f.flag("qkv_bias", bias))
        if f.flag("attention_bias", False):
            cross = score_bias(cross, heads, memory[0])
        cross_half = [*cross, *_dropout_part(x, p, "drop_cross"), _add_part(x, "add_cross")]
        cross_half = [_norm_part(x, norm_type, bias, "ln_cross"), *cross_half] if pre else [
            *cross_half, _norm_part(x, norm_type, bias, "ln_cross")]
    post_attention = [_norm_part(x, norm_type, bias, "post_ln1")] if placement == "sandwich" else []
    attention_half = [*attention, *_dropout_part(x, p, "drop1"), *post_attention, _add_part(x, "add1")]
    if f.has("experts"):
        experts = f.whole("experts", minimum=2)
        if experts > MAX_EXPERTS:
            raise SpecError(f.path("experts"), f"must be at most {MAX_EXPERTS}, got {experts}")
        top_k = f.whole("experts_per_token", 2)
        if top_k > experts:
            raise f.shape_error(f"experts_per_token {top_k} exceeds experts {experts}")
        shared = f.whole("shared_experts", 0, minimum=0)
        feed_forward = moe_parts(x, max(ffn, 1), activation, bias, experts=experts, top_k=top_k, shared=shared)
    elif f.has("experts_per_token") or f.has("shared_experts"):
        raise f.shape_error("experts_per_token and shared_experts need experts (a mixture-of-experts feed-forward)")
    else:
        feed_forward = ffn_parts(x, max(ffn, 1), activation, bias)
        if f.flag("inner_dropout", False):  # T5's feed-forward: dropout between the activation and wo
            feed_forward[-1:-1] = _dropout_part(feed_forward[-2].output_shape, p, "ffn_drop")
    if placement.startswith("parallel"):
        return _parallel_block(x, norm_type, bias, p, attention, feed_forward, shared=placement == "parallel_shared")
    post_ffn = [_norm_part(x, norm_type, bias, "post_ln2")] if placement == "sandwich" else []
    ffn_half = [
        *feed_forward,
        *_dropout_part(x, p, "drop2"),
        *post_ffn,
        _add_part(x, "add2"),
    ]
    if pre:
        return [
            _norm_part(x, norm_type, bias, "ln1"),
            *attention_half,
            *cross_half,
            _norm_part(x, norm_type, bias, "ln2"),
            *ffn_half,
        ]
    return [
        *attention_half,
        _norm_part(x, norm_type, bias, "ln1"),
        *cross_half,
        *ffn_half,
        _norm_part(x, norm_type, bias, "ln2"),
    ]


def _parallel_block(x: Shape, norm_type: str, bias: bool, p: float, attention: list[Part], feed_forward: list[Part],
                    *, shared: bool) -> list[Part]:
    """Return a parallel-residual block's rows: x + attention(ln1(x)) + ffn(ln2(x)) (GPT-NeoX's
    use_parallel_residual), or with `shared` one norm's output feeding both branches (Phi, GPT-J). The
    feed-forward reads the block's input through its own norm (which keeps the input ln1 already keeps: one
    tensor) or ln1's output (kept once, by both branches' first projections); one add of three."""
    head = [_norm_part(x, norm_type, bias, "ln1"), *attention, *_dropout_part(x, p, "drop1")]
    branch = feed_forward if shared else [_norm_part(x, norm_type, bias, "ln2"), *feed_forward]
    target = 0 if shared else -1  # ln1's row, or the block's input
    start = len(head)
    branch = [replace(part, source=(target - (start + i)) if target >= 0 else -(start + i) - 1)
              if i + part.source < 0 else part for i, part in enumerate(branch)]
    return [*head, *branch, *_dropout_part(x, p, "drop2"),
            Part("add", LayerKind.ELEMENTWISE, x, traffic_values=4 * size(x), suffix="add")]


RULES: dict[str, Rule] = {
    "lstm": _recurrent("lstm"),
    "gru": _recurrent("gru"),
    "meta_lstm": Rule(meta_lstm, frozenset({"coordinates", "hidden", "input_features"})),
    "multihead_attention": Rule(multihead_attention, frozenset({"heads", "dropout", "bias", "causal"})),
    "transformer_block": Rule(
        transformer_block, memory=True, keys=
        frozenset(
            {
                "hidden",
                "heads",
                "kv_heads",
                "head_dim",
                "ffn",
                "ffn_multiplier",
                "norm",
                "norm_type",
                "activation",
                "dropout",
                "causal",
                "bias",
                "qkv_bias",
                "qk_norm",
                "kv_repeat",
                "fused_qkv",
                "qkv_projections",
                "experts",
                "experts_per_token",
                "shared_experts",
                "memory",
                "attention_bias",
                "relative_buckets",
                "inner_dropout",
            }
        ),
    ),
}
