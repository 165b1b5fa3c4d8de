"""The measured configurations: which network, batch, precision and optimizer, and how the sizing core
sees the same network (a preset at an input shape or sequence length, or an exported ONNX file)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import torch
from torch import nn

from validation.measure import (
    nets_hf_decoder,
    nets_hf_parallel,
    nets_seq,
    nets_small,
    nets_unseen,
    nets_unseen_blind,
    nets_unseen_gen,
    nets_unseen_modern,
    nets_unseen_seq,
    nets_vision,
)
from validation.measure.common import ce as _ce
from validation.measure.common import flat_ce as _flat_ce
from validation.measure.common import mse as _mse
from validation.measure.step import DCGAN, DQN, Mark, MetaLSTM, Supervised, Trainer, lm_loss


@dataclass(frozen=True)
class Net:
    """A network the harness can build, with one sample's input and its loss."""

    name: str
    family: str
    build: Callable[[], nn.Module]
    sample: Callable[[int], tuple[torch.Tensor, torch.Tensor | None]]  # batch -> (inputs, targets)
    loss: Callable[..., torch.Tensor]
    preset: str | None = None  # the sizing core's preset of the same layout
    input_shape: tuple[int, ...] | None = None  # one sample, as the core takes it
    sequence_length: int | None = None
    onnx: bool = False  # exported to tests/fixtures/onnx/ and sized through the importer
    description: str = ""
    loss_kind: str = "cross_entropy"  # the spec's training.loss for this net's step
    # Added after the core was built, to check that it generalises (issue 11): split "holdout". 1: the
    # first set, whose misses led to fixes; 2: the second set, measured after those fixes, blind
    unseen: int = 0
    hf_config: dict[str, Any] | None = None  # sized by the core as model.hf_config (nets_hf_decoder.py)


@dataclass(frozen=True)
class Case:
    """One measured configuration."""

    net: str
    batch_size: int
    precision: str
    optimizer: str
    variant: str = ""  # "", "output-dropped", "gelu-tanh-fused", "sdpa", "native-cell", "accumulate-N", "fused"
    notes: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def update_interval(self) -> int:
        """Return the micro-batches per optimizer step: N for the variant "accumulate-N", else 1."""
        return int(self.variant.removeprefix("accumulate-")) if self.variant.startswith("accumulate-") else 1

    @property
    def id(self) -> str:
        """Return the record id: here-<net>-b<batch>-<precision>-<optimizer>[-variant]."""
        tail = f"-{self.variant}" if self.variant else ""
        return f"here-{self.net}-b{self.batch_size}-{self.precision}-{self.optimizer}{tail}"


def _images(channels: int, size: int, classes: int) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(batch)
        return torch.randn(batch, channels, size, size, generator=g), torch.randint(0, classes, (batch,), generator=g)
    return sample


def _tokens(vocab: int, seq: int, classes: int | None) -> Callable[[int], tuple[torch.Tensor, torch.Tensor | None]]:
    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        g = torch.Generator().manual_seed(batch)
        ids = torch.randint(0, vocab, (batch, seq), generator=g)
        return ids, (None if classes is None else torch.randint(0, classes, (batch,), generator=g))
    return sample


def _segmentation(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 3, 64, 64, generator=g), torch.randint(0, 2, (batch, 64, 64), generator=g)


def _audio(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 1, 8000, generator=g), torch.randint(0, 35, (batch,), generator=g)


