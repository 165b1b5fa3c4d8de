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
from workers.sizing.layers.basic import LAYERNORM_PARTS_EXTRA_KEPT, LAYERNORM_PARTS_TRAFFIC_PER_VALUE
from workers.sizing.layers.fields import Fields, Part, Rule, Shape, elementwise, show, size
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
# Tensors of the FFN's inner size that gelu_new keeps beyond its input (see _ffn_parts).
GELU_NEW_EXTRA_KEPT = 3
# Values gelu_new reads and writes per element of its input: eager PyTorch runs each primitive op as its
# own kernel over the whole tensor (Hugging Face NewGELUActivation, LLMs-from-scratch ch04 GELU):
# 0.5 * x (2), x^3 (2), 0.044715 * (2), x + (3), c * (2), tanh (2), 1 + (2), the product (3): 18, against
# a fused GELU's one read and one write (2).
GELU_NEW_TRAFFIC_PER_VALUE = 18
LSE_BYTES = 4  # a fused attention kernel's log-sum-exp per head and query row is float32
MAX_EXPERTS = 1024  # a guard: published mixture-of-experts layers have 8 (Mixtral) to 256 (DeepSeek-V3) experts


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
                    kv_heads: int | None = None, qkv_bias: bool | None = None) -> list[Part]:
    """Return the rows of multi-head self-attention: QKV projection, attention core, output projection.

    With `kv_heads` below `heads` (grouped-query attention, Ainslie et al. 2023, arXiv 2305.13245; LLaMA 2
    70B, LLaMA 3, Mistral) K and V have kv_heads heads each: the projection is h + 2 h kv/heads wide.
    `qkv_bias` (default: `bias`): biases on Q, K and V alone, as Qwen2 has them.
    """
    steps, hidden = x
    if hidden % heads:
        raise f.shape_error(f"{heads} heads must divide the hidden size {hidden} (input {show(x)})")
    kv = heads if kv_heads is None else kv_heads
    if heads % kv:
        raise f.shape_error(f"kv_heads {kv} must divide heads {heads}")
    b = 1 if bias else 0
    bq = b if qkv_bias is None else int(qkv_bias)
    qkv = (steps, hidden + 2 * hidden * kv // heads)
    probs = heads * steps * steps
    dropped = probs if dropout > 0 else 0
    core = (steps, hidden)
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
        ),
        # Keeps Q, K and V (its input), the softmax output and, with dropout, the dropped
        # probabilities (the AV matmul's input) and their 1-byte mask: Korthikanti et al. 2022.
        # A fused kernel (memory-efficient, flash) keeps Q, K, V, its output (which the output
        # projection keeps too) and a float32 log-sum-exp per head and query row.
        Part(
            "attention",
            LayerKind.ATTENTION,
            core,
            multiply_adds=2 * steps * steps * hidden,
            keeps_input=True,
            extra_saved_values=probs + dropped,
            saved_mask_bytes=dropped,
            traffic_values=size(qkv) + size(core) + 4 * probs + 2 * dropped,
            neurons=size(core) + 2 * probs + dropped,
            suffix=f"{prefix}attn",
            fused_extra_saved_values=0,
            fused_mask_bytes=LSE_BYTES * heads * steps,
        ),
        Part(
            "dense",
            LayerKind.DENSE,
            x,
            parameters=hidden * (hidden + b),
            multiply_adds=steps * hidden * hidden,
            keeps_input=True,
            traffic_values=2 * size(x) + hidden * (hidden + b),
            suffix=f"{prefix}proj",
        ),
    ]


