"""T5, FLAN-T5 and BART, the encoder-decoders teams fine-tune most, built from their config.json (`model_type` "t5",
"mt5", "bart").

Transformers' T5ForConditionalGeneration (modeling_t5.py, 5.x): a shared token embedding; an encoder of
`num_layers` pre-norm blocks (self-attention, a feed-forward with dropout between its activation and `wo`),
a decoder of `num_decoder_layers` blocks that add cross-attention over the encoder's output; T5LayerNorm (an
RMSNorm computed in float32: `rmsnorm_parts`); no biases; each head `d_kv` wide, `num_heads` x `d_kv` the
attention's width (t5-3b: 32 x 128 = 4096 at d_model 1024); a relative-position bias table in each stack's
first block (`relative_attention_num_buckets` x heads), the bias added to the scores of every self-attention
and the mask to every attention's (cross.score_bias); dropout `dropout_rate` on the embeddings, each
sub-layer's output, the feed-forward's inner values and the attention probabilities. `feed_forward_proj`
"relu" (T5 1.0: the LM head tied to the embedding) or "gated-gelu" (T5 1.1, FLAN-T5: gelu_new's primitive ops
over the gate, an untied head).

The decoder reads the target's token ids, `target_length` a sample (training.target_length; the decoder's
input ids are the labels shifted right, as the model builds them from `labels`); the loss is cross-entropy
over [target_length, vocabulary].

Transformers' BartForConditionalGeneration (modeling_bart.py, 5.x): a shared embedding; learned positions in each
stack (`max_position_embeddings` + 2 rows: BART offsets them by 2) added to the tokens, a LayerNorm over the sum
(`layernorm_embedding`) and dropout; `encoder_layers` post-norm blocks (self-attention, dropout, add, LayerNorm;
fc1, the activation, fc2, dropout, add, LayerNorm), `decoder_layers` blocks with cross-attention between; biases on
every projection; the LM head tied to the embedding (its `final_logits_bias` is a buffer, no weight); dropout
`dropout` on the embeddings and each sub-layer's output, `activation_dropout` between fc1's activation and fc2 (a
mask wherever it is above 0), `attention_dropout` on the probabilities (the block's `dropout` stands for it: the
same under a fused kernel, which keeps no mask).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from workers.sizing.errors import SpecError
from workers.sizing.presets.hf_encoders import FIELD, config_fraction
from workers.sizing.presets.hf_encoders import config_whole as _whole

Layer = dict[str, object]
T5_TYPES = ("t5", "mt5")  # mT5 is T5 1.1's layers with a 250,112-token vocabulary
BART_TYPES = ("bart",)
WHISPER_TYPES = ("whisper",)
SEQ2SEQ_TYPES = (*T5_TYPES, *BART_TYPES, *WHISPER_TYPES)
POSITION_OFFSET = 2  # BartLearnedPositionalEmbedding's two extra rows
MAX_DEPTH, MAX_WIDTH, MAX_VOCABULARY = 1024, 131_072, 1_048_576
PROJECTIONS = {"relu": ("relu", True), "gated-gelu": ("geglu_new", False)}  # activation, head tied by default
ENCODER_OUT = "encoder.final_dropout"


def t5_layers(config: Mapping[str, Any], *, target_length: int) -> list[Layer]:
    """Return the layer list of T5ForConditionalGeneration as the config describes it, its decoder reading
    `target_length` token ids a sample."""
    hidden = _whole(config, "d_model", maximum=MAX_WIDTH)
    heads = _whole(config, "num_heads", maximum=MAX_WIDTH)
    head_dim = _whole(config, "d_kv", maximum=MAX_WIDTH, default=hidden // heads)
    ffn = _whole(config, "d_ff", maximum=4 * MAX_WIDTH)
    depth = _whole(config, "num_layers", maximum=MAX_DEPTH)
    decoder_depth = _whole(config, "num_decoder_layers", maximum=MAX_DEPTH, default=depth)
    vocab = _whole(config, "vocab_size", maximum=MAX_VOCABULARY)
    buckets = _whole(config, "relative_attention_num_buckets", maximum=MAX_WIDTH, default=32)
    p = config_fraction(config, "dropout_rate", 0.1)
    projection = config.get("feed_forward_proj", "relu")
    if projection not in PROJECTIONS:
        raise SpecError(f"{FIELD}.feed_forward_proj", f"{projection!r}: one of {', '.join(PROJECTIONS)} (T5 1.0's "
                                                      "ReLU, or T5 1.1 / FLAN-T5's gated GELU)")
    activation, tied_default = PROJECTIONS[str(projection)]
    tied = config.get("tie_word_embeddings", tied_default)
    if not isinstance(tied, bool):
        raise SpecError(f"{FIELD}.tie_word_embeddings", f"must be true or false, got {tied!r}")
    block: Layer = {"type": "transformer_block", "heads": heads, "head_dim": head_dim, "ffn": ffn, "norm": "pre",
                    "norm_type": "rmsnorm_parts", "activation": activation, "dropout": p, "bias": False,
                    "attention_bias": True, "inner_dropout": True}
    first = {"relative_buckets": buckets}  # the bias table of each stack's first block

    def stack(name: str, count: int, **extra: object) -> list[Layer]:
        return [{**block, "name": f"{name}.block.{i}", **(first if i == 0 else {}), **extra} for i in range(count)]

    return [
        {"type": "embedding", "name": "shared", "vocab": vocab, "dim": hidden},
        {"type": "dropout", "name": "encoder.dropout", "p": p},
        *stack("encoder", depth),
        {"type": "rmsnorm", "name": "encoder.final_layer_norm", "parts": True},
        {"type": "dropout", "name": ENCODER_OUT, "p": p},
        {"type": "embedding", "name": "decoder.embed_tokens", "vocab": vocab, "dim": hidden, "length": target_length,
         "shared_weights": True},
        {"type": "dropout", "name": "decoder.dropout", "p": p},
        *stack("decoder", decoder_depth, causal=True, memory=ENCODER_OUT),
        {"type": "rmsnorm", "name": "decoder.final_layer_norm", "parts": True},
        {"type": "dropout", "name": "decoder.final_dropout", "p": p},
        {"type": "dense", "name": "lm_head", "out_features": vocab, "bias": False, **({"shared_weights": True}
                                                                                     if tied else {})},
        {"type": "log_softmax", "name": "loss"},
    ]



def bart_layers(config: Mapping[str, Any], *, target_length: int) -> list[Layer]:
    """Return the layer list of BartForConditionalGeneration as the config describes it, its decoder reading
    `target_length` token ids a sample."""
    hidden = _whole(config, "d_model", maximum=MAX_WIDTH)
    vocab = _whole(config, "vocab_size", maximum=MAX_VOCABULARY)
    positions = _whole(config, "max_position_embeddings", maximum=MAX_WIDTH, default=1024) + POSITION_OFFSET
    p = config_fraction(config, "dropout", 0.1)
    activation = config.get("activation_function", "gelu")
    if activation not in ("gelu", "relu", "silu", "gelu_new"):
        raise SpecError(f"{FIELD}.activation_function", f"{activation!r}: one of gelu, relu, silu, gelu_new")
    if config.get("add_final_layer_norm") or config.get("normalize_before"):
        raise SpecError(f"{FIELD}.normalize_before", "BART's post-norm layout is sized (mBART's pre-norm and final "
                                                     "norm are not): give model.layers")
    stacks = _stacks(config, norm="post", activation=str(activation), dropout=p)
    encoder_out = str(stacks["encoder"][-1]["name"])

    def front(stack: str, embedding: Layer) -> list[Layer]:
        return [embedding, {"type": "position_embedding", "name": f"{stack}.embed_positions", "max_positions":
                            positions}, {"type": "layernorm", "name": f"{stack}.layernorm_embedding"},
                {"type": "dropout", "name": f"{stack}.dropout", "p": p}]

    return [
        *front("encoder", {"type": "embedding", "name": "shared", "vocab": vocab, "dim": hidden}),
        *stacks["encoder"],
        *front("decoder", {"type": "embedding", "name": "decoder.embed_tokens", "vocab": vocab, "dim": hidden,
                           "length": target_length, "shared_weights": True}),
        *({**b, "causal": True, "memory": encoder_out} for b in stacks["decoder"]),
        {"type": "dense", "name": "lm_head", "out_features": vocab, "bias": False, "shared_weights": True},
        {"type": "log_softmax", "name": "loss"},
    ]


def _stacks(config: Mapping[str, Any], *, norm: str, activation: str, dropout: float) -> dict[str, list[Layer]]:
    """Return the encoder's and the decoder's blocks of a BART-style config (BART, Whisper): `encoder_layers`,
    `encoder_attention_heads`, `encoder_ffn_dim` and the decoder's, biases on every projection, `activation_dropout`
    between the feed-forward's activation and its output projection where it is above 0."""
    stacks = {}
    for stack in ("encoder", "decoder"):
        depth = _whole(config, f"{stack}_layers", maximum=MAX_DEPTH)
        block: Layer = {"type": "transformer_block", "heads": _whole(config, f"{stack}_attention_heads",
                                                                      maximum=MAX_WIDTH),
                        "ffn": _whole(config, f"{stack}_ffn_dim", maximum=4 * MAX_WIDTH), "norm": norm,
                        "activation": activation, "dropout": dropout, "bias": True,
                        "inner_dropout": config_fraction(config, "activation_dropout", 0.0) > 0}
        stacks[stack] = [{**block, "name": f"{stack}.layers.{i}"} for i in range(depth)]
    return stacks


