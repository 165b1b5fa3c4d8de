"""A decoder language model from its Hugging Face `config.json`: the spec's `model.hf_config`.

(BERT-style encoders and GPT-2 are read by hf_encoders.py; this module dispatches to it.)

A user fine-tuning a model from the Hugging Face Hub has its `config.json`; the fields that set the
memory and the work (depth, widths, heads, grouped K/V, head width, vocabulary, tied embeddings,
experts) become the same layer list the presets are built from (transformer.llama_layers' shape). The
model types read are the decoders whose block the layer vocabulary states exactly:

- `llama`, `mistral`, `phi3`: RMSNorm, SwiGLU; Q, K and V biases only where `attention_bias` says
  (Phi-3's fused qkv and gate_up projections hold the same weights as separate ones; its `qkv_proj` output
  is sliced into Q, K and V, so V keeps the whole output alive as GPT-NeoX's does: `fused_qkv`);
- `qwen2`: the same with biases on Q, K and V (Qwen2Attention has them whatever the config says);
- `qwen3`, `qwen3_moe`: an RMSNorm over each head of Q and K (`qk_norm`); Qwen3-MoE's sparse layers
  (`num_experts`, `num_experts_per_tok`, `moe_intermediate_size`, `decoder_sparse_step`, `mlp_only_layers`);
- `mixtral`: Mistral's block with `num_local_experts` SwiGLU experts, `num_experts_per_tok` per token;
- `gemma`: GeGLU (`gelu_pytorch_tanh`), `head_dim` apart from hidden / heads, embeddings tied;
- `gemma2`: Gemma's block with a norm before and after each sub-layer (`norm: sandwich`) and the final
  logits soft-capped (tanh: one more [sequence, vocabulary] tensor kept); `gemma3_text`: Gemma 2's block
  with `qk_norm` and no soft-capping;
- `gpt_neox` (Pythia, GPT-NeoX-20B): the parallel residual `x + attention(ln1(x)) + mlp(ln2(x))` where
  `use_parallel_residual` (the default; else pre-norm), nn.LayerNorm and every linear with a bias, one
  fused `query_key_value` projection whose output V is a view of (`fused_qkv`), a plain MLP with
  `hidden_act` (exact GELU by default), `embed_out` untied;
- `phi` (Phi-1.5, Phi-2): one nn.LayerNorm feeding both branches (`norm: parallel_shared`), separate Q, K
  and V with biases, a plain MLP with `gelu_new` (Transformers' tanh form in primitive ops), `lm_head` with
  a bias; `qk_layernorm` is refused. Partial rotary embeddings (`rotary_pct`, `partial_rotary_factor`) keep
  nothing more, as full ones; the dropout is `hidden_dropout` / `resid_pdrop` (0 in Pythia and Phi-2's
  fine-tuning recipes unless set). Measured against such modules (validation/measure/nets_hf_parallel.py)
  before these types were read.

Each field's default is its model type's in Hugging Face Transformers (`tie_word_embeddings` False for
the Llama-style types, True for Gemma). The blocks are sized as Transformers' eager modules run them: its
RMSNorm composed in float32 (`rmsnorm_parts`: 8 bytes kept a value) and grouped K/V copied to every head
before SDPA (`kv_repeat`); measured here against such modules (validation/measure/nets_hf_decoder.py).
Rotary embeddings have no weights and keep nothing more (cos and sin need no gradient, so the products
save only them) and are not rows; sliding-window
attention and attention-logit soft-capping are not modelled (a fused kernel over the window does less
work; HF's SDPA path cannot soft-cap, and Gemma 2 trained with `attn_implementation="eager"` keeps the
s x s matrices: say `training.attention: math`). A multimodal config (`text_config`, a vision tower)
is refused: its encoder is not a decoder block.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workers.sizing.errors import SpecError, UnknownNameError
from workers.sizing.layers.feedforward import MAX_EXPERTS
from workers.sizing.layers.fields import closest
from workers.sizing.presets.hf_encoders import ENCODER_TYPES, config_fraction, encoder_context, encoder_layers
from workers.sizing.presets.hf_encoders import config_whole as _whole
from workers.sizing.presets.hf_seq2seq import SEQ2SEQ_TYPES, T5_CONTEXT, T5_TYPES, seq2seq_layers
from workers.sizing.presets.transformer import CLASSIFIER

Layer = dict[str, object]
FIELD = "model.hf_config"
# Presets and this builder size language models at their context, at most this many tokens (Llama 3's
# pre-training context); a longer fine-tune says training.sequence_length.
MAX_DEFAULT_SEQUENCE = 8192
MAX_WIDTH = 1_000_000  # a guard far beyond any published model (hidden 16,384 / FFN 53,248 for 405B)
MAX_DEPTH = 1_000
MAX_VOCABULARY = 10_000_000
MAX_CONFIG_CHARS = 256 * 1024  # a config.json is a few KB; the HTTP body limit binds too


@dataclass(frozen=True)
class Family:
    """What a model type's block is beyond the fields every config gives."""

    tie_default: bool = False
    qkv_bias: bool | None = None  # None: the config's attention_bias (default False)
    norm: str = "pre"
    qk_norm: bool = False
    gated: str = "swiglu"  # the feed-forward's gate when hidden_act is silu; gemma's act gives geglu
    experts: tuple[str, str, str] | None = None  # (experts, experts per token, an expert's width) keys
    final_softcap: bool = False
    # the older decoders (gpt_neox, phi): LayerNorm, biases, a plain (ungated) MLP, a parallel residual
    norm_type: str = "rmsnorm_parts"
    bias: bool = False
    fused_qkv: bool = False
    head_bias: bool = False
    dropout_key: str = ""  # the config's residual dropout, where the type has one


