"""Feed-forward rows of a transformer block: dense, GELU, SwiGLU or GeGLU, and sparse mixtures of experts.

Split from seq.py (the block's rule there assembles attention, norms and these).
"""

from __future__ import annotations

from dataclasses import replace

from workers.sizing.layers.fields import Part, Shape, elementwise, size
from workers.sizing.stats import LayerKind

# Tensors of the FFN's inner size that gelu_new keeps beyond its input (see ffn_parts).
GELU_NEW_EXTRA_KEPT = 3
# Values gelu_new reads and writes per element of its input: eager PyTorch runs each primitive op as its
# own kernel over the whole tensor (Hugging Face NewGELUActivation, LLMs-from-scratch ch04 GELU):
# 0.5 * x (2), x^3 (2), 0.044715 * (2), x + (3), c * (2), tanh (2), 1 + (2), the product (3): 18, against
# a fused GELU's one read and one write (2).
GELU_NEW_TRAFFIC_PER_VALUE = 18
# a gated feed-forward's activation row; geglu_new: T5 v1.1's (FLAN-T5) gated-gelu, its GELU Hugging Face's gelu_new
GATED = {"swiglu": "silu", "geglu": "gelu", "geglu_new": "gelu"}
MAX_EXPERTS = 1024  # a guard: published mixture-of-experts layers have 8 (Mixtral) to 256 (DeepSeek-V3) experts


def dense_part(x: Shape, units: int, bias: bool, suffix: str, *, source: int = -1) -> Part:
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


def ffn_parts(x: Shape, ffn: int, activation: str, bias: bool) -> list[Part]:
    """Return the feed-forward rows: two dense layers around an activation, or a gated unit's three.

    `swiglu` (LLaMA, Mistral, Qwen, Phi-3): down(silu(gate(x)) * up(x)); `geglu` (Gemma, Gemma 2: Hugging
    Face's GemmaMLP, gelu_pytorch_tanh): the same with the tanh GELU, one fused kernel that keeps its input
    as silu does (Shazeer 2020, GLU Variants Improve Transformer, arXiv 2002.05202).
    """
    inner = (x[0], ffn)
    if activation in GATED:  # up reads the same input as gate
        composed = activation == "geglu_new"  # gelu_new's primitive ops keep 3 more tensors (below)
        return [
            dense_part(x, ffn, bias, "gate"),
            dense_part(x, ffn, bias, "up", source=-2),
            Part(
                GATED[activation],
                LayerKind.ELEMENTWISE,
                inner,
                keeps_input=True,
                extra_saved_values=GELU_NEW_EXTRA_KEPT * size(inner) if composed else 0,
                traffic_values=(GELU_NEW_TRAFFIC_PER_VALUE if composed else 2) * size(inner),
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
            dense_part(inner, x[1], bias, "down"),
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
    return [dense_part(x, ffn, bias, "fc1"), act, dense_part(inner, x[1], bias, "fc2")]


def _expert_part(part: Part, experts: int) -> Part:
    """Return one expert's row as all `experts` of it: their weights (each step reads every expert's), one's work."""
    if part.parameters == 0:
        return part
    return replace(part, parameters=part.parameters * experts,
                   traffic_values=part.traffic_values + (experts - 1) * part.parameters)


def moe_parts(x: Shape, ffn: int, activation: str, bias: bool, *, experts: int, top_k: int,
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
    router = dense_part(x, experts, False, "router")
    scores = Part("softmax", LayerKind.ELEMENTWISE, (x[0], experts), keeps_output=True,
                  traffic_values=2 * x[0] * experts, suffix="route")
    # the copies of each token for its experts, read from the router's input (the normalised x)
    dispatch = Part("gather", LayerKind.ELEMENTWISE, routed, traffic_values=size(x) + size(routed),
                    suffix="dispatch", source=-3)
    expert_rows = [_expert_part(p, experts) for p in ffn_parts(routed, ffn, activation, bias)]
    # each expert output times its routing weight keeps the output; the sum back per token keeps nothing
    combine = Part("mul", LayerKind.ELEMENTWISE, routed, keeps_input=True, traffic_values=3 * size(routed),
                   suffix="combine")
    scatter = Part("add", LayerKind.ELEMENTWISE, x, traffic_values=size(routed) + size(x), suffix="scatter")
    parts = [router, scores, dispatch, *expert_rows, combine, scatter]
    if shared > 0:
        reads_input = {"gate", "up", "fc1"}  # the rows that read the feed-forward's input: the normalised x
        for p in ffn_parts(x, ffn * shared, activation, bias):
            source = -(len(parts) + 1) if p.suffix in reads_input else p.source  # back to the row before router
            parts.append(replace(p, suffix=f"shared_{p.suffix}", source=source))
        parts.append(Part("add", LayerKind.ELEMENTWISE, x, traffic_values=3 * size(x), suffix="shared_add"))
    return parts