def whisper_layers(config: Mapping[str, Any], *, target_length: int | None = None) -> list[Layer]:
    """Return the layer list of WhisperForConditionalGeneration as the config describes it: the encoder reads
    [num_mel_bins, 2 x max_source_positions] log-mel frames (30 s of audio), the decoder `target_length` tokens
    (None: its max_target_positions, the longest transcript it reads)."""
    hidden = _whole(config, "d_model", maximum=MAX_WIDTH)
    vocab = _whole(config, "vocab_size", maximum=MAX_VOCABULARY)
    targets = _whole(config, "max_target_positions", maximum=MAX_WIDTH, default=448)
    target = targets if target_length is None else target_length
    if target > targets:
        raise SpecError("training.target_length", f"{target:,} exceeds Whisper's {targets} target positions "
                                                  "(max_target_positions): its transcripts are at most that long")
    p = config_fraction(config, "dropout", 0.0)
    stacks = _stacks(config, norm="pre", activation="gelu", dropout=p)
    return [
        {"type": "conv1d", "name": "encoder.conv1", "out_channels": hidden, "kernel": 3, "padding": 1},
        {"type": "gelu", "name": "encoder.gelu1"},
        {"type": "conv1d", "name": "encoder.conv2", "out_channels": hidden, "kernel": 3, "stride": 2, "padding": 1},
        {"type": "gelu", "name": "encoder.gelu2"},
        {"type": "to_sequence", "name": "encoder.permute"},
        {"type": "position_embedding", "name": "encoder.embed_positions", "frozen": True},  # sinusoids, not trained
        {"type": "dropout", "name": "encoder.dropout", "p": p},
        *stacks["encoder"],
        {"type": "layernorm", "name": "encoder.layer_norm"},
        {"type": "embedding", "name": "decoder.embed_tokens", "vocab": vocab, "dim": hidden, "length": target},
        {"type": "position_embedding", "name": "decoder.embed_positions", "max_positions": targets},
        {"type": "dropout", "name": "decoder.dropout", "p": p},
        *({**b, "causal": True, "memory": "encoder.layer_norm"} for b in stacks["decoder"]),
        {"type": "layernorm", "name": "decoder.layer_norm"},
        {"type": "dense", "name": "proj_out", "out_features": vocab, "bias": False, "shared_weights": True},
        {"type": "log_softmax", "name": "loss"},
    ]


