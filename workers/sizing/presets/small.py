"""Small-model presets written as layer lists: DCGAN, an MNIST VAE and MLP, the Atari DQN, the LSTM meta-learner."""

from __future__ import annotations

from typing import Any

Layer = dict[str, object]

DCGAN_LATENT, DCGAN_WIDTH = 100, 64  # nz, ngf = ndf in pytorch/examples dcgan/main.py
# Forward-and-backward passes of the discriminator per step in dcgan/main.py: netD(real), then
# netD(fake.detach()) for its own loss, then netD(fake) for the generator's loss.
DCGAN_DISCRIMINATOR_PASSES = 3


def dcgan_layers() -> list[Layer]:
    """Return the 64x64 DCGAN of pytorch/examples: generator then discriminator, trained together.

    One sample is one latent vector through the generator and its image through the discriminator,
    so the statistics (parameters, multiply-adds, memory) count each network once. The time of a
    step counts what dcgan/main.py runs: the discriminator forward and backward on the real batch, on
    the detached fake batch, and on the fake batch again for the generator's loss (`passes` 3), the
    generator once (`passes` 1). The passes run one after another, so memory holds one of each.
    """
    w = DCGAN_WIDTH
    layers: list[Layer] = []
    widths = (8 * w, 4 * w, 2 * w, w)
    d_passes: Layer = {"passes": DCGAN_DISCRIMINATOR_PASSES}
    for i, width in enumerate(widths):
        first = i == 0
        layers += [
            {
                "type": "conv_transpose2d",
                "name": f"G.deconv{i + 1}",
                "out_channels": width,
                "kernel": 4,
                "stride": 1 if first else 2,
                "padding": 0 if first else 1,
                "bias": False,
            },
            {"type": "batchnorm", "name": f"G.bn{i + 1}"},
            {"type": "relu", "name": f"G.relu{i + 1}"},
        ]
    layers += [
        {
            "type": "conv_transpose2d",
            "name": "G.deconv5",
            "out_channels": 3,
            "kernel": 4,
            "stride": 2,
            "padding": 1,
            "bias": False,
        },
        {"type": "tanh", "name": "G.image"},
    ]
    for i, width in enumerate(reversed(widths)):
        layers.append(
            {
                "type": "conv2d",
                "name": f"D.conv{i + 1}",
                "out_channels": width,
                "kernel": 4,
                "stride": 2,
                "padding": 1,
                "bias": False,
                **d_passes,
            }
        )
        if i:
            layers.append({"type": "batchnorm", "name": f"D.bn{i + 1}", **d_passes})
        layers.append({"type": "leaky_relu", "name": f"D.lrelu{i + 1}", "negative_slope": 0.2, **d_passes})
    return [
        *layers,
        {"type": "conv2d", "name": "D.conv5", "out_channels": 1, "kernel": 4, "bias": False, **d_passes},
        {"type": "sigmoid", "name": "D.probability", **d_passes},
    ]


def vae_mnist_layers() -> list[Layer]:
    """Return the VAE of pytorch/examples vae/main.py: 784-400-(20, 20)-sample-400-784."""
    return [
        {"type": "flatten", "name": "pixels"},
        {"type": "dense", "name": "fc1", "out_features": 400},
        {"type": "relu", "name": "h1"},
        {"type": "dense", "name": "fc21.mu", "out_features": 20, "inputs": ["h1"]},
        {"type": "dense", "name": "fc22.logvar", "out_features": 20, "inputs": ["h1"]},
        {"type": "reparameterize", "name": "z", "inputs": ["fc21.mu", "fc22.logvar"]},
        {"type": "dense", "name": "fc3", "out_features": 400},
        {"type": "relu", "name": "h3"},
        {"type": "dense", "name": "fc4", "out_features": 784},
        {"type": "sigmoid", "name": "reconstruction"},
    ]


# Keras's MNIST example (examples/mnist_mlp.py; read in the stored copy OnlyBelter/keras@394bc78a094d:
# "Dense(512, activation='relu', input_shape=(784,))", Dropout(0.2), Dense(512), Dropout(0.2), Dense(10,
# softmax), batch 128, 20 epochs, RMSprop). The softmax is the loss's (training.loss cross_entropy).
MLP_MNIST_WIDTH, MLP_MNIST_DROPOUT = 512, 0.2