FAMILIES: Mapping[str, Family] = {
    "llama": Family(),
    "mistral": Family(),
    # one qkv_proj whose output is sliced into Q, K and V: V a view of it, as GPT-NeoX's (one autocast cast)
    "phi3": Family(fused_qkv=True),
    "qwen2": Family(qkv_bias=True),
    "qwen3": Family(qk_norm=True),
    "qwen3_moe": Family(qk_norm=True, experts=("num_experts", "num_experts_per_tok", "moe_intermediate_size")),
    "mixtral": Family(experts=("num_local_experts", "num_experts_per_tok", "intermediate_size")),
    "gemma": Family(tie_default=True, gated="geglu"),
    "gemma2": Family(tie_default=True, gated="geglu", norm="sandwich", final_softcap=True),
    "gemma3_text": Family(tie_default=True, gated="geglu", norm="sandwich", qk_norm=True),
    "gpt_neox": Family(norm="parallel", gated="none", norm_type="layernorm", bias=True, fused_qkv=True,
                       dropout_key="hidden_dropout"),
    "phi": Family(norm="parallel_shared", gated="none", norm_type="layernorm", bias=True, head_bias=True,
                  dropout_key="resid_pdrop"),
}
# A plain MLP's activation as Transformers' ACT2FN runs it: F.gelu (exact or tanh: one fused kernel), or the
# tanh form written as primitive ops (NewGELUActivation, FastGELUActivation), or ReLU.
_PLAIN = {"gelu": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_python": "gelu", "gelu_new": "gelu_new",
          "gelu_fast": "gelu_new", "relu": "relu"}
# decoders here; BERT-style encoders and GPT-2 in hf_encoders.py; encoder-decoders (T5, BART) in hf_seq2seq.py
SUPPORTED_TYPES = (*FAMILIES, *ENCODER_TYPES, *SEQ2SEQ_TYPES)
_SILU = frozenset({"silu", "swish"})
_GELU = frozenset({"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_python"})


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise SpecError(f"{FIELD}.{key}", f"must be true or false, got {value!r}")
    return value


