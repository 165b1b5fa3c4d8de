"""Transformer presets written as layer lists: BERT, GPT-2 (four sizes), a LLaMA-7B decoder, ViT-B/16.

Language models read `sequence_length` token ids per sample, so their multiply-adds are per
sequence: about one per weight per token (the "2 x parameters FLOPs per token" rule) plus the
attention term 2 * layers * hidden * sequence^2. Each ends with its loss's log-softmax over the
vocabulary, which keeps a [sequence, vocabulary] tensor: a large share of an LM's activations.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from workers.sizing.presets.clip import clip_presets

Layer = dict[str, object]

GPT2_SIZES: dict[str, tuple[int, int, int]] = {  # (layers, hidden, heads), Radford et al. 2019 Table 2
    "gpt2": (12, 768, 12),
    "gpt2-medium": (24, 1024, 16),
    "gpt2-large": (36, 1280, 20),
    "gpt2-xl": (48, 1600, 25),
}
GPT2_VOCAB, GPT2_CONTEXT = 50257, 1024
BERT_SIZES: dict[str, tuple[int, int, int]] = {  # Devlin et al. 2019: L, H, A
    "bert-base": (12, 768, 12),
    "bert-large": (24, 1024, 16),
    "distilbert-base": (6, 768, 12),  # Sanh et al. 2019: BERT-base halved in depth
}
BERT_VOCAB, BERT_CONTEXT = 30522, 512  # the uncased WordPiece vocabulary of google-research/bert
# An encoder's head: a sentence classifier on the first token (...ForSequenceClassification: fine-tuning), or
# the masked-LM head over every position (...ForMaskedLM: pre-training, or further pre-training on a domain's text).
CLASSIFIER, MASKED_LM = "classifier", "masked_lm"
ENCODER_HEADS = (CLASSIFIER, MASKED_LM)
MASKED_LM_DECODER = "mlm.decoder"  # the masked-LM head's output projection, as its rows name it
HEAD_DESCRIPTION = ("A BERT-style encoder's head (a preset or hf_config): classifier, a sentence classifier "
                    "(fine-tuning), or masked_lm, logits over the vocabulary at every position (pre-training). "
                    "Default: masked_lm when training.from_pretrained is false, else classifier.")


def gpt2_layers(size: str) -> list[Layer]:
    """Return GPT-2 (pre-norm, GELU, learned positions, LM head tied to the token embedding)."""
    depth, hidden, heads = GPT2_SIZES[size]
    return gpt2_shaped(depth, hidden, heads)


def gpt2_shaped(depth: int, hidden: int, heads: int, *, ffn: int | None = None, activation: str = "gelu_new",
                dropout: float = 0.1, vocab: int = GPT2_VOCAB, positions: int = GPT2_CONTEXT) -> list[Layer]:
    """Return a GPT-2-shaped decoder of any size (a `gpt2` config.json's fields; hf_encoders.py)."""
    blocks: list[Layer] = [
        {
            "type": "transformer_block",
            "name": f"h{i}",
            "heads": heads,
            **({"ffn": ffn} if ffn is not None and ffn != 4 * hidden else {}),
            "qkv_projections": 1,  # one packed c_attn makes Q, K and V
            "norm": "pre",
            # Hugging Face's GPT-2 (activation_function "gelu_new"): the tanh GELU as primitive ops
            "activation": activation,
            "dropout": dropout,
            "causal": True,
        }
        for i in range(depth)
    ]
    return [
        {"type": "embedding", "name": "wte", "vocab": vocab, "dim": hidden},
        {"type": "position_embedding", "name": "wpe", "max_positions": positions},
        {"type": "dropout", "name": "drop", "p": dropout},
        *blocks,
        {"type": "layernorm", "name": "ln_f"},
        {
            "type": "dense",
            "name": "lm_head",
            "out_features": vocab,
            "bias": False,
            "shared_weights": True,
        },
        {"type": "log_softmax", "name": "loss"},
    ]


# RoBERTa (Liu et al. 2019) is BERT's encoder with a byte-level BPE vocabulary of 50,265, one token type
# and 514 positions (512 usable: two are padding offsets); RobertaForSequenceClassification's head is a
# dense + tanh on the first token and the output projection, the shape of BERT's pooler + classifier
# (roberta-base's config.json in stored public copies, read 2026-12-03).
ROBERTA_VOCAB, ROBERTA_POSITIONS = 50265, 514


def roberta_layers(size: str, *, classes: int = 2, head: str = CLASSIFIER) -> list[Layer]:
    """Return RoBERTa: BERT's layers (bert-base / bert-large shape) with RoBERTa's embeddings."""
    return bert_layers(size, classes=classes, vocab=ROBERTA_VOCAB, token_types=1, positions=ROBERTA_POSITIONS,
                       head=head)


def distilbert_layers(*, classes: int = 2, head: str = CLASSIFIER) -> list[Layer]:
    """Return DistilBERT: 6 BERT-base blocks, no token types, and DistilBertForSequenceClassification's
    head (pre_classifier dense + ReLU on the first token, classifier), or the masked-LM head."""
    return bert_layers("distilbert-base", classes=classes, token_types=0, head_activation="relu", head=head)


def bert_layers(size: str, *, classes: int = 2, vocab: int = BERT_VOCAB, token_types: int = 2,
                positions: int = BERT_CONTEXT, head_activation: str = "tanh", head: str = CLASSIFIER) -> list[Layer]:
    """Return BERT: embeddings, post-norm encoder, and a sentence classifier (pooler, classifier) or the
    masked-LM head (ENCODER_HEADS)."""
    depth, hidden, heads = BERT_SIZES[size]
    return encoder_shaped(depth, hidden, heads, classes=classes, vocab=vocab, token_types=token_types,
                          positions=positions, head_activation=head_activation, head=head)


def encoder_shaped(depth: int, hidden: int, heads: int, *, ffn: int | None = None, activation: str = "gelu",
                   dropout: float = 0.1, classes: int = 2, vocab: int = BERT_VOCAB, token_types: int = 2,
                   positions: int = BERT_CONTEXT, head_activation: str = "tanh", head: str = CLASSIFIER,
                   head_transform: str = "gelu") -> list[Layer]:
    """Return a BERT-shaped encoder of any size (a BERT, RoBERTa, XLM-RoBERTa or DistilBERT config.json's
    fields; hf_encoders.py) with a sentence classifier or the masked-LM head (`head`, ENCODER_HEADS;
    `head_transform` the masked-LM transform's activation)."""
    blocks: list[Layer] = [
        {
            "type": "transformer_block",
            "name": f"layer{i}",
            "heads": heads,
            **({"ffn": ffn} if ffn is not None and ffn != 4 * hidden else {}),
            "norm": "post",
            "activation": activation,
            "dropout": dropout,
        }
        for i in range(depth)
    ]
    return [
        {"type": "embedding", "name": "embeddings", "vocab": vocab, "dim": hidden, "token_types": token_types},
        {"type": "position_embedding", "name": "positions", "max_positions": positions},
        {"type": "layernorm", "name": "embeddings.ln"},
        {"type": "dropout", "name": "embeddings.drop", "p": dropout},
        *blocks,
        *(masked_lm_head(hidden, vocab, head_transform) if head == MASKED_LM else [
            {"type": "select", "name": "cls", "index": 0},
            {"type": "dense", "name": "pooler", "out_features": hidden},
            {"type": head_activation, "name": f"pooler.{head_activation}"},
            {"type": "dropout", "name": "classifier.drop", "p": 0.1},
            {"type": "dense", "name": "classifier", "out_features": classes},
        ]),
    ]


def masked_lm_head(hidden: int, vocab: int, activation: str = "gelu") -> list[Layer]:
    """Return the masked-LM head of Transformers' ...ForMaskedLM (BertLMPredictionHead, RobertaLMHead,
    DistilBERT's vocab_transform / vocab_projector) at every position, as `run_mlm.py` trains it: a dense
    transform, its activation and LayerNorm, the decoder tied to the word embedding, then the loss's
    log-softmax over [sequence, vocabulary] (labels of -100 skip the unmasked tokens in the loss, not in the
    logits). The decoder's own bias (`vocab` values) is not counted: a tied dense row carries no weights. A
    `gelu_new` transform (a block's tanh GELU of primitive ops) is sized as the one-kernel GELU: one [sequence,
    hidden] tensor, against the logits' [sequence, vocabulary]."""
    activation = "gelu" if activation == "gelu_new" else activation
    return [
        {"type": "dense", "name": "mlm.transform", "out_features": hidden},
        {"type": activation, "name": f"mlm.{activation}"},
        {"type": "layernorm", "name": "mlm.ln"},
        {"type": "dense", "name": MASKED_LM_DECODER, "out_features": vocab, "shared_weights": True},
        {"type": "log_softmax", "name": "loss"},
    ]


# LLaMA-family shapes: (layers, hidden, heads, kv_heads, ffn, vocabulary).
# - llama-7b: Touvron et al. 2023 (arXiv 2302.13971) Table 2; LLaMA 2 7B has the same shape.
# - llama2-70b: Touvron et al. 2023 (arXiv 2307.09288) with grouped-query attention (8 KV heads),
#   ffn 28672 (torchtitan llama2 '70B' args: ffn_dim_multiplier 1.3, multiple_of 4096).
# - llama3-8b: Meta Llama 3 8B (torchtitan llama3 '8B' args: 32 layers, 4096, 32 heads, 8 KV heads,
#   ffn 14336, vocabulary 128256).
# - llama2-13b: Touvron et al. 2023 (arXiv 2302.13971) Table 2, 13B: 40 layers, 5120, 40 heads; ffn
#   13824 by the reference code's rule (2/3 x 4 x 5120 rounded up to a multiple of 256); LLaMA 2 13B
#   keeps that shape with full multi-head attention (Llama-2-13b-hf config.json, as read 2026-12-02
#   from stored copies of public configs: hidden 5120, intermediate 13824, 40 layers, 40 heads).
# - llama3-70b: Meta Llama 3 / 3.1 / 3.3 70B (oumi-ai configs/recipes/llama3_1/README.md "Model Info"
#   table, read 2026-12-02 from a stored copy: 80 layers, hidden 8192, 64 heads, 8 KV heads, MLP
#   28,672, vocabulary 128,256, no weight tying).
# - mistral-7b: Jiang et al. 2023, "Mistral 7B" (arXiv 2310.06825) Table 1: 32 layers, dim 4096,
#   32 heads, 8 KV heads, hidden_dim 14336, vocabulary 32000, sliding window 4096 (not modelled:
#   it changes attention only beyond 4,096 tokens, and a fused kernel keeps no score matrix).
# - mixtral-8x7b: Jiang et al. 2024, "Mixtral of Experts" (arXiv 2401.04088) Table 1: Mistral 7B's shape
#   (dim 4096, 32 layers, 32 heads, 8 KV heads, hidden_dim 14336, vocabulary 32000) with 8 experts per
#   feed-forward, the top 2 per token (MIXTURES); "47B parameters, but only uses 13B active" (abstract).
LLAMA_SIZES: dict[str, tuple[int, int, int, int, int, int]] = {
    "llama-7b": (32, 4096, 32, 32, 11008, 32000),
    "llama2-13b": (40, 5120, 40, 40, 13824, 32000),
    "llama2-70b": (80, 8192, 64, 8, 28672, 32000),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256),
    "llama3-70b": (80, 8192, 64, 8, 28672, 128256),
    "mistral-7b": (32, 4096, 32, 8, 14336, 32000),
    "mixtral-8x7b": (32, 4096, 32, 8, 14336, 32000),
}
# Mixture-of-experts feed-forwards: (experts, experts per token).
MIXTURES: dict[str, tuple[int, int]] = {"mixtral-8x7b": (8, 2)}
# - qwen3-30b-a3b: Qwen3-30B-A3B's config.json (model_type qwen3_moe; several stored public copies agree,
#   read 2026-12-03): 48 layers, hidden 2048, 32 heads of head_dim 128 (Q is 4096 wide), 4 KV heads, 128
#   experts of moe_intermediate_size 768, 8 per token, vocabulary 151936, untied, no attention bias. Its
#   per-head RMSNorm on Q and K (2 x 128 weights a layer) is not modelled.
LLAMA_SIZES["qwen3-30b-a3b"] = (48, 2048, 32, 4, 768, 151936)
MIXTURES["qwen3-30b-a3b"] = (128, 8)
HEAD_DIMS: dict[str, int] = {"qwen3-30b-a3b": 128}  # where a head is not hidden / heads wide
# - qwen2.5-7b, -14b, -72b: Qwen2.5 base models' config.json (model_type qwen2; stored public copies of the
#   configs, read 2026-12-03): 28 / 48 / 80 layers, hidden 3584 / 5120 / 8192, 28 / 40 / 64 heads, 4 / 8 / 8 KV
#   heads, intermediate 18944 / 13824 / 29568, vocabulary 152064, untied; biases on Q, K and V only (QKV_BIAS).
LLAMA_SIZES |= {
    "qwen2.5-7b": (28, 3584, 28, 4, 18944, 152064),
    "qwen2.5-14b": (48, 5120, 40, 8, 13824, 152064),
    "qwen2.5-72b": (80, 8192, 64, 8, 29568, 152064),
    # Qwen2.5-32B (2026-12-07): its config.json as LitGPT tabulates it (litgpt/config.py "Qwen2.5-32B{}", a stored
    # public copy): 64 layers, hidden 5120, 40 heads, 8 KV groups, intermediate 27648, padded vocabulary 152064
    "qwen2.5-32b": (64, 5120, 40, 8, 27648, 152064),
}
QKV_BIAS = frozenset({"qwen2.5-7b", "qwen2.5-14b", "qwen2.5-32b", "qwen2.5-72b"})
# - llama3.1-405b: Dubey et al. 2024, "The Llama 3 Herd of Models" (arXiv 2407.21783) Table 3 [recalled]: 126
#   layers, model dimension 16,384, FFN 53,248, 128 heads, 8 KV heads; vocabulary 128,256 as in Llama 3's
#   configs (stored public copies, read 2026-12-03), no weight tying.
LLAMA_SIZES["llama3.1-405b"] = (126, 16384, 128, 8, 53248, 128256)