def mlp_mnist_layers() -> list[Layer]:
    """Return the MNIST MLP of Keras's examples: 784-512-512-10 with ReLU and dropout 0.2."""
    layers: list[Layer] = [{"type": "flatten", "name": "pixels"}]
    for i in (1, 2):
        layers += [
            {"type": "dense", "name": f"dense{i}", "out_features": MLP_MNIST_WIDTH},
            {"type": "relu", "name": f"relu{i}"},
            {"type": "dropout", "name": f"dropout{i}", "p": MLP_MNIST_DROPOUT},
        ]
    return [*layers, {"type": "dense", "name": "logits", "out_features": 10}]


UNET_BASE, UNET_DEPTH, UNET_CLASSES = 64, 4, 2  # Ronneberger et al. 2015: 64 ... 1024 channels, four levels


def _double_conv(width: int, name: str) -> list[Layer]:
    """Return a U-Net level's two padded 3x3 convolutions, each with batchnorm and ReLU; the last ReLU named."""
    conv: Layer = {"type": "conv2d", "out_channels": width, "kernel": 3, "padding": 1, "bias": False}
    return [dict(conv), {"type": "batchnorm"}, {"type": "relu"},
            dict(conv), {"type": "batchnorm"}, {"type": "relu", "name": name}]


def unet_layers() -> list[Layer]:
    """Return a U-Net for per-pixel classes: padded 3x3 convolutions with batchnorm, max-pool down, transposed
    convolution up, each level's features concatenated on the way up (as examples/unet-highres.json)."""
    layers: list[Layer] = []
    for level in range(UNET_DEPTH):
        layers += [*_double_conv(UNET_BASE * 2**level, f"down{level}"), {"type": "maxpool2d", "kernel": 2}]
    layers += _double_conv(UNET_BASE * 2**UNET_DEPTH, "bottom")
    for level in reversed(range(UNET_DEPTH)):
        width = UNET_BASE * 2**level
        layers += [{"type": "conv_transpose2d", "out_channels": width, "kernel": 2, "stride": 2},
                   {"type": "concat", "from": f"down{level}"}, *_double_conv(width, f"up{level}")]
    return [*layers, {"type": "conv2d", "out_channels": UNET_CLASSES, "kernel": 1}]


def _dqn_network(prefix: str, *, frozen: bool, actions: int) -> list[Layer]:
    """Return one Nature-DQN network (Mnih et al. 2015) reading the stacked 4x84x84 frames."""
    extra: Layer = {"frozen": True} if frozen else {}
    convs = ((32, 8, 4), (64, 4, 2), (64, 3, 1))
    layers: list[Layer] = []
    for i, (width, kernel, stride) in enumerate(convs, start=1):
        conv: Layer = {
            "type": "conv2d",
            "name": f"{prefix}.conv{i}",
            "out_channels": width,
            "kernel": kernel,
            "stride": stride,
            **extra,
        }
        if i == 1:
            conv["inputs"] = ["input"]
        layers += [conv, {"type": "relu", "name": f"{prefix}.relu{i}", **extra}]
    return [
        *layers,
        {"type": "flatten", "name": f"{prefix}.flatten", **extra},
        {"type": "dense", "name": f"{prefix}.fc", "out_features": 512, **extra},
        {"type": "relu", "name": f"{prefix}.relu4", **extra},
        {"type": "dense", "name": f"{prefix}.q", "out_features": actions, **extra},
    ]


def dqn_atari_layers(*, actions: int = 18) -> list[Layer]:
    """Return the online Q-network and its frozen target copy (which evaluates the next state)."""
    return [
        *_dqn_network("online", frozen=False, actions=actions),
        *_dqn_network("target", frozen=True, actions=actions),
    ]


# Ravi & Larochelle 2017 on miniImageNet, 5-way 5-shot, as twitter-research/meta-learning-lstm's
# config/lstm/train-imagenet-5shot.lua sets it: 25 support images per update step, 8 steps;
# 15 query images per class (75) for the meta-loss.
META_STEPS, META_SUPPORT, META_QUERY = 8, 25, 75