def model_type(config: object) -> str:
    """Return the config's model type, refusing what is not a supported decoder's config."""
    if not isinstance(config, Mapping):
        raise SpecError(FIELD, "must be an object: the model's config.json")
    kind = config.get("model_type")
    if not isinstance(kind, str) or not kind:
        raise SpecError(f"{FIELD}.model_type", "required: the model's config.json names it (\"llama\", \"qwen2\", ...)")
    if kind not in SUPPORTED_TYPES:
        nested = config.get("text_config")
        why = (" (a multimodal model: its vision or audio encoder is not a decoder block; give its language "
               "model's layers, or a preset)" if isinstance(nested, Mapping) else "")
        raise UnknownNameError(f"{FIELD}.model_type", f"{kind!r} is not a supported model type{why}; supported: "
                               f"{', '.join(SUPPORTED_TYPES)}", closest(kind, SUPPORTED_TYPES))
    return kind


def _activation(config: Mapping[str, Any], family: Family) -> str:
    key = "hidden_activation" if config.get("hidden_activation") is not None else "hidden_act"
    if family.gated == "none":
        act = config.get(key, "gelu" if family.norm == "parallel" else "gelu_new")
        if act not in _PLAIN:
            raise SpecError(f"{FIELD}.{key}", f"{act!r} is not an activation this model type runs "
                                              f"({', '.join(_PLAIN)})")
        return _PLAIN[act]
    act = config.get(key, "gelu_pytorch_tanh" if family.gated == "geglu" else "silu")
    if act in _SILU:
        return "swiglu"
    if act in _GELU:
        return "geglu"
    raise SpecError(f"{FIELD}.{key}", f"{act!r} is not a gated activation this model type runs (silu or "
                                      "gelu_pytorch_tanh)")


def default_sequence(config: Mapping[str, Any]) -> int:
    """Return the sequence a config's model is sized at when training.sequence_length is not given."""
    kind = model_type(config)
    if kind in ENCODER_TYPES:
        return min(encoder_context(kind, config), MAX_DEFAULT_SEQUENCE)
    if kind in T5_TYPES:  # relative positions: no table sets a limit; the length it was trained at
        return _whole(config, "n_positions", maximum=MAX_DEFAULT_SEQUENCE, default=T5_CONTEXT)
    context = _whole(config, "max_position_embeddings", maximum=100_000_000, default=MAX_DEFAULT_SEQUENCE)
    return min(context, MAX_DEFAULT_SEQUENCE)


def hf_config_layers(config: object, head: str = CLASSIFIER, *, target_length: int | None = T5_CONTEXT) -> list[Layer]:
    """Return the layer list of the model a Hugging Face config.json describes (see the module doc); an
    encoder's (hf_encoders.HEADED_TYPES) with `head`; an encoder-decoder's decoder reading `target_length`."""
    kind = model_type(config)
    assert isinstance(config, Mapping)
    if kind in ENCODER_TYPES:
        return encoder_layers(kind, config, head)
    if kind in SEQ2SEQ_TYPES:
        return seq2seq_layers(config, target_length=target_length)
    family = FAMILIES[kind]
    depth = _whole(config, "num_hidden_layers", maximum=MAX_DEPTH)
    hidden = _whole(config, "hidden_size", maximum=MAX_WIDTH)
    heads = _whole(config, "num_attention_heads", maximum=MAX_WIDTH)
    kv_heads = _whole(config, "num_key_value_heads", maximum=heads, default=heads)
    if heads % kv_heads:
        raise SpecError(f"{FIELD}.num_key_value_heads", f"{kv_heads} must divide num_attention_heads {heads}")
    head_dim = config.get("head_dim")
    if head_dim is None and hidden % heads:
        raise SpecError(f"{FIELD}.head_dim", f"required: {heads} heads do not divide hidden_size {hidden}")
    vocab = _whole(config, "vocab_size", maximum=MAX_VOCABULARY)
    activation = _activation(config, family)
    block: Layer = {
        "type": "transformer_block", "heads": heads, "kv_heads": kv_heads, "norm": _placement(config, family),
        "norm_type": family.norm_type, "activation": activation, "dropout": _dropout(config, family),
        "bias": family.bias, "causal": True,
    }
    if family.fused_qkv:
        block["fused_qkv"] = True
    if kind == "phi" and _flag(config, "qk_layernorm", False):
        raise SpecError(f"{FIELD}.qk_layernorm", "a LayerNorm over each head of Q and K is not modelled for phi")
    if head_dim is not None:
        block["head_dim"] = _whole(config, "head_dim", maximum=MAX_WIDTH)
    qkv_bias = family.qkv_bias if family.qkv_bias is not None else _flag(config, "attention_bias", False)
    if qkv_bias:
        block["qkv_bias"] = True
    if family.qk_norm:
        block["qk_norm"] = True
    if kv_heads < heads:  # Transformers' eager and SDPA attention copy grouped K/V to every head (repeat_kv)
        block["kv_repeat"] = True
    blocks = [{**block, "name": f"layers.{i}", **_feed_forward(config, family, i)} for i in range(depth)]
    tied = _flag(config, "tie_word_embeddings", family.tie_default)
    lm_head: Layer = {"type": "dense", "name": "lm_head", "out_features": vocab, "bias": family.head_bias}
    if tied:
        lm_head["shared_weights"] = True
    softcap: list[Layer] = [{"type": "tanh", "name": "logit_softcap"}] if (
        family.final_softcap and config.get("final_logit_softcapping") is not None) else []
    return [
        {"type": "embedding", "name": "embed_tokens", "vocab": vocab, "dim": hidden},
        *blocks,
        {"type": "rmsnorm", "name": "norm", "parts": True} if family.norm_type == "rmsnorm_parts"
        else {"type": "layernorm", "name": "norm"},
        lm_head,
        *softcap,
        {"type": "log_softmax", "name": "loss"},
    ]