def multihead_attention(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Apply multi-head self-attention to [sequence, features]; causal masking costs the same."""
    (x,) = inputs
    f.rank(x, (2,), SEQUENCE)
    f.flag("causal", False)  # a masked full matmul: same multiply-adds and kept values
    return attention_parts(f, x, heads=f.whole("heads"), dropout=f.fraction("dropout", 0.0), bias=f.flag("bias", True))


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
    """Return a layernorm or rmsnorm row that keeps its input (`layernorm_parts`: and its pieces)."""
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


def _dense_part(x: Shape, units: int, bias: bool, suffix: str, *, source: int = -1) -> Part:
    """Return a dense row over the last axis that keeps its input."""
    shape = (x[0], units)
    params = x[1] * units + (units if bias else 0)
    return Part(
        "dense",
        LayerKind.DENSE,
        shape,
        parameters=params,
        multiply_adds=x[0] * x[1] * units,
        keeps_input=True,
        traffic_values=size(x) + size(shape) + params,
        suffix=suffix,
        source=source,
    )


def _ffn_parts(x: Shape, ffn: int, activation: str, bias: bool) -> list[Part]:
    """Return the feed-forward rows: two dense layers around an activation, or SwiGLU's three."""
    inner = (x[0], ffn)
    if activation == "swiglu":  # LLaMA: down(silu(gate(x)) * up(x)); up reads the same input as gate
        return [
            _dense_part(x, ffn, bias, "gate"),
            _dense_part(x, ffn, bias, "up", source=-2),
            Part(
                "silu",
                LayerKind.ELEMENTWISE,
                inner,
                keeps_input=True,
                traffic_values=2 * size(inner),
                suffix="act",
                source=-2,
            ),
            # The product keeps both factors: silu's output (its input here) and up's output.
            Part(
                "mul",
                LayerKind.ELEMENTWISE,
                inner,
                keeps_input=True,
                extra_saved_values=size(inner),
                traffic_values=3 * size(inner),
                suffix="mul",
            ),
            _dense_part(inner, x[1], bias, "down"),
        ]
    act = elementwise(
        activation, inner, keeps_input=activation != "relu", keeps_output=activation == "relu", suffix="act"
    )
    if activation == "gelu_new":
        # Hugging Face's gelu_new (GPT-2), the tanh form written as primitive ops:
        # 0.5 * x * (1 + tanh(c * (x + 0.044715 * x^3))). Autograd keeps x (for pow), tanh's output,
        # and both factors of the last product: 3 more 4h-sized tensors than the fused GELU
        # (measured here: gpt2 records, 348 MiB kept against 240 MiB with F.gelu(approximate="tanh")).
        # Each op is its own kernel, so it also moves 9x a fused GELU's bytes (GELU_NEW_TRAFFIC_PER_VALUE).
        act = replace(act, extra_saved_values=GELU_NEW_EXTRA_KEPT * size(inner),
                      traffic_values=GELU_NEW_TRAFFIC_PER_VALUE * size(inner))
    return [_dense_part(x, ffn, bias, "fc1"), act, _dense_part(inner, x[1], bias, "fc2")]


def _expert_part(part: Part, experts: int) -> Part:
    """Return one expert's row as all `experts` of it: their weights (each step reads every expert's), one's work."""
    if part.parameters == 0:
        return part
    return replace(part, parameters=part.parameters * experts,
                   traffic_values=part.traffic_values + (experts - 1) * part.parameters)


def _moe_parts(x: Shape, ffn: int, activation: str, bias: bool, *, experts: int, top_k: int,
               shared: int = 0) -> list[Part]:
    """Return a sparse mixture-of-experts feed-forward (Shazeer et al. 2017; Mixtral, Jiang et al. 2024).

    A router (a dense h -> experts row) scores each token; softmax and top-k choose `top_k` experts; each
    token is copied to them (the dispatched copies are what their first matrices keep), each expert is
    the block's usual feed-forward over its tokens, and the outputs, weighted by their routing scores,
    are summed back per token. In all: the work of a dense feed-forward over top_k x the tokens, with
    `experts` times its weights (Hugging Face's MixtralSparseMoeBlock keeps the same tensors: the gathered
    input, each expert's activations, and each expert's output for the weighting). Load is taken as even
    over the experts; dropped tokens and capacity factors are not modelled. `shared` experts (DeepSeekMoE,
    Dai et al. 2024; Qwen-MoE; Llama 4) see every token: one feed-forward `shared` x `ffn` wide beside the
    routed ones, read from the same normalised input, its output added to theirs.
    """
    routed = (x[0] * top_k, x[1])
    router = _dense_part(x, experts, False, "router")
    scores = Part("softmax", LayerKind.ELEMENTWISE, (x[0], experts), keeps_output=True,
                  traffic_values=2 * x[0] * experts, suffix="route")
    # the copies of each token for its experts, read from the router's input (the normalised x)
    dispatch = Part("gather", LayerKind.ELEMENTWISE, routed, traffic_values=size(x) + size(routed),
                    suffix="dispatch", source=-3)
    expert_rows = [_expert_part(p, experts) for p in _ffn_parts(routed, ffn, activation, bias)]
    # each expert output times its routing weight keeps the output; the sum back per token keeps nothing
    combine = Part("mul", LayerKind.ELEMENTWISE, routed, keeps_input=True, traffic_values=3 * size(routed),
                   suffix="combine")
    scatter = Part("add", LayerKind.ELEMENTWISE, x, traffic_values=size(routed) + size(x), suffix="scatter")
    parts = [router, scores, dispatch, *expert_rows, combine, scatter]
    if shared > 0:
        reads_input = {"gate", "up", "fc1"}  # the rows that read the feed-forward's input: the normalised x
        for p in _ffn_parts(x, ffn * shared, activation, bias):
            source = -(len(parts) + 1) if p.suffix in reads_input else p.source  # back to the row before router
            parts.append(replace(p, suffix=f"shared_{p.suffix}", source=source))
        parts.append(Part("add", LayerKind.ELEMENTWISE, x, traffic_values=3 * size(x), suffix="shared_add"))
    return parts


def _add_part(x: Shape, suffix: str) -> Part:
    """Return a residual add row (keeps nothing)."""
    return Part("add", LayerKind.ELEMENTWISE, x, traffic_values=3 * size(x), suffix=suffix)


def transformer_block(f: Fields, inputs: tuple[Shape, ...]) -> list[Part]:
    """Expand one transformer layer (attention + feed-forward, residuals, norms) into its rows."""
    (x,) = inputs
    f.rank(x, (2,), SEQUENCE, hint="start with an embedding, or give input_shape as [sequence, features]")
    if f.has("hidden") and f.whole("hidden") != x[1]:
        raise f.shape_error(f"hidden {f.whole('hidden')} does not match the input's features {show(x)}")
    if f.has("ffn") and f.has("ffn_multiplier"):
        raise f.shape_error("give ffn or ffn_multiplier, not both")
    ffn = f.whole("ffn") if f.has("ffn") else round(x[1] * f.number("ffn_multiplier", 4.0, minimum=0.01))
    pre = f.choice("norm", ("pre", "post"), "pre") == "pre"
    norm_type = f.choice("norm_type", ("layernorm", "layernorm_parts", "rmsnorm"), "layernorm")
    activation = f.choice("activation", ("gelu", "gelu_new", "relu", "silu", "swiglu"), "gelu")
    p = f.fraction("dropout", 0.1)  # GPT-2 and BERT train with 0.1 (resid, attention, embedding)
    bias = f.flag("bias", True)
    f.flag("causal", False)  # decoder (causal) or encoder: the same counts, see multihead_attention
    heads = f.whole("heads")
    kv_heads = f.whole("kv_heads") if f.has("kv_heads") else heads
    attention = attention_parts(f, x, heads=heads, dropout=p, bias=bias, kv_heads=kv_heads,
                                qkv_bias=f.flag("qkv_bias", bias))
    attention_half = [*attention, *_dropout_part(x, p, "drop1"), _add_part(x, "add1")]
    if f.has("experts"):
        experts = f.whole("experts", minimum=2)
        if experts > MAX_EXPERTS:
            raise SpecError(f.path("experts"), f"must be at most {MAX_EXPERTS}, got {experts}")
        top_k = f.whole("experts_per_token", 2)
        if top_k > experts:
            raise f.shape_error(f"experts_per_token {top_k} exceeds experts {experts}")
        shared = f.whole("shared_experts", 0, minimum=0)
        feed_forward = _moe_parts(x, max(ffn, 1), activation, bias, experts=experts, top_k=top_k, shared=shared)
    elif f.has("experts_per_token") or f.has("shared_experts"):
        raise f.shape_error("experts_per_token and shared_experts need experts (a mixture-of-experts feed-forward)")
    else:
        feed_forward = _ffn_parts(x, max(ffn, 1), activation, bias)
    ffn_half = [
        *feed_forward,
        *_dropout_part(x, p, "drop2"),
        _add_part(x, "add2"),
    ]
    if pre:
        return [
            _norm_part(x, norm_type, bias, "ln1"),
            *attention_half,
            _norm_part(x, norm_type, bias, "ln2"),
            *ffn_half,
        ]
    return [
        *attention_half,
        _norm_part(x, norm_type, bias, "ln1"),
        *ffn_half,
        _norm_part(x, norm_type, bias, "ln2"),
    ]


RULES: dict[str, Rule] = {
    "lstm": _recurrent("lstm"),
    "gru": _recurrent("gru"),
    "meta_lstm": Rule(meta_lstm, frozenset({"coordinates", "hidden", "input_features"})),
    "multihead_attention": Rule(multihead_attention, frozenset({"heads", "dropout", "bias", "causal"})),
    "transformer_block": Rule(
        transformer_block,
        frozenset(
            {
                "hidden",
                "heads",
                "kv_heads",
                "ffn",
                "ffn_multiplier",
                "norm",
                "norm_type",
                "activation",
                "dropout",
                "causal",
                "bias",
                "qkv_bias",
                "experts",
                "experts_per_token",
                "shared_experts",
            }
        ),
    ),
}
