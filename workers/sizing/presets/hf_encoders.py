"""BERT-style encoders and GPT-2 from a Hugging Face `config.json` (the spec's `model.hf_config`).

The everyday fine-tune is a BERT-shaped encoder: bert-base-multilingual-cased (a 119,547-token
vocabulary), xlm-roberta-base and -large (250,002 tokens: the embedding is most of the weights),
RoBERTa, CamemBERT, DistilBERT, a domain BERT with its own vocabulary. Their config.json gives the
shape; the layers are the presets' own (transformer.encoder_shaped, the bert-base / roberta-base /
distilbert-base builder, measured in validation/measure/nets_seq.py), so a config with a preset's shape
gives the preset's layers exactly (tests/test_hf_encoders.py):

- `bert`, `roberta`, `xlm-roberta`, `camembert`: `num_hidden_layers`, `hidden_size`,
  `num_attention_heads`, `intermediate_size`, `hidden_act`, `hidden_dropout_prob`, `vocab_size`,
  `type_vocab_size`, `max_position_embeddings`; absolute positions only (`position_embedding_type`).
  RoBERTa's types offset positions by `pad_token_id` + 1, so 514 positions carry 512 tokens.
- `distilbert`: `n_layers`, `dim`, `n_heads`, `hidden_dim`, `activation`, `dropout`, no token types, a
  ReLU pre-classifier; learned positions only (`sinusoidal_pos_embds` false, the published checkpoints').
- `gpt2` (GPT-2, DistilGPT-2, a GPT-2-shaped model): `n_layer`, `n_embd`, `n_head`, `n_inner` (4 x
  `n_embd` when null), `activation_function`, `resid_pdrop`, `vocab_size`, `n_positions`; its LM head
  tied to the token embedding, as GPT2LMHeadModel always has it.

An encoder's head is the spec's `model.head` (transformer.ENCODER_HEADS), not `architectures` (a base
checkpoint's config names its pre-training head, ...ForMaskedLM, and is fine-tuned with a new one): the
sentence classifier its ...ForSequenceClassification puts on the first token, with `num_labels` (or the
labels `id2label` names; 2 when neither is given, Transformers' default), or the masked-LM head of
...ForMaskedLM (the default when training.from_pretrained is false; modelimport/models.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workers.sizing.errors import SpecError
from workers.sizing.layers.fields import whole_number
from workers.sizing.presets.transformer import CLASSIFIER, encoder_shaped, gpt2_shaped

Layer = dict[str, object]
FIELD = "model.hf_config"
MAX_WIDTH, MAX_DEPTH, MAX_VOCABULARY, MAX_LABELS = 1_000_000, 1_000, 10_000_000, 1_000_000
# hidden_act / activation_function as the blocks run them (Transformers' ACT2FN): exact GELU, its tanh form
# as primitive ops (gelu_new), ReLU.
_ACTIVATIONS = {"gelu": "gelu", "gelu_pytorch_tanh": "gelu", "gelu_python": "gelu", "gelu_new": "gelu_new",
                "gelu_fast": "gelu_new", "relu": "relu"}
ROBERTA_TYPES = frozenset({"roberta", "xlm-roberta", "camembert"})
ENCODER_TYPES = ("bert", "roberta", "xlm-roberta", "camembert", "distilbert", "gpt2")
HEADED_TYPES = frozenset(ENCODER_TYPES) - {"gpt2"}  # the types whose head the spec chooses (model.head)


def config_whole(config: Mapping[str, Any], key: str, *, maximum: int = MAX_WIDTH, default: int | None = None,
                 minimum: int = 1) -> int:
    """Read a whole-number field of a config.json, naming it when missing or out of range (hf_config.py too)."""
    value = config.get(key)
    if value is None:  # absent, or null as Phi-2's num_key_value_heads: the type's default
        value = default
    if value is None:
        raise SpecError(f"{FIELD}.{key}", "required: the model's config.json has it")
    number = whole_number(value, f"{FIELD}.{key}", minimum=minimum)
    if number > maximum:
        raise SpecError(f"{FIELD}.{key}", f"must be at most {maximum:,}, got {number:,}")
    return number



def config_fraction(config: Mapping[str, Any], key: str, default: float) -> float:
    """Read a probability field of a config.json (a dropout), null or absent its default (hf_config.py too)."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
        raise SpecError(f"{FIELD}.{key}", f"must be a number from 0 up to 1, got {value!r}")
    return float(value)


def _activation(config: Mapping[str, Any], key: str, default: str) -> str:
    act = config.get(key)
    act = default if act is None else act  # null, as absent: the type's default
    if act not in _ACTIVATIONS:
        raise SpecError(f"{FIELD}.{key}", f"{act!r} is not an activation this model type runs "
                                          f"({', '.join(_ACTIVATIONS)})")
    return _ACTIVATIONS[act]


def _heads(config: Mapping[str, Any], key: str, hidden: int, hidden_key: str) -> int:
    heads = config_whole(config, key)
    if hidden % heads:
        raise SpecError(f"{FIELD}.{key}", f"{heads} heads do not divide {hidden_key} {hidden}")
    return heads


