"""Named architectures, defined by their layers, with the published figures they are checked against.

`preset_stats(name)` computes a preset's statistics from its layer list (never from typed totals); `preset_layers(name)`
returns that list so a user can copy and edit it. Image models take their default `input_shape`; language models take
`sequence_length` token ids (default: the model's context) and report multiply-adds per sequence of that length.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

from workers.sizing.errors import ShapeError, SpecError, UnknownNameError
from workers.sizing.layers.build import compute_model_stats
from workers.sizing.layers.fields import closest
from workers.sizing.presets.cnn import alexnet_layers, resnet_layers, vgg16_layers
from workers.sizing.presets.detect import detector_presets
from workers.sizing.presets.diffusion import diffusion_presets
from workers.sizing.presets.hf_presets import SAME_LAYERS, config_presets
from workers.sizing.presets.hf_seq2seq import seq2seq_presets
from workers.sizing.presets.mobile import mobile_presets
from workers.sizing.presets.names import match_preset_name, name_forms
from workers.sizing.presets.small import fixed_images, small_presets
from workers.sizing.presets.transformer import (
    BERT_VOCAB,
    ENCODER_HEADS,
    LLAMA_SIZES,
    bert_layers,
    distilbert_layers,
    gpt2_layers,
    llama_7b_layers,
    llama_layers,
    roberta_layers,
    vit_presets,
)
from workers.sizing.stats import ModelStats

Layer = dict[str, object]
TORCHVISION = "torchvision model docs (pytorch.org/vision/stable/models), {} IMAGENET1K_V1: num_params, GFLOPS"
CASED_VOCAB = 28_996  # bert-base-cased and bert-large-cased: the cased WordPiece vocabulary
# torchvision's classification recipe (pytorch/vision references/classification/train.py: --epochs 90 by default,
# read in a public copy 2026-12-06), with which its ResNet, VGG and AlexNet weights were trained on ImageNet.
TORCHVISION_EPOCHS = (90, "imagenet", "torchvision's ImageNet recipe: references/classification/train.py --epochs")
CIFAR_RECIPE = "kuangliu/pytorch-cifar main.py"  # batch 128 (its trainloader), 200 epochs (its loop, cosine T_max 200)
KERAS_HUB = "KerasHub presets (keras-team/keras-hub, {} backbone 'params'); the paper rounds to {}"


class Published(NamedTuple):
    """A figure from the literature: parameters, forward multiply-adds per sample (None: not published)."""

    parameters: int
    multiply_adds: int | None
    source: str


@dataclass(frozen=True)
class Preset:
    """A named architecture: how to build its layers, its defaults, and what was published about it."""

    name: str
    description: str
    build: Callable[[], list[Layer]]
    published: Published
    input_shape: tuple[int, ...] | None = None  # None: a language model reading token ids
    sequence_length: int | None = None
    aliases: tuple[str, ...] = ()
    # Bytes per sample the loop holds on the device besides the layers' input: a DQN update's next
    # states s' (its target network reads them; the layer list feeds it `input`), a GAN's real images.
    extra_batch_bytes: int = 0
    # The heads `build` takes as `head=` (an encoder's ENCODER_HEADS; the first is its default), () for none.
    heads: tuple[str, ...] = ()
    # The batch its own training recipe uses and where that is written: what Slack sizes when no batch is said
    # (its default otherwise is Keras' 32). None where the model has no one recipe (ResNets, the LLMs).
    recipe_batch: tuple[int, str] | None = None
    # The epochs its own recipe trains for, on which data set (a DATASETS name of workers/slack/phrases.py), and
    # where that is written: what Slack sizes a run on that data set at when no epochs are said.
    recipe_epochs: tuple[int, str, str] | None = None
    # A generative model whose input is a latent vector, not its images (DCGAN): the images it generates and
    # its discriminator reads, which its layers fix. `model.input_shape` may name them (the preset unchanged).
    images: tuple[int, ...] | None = None
    target: bool = False  # an encoder-decoder: `build` takes target_length, the decoder's tokens (hf_seq2seq.py)
    loss: str = "cross_entropy"  # the training.loss its step computes when the spec names none (diffusion: "mse")
    input_rule: str = ""  # what input shapes its layers take, said with a refused one ("sides a multiple of 64")


def _resnet(depth: int, params: int, gflops: float) -> Preset:
    """Describe one torchvision ResNet preset."""
    return Preset(
        f"resnet{depth}",
        f"ResNet-{depth} (He et al. 2016), torchvision layout (v1.5: stride on the 3x3), 224x224",
        partial(resnet_layers, depth),
        Published(params, round(gflops * 1e9), TORCHVISION.format(f"ResNet{depth}_Weights")),
        input_shape=(3, 224, 224),
        # "train a cnn": the CNN most trained from scratch today, told back (workers/slack/defaults.py GENERIC_NAMES)
        aliases=(f"resnet-{depth}", f"resnet_{depth}", *{18: ("cnn", "convnet"), 50: ("resnet",)}.get(depth, ())),
        recipe_epochs=TORCHVISION_EPOCHS,
    )


def _resnet_cifar(depth: int, torchvision_params: int) -> Preset:
    """Describe a ResNet in the layout CIFAR recipes train (a 3x3 stem, no max-pool, 10 classes)."""
    features = 2048 if depth >= 50 else 512
    params = torchvision_params - 7 * 7 * 3 * 64 + 3 * 3 * 3 * 64 - (features * 1000 + 1000) + (features * 10 + 10)
    return Preset(
        f"resnet{depth}-cifar",
        f"ResNet-{depth} as CIFAR recipes build it (kuangliu/pytorch-cifar: 3x3 stride-1 stem, no max-pool), 32x32",
        partial(resnet_layers, depth, classes=10, cifar_stem=True),
        Published(params, None, f"[derived] torchvision ResNet-{depth}'s count with a 3x3x3x64 stem and a 10-class "
                  "fc, the layers of kuangliu/pytorch-cifar models/resnet.py"),
        input_shape=(3, 32, 32),
        aliases=(f"resnet-{depth}-cifar", f"resnet{depth}_cifar"),
        recipe_batch=(128, f"{CIFAR_RECIPE}'s batch_size"),
        recipe_epochs=(200, "cifar10", f"{CIFAR_RECIPE}: 200 epochs"),
    )


def _qwen25(size: str, published: float) -> Preset:
    """Return a Qwen2.5 base model's preset: its shape is transformer.LLAMA_SIZES' (biases on Q, K and V alone)."""
    name = f"qwen2.5-{size}"
    depth, hidden, heads, kv, ffn, vocab = LLAMA_SIZES[name]
    return Preset(
        name,
        f"Qwen2.5 {size} decoder ({depth} layers, hidden {hidden}, {heads} heads, {kv} KV heads, SwiGLU {ffn:,}, "
        f"vocabulary {vocab}, biases on Q, K and V)",
        partial(llama_layers, name),
        Published(round(published), None, f"Qwen2.5-{size.upper()} model card: {published / 1e9:g}B parameters "
                  "[recalled]; the shape from its config.json (stored public copies, read 2026-12-03)"),
        sequence_length=8192,
        aliases=(f"{name}-instruct", f"qwen-2.5-{size}", f"qwen2_5_{size}"),
    )


def _encoder(name: str, shape: str, build: Callable[..., list[Layer]], published: Published,
             aliases: tuple[str, ...]) -> Preset:
    """Describe one BERT-style encoder preset (512 positions; a classifier, or its masked-LM head: model.head)."""
    return Preset(name, f"{shape} with a 2-class fine-tuning head (model.head masked_lm: pre-training)", build,
                  published, sequence_length=512, aliases=aliases, heads=ENCODER_HEADS)


def _gpt2(size: str, params: int, paper: str, keras: str, aliases: tuple[str, ...]) -> Preset:
    """Describe one GPT-2 preset (context 1024)."""
    return Preset(
        size,
        f"GPT-2 {paper} (Radford et al. 2019): pre-norm decoder, LM head tied to the embedding",
        partial(gpt2_layers, size),
        Published(params, None, KERAS_HUB.format(keras, paper)),
        sequence_length=1024,
        aliases=aliases,
    )


_PRESETS: tuple[Preset, ...] = (
    _resnet(18, 11_689_512, 1.81), _resnet(34, 21_797_672, 3.66), _resnet(50, 25_557_032, 4.09),
    _resnet(101, 44_549_160, 7.80), _resnet(152, 60_192_808, 11.51),
    _resnet_cifar(18, 11_689_512), _resnet_cifar(34, 21_797_672), _resnet_cifar(50, 25_557_032),
    _resnet_cifar(101, 44_549_160), _resnet_cifar(152, 60_192_808),
    Preset(
        "vgg16",
        "VGG-16 (configuration D, Simonyan & Zisserman 2015), torchvision layout, 224x224",
        vgg16_layers,
        Published(138_357_544, round(15.47e9), TORCHVISION.format("VGG16_Weights")),
        input_shape=(3, 224, 224),
        aliases=("vgg-16", "vgg_16"),
        recipe_epochs=TORCHVISION_EPOCHS,
    ),
    Preset(
        "alexnet",
        "AlexNet as torchvision builds it (one-GPU variant, Krizhevsky 2014), 224x224",
        alexnet_layers,
        Published(61_100_840, round(0.71e9), TORCHVISION.format("AlexNet_Weights")),
        input_shape=(3, 224, 224),
        recipe_epochs=TORCHVISION_EPOCHS,
    ),
    *vit_presets(Preset, Published, TORCHVISION),  # ViT-B/16, ViT-B/32, ViT-L/16; CLIP ViT-B/32, B/16, L/14
    _encoder("bert-base", "BERT-base uncased (12 layers, hidden 768, 12 heads)", partial(bert_layers, "bert-base"),
             Published(109_482_240, None, KERAS_HUB.format("bert_base_en_uncased", "110M")),
             ("bert", "bert-base-uncased", "bert_base")),
    _encoder("bert-large", "BERT-large uncased (24 layers, hidden 1024, 16 heads)", partial(bert_layers, "bert-large"),
             Published(335_141_888, None, KERAS_HUB.format("bert_large_en_uncased", "340M")),
             ("bert-large-uncased", "bert_large")),
    *(_encoder(f"bert-{size}-cased", f"BERT-{size} cased ({shape}; the cased WordPiece vocabulary of {CASED_VOCAB:,})",
               partial(bert_layers, f"bert-{size}", vocab=CASED_VOCAB),
               Published(uncased - (BERT_VOCAB - CASED_VOCAB) * hidden, None, "[derived] the uncased count less "
                         f"{BERT_VOCAB - CASED_VOCAB:,} vocabulary rows of {hidden} (bert-{size}-cased config.json: "
                         f"vocab_size {CASED_VOCAB:,}, recalled)"),
               (f"bert_{size}_cased",))
      for size, shape, hidden, uncased in (("base", "12 layers, hidden 768, 12 heads", 768, 109_482_240),
                                           ("large", "24 layers, hidden 1024, 16 heads", 1024, 335_141_888))),
    _encoder("distilbert-base", "DistilBERT-base uncased (6 layers, hidden 768, 12 heads; BERT-base's vocabulary)",
             distilbert_layers, Published(66_362_880, None, "distilbert-base-uncased (Hugging Face DistilBertModel) "
                                          "parameter count: 66,362,880; Sanh et al. 2019, DistilBERT: 66M"),
             ("distilbert", "distilbert-base-uncased", "distilbert_base")),
    *(_encoder(f"roberta-{size}", f"RoBERTa-{size} ({layers} layers, hidden {hidden}, {heads} heads; BERT-{size}'s "
               "encoder with a byte-level BPE vocabulary of 50,265)", partial(roberta_layers, f"bert-{size}"),
               Published(published, None, f"roberta-{size} (Hugging Face RobertaModel) parameter count: "
                         f"{published:,}; Liu et al. 2019, RoBERTa"),
               (f"roberta_{size}", *(("roberta",) if size == "base" else ())))
      for size, layers, hidden, heads, published in (("base", 12, 768, 12, 124_645_632),
                                                     ("large", 24, 1024, 16, 355_359_744))),
    _gpt2("gpt2", 124_439_808, "124M (117M in the paper)", "gpt2_base_en", ("gpt2-small", "gpt-2", "gpt2-124m",
                                                                          "transformer", "124m", "125m")),
    # nanoGPT's README names them gpt2 124M, gpt2-medium 350M, gpt2-large 774M, gpt2-xl 1558M ("a 350m gpt")
    _gpt2("gpt2-medium", 354_823_168, "355M (345M in the paper)", "gpt2_medium_en", ("gpt2-355m", "gpt2-350m",
                                                                                   "350m", "355m")),
    _gpt2("gpt2-large", 774_030_080, "774M (762M in the paper)", "gpt2_large_en", ("gpt2-774m",)),
    _gpt2("gpt2-xl", 1_557_611_200, "1.5B (1542M in the paper)", "gpt2_extra_large_en", ("gpt2-1.5b", "gpt2-1558m")),
    Preset(
        "llama-7b",
        "LLaMA-7B decoder (32 layers, hidden 4096, 32 heads, SwiGLU 11008, vocabulary 32000)",
        llama_7b_layers,
        Published(6_700_000_000, None, "Touvron et al. 2023, LLaMA, Table 2: 6.7B parameters"),
        sequence_length=2048,
        aliases=("llama", "llama7b", "llama-1-7b", "7b"),
    ),
    Preset(
        "llama2-7b",
        "Llama 2 7B decoder (LLaMA-7B's shape: 32 layers, hidden 4096, 32 heads, SwiGLU 11008, vocabulary 32000; "
        "context 4096)",
        partial(llama_layers, "llama-7b"),
        Published(6_738_415_616, None, "Llama-2-7b-hf (Hugging Face) parameter count: 6,738,415,616, as "
                  "published for LLaMA-7B (Touvron et al. 2023, Llama 2, Table 1: 7B, context 4k)"),
        sequence_length=4096,
        aliases=("llama-2-7b", "llama2_7b", "llama2"),
    ),
    Preset(
        "llama2-70b",
        "Llama 2 70B decoder (80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672, vocabulary 32000)",
        partial(llama_layers, "llama2-70b"),
        Published(68_976_648_192, None, "Llama-2-70b-hf (Hugging Face) parameter count: 68,976,648,192"),
        sequence_length=4096,
        aliases=("llama-2-70b", "llama2_70b", "70b"),
    ),
    Preset(
        "llama3-8b",
        "Llama 3 8B decoder (32 layers, hidden 4096, 32 heads, 8 KV heads, SwiGLU 14336, vocabulary 128256)",
        partial(llama_layers, "llama3-8b"),
        Published(8_030_261_248, None, "Meta-Llama-3-8B (Hugging Face) parameter count: 8,030,261,248"),
        sequence_length=8192,
        aliases=("llama-3-8b", "llama3_8b", "llama3.1-8b", "8b"),
    ),
    Preset(
        "llama2-13b",
        "Llama 2 13B decoder (40 layers, hidden 5120, 40 heads, SwiGLU 13824, vocabulary 32000)",
        partial(llama_layers, "llama2-13b"),
        Published(13_015_864_320, None, "Llama-2-13b-hf (Hugging Face) parameter count: 13,015,864,320; "
                  "Touvron et al. 2023, LLaMA, Table 2: 13.0B"),
        sequence_length=4096,
        aliases=("llama-2-13b", "llama2_13b", "llama-13b", "13b"),
    ),
    Preset(
        "llama3-70b",
        "Llama 3 / 3.1 / 3.3 70B decoder (80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672, "
        "vocabulary 128256)",
        partial(llama_layers, "llama3-70b"),
        Published(70_553_706_496, None, "Meta-Llama-3-70B (Hugging Face) parameter count: 70,553,706,496 "
                  "(70.6B); the shape from oumi-ai configs/recipes/llama3_1/README.md"),
        sequence_length=8192,
        # "llama 70b" unversioned: the 70B Llama fine-tuned today (3.3 is the latest); "70b" alone stays Llama 2's
        aliases=("llama-3-70b", "llama3_70b", "llama3.1-70b", "llama-3.1-70b", "llama3.3-70b",
                 "llama-3.3-70b", "llama-70b"),
    ),
    Preset(
        "mistral-7b",
        "Mistral 7B decoder (32 layers, hidden 4096, 32 heads, 8 KV heads, SwiGLU 14336, vocabulary 32000; "
        "its 4,096-token sliding window not modelled)",
        partial(llama_layers, "mistral-7b"),
        Published(7_241_732_096, None, "Mistral-7B-v0.1 (Hugging Face) parameter count: 7,241,732,096; "
                  "Jiang et al. 2023, Mistral 7B, Table 1 for the shape"),
        sequence_length=8192,
        aliases=("mistral", "mistral-7b-v0.1", "mistral7b", "mistral_7b", "mistral-7b-v0.2", "mistral-7b-instruct-v0.1",
                 "mistral-7b-instruct-v0.2"),
    ),
    Preset(
        "llama3.1-405b",
        "Llama 3.1 405B decoder (126 layers, hidden 16384, 128 heads, 8 KV heads, SwiGLU 53248, vocabulary 128256)",
        partial(llama_layers, "llama3.1-405b"),
        Published(405_000_000_000, None, "Dubey et al. 2024, The Llama 3 Herd of Models: 405B parameters; "
                  "Table 3 for the shape [recalled]"),
        sequence_length=8192,
        aliases=("llama-3.1-405b", "llama3-405b", "llama-3-405b", "405b"),
    ),
    Preset(
        "mixtral-8x7b",
        "Mixtral 8x7B sparse mixture of experts (Mistral 7B's shape; each feed-forward 8 SwiGLU experts, "
        "the top 2 per token: 46.7B parameters, 12.9B used per token)",
        partial(llama_layers, "mixtral-8x7b"),
        Published(47_000_000_000, None, "Jiang et al. 2024, Mixtral of Experts (arXiv 2401.04088): \"47B "
                  "parameters, but only uses 13B active parameters\"; Table 1 for the shape"),
        sequence_length=8192,
        aliases=("mixtral", "mixtral-8x7b-v0.1", "mixtral8x7b", "mixtral_8x7b"),
    ),
    *(_qwen25(size, published) for size, published in (("7b", 7.61e9), ("14b", 14.7e9), ("32b", 32.5e9),
                                                      ("72b", 72.7e9))),
    Preset(
        "qwen3-30b-a3b",
        "Qwen3-30B-A3B sparse mixture of experts (48 layers, hidden 2048, 32 heads of 128, 4 KV heads; each "
        "feed-forward 128 SwiGLU experts of 768, the top 8 per token: 30.5B parameters, 3.3B used per token)",
        partial(llama_layers, "qwen3-30b-a3b"),
        Published(30_500_000_000, None, "Qwen3-30B-A3B model card: \"30.5B in total and 3.3B activated\" "
                  "[recalled]; the shape from its config.json (stored public copies, read 2026-12-03)"),
        sequence_length=4096,
        aliases=("qwen3-30b", "qwen3-moe-30b", "qwen3-30b-a3b-base", "qwen3_30b_a3b"),
    ),
    *config_presets(Preset, Published),  # Llama 3.2, Qwen2.5 0.5-3B, Qwen3, Phi-3, Mistral v0.3 and NeMo, Gemma 1, 2
    *seq2seq_presets(Preset, Published),  # T5, FLAN-T5 and BART encoder-decoders
    *small_presets(Preset, Published),  # DCGAN, the MNIST VAE and MLP, the Atari DQN, the LSTM meta-learner
    *mobile_presets(Preset, Published, TORCHVISION),  # MobileNetV2, EfficientNet-B0
    *diffusion_presets(Preset, Published),  # Stable Diffusion 1.5, 2.1, XL: the U-Net trained, VAE and text frozen
    *detector_presets(Preset, Published),  # YOLOv8 n, s, m, l, x
)
PRESETS: Mapping[str, Preset] = {p.name: p for p in _PRESETS}
_ALIASES: dict[str, str] = {**SAME_LAYERS, **{alias: p.name for p in _PRESETS for alias in p.aliases}}
PRESET_WORDS = frozenset({*PRESETS, *_ALIASES})  # every name and alias


def _suggestion_key(name: str) -> str:
    """Return the name's last form (no owner, no same-shape suffix): what the suggestions are closest to."""
    return name_forms(name)[-1]