def _mfcc(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(batch)
    return torch.randn(batch, 40, 101, generator=g), torch.randint(0, 35, (batch,), generator=g)


def _reconstruction(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.rand(batch, 1, 64, 64, generator=torch.Generator().manual_seed(batch))
    return x, x


def _token_tags(vocab: int, seq: int, tags: int) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(batch)
        return torch.randint(0, vocab, (batch, seq), generator=g), torch.randint(0, tags, (batch, seq), generator=g)
    return sample


def _lm_targets(vocab: int, seq: int) -> Callable[[int], tuple[torch.Tensor, torch.Tensor]]:
    def sample(batch: int) -> tuple[torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(batch)
        return torch.randint(0, vocab, (batch, seq), generator=g), torch.randint(0, vocab, (batch, seq), generator=g)
    return sample


NETS: dict[str, Net] = {n.name: n for n in (
    Net("resnet18-64", "resnet", lambda: nets_vision.ResNet(18), _images(3, 64, 1000), _ce,
        preset="resnet18", input_shape=(3, 64, 64)),
    Net("resnet18-112", "resnet", lambda: nets_vision.ResNet(18), _images(3, 112, 1000), _ce,
        preset="resnet18", input_shape=(3, 112, 112)),
    Net("resnet50-64", "resnet", lambda: nets_vision.ResNet(50), _images(3, 64, 1000), _ce,
        preset="resnet50", input_shape=(3, 64, 64)),
    Net("resnet50-112", "resnet", lambda: nets_vision.ResNet(50), _images(3, 112, 1000), _ce,
        preset="resnet50", input_shape=(3, 112, 112)),
    Net("vgg16-32", "vgg", nets_vision.VGG16, _images(3, 32, 1000), _ce, preset="vgg16", input_shape=(3, 32, 32)),
    Net("vgg16-64", "vgg", nets_vision.VGG16, _images(3, 64, 1000), _ce, preset="vgg16", input_shape=(3, 64, 64)),
    Net("alexnet-64", "alexnet", nets_vision.AlexNet, _images(3, 64, 1000), _ce,
        preset="alexnet", input_shape=(3, 64, 64)),
    Net("alexnet-128", "alexnet", nets_vision.AlexNet, _images(3, 128, 1000), _ce,
        preset="alexnet", input_shape=(3, 128, 128)),
    Net("bert-base-s128", "bert", nets_seq.Bert, _tokens(30522, 128, 2), _ce, preset="bert-base", sequence_length=128),
    Net("bert-base-s64", "bert", nets_seq.Bert, _tokens(30522, 64, 2), _ce, preset="bert-base", sequence_length=64),
    Net("gpt2-s128", "gpt2", nets_seq.GPT2, _tokens(50257, 128, None), lambda out, _t: None,
        preset="gpt2", sequence_length=128),
    Net("gpt2-s256", "gpt2", nets_seq.GPT2, _tokens(50257, 256, None), lambda out, _t: None,
        preset="gpt2", sequence_length=256),
    Net("vit-b16-224", "vit", nets_seq.ViT, _images(3, 224, 1000), _ce, preset="vit-b16", input_shape=(3, 224, 224)),
    # non-presets, sized through their ONNX export
    Net("mobilenetv2-64", "mobilenet", nets_vision.MobileNetV2, _images(3, 64, 1000), _ce, input_shape=(3, 64, 64),
        onnx=True, description="MobileNetV2 (width 1.0, torchvision layout, ReLU6) at 64x64"),
    Net("efficientnet-b0-64", "efficientnet", lambda: nets_vision.MobileNetV2(efficient=True), _images(3, 64, 1000),
        _ce, input_shape=(3, 64, 64), onnx=True,
        description="EfficientNet-B0-like MBConv stack (SiLU, squeeze-excite, no stochastic depth) at 64x64"),
    Net("unet-64", "unet", nets_vision.UNet, _segmentation, _ce, input_shape=(3, 64, 64), onnx=True,
        description="U-Net, base width 16, depth 4, batchnorm, per-pixel 2 classes, 64x64"),
    Net("lstm-lm-s35", "lstm", nets_seq.LstmLM, _lm_targets(5000, 35), _flat_ce, input_shape=(35,),
        sequence_length=35, onnx=True,
        description="word LSTM language model: vocabulary 5000, embedding 256, 2 x LSTM 512, sequence 35"),
    Net("transformer-enc-s128", "transformer", nets_seq.TransformerClassifier, _tokens(8000, 128, 4), _ce,
        input_shape=(128,), sequence_length=128, onnx=True,
        description="nn.TransformerEncoder, 4 layers, d 256, 4 heads, FFN 1024, dropout 0.1, sequence 128"),
    Net("densenet121-64", "densenet", nets_vision.DenseNet, _images(3, 64, 1000), _ce, input_shape=(3, 64, 64),
        onnx=True, description="DenseNet-121 (growth 32, blocks 6-12-24-16) at 64x64"),
    Net("mlp-784", "mlp", nets_seq.MLP, _images(1, 28, 10), _ce, input_shape=(1, 28, 28), onnx=True,
        description="MLP 784-1024-1024-10, ReLU, dropout 0.2"),
    Net("wrn16-4-32", "wideresnet", nets_vision.WideResNet, _images(3, 32, 10), _ce, input_shape=(3, 32, 32),
        onnx=True, description="WideResNet-16-4 for CIFAR 32x32, dropout 0.3"),
    Net("gn-resnet18-64", "gn-resnet", lambda: nets_vision.ResNet(18, group_norm=True), _images(3, 64, 1000), _ce,
        input_shape=(3, 64, 64), onnx=True, description="ResNet-18 with GroupNorm (32 groups) at 64x64"),
    Net("m5-8k", "m5", nets_seq.M5, _audio, _ce, input_shape=(1, 8000), onnx=True,
        description="M5 raw-audio net (32 channels, torchaudio tutorial), 1 s at 8 kHz, 35 classes"),
    # unseen: architectures added after the core was built (nets_unseen*.py), sized through ONNX
    *(Net(name, fam, build, sample, loss, input_shape=shape, sequence_length=seq, onnx=True, description=text,
          loss_kind=kind, unseen=1)
      for name, fam, build, sample, loss, shape, seq, text, kind in (
        ("squeezenet11-64", "squeezenet", nets_unseen.SqueezeNet, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "SqueezeNet 1.1 (fire modules, concat, in-place ReLU, ceil-mode max-pool), 1000 classes, 64x64",
         "cross_entropy"),
        ("shufflenetv2-64", "shufflenet", nets_unseen.ShuffleNetV2, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "ShuffleNetV2 1.0x (channel split by chunk, channel shuffle by view/transpose/view), 64x64",
         "cross_entropy"),
        ("googlenet-64", "googlenet", nets_unseen.GoogLeNet, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "GoogLeNet (Inception v1 with BatchNorm, four-branch concat, no auxiliary heads), 64x64", "cross_entropy"),
        ("resnext50-64", "resnext", nets_unseen.ResNeXt50, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "ResNeXt-50 32x4d (grouped 3x3 convolutions, cardinality 32), 64x64", "cross_entropy"),
        ("mobilenetv3s-64", "mobilenetv3", nets_unseen_modern.MobileNetV3Small, _images(3, 64, 1000), _ce,
         (3, 64, 64), None, "MobileNetV3-small (in-place hardswish, squeeze-excite with hardsigmoid), 64x64",
         "cross_entropy"),
        ("convnext-64", "convnext", nets_unseen_modern.ConvNeXt, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "ConvNeXt, widths 48-384, depths 2-2-4-2 (depthwise 7x7, LayerNorm via permute, GELU, layer scale), 64x64",
         "cross_entropy"),
        ("vit-t8-64", "vit-mha", nets_unseen_modern.VisionTransformer, _images(3, 64, 1000), _ce, (3, 64, 64), None,
         "ViT in torchvision's layout with nn.MultiheadAttention: patch 8, hidden 192, 6 layers, 3 heads, 64x64",
         "cross_entropy"),
        ("conv-ae-64", "autoencoder", nets_unseen_modern.ConvAutoencoder, _reconstruction, _mse, (1, 64, 64), None,
         "convolutional autoencoder (stride-2 convs; ConvTranspose2d and nearest Upsample up; sigmoid), MSE",
         "mse"),
        ("gru-s64", "gru", nets_unseen_seq.GruClassifier, _tokens(5000, 64, 4), _ce, (64,), 64,
         "GRU text classifier: vocabulary 5000, embedding 128, 2 x GRU 256, the last step to 4 classes",
         "cross_entropy"),
        ("tcn-kws", "tcn", nets_unseen_seq.KeywordTCN, _mfcc, _ce, (40, 101), None,
         "dilated Conv1d keyword spotter on 40 MFCC x 101 frames (96 channels, dilations 1-8, max over time)",
         "cross_entropy"),
        ("tinygpt-s128", "decoder-lm", nets_unseen_seq.TinyGPT, _lm_targets(4096, 128), _flat_ce, (128,), 128,
         "decoder-only LM in nanoGPT's layout: vocabulary 4096, 4 layers, width 256, SDPA causal, tied head",
         "cross_entropy"),
      )),
    # the second unseen set (nets_unseen_blind.py), measured after the first set's fixes
    *(Net(name, fam, build, sample, _flat_ce if fam == "bigru" else _ce, input_shape=shape, sequence_length=seq,
          onnx=True, description=text, unseen=2)
      for name, fam, build, sample, shape, seq, text in (
        ("vgg11bn-32", "vgg-bn", nets_unseen_blind.VGG11BN, _images(3, 32, 10), (3, 32, 32), None,
         "VGG-11 with BatchNorm after biased convolutions, CIFAR 32x32, 512-512 classifier with dropout"),
        ("bigru-tagger-s48", "bigru", nets_unseen_blind.BiGruTagger, _token_tags(8000, 48, 17), (48,), 48,
         "token tagger: vocabulary 8000, embedding 100, bidirectional GRU 128, dropout 0.3, 17 tags per token"),
        ("mixer-64", "mixer", nets_unseen_blind.Mixer, _images(3, 64, 100), (3, 64, 64), None,
         "MLP-Mixer: patch 8 (64 tokens), width 256, 6 blocks, token MLP 128, channel MLP 1024, 64x64"),
        ("regnety-64", "regnet", nets_unseen_blind.RegNetY, _images(3, 64, 1000), (3, 64, 64), None,
         "RegNetY-400MF-like: widths 48-104-208-440, depths 1-3-6-6, group width 8, SE with sigmoid, 64x64"),
        ("charcnn-s256", "charcnn", nets_unseen_blind.CharCNN, _tokens(70, 256, 4), (256,), 256,
         "character CNN: alphabet 70, embedding 64, 3 x Conv1d 256 with max-pool, 256 characters, 4 classes"),
      )),
    # decoders as Hugging Face Transformers' eager modules compose them, sized from their config.json (unseen 3, 4);
    # parallel-residual ones (GPT-NeoX, Phi), measured before the core had their blocks (unseen 5)
    *(Net(name, "hf-decoder", partial(nets.Decoder, config),
          nets_hf_decoder.ids_as_labels(config["vocab_size"], 512 if name.endswith("-s512") else 256), lm_loss,
          sequence_length=512 if name.endswith("-s512") else 256,
          description=f"{config['model_type']} decoder as Transformers runs it (eager modules, sdpa attention): "
          f"{config}", unseen=5 if nets is nets_hf_parallel else 4 if name in nets_hf_decoder.BLIND else 3,
          hf_config=config)
      for nets in (nets_hf_decoder, nets_hf_parallel) for name, config in nets.CONFIGS.items()),
    # layouts with no preset (encoder-decoder, diffusion U-Net, detector), measured before any change (unseen 6)
    *(Net(**row, onnx=True, unseen=6) for row in nets_unseen_gen.NETS),
)}
SPECIAL = {name: name for name in ("dcgan", "vae-mnist", "dqn-atari", "lstm-meta-learner")}
FAMILY = {"dcgan": "gan", "vae-mnist": "vae", "dqn-atari": "dqn", "lstm-meta-learner": "meta-learner"}

CASES: tuple[Case, ...] = (
    Case("resnet18-64", 8, "fp32", "sgd"),
    Case("resnet18-64", 8, "bf16-mixed", "momentum"),
    Case("resnet18-112", 16, "fp32", "adam"),
    Case("resnet50-64", 4, "fp32", "momentum"),
    Case("resnet50-64", 16, "fp32", "adam"),
    Case("resnet50-112", 4, "bf16-mixed", "adamw"),
    Case("vgg16-32", 2, "fp32", "sgd"),
    Case("vgg16-64", 4, "fp32", "adam"),
    Case("alexnet-64", 8, "fp32", "momentum"),
    Case("alexnet-128", 8, "bf16-mixed", "adam"),
    Case("bert-base-s128", 2, "fp32", "adamw"),
    Case("bert-base-s64", 2, "bf16-mixed", "adamw"),
    Case("bert-base-s64", 8, "fp32", "sgd"),
    Case("gpt2-s128", 1, "fp32", "adamw"),
    Case("gpt2-s128", 2, "fp32", "sgd"),
    Case("gpt2-s128", 2, "fp32", "sgd", variant="output-dropped"),
    Case("gpt2-s128", 2, "fp32", "sgd", variant="gelu-tanh-fused"),
    Case("gpt2-s256", 1, "fp32", "adam"),
    Case("gpt2-s128", 1, "bf16-mixed", "sgd"),
    Case("vit-b16-224", 1, "fp32", "adam"),
    Case("vit-b16-224", 1, "bf16-mixed", "adamw"),
    Case("vit-b16-224", 2, "fp32", "adamw", variant="sdpa"),
    Case("dcgan", 16, "fp32", "adam"),
    Case("dcgan", 16, "bf16-mixed", "adam"),
    Case("vae-mnist", 128, "fp32", "adam"),
    Case("vae-mnist", 512, "fp32", "sgd"),
    Case("dqn-atari", 32, "fp32", "adam"),
    Case("dqn-atari", 128, "fp32", "momentum"),
    Case("lstm-meta-learner", 1, "fp32", "adam"),
    Case("mobilenetv2-64", 8, "fp32", "momentum"),
    Case("mobilenetv2-64", 8, "bf16-mixed", "adam"),
    Case("efficientnet-b0-64", 8, "fp32", "adam"),
    Case("unet-64", 4, "fp32", "adam"),
    Case("unet-64", 4, "bf16-mixed", "adam"),
    Case("lstm-lm-s35", 16, "fp32", "sgd"),
    Case("lstm-lm-s35", 16, "fp32", "adam"),
    Case("lstm-lm-s35", 16, "fp32", "sgd", variant="native-cell"),
    Case("transformer-enc-s128", 8, "fp32", "adamw"),
    Case("densenet121-64", 4, "fp32", "momentum"),
    Case("densenet121-64", 4, "bf16-mixed", "sgd"),
    Case("mlp-784", 256, "fp32", "sgd"),
    Case("mlp-784", 64, "fp32", "adam"),
    Case("wrn16-4-32", 32, "fp32", "momentum"),
    Case("wrn16-4-32", 16, "bf16-mixed", "momentum"),
    Case("gn-resnet18-64", 8, "fp32", "momentum"),
    Case("m5-8k", 32, "fp32", "adam"),
    Case("m5-8k", 32, "bf16-mixed", "adam"),
    # gradient accumulation: two micro-batches of the batch, one optimizer step
    Case("gpt2-s128", 1, "fp32", "sgd", variant="accumulate-2"),
    Case("gpt2-s128", 1, "bf16-mixed", "sgd", variant="accumulate-2"),
    Case("vgg16-32", 2, "fp32", "sgd", variant="accumulate-2"),
    Case("bert-base-s64", 2, "bf16-mixed", "adamw", variant="accumulate-2"),
    Case("resnet18-64", 8, "fp32", "momentum", variant="accumulate-2"),
    Case("transformer-enc-s128", 8, "fp32", "adamw", variant="accumulate-2"),
    Case("mlp-784", 64, "fp32", "adam", variant="accumulate-2"),
    # unseen (split holdout)
    Case("squeezenet11-64", 16, "fp32", "momentum"),
    Case("squeezenet11-64", 16, "bf16-mixed", "adam"),
    Case("shufflenetv2-64", 16, "fp32", "sgd"),
    Case("shufflenetv2-64", 16, "bf16-mixed", "adamw"),
    Case("googlenet-64", 8, "fp32", "momentum"),
    Case("resnext50-64", 4, "fp32", "adamw"),
    Case("mobilenetv3s-64", 16, "fp32", "adam"),
    Case("mobilenetv3s-64", 16, "bf16-mixed", "momentum"),
    Case("convnext-64", 8, "fp32", "adamw"),
    Case("convnext-64", 8, "bf16-mixed", "adamw"),
    Case("vit-t8-64", 8, "fp32", "adamw"),
    Case("vit-t8-64", 8, "bf16-mixed", "adam"),
    Case("conv-ae-64", 32, "fp32", "adam"),
    Case("gru-s64", 16, "fp32", "adam"),
    Case("tcn-kws", 64, "fp32", "sgd"),
    Case("tinygpt-s128", 8, "fp32", "adamw"),
    Case("tinygpt-s128", 4, "bf16-mixed", "adamw"),
    # the second unseen set, measured after the fixes (split holdout)
    Case("vgg11bn-32", 32, "fp32", "momentum"),
    Case("bigru-tagger-s48", 16, "fp32", "adam"),
    Case("mixer-64", 8, "fp32", "adam"),
    Case("mixer-64", 8, "bf16-mixed", "adamw"),
    Case("regnety-64", 8, "fp32", "momentum"),
    Case("charcnn-s256", 32, "fp32", "adam"),
    # the fused Adam/AdamW update (training.optimizer_implementation: fused) on cases whose foreach step sets the
    # peak: the plan's fused-optimizer row and the optimizer-step-peak warning size it (2026-12-03)
    Case("mlp-784", 64, "fp32", "adam", variant="fused"),
    Case("resnet50-64", 16, "fp32", "adam", variant="fused"),
    Case("vgg16-64", 4, "fp32", "adam", variant="fused"),
    Case("bert-base-s128", 2, "fp32", "adamw", variant="fused"),
    Case("gpt2-s128", 1, "fp32", "adamw", variant="fused"),
    Case("vit-b16-224", 1, "bf16-mixed", "adamw", variant="fused"),
    # Hugging Face decoders from their config.json (model.hf_config), 2026-12-03
    Case("hf-llama", 4, "fp32", "adamw"), Case("hf-llama", 4, "bf16-mixed", "adamw"),
    Case("hf-llama-tied", 4, "fp32", "sgd"),
    Case("hf-qwen3", 4, "bf16-mixed", "adamw"),
    Case("hf-gemma2", 4, "fp32", "adamw"), Case("hf-gemma2", 4, "bf16-mixed", "adamw"),
    # measured after the composed-RMSNorm and K/V-repeat rows, blind (unseen set 4)
    Case("hf-qwen2", 4, "bf16-mixed", "adamw"),
    Case("hf-gemma", 4, "fp32", "adam"),
    Case("hf-mistral-s512", 2, "bf16-mixed", "adamw"),
    Case("hf-mistral-s512", 2, "fp32", "sgd"),
    Case("hf-neox", 4, "bf16-mixed", "adamw"),
    Case("hf-neox", 4, "fp32", "sgd"),
    Case("hf-phi", 4, "bf16-mixed", "adamw"),
    Case("hf-phi", 4, "fp32", "adam"),
    # torch.optim.RMSprop (foreach, defaults: one state, one sqrt copy in the step), 2026-12-06; Nature's DQN used it
    Case("mlp-784", 64, "fp32", "rmsprop"), Case("vgg16-64", 4, "fp32", "rmsprop"),
    Case("dqn-atari", 32, "fp32", "rmsprop"),
    # unseen set 6 (2026-12-07): an encoder-decoder, a diffusion U-Net and a detector, through ONNX
    Case("encdec-s112", 8, "fp32", "adamw"), Case("encdec-s112", 8, "bf16-mixed", "adamw"),
    Case("ddpm-unet-32", 8, "fp32", "adam"), Case("ddpm-unet-32", 8, "bf16-mixed", "adamw"),
    Case("retina-128", 8, "fp32", "momentum"), Case("retina-128", 8, "bf16-mixed", "adam"),
)


def build_trainer(case: Case) -> Trainer:
    """Build the trainer of one case, seeded."""
    torch.manual_seed(0)
    if case.net == "dcgan":
        return DCGAN(case.batch_size, optimizer=case.optimizer, precision=case.precision)
    if case.net == "dqn-atari":
        return DQN(case.batch_size, optimizer=case.optimizer, precision=case.precision)
    if case.net == "lstm-meta-learner":
        return MetaLSTM(optimizer=case.optimizer, precision=case.precision)
    if case.net == "vae-mnist":
        x = torch.rand(case.batch_size, 1, 28, 28, generator=torch.Generator().manual_seed(0))
        # a summed loss over 784 x batch values: a small rate keeps the random-data steps finite
        return Supervised(nets_small.VAE(), x, x, nets_small.vae_loss, optimizer=case.optimizer,
                          precision=case.precision, lr=1e-6)
    net = NETS[case.net]
    if net.family == "gpt2":
        model: nn.Module = nets_seq.GPT2(gelu="tanh" if case.variant == "gelu-tanh-fused" else "new")
        inputs, _ = net.sample(case.batch_size)
        return Supervised(model, inputs, inputs, lm_loss, optimizer=case.optimizer, precision=case.precision,
                          keep_output=case.variant != "output-dropped", update_interval=case.update_interval,
                          fused=case.variant == "fused")
    model = nets_seq.ViT(attention="sdpa") if case.variant == "sdpa" else net.build()
    inputs, targets = net.sample(case.batch_size)
    trainer = Supervised(model, inputs, targets, net.loss, optimizer=case.optimizer, precision=case.precision,
                         update_interval=case.update_interval, fused=case.variant == "fused")
    return WithoutOneDNN(trainer) if case.variant == "native-cell" else trainer


class WithoutOneDNN:
    """A trainer whose steps run with oneDNN off: recurrent layers run ATen's own cell, not mkldnn_rnn."""

    def __init__(self, inner: Supervised) -> None:
        self.inner, self.modules, self.optimizers = inner, inner.modules, inner.optimizers

    def step(self, mark: Mark) -> None:
        """Run the inner step under torch.backends.mkldnn.flags(enabled=False)."""
        with torch.backends.mkldnn.flags(enabled=False):
            self.inner.step(mark)

    def held(self) -> list[torch.Tensor]:
        """Return what the inner loop holds."""
        return self.inner.held()


def family(case: Case) -> str:
    """Return the family a case's errors are reported under."""
    return FAMILY.get(case.net) or NETS[case.net].family
