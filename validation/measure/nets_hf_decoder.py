"""Decoder language models laid out as Hugging Face Transformers' eager modules run them (small widths).

What a user's `model.hf_config` is sized as: LlamaForCausalLM (and Mistral, Qwen2), Qwen3ForCausalLM and
Gemma2ForCausalLM, written here op for op as modeling_llama / modeling_qwen3 / modeling_gemma2 compose them
in PyTorch (read, not copied): the RMSNorm upcast to float32 and multiplied out (LlamaRMSNorm; Gemma's
`(1 + weight)` in float32), rotary embeddings by `rotate_half` (a concatenation) and `q * cos + rotate_half(q)
* sin`, grouped K/V repeated to every head (`repeat_kv`) before `scaled_dot_product_attention` (the "sdpa"
attention, causal), SwiGLU or Gemma's tanh-GELU gate, Gemma's embedding scaled by sqrt(hidden), Gemma 2's
norms around each sub-layer and its logits soft-capped by tanh. The loss is Transformers' (logits in
float32, labels shifted: step.lm_loss). The `config` of each is the config.json the core reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    """LlamaRMSNorm (weight * normalised, cast back) or Gemma's (normalised * (1 + weight) in float32)."""

    def __init__(self, dim: int, *, gemma: bool = False, eps: float = 1e-6) -> None:
        super().__init__()
        self.gemma, self.eps = gemma, eps
        self.weight = nn.Parameter(torch.zeros(dim) if gemma else torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        h = x.to(torch.float32)
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        if self.gemma:
            return (h * (1.0 + self.weight.float())).type_as(x)
        return self.weight * h.to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x: torch.Tensor, groups: int) -> torch.Tensor:
    if groups == 1:
        return x
    b, heads, s, d = x.shape
    return x[:, :, None].expand(b, heads, groups, s, d).reshape(b, heads * groups, s, d)


class Attention(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, self.heads, self.kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.dim = c.get("head_dim") or h // self.heads
        bias = c["model_type"] == "qwen2"
        self.q = nn.Linear(h, self.heads * self.dim, bias=bias)
        self.k = nn.Linear(h, self.kv * self.dim, bias=bias)
        self.v = nn.Linear(h, self.kv * self.dim, bias=bias)
        self.o = nn.Linear(self.heads * self.dim, h, bias=False)
        qk_norm = c["model_type"] == "qwen3"
        self.q_norm = RMSNorm(self.dim) if qk_norm else None
        self.k_norm = RMSNorm(self.dim) if qk_norm else None

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.dim)
        k = self.k(x).view(b, s, self.kv, self.dim)
        if self.q_norm is not None and self.k_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = self.v(x).view(b, s, self.kv, self.dim).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        groups = self.heads // self.kv
        out = F.scaled_dot_product_attention(q, repeat_kv(k, groups), repeat_kv(v, groups), is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, s, -1))


class MLP(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, f = c["hidden_size"], c["intermediate_size"]
        self.gate, self.up = nn.Linear(h, f, bias=False), nn.Linear(h, f, bias=False)
        self.down = nn.Linear(f, h, bias=False)
        self.gelu = c["model_type"].startswith("gemma")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g = self.gate(x)
        act = F.gelu(g, approximate="tanh") if self.gelu else F.silu(g)
        return self.down(act * self.up(x))


class Block(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        gemma, h = c["model_type"].startswith("gemma"), c["hidden_size"]
        self.sandwich = c["model_type"] == "gemma2"
        self.attn, self.mlp = Attention(c), MLP(c)
        self.ln1, self.ln2 = RMSNorm(h, gemma=gemma), RMSNorm(h, gemma=gemma)
        self.post1 = RMSNorm(h, gemma=gemma) if self.sandwich else None
        self.post2 = RMSNorm(h, gemma=gemma) if self.sandwich else None

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        y = self.attn(self.ln1(x), cos, sin)
        x = x + (self.post1(y) if self.post1 is not None else y)
        y = self.mlp(self.ln2(x))
        return x + (self.post2(y) if self.post2 is not None else y)


class Decoder(nn.Module):
    """A *ForCausalLM of the config: embedding, blocks, final norm, head (tied where the config says)."""

    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, vocab = c["hidden_size"], c["vocab_size"]
        self.gemma = c["model_type"].startswith("gemma")
        self.softcap = c.get("final_logit_softcapping")
        self.embed = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(h, gemma=self.gemma)
        self.head = nn.Linear(h, vocab, bias=False)
        if c.get("tie_word_embeddings", self.gemma):
            self.head.weight = self.embed.weight
        dim = c.get("head_dim") or h // c["num_attention_heads"]
        self.register_buffer("inv_freq", 1.0 / (10000.0 ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        if self.gemma:
            x = x * torch.tensor(math.sqrt(x.shape[-1]), dtype=x.dtype)
        # LlamaRotaryEmbedding: float32 angles, cos and sin cast to the hidden states' dtype, shared by every layer
        angles = torch.arange(ids.shape[1], dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos().to(x.dtype)[None, None], emb.sin().to(x.dtype)[None, None]
        for block in self.blocks:
            x = block(x, cos, sin)
        logits = self.head(self.norm(x))
        if self.softcap is not None:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits


def ids_as_labels(vocab: int, seq: int) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    """Token ids that are their own labels (step.lm_loss shifts them), as a causal LM's batch is."""
    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        ids = torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(batch))
        return ids, ids
    return sample


def _config(model_type: str, **extra: Any) -> dict[str, Any]:
    base = {"model_type": model_type, "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
            "num_key_value_heads": 2, "intermediate_size": 768, "vocab_size": 4096, "max_position_embeddings": 2048}
    return {**base, **extra}


# The configs measured (small widths, each family's own block): what the core reads as model.hf_config.
# The first four were measured before the core had rows for Transformers' composed RMSNorm and K/V repeat
# (and led to them); BLIND ones were measured after, with the core untouched since.
CONFIGS: dict[str, dict[str, Any]] = {
    "hf-llama": _config("llama"),
    "hf-llama-tied": _config("llama", tie_word_embeddings=True, num_key_value_heads=8),
    "hf-qwen3": _config("qwen3", head_dim=64, tie_word_embeddings=True),
    "hf-gemma2": _config("gemma2", num_attention_heads=4, head_dim=64, final_logit_softcapping=30.0,
                         hidden_activation="gelu_pytorch_tanh"),
}
BLIND: dict[str, dict[str, Any]] = {
    "hf-qwen2": _config("qwen2", hidden_size=384, num_attention_heads=6, num_key_value_heads=2,
                        intermediate_size=1024, tie_word_embeddings=True),
    "hf-gemma": _config("gemma", num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                        hidden_act="gelu_pytorch_tanh"),
    "hf-mistral-s512": _config("mistral", num_hidden_layers=6, intermediate_size=896, vocab_size=8192),
}
CONFIGS |= BLIND