def llama_7b_layers() -> list[Layer]:
    """Return LLaMA-7B (Touvron et al. 2023): RMSNorm, SwiGLU FFN 11008, no biases, untied output."""
    return llama_layers("llama-7b")


def llama_layers(size: str) -> list[Layer]:
    """Return a LLaMA-family decoder: RMSNorm, SwiGLU, grouped K/V where it has them, untied output.

    Sized as Hugging Face Transformers runs the checkpoint (as hf_config.py's blocks): its RMSNorm composed
    in float32 (`rmsnorm_parts`) and grouped K/V copied to every head before attention (`kv_repeat`).
    """
    depth, hidden, heads, kv_heads, ffn, vocab = LLAMA_SIZES[size]
    blocks: list[Layer] = [
        {
            "type": "transformer_block",
            "name": f"layers.{i}",
            "heads": heads,
            "kv_heads": kv_heads,
            "ffn": ffn,
            "norm": "pre",
            "norm_type": "rmsnorm_parts",
            "activation": "swiglu",
            "dropout": 0.0,
            "bias": False,
            "causal": True,
            **({"experts": MIXTURES[size][0], "experts_per_token": MIXTURES[size][1]} if size in MIXTURES else {}),
            **({"qkv_bias": True} if size in QKV_BIAS else {}),
            **({"head_dim": HEAD_DIMS[size]} if size in HEAD_DIMS else {}),
            **({"kv_repeat": True} if kv_heads < heads else {}),
        }
        for i in range(depth)
    ]
    # Rotary position embeddings have no weights and are not modelled (elementwise on Q and K).
    return [
        {"type": "embedding", "name": "tok_embeddings", "vocab": vocab, "dim": hidden},
        *blocks,
        {"type": "rmsnorm", "name": "norm", "parts": True},
        {"type": "dense", "name": "output", "out_features": vocab, "bias": False},
        {"type": "log_softmax", "name": "loss"},
    ]


