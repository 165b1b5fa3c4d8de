"""Parallel-residual decoders laid out as Hugging Face Transformers' eager modules run them (small widths).

What a user's `model.hf_config` of model type `gpt_neox` (Pythia, GPT-NeoX-20B) or `phi` (Phi-1.5, Phi-2) is
sized as, written here op for op as modeling_gpt_neox and modeling_phi compose them in PyTorch (read, not
copied), measured before the core had rows for them:

- GPT-NeoX: `x + attention(input_layernorm(x)) + mlp(post_attention_layernorm(x))` (use_parallel_residual);
  one fused `query_key_value` linear whose output is viewed per head as [q | k | v] and chunked (q, k and v
  are views of it), rotary embeddings on the first `rotary_pct` of each head (`q[..., :rot]`, the rest
  concatenated back), `scaled_dot_product_attention` (causal), `dense`; the MLP `dense_h_to_4h`, exact GELU,
  `dense_4h_to_h`; every linear and LayerNorm with a bias; `embed_out` untied.
- Phi: one `input_layernorm` whose output feeds both branches, `x + attention(h) + mlp(h)`; separate q, k,
  v projections with biases, partial rotary (`partial_rotary_factor`), `dense`; the MLP `fc1`, `gelu_new`
  (Transformers' NewGELUActivation: tanh form in primitive ops), `fc2`; `lm_head` with a bias.

nn.LayerNorm is the fused kernel (it keeps its input, mean and rstd). The loss is Transformers' (logits in
float32, labels shifted: step.lm_loss).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.nets_hf_decoder import rotate_half


def _rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the first cos.shape[-1] values of each head, pass the rest (apply_rotary_pos_emb, partial)."""
    rot = cos.shape[-1]
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)


def new_gelu(x: torch.Tensor) -> torch.Tensor:
    """Transformers' NewGELUActivation (gelu_new), as its primitive ops."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, self.heads = c["hidden_size"], c["num_attention_heads"]
        self.dim = h // self.heads
        self.neox = c["model_type"] == "gpt_neox"
        if self.neox:
            self.qkv = nn.Linear(h, 3 * h, bias=True)
        else:
            self.q, self.k, self.v = (nn.Linear(h, h, bias=True) for _ in range(3))
        self.dense = nn.Linear(h, h, bias=True)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        if self.neox:
            qkv = self.qkv(x).view(b, s, self.heads, 3 * self.dim).transpose(1, 2)
            q, k, v = qkv.chunk(3, dim=-1)
        else:
            q, k, v = (proj(x).view(b, s, self.heads, self.dim).transpose(1, 2) for proj in (self.q, self.k, self.v))
        q, k = _rotary(q, cos, sin), _rotary(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.dense(out.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, f = c["hidden_size"], c["intermediate_size"]
        self.neox = c["model_type"] == "gpt_neox"
        self.ln1 = nn.LayerNorm(h)
        self.ln2 = nn.LayerNorm(h) if self.neox else None
        self.attn = Attention(c)
        self.fc1, self.fc2 = nn.Linear(h, f, bias=True), nn.Linear(f, h, bias=True)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        attn = self.attn(h, cos, sin)
        # GPTNeoXLayer (use_parallel_residual): its own norm; PhiDecoderLayer: the same normalised input
        mlp = self.fc2(F.gelu(self.fc1(self.ln2(x)))) if self.ln2 is not None else self.fc2(new_gelu(self.fc1(h)))
        return mlp + attn + x


class Decoder(nn.Module):
    """GPTNeoXForCausalLM or PhiForCausalLM of the config: embedding, blocks, final norm, head."""

    def __init__(self, c: dict[str, Any]) -> None:
        super().__init__()
        h, vocab = c["hidden_size"], c["vocab_size"]
        neox = c["model_type"] == "gpt_neox"
        self.embed = nn.Embedding(vocab, h)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["num_hidden_layers"]))
        self.norm = nn.LayerNorm(h)
        self.head = nn.Linear(h, vocab, bias=not neox)
        dim = h // c["num_attention_heads"]
        rot = int(dim * (c.get("rotary_pct", 0.25) if neox else c.get("partial_rotary_factor", 0.5)))
        self.register_buffer("inv_freq", 1.0 / (10000.0 ** (torch.arange(0, rot, 2).float() / rot)), persistent=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids)
        angles = torch.arange(ids.shape[1], dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        emb = torch.cat((angles, angles), dim=-1)
        cos, sin = emb.cos().to(x.dtype)[None, None], emb.sin().to(x.dtype)[None, None]
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.head(self.norm(x))


def _config(model_type: str, **extra: Any) -> dict[str, Any]:
    base = {"model_type": model_type, "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
            "intermediate_size": 1024, "vocab_size": 4096, "max_position_embeddings": 2048}
    return {**base, **extra}


# The configs measured (small widths): what the core reads as model.hf_config. Transformers' defaults hold
# where a key is absent (gpt_neox: rotary_pct 0.25, use_parallel_residual true, hidden_act gelu, untied;
# phi: partial_rotary_factor 0.5, hidden_act gelu_new, untied); dropout 0 as Pythia and this step run it.
CONFIGS: dict[str, dict[str, Any]] = {
    "hf-neox": _config("gpt_neox", rotary_pct=0.25, use_parallel_residual=True, hidden_act="gelu",
                       attention_dropout=0.0, hidden_dropout=0.0),
    "hf-phi": _config("phi", hidden_size=320, num_attention_heads=10, intermediate_size=1280,
                      partial_rotary_factor=0.4, hidden_act="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0,
                      attention_dropout=0.0),
}
