"""Presets of the small and mid-size decoders teams fine-tune most, each written as its Hugging Face config.json.

Each preset is built by hf_config.hf_config_layers from the fields of its config.json, so the presets and a
user's `model.hf_config` go through one builder. The shapes were read from LitGPT's table of Hugging Face
configs (Lightning-AI/litgpt@26857050fe3f, 2026-06-29, `litgpt/config.py`: each entry names the config.json
it copies); `tie_word_embeddings` is each model's (True for Llama 3.2 1B/3B, Qwen2.5 0.5B-3B, Qwen3-4B and
Gemma, False otherwise); the check is the parameter count. Where the Hugging Face Hub's
`safetensors.total` is quoted (the Hub API as of 2026-09-25, copied into a public repository's model table
that our code search stores: search-index file 71142266638), the layers built here give that figure to the
weight; the test suite checks every preset against its published figure (tests/test_hf_config.py).

Phi-4 (added 2026-12-06) was read from a later copy of that table (its phi-4 entry, naming microsoft/phi-4's
config.json); the Hub's total, 14,659,507,200, is what its layers give.

Left out on purpose: Qwen3-0.6B and -1.7B (their checkpoints store the tied head twice: the Hub's total,
751,632,384 and 2,031,739,904, is the untied count, while training ties them; our count would read as a
mismatch), Gemma 3 (multimodal from 4B up).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from workers.sizing.presets.hf_config import default_sequence, hf_config_layers

HUB = "Hugging Face Hub safetensors.total of {} as of 2026-09-25: {:,} (a stored public repository's model table)"
LITGPT = "the shape from {}'s config.json as LitGPT tabulates it (Lightning-AI/litgpt@26857050fe3f litgpt/config.py)"


def _config(model_type: str, layers: int, hidden: int, heads: int, kv_heads: int, ffn: int, vocab: int,
            context: int, **extra: Any) -> dict[str, Any]:
    """Return the fields of a config.json that the builder reads."""
    return {"model_type": model_type, "num_hidden_layers": layers, "hidden_size": hidden,
            "num_attention_heads": heads, "num_key_value_heads": kv_heads, "intermediate_size": ffn,
            "vocab_size": vocab, "max_position_embeddings": context, **extra}


_TIED = {"tie_word_embeddings": True}
_GEMMA2 = {"final_logit_softcapping": 30.0, "hidden_activation": "gelu_pytorch_tanh"}
_GEMMA1 = {"hidden_activation": "gelu_pytorch_tanh", **_TIED}
# name -> (config, repository, published parameters, published source, aliases, description)
CONFIG_PRESETS: dict[str, tuple[dict[str, Any], str, int, str, tuple[str, ...], str]] = {
    "llama3.2-1b": (
        _config("llama", 16, 2048, 32, 8, 8192, 128256, 131072, **_TIED), "meta-llama/Llama-3.2-1B",
        1_235_814_400, HUB.format("meta-llama/Llama-3.2-1B-Instruct", 1_235_814_400),
        ("llama-3.2-1b", "llama3.2_1b", "1b"), "Llama 3.2 1B decoder (16 layers, hidden 2048, 32 heads, 8 KV heads, "
        "SwiGLU 8192, vocabulary 128256, head tied to the embedding)"),
    "llama3.2-3b": (
        _config("llama", 28, 3072, 24, 8, 8192, 128256, 131072, head_dim=128, **_TIED), "meta-llama/Llama-3.2-3B",
        3_212_749_824, HUB.format("meta-llama/Llama-3.2-3B-Instruct", 3_212_749_824),
        ("llama-3.2-3b", "llama3.2_3b", "3b"), "Llama 3.2 3B decoder (28 layers, hidden 3072, 24 heads, 8 KV heads, "
        "SwiGLU 8192, vocabulary 128256, head tied to the embedding)"),
    "qwen2.5-0.5b": (
        _config("qwen2", 24, 896, 14, 2, 4864, 151936, 32768, **_TIED), "Qwen/Qwen2.5-0.5B",
        494_032_768, HUB.format("Qwen/Qwen2.5-0.5B-Instruct", 494_032_768),
        ("qwen2.5-0.5b-instruct", "qwen-2.5-0.5b"), "Qwen2.5 0.5B decoder (24 layers, hidden 896, 14 heads, "
        "2 KV heads, SwiGLU 4864, vocabulary 151936, biases on Q, K and V, head tied)"),
    "qwen2.5-1.5b": (
        _config("qwen2", 28, 1536, 12, 2, 8960, 151936, 131072, **_TIED), "Qwen/Qwen2.5-1.5B",
        1_543_714_304, HUB.format("Qwen/Qwen2.5-1.5B-Instruct", 1_543_714_304),
        ("qwen2.5-1.5b-instruct", "qwen-2.5-1.5b"), "Qwen2.5 1.5B decoder (28 layers, hidden 1536, 12 heads, "
        "2 KV heads, SwiGLU 8960, vocabulary 151936, biases on Q, K and V, head tied)"),
    "qwen2.5-3b": (
        _config("qwen2", 36, 2048, 16, 2, 11008, 151936, 32768, **_TIED), "Qwen/Qwen2.5-3B",
        3_085_938_688, HUB.format("Qwen/Qwen2.5-3B-Instruct", 3_085_938_688),
        ("qwen2.5-3b-instruct", "qwen-2.5-3b"), "Qwen2.5 3B decoder (36 layers, hidden 2048, 16 heads, "
        "2 KV heads, SwiGLU 11008, vocabulary 151936, biases on Q, K and V, head tied)"),
    "qwen3-4b": (
        _config("qwen3", 36, 2560, 32, 8, 9728, 151936, 40960, head_dim=128, **_TIED), "Qwen/Qwen3-4B",
        4_022_468_096, HUB.format("Qwen/Qwen3-4B", 4_022_468_096),
        ("qwen-3-4b", "qwen3-4b-base", "qwen3-4b-instruct-2507"), "Qwen3 4B decoder (36 layers, hidden 2560, "
        "32 heads of 128, 8 KV heads, SwiGLU 9728, vocabulary 151936, RMSNorm on Q and K, head tied)"),
    "qwen3-8b": (
        _config("qwen3", 36, 4096, 32, 8, 12288, 151936, 40960, head_dim=128), "Qwen/Qwen3-8B",
        8_190_735_360, HUB.format("Qwen/Qwen3-8B", 8_190_735_360),
        ("qwen-3-8b", "qwen3-8b-base"), "Qwen3 8B decoder (36 layers, hidden 4096, 32 heads, 8 KV heads, "
        "SwiGLU 12288, vocabulary 151936, RMSNorm on Q and K)"),
    "phi3-mini": (
        _config("phi3", 32, 3072, 32, 32, 8192, 32064, 4096), "microsoft/Phi-3-mini-4k-instruct",
        3_821_079_552, HUB.format("microsoft/Phi-3-mini-4k-instruct", 3_821_079_552),
        ("phi-3-mini", "phi-3-mini-4k", "phi3-mini-4k", "phi-3-mini-128k", "phi-3.5-mini", "phi3.5-mini"),
        "Phi-3-mini decoder (32 layers, hidden 3072, 32 heads, SwiGLU 8192, vocabulary 32064; fused QKV and "
        "gate-up projections, the same weights); Phi-3.5-mini has the same layers"),
    "phi-4": (
        _config("phi3", 40, 5120, 40, 10, 17920, 100352, 16384), "microsoft/phi-4",
        14_659_507_200, HUB.format("microsoft/phi-4", 14_659_507_200),
        ("phi4", "phi-4-14b", "phi4-14b"), "Phi-4 decoder (40 layers, hidden 5120, 40 heads, 10 KV heads, SwiGLU "
        "17920, vocabulary 100352; fused QKV and gate-up projections, the same weights)"),
    "mistral-7b-v0.3": (
        _config("mistral", 32, 4096, 32, 8, 14336, 32768, 32768), "mistralai/Mistral-7B-v0.3",
        7_248_023_552, HUB.format("mistralai/Mistral-7B-v0.3", 7_248_023_552),
        ("mistral-7b-instruct-v0.3", "mistral-v0.3"), "Mistral 7B v0.3 decoder (Mistral 7B's layers with "
        "a vocabulary of 32768)"),
    "gemma2-2b": (
        _config("gemma2", 26, 2304, 8, 4, 9216, 256000, 8192, head_dim=256, **_GEMMA2), "google/gemma-2-2b",
        2_614_341_888, HUB.format("google/gemma-2-2b-it", 2_614_341_888),
        ("gemma-2-2b", "gemma2_2b"), "Gemma 2 2B decoder (26 layers, hidden 2304, 8 heads of 256, 4 KV heads, "
        "GeGLU 9216, vocabulary 256000 tied, a norm before and after each sub-layer, soft-capped logits)"),
    "gemma2-9b": (
        _config("gemma2", 42, 3584, 16, 8, 14336, 256000, 8192, head_dim=256, **_GEMMA2), "google/gemma-2-9b",
        9_241_705_984, "Gemma 2 9B: 9.24B parameters on its Hugging Face page [recalled]; the count given is the "
        "layers' (9,241,705,984)", ("gemma-2-9b", "gemma2_9b"), "Gemma 2 9B decoder (42 layers, hidden 3584, "
        "16 heads of 256, 8 KV heads, GeGLU 14336, vocabulary 256000 tied, sandwich norms, soft-capped logits)"),
    "gemma2-27b": (
        _config("gemma2", 46, 4608, 32, 16, 36864, 256000, 8192, head_dim=128, **_GEMMA2), "google/gemma-2-27b",
        27_227_128_320, "Gemma 2 27B: 27.2B parameters on its Hugging Face page [recalled]; the count given is "
        "the layers' (27,227,128,320)", ("gemma-2-27b", "gemma2_27b"), "Gemma 2 27B decoder (46 layers, hidden "
        "4608, 32 heads of 128, 16 KV heads, GeGLU 36864, vocabulary 256000 tied, sandwich norms, soft-capped logits)"),
    # Added 2026-12-07. Gemma 1 (google/gemma-7b, -2b config.json: 28 / 18 layers, hidden 3072 / 2048, 16 / 8 heads of
    # 256, 16 / 1 KV heads, GeGLU 24576 / 16384, vocabulary 256000 tied) and Mistral NeMo 12B (mistralai/Mistral-Nemo-
    # Base-2407 config.json: 40 layers, hidden 5120, 32 heads of 128, 8 KV heads, SwiGLU 14336, vocabulary 131072,
    # untied; a stored public copy of its fields read 2026-12-07, head_dim 128 recalled), each checked by its count.
    "gemma-7b": (
        _config("gemma", 28, 3072, 16, 16, 24576, 256000, 8192, head_dim=256, **_GEMMA1), "google/gemma-7b",
        8_537_680_896, "Gemma 7B: 8.54B parameters on its Hugging Face page [recalled]; the count given is the "
        "layers' (8,537,680,896)", ("gemma7b", "gemma_7b", "gemma-1-7b"), "Gemma 7B decoder (28 layers, hidden "
        "3072, 16 heads of 256, GeGLU 24576, vocabulary 256000 tied)"),
    "gemma-2b": (
        _config("gemma", 18, 2048, 8, 1, 16384, 256000, 8192, head_dim=256, **_GEMMA1), "google/gemma-2b",
        2_506_172_416, "Gemma 2B: 2.51B parameters on its Hugging Face page [recalled]; the count given is the "
        "layers' (2,506,172,416)", ("gemma_2b", "gemma-1-2b"), "Gemma 2B decoder (18 layers, hidden 2048, 8 heads of "
        "256, one KV head, GeGLU 16384, vocabulary 256000 tied)"),
    "mistral-nemo-12b": (
        _config("mistral", 40, 5120, 32, 8, 14336, 131072, 1024000, head_dim=128), "mistralai/Mistral-Nemo-Base-2407",
        12_247_782_400, "Mistral NeMo: 12B parameters (Mistral AI's announcement, 2024-07-18) [recalled]; the count "
        "given is the layers' (12,247,782,400)", ("mistral-nemo", "nemo-12b", "mistral-nemo-base-2407",
                                                 "mistral-nemo-instruct-2407"),
        "Mistral NeMo 12B decoder (40 layers, hidden 5120, 32 heads of 128, 8 KV heads, SwiGLU 14336, vocabulary "
        "131072)"),
    # Added 2026-12-08 ("fine-tune mixtral 8x22b with lora" was refused): LitGPT's entry names
    # mistralai/Mixtral-8x22B-Instruct-v0.1's config.json (56 layers, 6144 wide, 48 heads, 8 KV heads, 8 SwiGLU experts
    # of 16384, the top 2 per token, vocabulary 32768, context 65536).
    "mixtral-8x22b": (
        _config("mixtral", 56, 6144, 48, 8, 16384, 32768, 65536, num_local_experts=8, num_experts_per_tok=2),
        "mistralai/Mixtral-8x22B-v0.1", 140_630_071_296, "Mixtral 8x22B: \"141B\" parameters, \"39B active\" (Mistral "
        "AI's announcement, 2024-04-17) [recalled]; the count given is the layers' (140,630,071,296)",
        ("mixtral-8x22b-v0.1", "mixtral-8x22b-instruct-v0.1", "mixtral8x22b", "mixtral_8x22b"),
        "Mixtral 8x22B sparse mixture of experts (56 layers, hidden 6144, 48 heads, 8 KV heads; each feed-forward 8 "
        "SwiGLU experts of 16384, the top 2 per token: 140.6B parameters, 39B used per token)"),
}
# Checkpoints with another model's layers, as their cards say: DeepSeek-R1's distillations into Llama 3.1 8B, Llama
# 3.3 70B and Qwen2.5 7B / 14B / 32B (the 1.5B's untied head differs from Qwen2.5-1.5B's: not aliased); Code Llama 7B
# and 13B, Llama 2's layers with 16 more vocabulary rows (32016: 0.002% of the weights).
SAME_LAYERS = {"codellama-7b": "llama2-7b", "code-llama-7b": "llama2-7b", "codellama-13b": "llama2-13b",
               "code-llama-13b": "llama2-13b",
               "deepseek-r1-distill-llama-8b": "llama3-8b", "deepseek-r1-distill-8b": "llama3-8b",
               "deepseek-r1-distill-llama-70b": "llama3-70b", "deepseek-r1-distill-qwen-7b": "qwen2.5-7b",
               "deepseek-r1-distill-qwen-14b": "qwen2.5-14b", "deepseek-r1-distill-qwen-32b": "qwen2.5-32b"}


def config_presets(preset: type, published: type) -> list[Any]:
    """Return the presets above as registry.Preset values (the registry passes its classes: no import cycle)."""
    return [
        preset(name, description, partial(hf_config_layers, config),
               published(count, None, f"{source}; {LITGPT.format(repo)}"), sequence_length=default_sequence(config),
               aliases=aliases)
        for name, (config, repo, count, source, aliases, description) in CONFIG_PRESETS.items()
    ]


def preset_config(name: str) -> dict[str, Any] | None:
    """Return the config.json fields a config preset is built from (None for other presets)."""
    entry = CONFIG_PRESETS.get(name)
    return None if entry is None else dict(entry[0])