def _learner(prefix: str, extra: Layer, *, classes: int) -> list[Layer]:
    """Return the learner: four conv-BN-ReLU-maxpool blocks of 32 filters, then a linear classifier."""
    layers: list[Layer] = []
    for i in range(1, 5):
        conv: Layer = {
            "type": "conv2d",
            "name": f"{prefix}.conv{i}",
            "out_channels": 32,
            "kernel": 3,
            "padding": 1,
            **extra,
        }
        if i == 1:
            conv["inputs"] = ["input"]
        layers += [
            conv,
            {"type": "batchnorm", "name": f"{prefix}.bn{i}", **extra},
            {"type": "relu", "name": f"{prefix}.relu{i}", **extra},
            {"type": "maxpool2d", "name": f"{prefix}.pool{i}", "kernel": 2, **extra},
        ]
    return [
        *layers,
        {"type": "flatten", "name": f"{prefix}.flatten", **extra},
        {"type": "dense", "name": f"{prefix}.cls", "out_features": classes, **extra},
    ]


def lstm_meta_learner_layers(*, classes: int = 5) -> list[Layer]:
    """Return one meta-training episode of the LSTM meta-learner as a single sample.

    - `support.*`: the learner's copy that computes the gradients fed to the meta-learner, run on
      25 images for each of 8 steps (frozen: it takes no meta-gradient; its weights are a copy);
    - `meta`: the coordinate-wise meta-LSTM, 8 update steps over every learner parameter, whose
      weights include the learner's learned initial parameters;
    - `query.*`: the learner with the meta-learner's final parameters (shared weights) on the 75
      query images, through which the meta-loss back-propagates.
    Set the batch size to the number of episodes per step (1 in the paper).
    """
    support = _learner("support", {"frozen": True, "repeat": META_STEPS * META_SUPPORT}, classes=classes)
    query = _learner("query", {"shared_weights": True, "repeat": META_QUERY}, classes=classes)
    learner_params = 32 * (3 * 9 + 1) + 3 * 32 * (32 * 9 + 1) + 4 * 64 + 32 * 5 * 5 * classes + classes
    meta: Layer = {
        "type": "meta_lstm",
        "name": "meta",
        "coordinates": learner_params,
        "hidden": 20,
        "input_features": 4,
        "repeat": META_STEPS,
    }
    return [*support, meta, *query]