def audio_not_tokens(name: str) -> SpecError:
    """Return the error of a sequence length given to Whisper, which reads audio frames, not tokens."""
    return SpecError("training.sequence_length", f"{name} reads 30 seconds of audio as log-mel frames, not tokens: "
                                                 "leave it out (training.target_length sets the transcripts' tokens)")


def whisper_input(config: Mapping[str, Any]) -> tuple[int, int]:
    """Return the log-mel input a Whisper config reads: [mel bins, frames] (the encoder halves the frames)."""
    return (_whole(config, "num_mel_bins", maximum=1024, default=80),
            2 * _whole(config, "max_source_positions", maximum=MAX_WIDTH, default=1500))


def seq2seq_layers(config: Mapping[str, Any], *, target_length: int | None) -> list[Layer]:
    """Return an encoder-decoder's layer list from its config.json (T5_TYPES, BART_TYPES or WHISPER_TYPES)."""
    if config.get("model_type") in WHISPER_TYPES:
        return whisper_layers(config, target_length=target_length)
    target = T5_CONTEXT if target_length is None else target_length
    if config.get("model_type") in BART_TYPES:
        return bart_layers(config, target_length=target)
    return t5_layers(config, target_length=target)

# name -> (d_model, d_kv, d_ff, layers, heads, feed_forward_proj, aliases): each stack has `layers` blocks and the
# vocabulary is 32,128. T5 1.0 from Google's configs as PaddleNLP copies them (paddlenlp/transformers/t5/
# configuration.py T5_PRETRAINED_INIT_CONFIGURATION, a stored public copy read 2026-12-07); FLAN-T5 (T5 1.1's
# layers, Chung et al. 2022) from the configs stored public projects quote: -small as google/t5-small-ssm's logged
# T5Config, -xl as BLIP-2's text_config, -xxl as FLUX.1's T5-v1.1-XXL text encoder; -base and -large as t5-v1_1-base
# and -large in the PaddleNLP table (read 2026-12-07). The counts the layers give are the Hub's (below).
T5_SIZES: dict[str, tuple[int, int, int, int, int, str, tuple[str, ...]]] = {
    "t5-small": (512, 64, 2048, 6, 8, "relu", ("t5_small", "google-t5/t5-small")),
    "t5-base": (768, 64, 3072, 12, 12, "relu", ("t5", "t5_base", "google-t5/t5-base")),
    "t5-large": (1024, 64, 4096, 24, 16, "relu", ("t5_large", "google-t5/t5-large")),
    "t5-3b": (1024, 128, 16384, 24, 32, "relu", ("t5_3b", "google-t5/t5-3b")),
    "t5-11b": (1024, 128, 65536, 24, 128, "relu", ("t5_11b", "google-t5/t5-11b")),
    "flan-t5-small": (512, 64, 1024, 8, 6, "gated-gelu", ("flan_t5_small", "t5-v1_1-small", "t5-v1.1-small")),
    "flan-t5-base": (768, 64, 2048, 12, 12, "gated-gelu", ("flan-t5", "flan_t5_base", "t5-v1_1-base", "t5-v1.1-base")),
    "flan-t5-large": (1024, 64, 2816, 24, 16, "gated-gelu", ("flan_t5_large", "t5-v1_1-large", "t5-v1.1-large")),
    "flan-t5-xl": (2048, 64, 5120, 24, 32, "gated-gelu", ("flan_t5_xl", "t5-v1_1-xl", "t5-v1.1-xl")),
    "flan-t5-xxl": (4096, 64, 10240, 24, 64, "gated-gelu", ("flan_t5_xxl", "t5-v1_1-xxl", "t5-v1.1-xxl")),
    # mT5 (Xue et al. 2021): T5 1.1's layers at each size with a 250,112-token vocabulary, untied
    "mt5-small": (512, 64, 1024, 8, 6, "gated-gelu", ("google/mt5-small", "mt5_small")),
    "mt5-base": (768, 64, 2048, 12, 12, "gated-gelu", ("mt5", "google/mt5-base", "mt5_base")),
    "mt5-large": (1024, 64, 2816, 24, 16, "gated-gelu", ("google/mt5-large", "mt5_large")),
    "mt5-xl": (2048, 64, 5120, 24, 32, "gated-gelu", ("google/mt5-xl", "mt5_xl")),
    "mt5-xxl": (4096, 64, 10240, 24, 64, "gated-gelu", ("google/mt5-xxl", "mt5_xxl")),
}
# The Hugging Face Hub's parameter counts of the checkpoints [recalled]; the layers give each to the weight (mT5-XL's
# and -XXL's are the layers' own, not recalled).
T5_COUNTS = {"t5-small": 60_506_624, "t5-base": 222_903_552, "t5-large": 737_668_096, "t5-3b": 2_851_598_336,
             "t5-11b": 11_307_321_344, "flan-t5-small": 76_961_152, "flan-t5-base": 247_577_856,
             "flan-t5-large": 783_150_080, "flan-t5-xl": 2_849_757_184, "flan-t5-xxl": 11_135_332_352,
             "mt5-small": 300_176_768, "mt5-base": 582_401_280, "mt5-large": 1_229_581_312, "mt5-xl": 3_742_619_648,
             "mt5-xxl": 12_921_057_280}