def _placement(config: Mapping[str, Any], family: Family) -> str:
    """Return the block's norm placement: GPT-NeoX's parallel residual unless its config turns it off."""
    if family.norm == "parallel" and not _flag(config, "use_parallel_residual", True):
        return "pre"
    return family.norm


def _dropout(config: Mapping[str, Any], family: Family) -> float:
    """Return the block's dropout: the type's residual dropout where it has one, else none."""
    return config_fraction(config, family.dropout_key, 0.0) if family.dropout_key else 0.0


def _feed_forward(config: Mapping[str, Any], family: Family, index: int) -> Layer:
    """Return one block's feed-forward fields: a mixture of experts where the config makes it one, else dense."""
    if family.experts is not None:
        experts_key, per_token_key, width_key = family.experts
        experts = _whole(config, experts_key, maximum=MAX_EXPERTS, minimum=0)
        sparse_step = _whole(config, "decoder_sparse_step", maximum=MAX_DEPTH, default=1)
        dense_only = config.get("mlp_only_layers") or []
        if not isinstance(dense_only, list) or not all(isinstance(i, int) for i in dense_only):
            raise SpecError(f"{FIELD}.mlp_only_layers", "must be a list of layer indices")
        if experts >= 2 and index not in dense_only and (index + 1) % sparse_step == 0:
            return {"ffn": _whole(config, width_key, maximum=MAX_WIDTH), "experts": experts,
                    "experts_per_token": _whole(config, per_token_key, maximum=experts)}
        if config.get("intermediate_size") is None:
            raise SpecError(f"{FIELD}.intermediate_size", f"required: layer {index} is a dense feed-forward")
    return {"ffn": _whole(config, "intermediate_size", maximum=MAX_WIDTH)}


def config_name(config: Mapping[str, Any]) -> str:
    """Return a label for the model: its repository where the config names it, else its model type."""
    path = config.get("_name_or_path")
    if isinstance(path, str) and path.strip():
        return path.strip()[:128]
    return f"{config.get('model_type')} (config.json)"


def config_text(config: object) -> str:
    """Return the config as canonical JSON (the memo's key), refusing one too large or not JSON."""
    try:
        text = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SpecError(FIELD, f"must be the JSON of a config.json ({exc})") from None
    if len(text) > MAX_CONFIG_CHARS:
        raise SpecError(FIELD, f"over {MAX_CONFIG_CHARS // 1024} KiB: a config.json is a few KB")
    return text