def preset_names() -> tuple[str, ...]:
    """Return the canonical preset names, in catalogue order."""
    return tuple(PRESETS)


def preset_word(name: str) -> str | None:
    """Return the preset name or alias `name` means as people write it ("meta-llama/Llama-2-7b-hf"), else None."""
    return match_preset_name(name, PRESET_WORDS)


def find_preset(name: str) -> Preset:
    """Return the preset a name or alias refers to, or fail naming the closest presets."""
    matched = match_preset_name(name, PRESET_WORDS) if isinstance(name, str) else None
    if matched is None:
        key = _suggestion_key(name) if isinstance(name, str) else ""
        raise UnknownNameError("model.preset", f"unknown preset {name!r}", closest(key, [*PRESETS, *_ALIASES]))
    return PRESETS[_ALIASES.get(matched, matched)]


def preset_layers(name: str) -> list[Layer]:
    """Return a fresh copy of a preset's layer list, ready to edit and pass back as `layers`."""
    return find_preset(name).build()


def preset_stats(
    name: str, *, sequence_length: int | None = None, input_shape: Sequence[int] | None = None,
    head: str | None = None, target_length: int | None = None,
) -> ModelStats:
    """Compute a preset's statistics from its layers, optionally at another input shape or sequence length,
    or with another of its heads (`Preset.heads`; None: its default); an encoder-decoder's decoder reads
    `target_length` tokens (None: as many as the encoder)."""
    preset = find_preset(name)
    if target_length is not None and not preset.target:
        raise SpecError("training.target_length", f"goes with an encoder-decoder (t5, flan-t5, bart, whisper); "
                                                  f"{preset.name} reads one sequence: leave it out")
    if head is not None and head not in preset.heads:
        kinds = f"takes {' or '.join(preset.heads)}" if preset.heads else "has one head, its own"
        raise SpecError("model.head", f"{head!r}: {preset.name} {kinds} (a head is chosen for BERT-style encoders)")
    default = preset.heads[0] if preset.heads else None
    return _preset_stats(preset.name, sequence_length, None if input_shape is None else tuple(input_shape),
                         None if head == default else head, target_length)