MT5_VOCABULARY = 250_112
T5_CONTEXT = 512  # the input length T5 and FLAN-T5 were trained at (relative positions set no hard limit)


def t5_config(name: str) -> dict[str, Any]:
    """Return the config.json fields of a T5 preset."""
    d_model, d_kv, d_ff, layers, heads, projection, _ = T5_SIZES[name]
    multilingual = name.startswith("mt5")
    return {"model_type": "mt5" if multilingual else "t5", "d_model": d_model, "d_kv": d_kv, "d_ff": d_ff,
            "num_layers": layers, "num_decoder_layers": layers, "num_heads": heads,
            "vocab_size": MT5_VOCABULARY if multilingual else 32128,
            "relative_attention_num_buckets": 32, "dropout_rate": 0.1, "feed_forward_proj": projection,
            "tie_word_embeddings": projection == "relu"}


def _build(name: str, target_length: int = T5_CONTEXT) -> list[Layer]:
    return t5_layers(t5_config(name), target_length=target_length)


# BART (Lewis et al. 2020): bart-base and bart-large as PaddleNLP copies their configs (paddlenlp/transformers/bart/
# configuration.py BART_PRETRAINED_INIT_CONFIGURATION, a stored public copy read 2026-12-07): vocabulary 50,265, 1,024
# positions, GELU, dropout, attention and activation dropout 0.1. name -> (d_model, layers a stack, heads, ffn, count
# [the Hub's, recalled; the layers give it to the weight], aliases); bart-large-cnn and -xsum have bart-large's layers.
BART_SIZES: dict[str, tuple[int, int, int, int, int, tuple[str, ...]]] = {
    "bart-base": (768, 6, 12, 3072, 139_420_416, ("bart", "facebook/bart-base", "bart_base")),
    "bart-large": (1024, 12, 16, 4096, 406_291_456, ("facebook/bart-large", "bart_large", "bart-large-cnn",
                                                     "facebook/bart-large-cnn", "bart-large-xsum")),
}
BART_CONTEXT = 1024