def _labels(config: Mapping[str, Any]) -> int:
    """Return the classifier's outputs: num_labels, else the labels id2label names, else Transformers' 2."""
    if config.get("num_labels") is not None:
        return config_whole(config, "num_labels", maximum=MAX_LABELS)
    names = config.get("id2label")
    if names is None:
        return 2
    if not isinstance(names, Mapping) or not names:
        raise SpecError(f"{FIELD}.id2label", "must map label ids to names, as a fine-tuned model's config has it")
    if len(names) > MAX_LABELS:
        raise SpecError(f"{FIELD}.id2label", f"at most {MAX_LABELS:,} labels")
    return len(names)


@dataclass(frozen=True)
class _Keys:
    """The config.json keys of one model type's shape (Transformers' names differ by type)."""

    depth: str
    hidden: str
    heads: str
    ffn: str
    activation: str
    activation_default: str
    dropout: str
    positions: str
    positions_default: int


_BERT_KEYS = _Keys("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size", "hidden_act", "gelu",
                   "hidden_dropout_prob", "max_position_embeddings", 512)
KEYS: Mapping[str, _Keys] = {
    **dict.fromkeys(("bert", *ROBERTA_TYPES), _BERT_KEYS),
    "distilbert": _Keys("n_layers", "dim", "n_heads", "hidden_dim", "activation", "gelu", "dropout",
                        "max_position_embeddings", 512),
    "gpt2": _Keys("n_layer", "n_embd", "n_head", "n_inner", "activation_function", "gelu_new", "resid_pdrop",
                  "n_positions", 1024),
}


def _shape(kind: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """Return the builder's shape arguments read from the type's keys."""
    k = KEYS[kind]
    hidden = config_whole(config, k.hidden)
    return {"depth": config_whole(config, k.depth, maximum=MAX_DEPTH), "hidden": hidden,
            "heads": _heads(config, k.heads, hidden, k.hidden), "ffn": config_whole(config, k.ffn, default=4 * hidden),
            "activation": _activation(config, k.activation, k.activation_default),
            "dropout": config_fraction(config, k.dropout, 0.1),
            "vocab": config_whole(config, "vocab_size", maximum=MAX_VOCABULARY),
            "positions": config_whole(config, k.positions, default=k.positions_default, maximum=100_000_000)}


def _bert(config: Mapping[str, Any], head: str) -> list[Layer]:
    """Return BERT, RoBERTa, XLM-RoBERTa or CamemBERT: one shape, RoBERTa's types with one token type."""
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise SpecError(f"{FIELD}.position_embedding_type",
                        f"{config['position_embedding_type']!r}: only absolute position embeddings are modelled")
    shape = _shape("bert", config)
    # BertLMPredictionHead's transform runs hidden_act; RobertaLMHead's always the exact GELU
    transform = "gelu" if config.get("model_type") in ROBERTA_TYPES else shape["activation"]
    return encoder_shaped(**shape, classes=_labels(config) if head == CLASSIFIER else 2, head=head,
                          head_transform=transform,
                          token_types=config_whole(config, "type_vocab_size", default=2, minimum=0))


def _distilbert(config: Mapping[str, Any], head: str) -> list[Layer]:
    if config.get("sinusoidal_pos_embds"):
        raise SpecError(f"{FIELD}.sinusoidal_pos_embds", "fixed sinusoidal positions are not modelled; the "
                                                         "published DistilBERT checkpoints learn theirs (false)")
    shape = _shape("distilbert", config)  # DistilBertForMaskedLM's vocab_transform runs config.activation
    return encoder_shaped(**shape, classes=_labels(config) if head == CLASSIFIER else 2, token_types=0,
                          head_activation="relu", head=head, head_transform=shape["activation"])


def _gpt2(config: Mapping[str, Any], head: str) -> list[Layer]:
    if config.get("add_cross_attention"):
        raise SpecError(f"{FIELD}.add_cross_attention", "a GPT-2 with cross-attention (an encoder-decoder's "
                                                        "decoder) is not modelled")
    return gpt2_shaped(**_shape("gpt2", config))


BUILDERS: Mapping[str, Callable[[Mapping[str, Any], str], list[Layer]]] = {"distilbert": _distilbert, "gpt2": _gpt2}


def encoder_layers(kind: str, config: Mapping[str, Any], head: str = CLASSIFIER) -> list[Layer]:
    """Return the layer list of the encoder (or GPT-2) a config.json of a type in ENCODER_TYPES describes,
    an encoder's with `head` (transformer.ENCODER_HEADS; GPT-2 has its LM head)."""
    if kind in BUILDERS:
        return BUILDERS[kind](config, head)
    return _bert(config, head)


def encoder_context(kind: str, config: Mapping[str, Any]) -> int:
    """Return the tokens a sample carries at most: the learned positions, less RoBERTa's padding offset."""
    keys = KEYS[kind]
    positions = config_whole(config, keys.positions, default=keys.positions_default, maximum=100_000_000)
    if kind in ROBERTA_TYPES:  # positions start at pad_token_id + 1 (create_position_ids_from_input_ids)
        pad = config_whole(config, "pad_token_id", default=1, minimum=0, maximum=positions)
        return max(1, positions - pad - 1)
    return positions