def small_presets(preset: type, published: type) -> list[Any]:
    """Return the small presets as registry.Preset values (the registry passes its classes: no import cycle)."""
    return [
        preset(
            "dcgan",
            "DCGAN 64x64 of pytorch/examples (nz 100, ngf = ndf = 64): generator + discriminator",
            dcgan_layers,
            published(
                3_576_704 + 2_765_568,
                104_600_000 + 103_800_000,
                "estimation-methods.md §5 [derived]: G 3,576,704 params / 104.6M MACs, D 2,765,568 / 103.8M",
            ),
            input_shape=(DCGAN_LATENT, 1, 1),
            images=(3, 64, 64),
            aliases=("dcgan-64", "dcgan64", "gan"),  # "train a gan": the DCGAN, told back in Slack
            extra_batch_bytes=3 * 64 * 64 * 4,  # the real images the discriminator reads, float32
            # pytorch/examples' own default is 64 (dcgan/main.py --batchSize, read 2026-12-06)
            recipe_batch=(128, "DCGAN's: Radford et al. 2016, the domain notes' §7"),
            # pytorch/tutorials beginner_source/dcgan_faces_tutorial.py (read 2026-12-07): CelebA, batch_size = 128,
            # image_size = 64, num_epochs = 5
            recipe_epochs=(5, "celeba", "PyTorch's DCGAN tutorial on CelebA: num_epochs = 5"),
        ),
        preset(
            "vae-mnist",
            "VAE of pytorch/examples for 28x28 MNIST (784-400-20-400-784)",
            vae_mnist_layers,
            published(652_824, 650_000, "estimation-methods.md §5 [derived] from pytorch/examples vae/main.py"),
            input_shape=(1, 28, 28),
            aliases=("vae", "vae-28", "autoencoder"),
            recipe_batch=(128, "pytorch/examples vae/main.py's --batch-size default"),
            recipe_epochs=(10, "mnist", "pytorch/examples vae/main.py's --epochs default"),
        ),
        preset(
            "dqn-atari",
            "Nature DQN (Mnih et al. 2015), 4x84x84 frames, 18 actions, online + frozen target",
            dqn_atari_layers,
            published(
                1_693_362,
                2 * 9_350_000,
                "estimation-methods.md §5 [derived]: 1,693,362 params and 9.35M MACs per network; "
                "the target network's forward pass on the next state doubles the MACs",
            ),
            input_shape=(4, 84, 84),
            aliases=("dqn", "dqn-nature"),
            extra_batch_bytes=4 * 84 * 84 * 4,  # s': float32 frames of the next states
            recipe_batch=(32, "Nature DQN's minibatch: Mnih et al. 2015"),
        ),
        preset(
            "lstm-meta-learner",
            "LSTM meta-learner (Ravi & Larochelle 2017), miniImageNet 5-way 5-shot; one sample is one episode",
            lstm_meta_learner_layers,
            published(
                32_901 + 2_126,
                None,
                "[derived] learner of markdtw/meta-learning-lstm-pytorch learner.py "
                "(32,901) + its metalearner.py LSTM and gates (2,126)",
            ),
            input_shape=(3, 84, 84),
            aliases=("meta-learner", "lstm-meta", "meta-lstm"),
            # markdtw/meta-learning-lstm-pytorch main.py (read 2026-12-07): one episode per optimizer step
            recipe_batch=(1, "one episode a step, as markdtw/meta-learning-lstm-pytorch's main.py loop trains"),
        ),
        preset(
            "unet",
            "U-Net (Ronneberger et al. 2015) for segmentation: 64-1024 channels over four levels, padded 3x3 "
            "convolutions with batchnorm, transposed-convolution up-sampling, 2 classes per pixel; 512x512",
            unet_layers,
            published(
                31_037_698,
                None,
                "[derived] torch's count of validation/measure/nets_vision.py UNet(base=64, depth=4, classes=2) "
                "(2026-12-06): milesial/Pytorch-UNet's layout with bilinear=False and bias-free convolutions",
            ),
            input_shape=(3, 512, 512),
            aliases=("u-net", "unet-64"),
            # Ronneberger et al. 2015 §3 train one image a batch; so does milesial/Pytorch-UNet train.py
            # (stored copy at 07debeb: --batch-size default=1, read 2026-12-07)
            recipe_batch=(1, "the U-Net paper's single image a batch; milesial/Pytorch-UNet's --batch-size default"),
        ),
        preset(
            "mlp-mnist",
            "MLP of Keras's MNIST example (784-512-512-10, ReLU, dropout 0.2), 28x28 digits",
            mlp_mnist_layers,
            published(
                784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10,
                784 * 512 + 512 * 512 + 512 * 10,
                "[derived] from keras-team/keras examples/mnist_mlp.py (stored copy OnlyBelter/keras@394bc78a094d): "
                "784 x 512, 512 x 512 and 512 x 10 weights with their biases",
            ),
            input_shape=(1, 28, 28),
            aliases=("mlp", "mnist-mlp", "mlp-784"),
            recipe_batch=(128, "Keras' examples/mnist_mlp.py batch_size"),
            recipe_epochs=(20, "mnist", "Keras' examples/mnist_mlp.py epochs"),
        ),
    ]


def fixed_images(preset: Any, shape: tuple[int, ...] | None) -> str:
    """Say why a generative preset takes no other input shape."""
    latent, images = (" x ".join(map(str, s)) for s in (preset.input_shape or (), preset.images or ()))
    said = " x ".join(map(str, shape or ()))
    return (f"{said}: {preset.name} reads a latent vector of {latent} and generates {images} images, a size its "
            f"layers fix; leave input_shape out (or give {images}), or give model.layers for another size "
            f"(`gpugauge model {preset.name}` lists them)")