@functools.lru_cache(maxsize=256)
def _preset_stats(name: str, sequence_length: int | None, input_shape: tuple[int, ...] | None,
                  head: str | None = None, target: int | None = None) -> ModelStats:
    """Build a preset's statistics once per (name, sequence length, input shape, head, target length)."""
    preset = find_preset(name)
    if preset.input_shape is None:
        if input_shape is not None:
            raise SpecError("model.input_shape", f"{preset.name} reads token ids; set training.sequence_length")
        shape, seq = None, sequence_length or preset.sequence_length
    else:
        shape, seq = (input_shape or preset.input_shape), None
    if preset.images is not None and shape in (preset.images, preset.input_shape):
        shape = preset.input_shape  # "dcgan at 3 x 64 x 64": the images it makes, its own size
    elif preset.images is not None:
        raise SpecError("model.input_shape", fixed_images(preset, shape))
    try:
        stats = compute_model_stats(
            preset.build(**({} if head is None else {"head": head}),
                         **({"target_length": target or seq} if preset.target and (target or seq) else {})),
            input_shape=shape,
            sequence_length=seq,
            name=preset.name if head is None else f"{preset.name} ({head} head)",
            field_prefix=f"model.preset({preset.name}).layers",
        )
    except ShapeError as error:
        if error.field.startswith("model.preset"):  # only the user's input shape can make a preset misfit
            raise ShapeError("model.input_shape", f"{preset.input_rule}: {error.reason}" if preset.input_rule
                             else error.reason) from error
        raise
    if preset.extra_batch_bytes and stats.batch_input is not None:
        batch = replace(stats.batch_input, bytes=stats.batch_input.bytes + preset.extra_batch_bytes)
        stats = replace(stats, batch_input=batch)
    return stats