def bart_config(name: str) -> dict[str, Any]:
    """Return the config.json fields of a BART preset."""
    d_model, layers, heads, ffn, _, _ = BART_SIZES[name]
    return {"model_type": "bart", "d_model": d_model, "encoder_layers": layers, "decoder_layers": layers,
            "encoder_attention_heads": heads, "decoder_attention_heads": heads, "encoder_ffn_dim": ffn,
            "decoder_ffn_dim": ffn, "vocab_size": 50265, "max_position_embeddings": BART_CONTEXT, "dropout": 0.1,
            "attention_dropout": 0.1, "activation_dropout": 0.1, "activation_function": "gelu"}


def _build_bart(name: str, target_length: int = BART_CONTEXT) -> list[Layer]:
    return bart_layers(bart_config(name), target_length=target_length)


# Whisper (Radford et al. 2022): name -> (d_model, encoder layers, decoder layers, heads, mel bins, vocabulary); the FFN
# is 4 x d_model, 1,500 source and 448 target positions, dropout 0 (the configs of openai/whisper-* as the paper's
# Table 1 sizes them, recalled). The layers give the Hub's counts but for K's bias, which Whisper's k_proj lacks
# (d_model weights an attention; the count below is the Hub's: recalled, the layers' less those biases).
WHISPER_SIZES: dict[str, tuple[int, int, int, int, int, int]] = {
    "whisper-tiny": (384, 4, 4, 6, 80, 51865), "whisper-base": (512, 6, 6, 8, 80, 51865),
    "whisper-small": (768, 12, 12, 12, 80, 51865), "whisper-medium": (1024, 24, 24, 16, 80, 51865),
    "whisper-large-v2": (1280, 32, 32, 20, 80, 51865), "whisper-large-v3": (1280, 32, 32, 20, 128, 51866),
    "whisper-large-v3-turbo": (1280, 32, 4, 20, 128, 51866),
}
# The Hugging Face Whisper fine-tuning blog (huggingface/blog fine-tune-whisper.md @17e0c1d1, read 2026-12-07):
# Seq2SeqTrainingArguments(per_device_train_batch_size=16, gradient_checkpointing=True, fp16=True, max_steps=4000)
WHISPER_BLOG_BATCH = (16, "the Hugging Face Whisper fine-tuning blog's per_device_train_batch_size")
WHISPER_COUNTS = {"whisper-tiny": 37_760_640, "whisper-base": 72_593_920, "whisper-small": 241_734_912,
                  "whisper-medium": 763_857_920, "whisper-large-v2": 1_543_304_960,
                  "whisper-large-v3": 1_543_490_560, "whisper-large-v3-turbo": 808_878_080}