# torchvision's ViTs: (patch, width, blocks, heads, MLP width, published parameters, GFLOPS at 224 x 224, aliases)
# (pytorch.org/vision/stable/models, {}_Weights IMAGENET1K_V1; the layers give each count to the weight)
VIT_SIZES = {
    "vit-b16": (16, 768, 12, 12, 3072, 86_567_656, 17.56, ("vit-b/16", "vit-b-16", "vit_b_16", "vit-base-16", "vit",
                                                          "vit-base-patch16-224", "vit-base", "vit-b")),
    "vit-b32": (32, 768, 12, 12, 3072, 88_224_232, 4.41, ("vit-b/32", "vit-b-32", "vit_b_32", "vit-base-patch32-224")),
    "vit-l16": (16, 1024, 24, 16, 4096, 304_326_632, 61.55,
                ("vit-l/16", "vit-l-16", "vit_l_16", "vit-large-16", "vit-large-patch16-224", "vit-large", "vit-l")),
}


def vit_b16_layers(*, classes: int = 1000) -> list[Layer]:
    """Return ViT-B/16 as torchvision builds it (196 patches + a class token at 224x224, no dropout)."""
    return vit_layers("vit-b16", classes=classes)


def vit_layers(name: str, *, classes: int = 1000) -> list[Layer]:
    """Return a torchvision ViT (VIT_SIZES): patches + a class token, pre-norm blocks, no dropout."""
    patch, width, depth, heads, mlp = VIT_SIZES[name][:5]
    blocks: list[Layer] = [
        {
            "type": "transformer_block",
            "name": f"encoder{i}",
            "heads": heads,
            "ffn": mlp,
            "qkv_projections": 1,  # torch's MultiheadAttention: one packed in-projection
            "norm": "pre",
            "activation": "gelu",
            "dropout": 0.0,
        }
        for i in range(depth)
    ]
    return [
        {"type": "conv2d", "name": "patch_embed", "out_channels": width, "kernel": patch, "stride": patch},
        {"type": "to_sequence", "name": "patches"},
        {"type": "class_token", "name": "class_token"},
        # a row per patch and the class token at the input's size: 197 at 224 x 224, resampled for another size
        {"type": "position_embedding", "name": "positions"},
        *blocks,
        {"type": "layernorm", "name": "ln"},
        {"type": "select", "name": "cls", "index": 0},
        {"type": "dense", "name": "head", "out_features": classes},
    ]


def vit_presets(preset: type, published: type, torchvision: str) -> list[Any]:
    """Return torchvision's ViT presets and CLIP's (presets/clip.py), whose image towers are ViTs (the registry passes
    its classes and its source format)."""
    out = []
    for name, (patch, width, depth, heads, _, count, gflops, aliases) in VIT_SIZES.items():
        size = {768: "B", 1024: "L"}[width]
        tokens = (224 // patch) ** 2 + 1
        out.append(preset(
            name, f"ViT-{size}/{patch} (Dosovitskiy et al. 2021), torchvision layout, 224x224 ({tokens} tokens; "
                  f"{depth} blocks of {width}, {heads} heads)",
            partial(vit_layers, name),
            published(count, round(gflops * 1e9), torchvision.format(f"ViT_{size}_{patch}_Weights")),
            input_shape=(3, 224, 224), aliases=aliases,
            # the recipe of vit_b_16 alone is in torchvision's references (the others' are not re-read)
            **({"recipe_epochs": (300, "imagenet", "torchvision's vit_b_16 recipe: --epochs 300")}
               if name == "vit-b16" else {})))
    return out + clip_presets(preset, published)


def lm_multiply_adds(*, matmul_weights: int, layers: int, hidden: int, sequence_length: int) -> int:
    """Return a transformer's forward multiply-adds per sequence by the closed form of llm-foundry.

    Forward FLOPs per token = 2 x the weights used in matrix products, plus
    layers * 2 * 2 * hidden * sequence^2 per sequence for attention (MosaicML llm-foundry's
    benchmarking README); halved here to count multiply-adds.
    """
    return matmul_weights * sequence_length + 2 * layers * hidden * sequence_length**2