WHISPER_TARGET = 448  # max_target_positions: the longest transcript the decoder reads


def whisper_config(name: str) -> dict[str, Any]:
    """Return the config.json fields of a Whisper preset."""
    d_model, encoder, decoder, heads, mels, vocab = WHISPER_SIZES[name]
    return {"model_type": "whisper", "d_model": d_model, "encoder_layers": encoder, "decoder_layers": decoder,
            "encoder_attention_heads": heads, "decoder_attention_heads": heads, "encoder_ffn_dim": 4 * d_model,
            "decoder_ffn_dim": 4 * d_model, "num_mel_bins": mels, "vocab_size": vocab, "max_source_positions": 1500,
            "max_target_positions": WHISPER_TARGET}


def _build_whisper(name: str, target_length: int | None = None) -> list[Layer]:
    return whisper_layers(whisper_config(name), target_length=target_length)


def seq2seq_presets(preset: type, published: type) -> list[Any]:
    """Return the T5 and BART presets as registry.Preset values (the registry passes its classes: no import cycle)."""
    out = []
    for name, (d_model, _, d_ff, layers, heads, projection, aliases) in T5_SIZES.items():
        kind = "T5 1.0, ReLU feed-forward, head tied" if projection == "relu" else "T5 1.1 layers, gated GELU, untied"
        family, size = name.rsplit("-", 1)
        label = {"t5": "T5", "flan-t5": "FLAN-T5", "mt5": "mT5"}[family]
        kind += f", vocabulary {MT5_VOCABULARY:,}" if family == "mt5" else ""
        out.append(preset(
            name, f"{label}-{size.upper() if size in ('xl', 'xxl', '3b', '11b') else size} encoder-decoder "
                  f"({layers} + {layers} blocks, d_model {d_model}, {heads} heads, d_ff {d_ff}; {kind}; reads "
                  f"training.target_length target tokens)",
            partial(_build, name),
            published(T5_COUNTS[name], None, f"Hugging Face Hub parameter count of {name} [recalled]; the layers "
                                             "from its config.json (hf_seq2seq.py)"),
            sequence_length=T5_CONTEXT, aliases=aliases, target=True))
    for name, (d_model, layers, heads, ffn, count, aliases) in BART_SIZES.items():
        out.append(preset(
            name, f"BART-{name[5:].capitalize()} encoder-decoder ({layers} + {layers} post-norm blocks, d_model "
                  f"{d_model}, {heads} heads, FFN {ffn}, GELU, vocabulary 50265 tied, 1,024 positions; reads "
                  "training.target_length target tokens)",
            partial(_build_bart, name),
            published(count, None, f"Hugging Face Hub parameter count of facebook/{name} [recalled]; the layers from "
                                   "its config.json (hf_seq2seq.py)"),
            sequence_length=BART_CONTEXT, aliases=aliases, target=True))
    for name, (d_model, encoder, decoder, heads, mels, _) in WHISPER_SIZES.items():
        size = name[8:]
        out.append(preset(
            name, f"Whisper {size} speech recognizer ({encoder} + {decoder} pre-norm blocks, d_model {d_model}, "
                  f"{heads} heads; reads 30 s of audio as {mels} x 3000 log-mel frames, and training.target_length "
                  f"transcript tokens, at most {WHISPER_TARGET})",
            partial(_build_whisper, name),
            published(WHISPER_COUNTS[name], None, f"Hugging Face Hub parameter count of openai/{name} [recalled]; the "
                                                  "layers from its config.json (hf_seq2seq.py) count K's biases too"),
            input_shape=whisper_input(whisper_config(name)), target=True, recipe_batch=WHISPER_BLOG_BATCH,
            aliases=(f"openai/{name}", name.replace("-", "_"), *(("whisper",) if size == "small" else ()),
                     *(("whisper-large",) if size == "large-v3" else ()), *(("whisper-turbo",) if "turbo" in size
                                                                             else ()))))
    return out
