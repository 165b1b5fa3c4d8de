"""Stable Diffusion presets: a latent-diffusion U-Net trained as diffusers' text-to-image scripts train it.

One training step of diffusers' examples/text_to_image/train_text_to_image.py (and its LoRA and DreamBooth
siblings): the frozen VAE encoder turns each image into latents (8x smaller a side, 4 channels), the frozen CLIP
text encoder turns the caption's 77 tokens into the states the U-Net's cross-attention reads, and the U-Net
(diffusers' UNet2DConditionModel, the only part trained) predicts the noise added to the latents at a random
timestep: a mean-squared error (the preset's loss, `mse`). The frozen parts run forward only and keep nothing
for backward; their weights count (in fp32: the core's rule for frozen layers, where the script casts them to the
mixed-precision dtype: a little more than it holds).

The layers follow diffusers' modules (src/diffusers/models/unets/unet_2d_condition.py, resnet.py,
transformers/transformer_2d.py, attention.py; autoencoders/vae.py): residual blocks of GroupNorm, SiLU and 3x3
convolutions with the timestep's projection added per channel; transformer blocks over each map's positions
(pre-norm self-attention, cross-attention over the text, a GEGLU feed-forward of 4x; no biases on Q, K, V) between
a GroupNorm and input/output projections (1x1 convolutions in SD 1.x, linear layers in SD 2.x and SDXL); skips
concatenated on the way up. The configs are the checkpoints' unet/config.json, vae/config.json and
text_encoder/config.json (stored public copies, read 2026-12-07: SD 1.x's UNet config as `_diffusers_version`
0.6.0 wrote it, SDXL base 1.0's as 0.25.0 did). The test builds each preset's U-Net, VAE encoder and text
encoders and compares their parameters with diffusers 0.42.1's and Transformers 5.18.0's own modules, counted here
on the meta device.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

Layer = dict[str, Any]
TOKENS = 77  # CLIP's context: every caption is padded to it
LATENT_CHANNELS = 4
VAE_CHANNELS = (128, 256, 512, 512)  # AutoencoderKL of SD 1.x, 2.x and SDXL alike
GROUPS = 32
DIFFUSERS = "diffusers 0.42.1 UNet2DConditionModel from the checkpoint's unet/config.json, counted here (meta device)"


class TextEncoder(NamedTuple):
    """A CLIP text transformer: its width, blocks, heads, feed-forward, and what the U-Net reads of it."""

    hidden: int
    blocks: int
    heads: int
    ffn: int
    penultimate: bool = False  # SDXL reads the second-to-last block's output
    projection: bool = False  # CLIPTextModelWithProjection: a pooled, projected token (SDXL's text_embeds)


CLIP_L = TextEncoder(768, 12, 12, 3072)  # openai/clip-vit-large-patch14's text model (SD 1.x)
OPENCLIP_H = TextEncoder(1024, 23, 16, 4096)  # OpenCLIP ViT-H/14's, its last block dropped (SD 2.x's config)
SDXL_ENCODERS = (CLIP_L._replace(penultimate=True), TextEncoder(1280, 32, 20, 5120, True, True))  # + OpenCLIP bigG


class UNetConfig(NamedTuple):
    """The unet/config.json fields the layers follow."""

    channels: tuple[int, ...]  # block_out_channels
    attention: tuple[int, ...]  # transformer blocks per level (0: a DownBlock2D / UpBlock2D)
    heads: tuple[int, ...]  # attention heads per level (diffusers' `attention_head_dim`, which counts heads)
    linear_projection: bool
    encoders: tuple[TextEncoder, ...]
    image: int  # the resolution it was trained at
    size_conditioning: bool = False  # SDXL's addition_embed_type "text_time"


SD_CONFIGS = {
    "stable-diffusion-1.5": UNetConfig((320, 640, 1280, 1280), (1, 1, 1, 0), (8, 8, 8, 8), False, (CLIP_L,), 512),
    "stable-diffusion-2.1": UNetConfig((320, 640, 1280, 1280), (1, 1, 1, 0), (5, 10, 20, 20), True, (OPENCLIP_H,), 768),
    "stable-diffusion-2.1-base": UNetConfig((320, 640, 1280, 1280), (1, 1, 1, 0), (5, 10, 20, 20), True,
                                            (OPENCLIP_H,), 512),
    "sdxl": UNetConfig((320, 640, 1280), (0, 2, 10), (5, 10, 20), True, SDXL_ENCODERS, 1024, True),
}
# The U-Net's parameters, counted with diffusers 0.42.1 from each config (DIFFUSERS), and their names.
SD_COUNTS = {"stable-diffusion-1.5": 859_520_964, "stable-diffusion-2.1": 865_910_724,
             "stable-diffusion-2.1-base": 865_910_724, "sdxl": 2_567_463_684}
SD_ALIASES = {
    "stable-diffusion-1.5": ("sd15", "sd-1.5", "sd1.5", "sd-15", "stable-diffusion-v1-5", "stable-diffusion",
                             "runwayml/stable-diffusion-v1-5", "stable-diffusion-v1-5/stable-diffusion-v1-5",
                             "stable-diffusion-1.4", "stable-diffusion-v1-4", "sd14", "sd-1.4", "sd1.4"),
    "stable-diffusion-2.1": ("sd21", "sd-2.1", "sd2.1", "stable-diffusion-2-1", "stabilityai/stable-diffusion-2-1",
                             "stable-diffusion-2", "sd2", "sd-2"),
    "stable-diffusion-2.1-base": ("sd21-base", "sd-2.1-base", "stable-diffusion-2-1-base",
                                  "stabilityai/stable-diffusion-2-1-base"),
    "sdxl": ("sdxl-1.0", "sdxl-base", "stable-diffusion-xl", "stable-diffusion-xl-base-1.0",
             "stabilityai/stable-diffusion-xl-base-1.0", "sd-xl"),
}


def _resnet(out: list[Layer], name: str, x: str, channels_in: int, channels: int, temb: str | None,
            frozen: bool) -> str:
    """Append a ResnetBlock2D (diffusers resnet.py): GroupNorm, SiLU, 3x3 conv, + the timestep's projection per
    channel, GroupNorm, SiLU, 3x3 conv, + the input (through a 1x1 conv where the channels change)."""
    flag = {"frozen": True} if frozen else {}
    out += [{"type": "groupnorm", "groups": GROUPS, "inputs": [x], "name": f"{name}.norm1", **flag},
            {"type": "silu", "name": f"{name}.act1", **flag},
            {"type": "conv2d", "out_channels": channels, "kernel": 3, "padding": 1, "name": f"{name}.conv1", **flag}]
    last = f"{name}.conv1"
    if temb is not None:
        out += [{"type": "dense", "out_features": channels, "inputs": [temb], "name": f"{name}.time_emb_proj"},
                {"type": "add", "inputs": [last, f"{name}.time_emb_proj"], "name": f"{name}.add_time"}]
        last = f"{name}.add_time"
    out += [{"type": "groupnorm", "groups": GROUPS, "inputs": [last], "name": f"{name}.norm2", **flag},
            {"type": "silu", "name": f"{name}.act2", **flag},
            {"type": "conv2d", "out_channels": channels, "kernel": 3, "padding": 1, "name": f"{name}.conv2", **flag}]
    shortcut = x
    if channels_in != channels:
        out.append({"type": "conv2d", "out_channels": channels, "kernel": 1, "inputs": [x],
                    "name": f"{name}.conv_shortcut", **flag})
        shortcut = f"{name}.conv_shortcut"
    out.append({"type": "add", "inputs": [f"{name}.conv2", shortcut], "name": name, **flag})
    return name


def _transformer(out: list[Layer], name: str, x: str, channels: int, heads: int, depth: int,
                 linear: bool, memory: str) -> str:
    """Append a Transformer2DModel: GroupNorm, projection in, `depth` BasicTransformerBlocks over the positions
    (self-attention, cross-attention over the text, GEGLU), projection out, + the input."""
    out.append({"type": "groupnorm", "groups": GROUPS, "inputs": [x], "name": f"{name}.norm"})
    proj = {"type": "dense", "out_features": channels} if linear else {
        "type": "conv2d", "out_channels": channels, "kernel": 1}
    flatten = {"type": "to_sequence", "name": f"{name}.flatten"}
    out += [flatten, {**proj, "name": f"{name}.proj_in"}] if linear else [{**proj, "name": f"{name}.proj_in"}, flatten]
    out += [{"type": "transformer_block", "heads": heads, "memory": memory, "activation": "geglu", "dropout": 0.0,
             "qkv_bias": False, "name": f"{name}.b{i}"} for i in range(depth)]
    if linear:
        out += [{**proj, "name": f"{name}.proj_out"},
                {"type": "to_feature_map", "inputs": [f"{name}.proj_out", x], "name": f"{name}.unflatten"}]
    else:
        out += [{"type": "to_feature_map", "inputs": [f"{name}.b{depth - 1}", x], "name": f"{name}.unflatten"},
                {**proj, "name": f"{name}.proj_out"}]
    out.append({"type": "add", "inputs": [f"{name}.unflatten" if linear else f"{name}.proj_out", x], "name": name})
    return name


def vae_encoder_layers(vae: tuple[int, ...] = VAE_CHANNELS) -> list[Layer]:
    """Return the frozen AutoencoderKL encoder (block_out_channels `vae`, two residual blocks a level): image
    [3, H, W] to the latents' mean [4, H/8, W/8] ("vae.latents")."""
    out: list[Layer] = [{"type": "conv2d", "out_channels": vae[0], "kernel": 3, "padding": 1,
                         "name": "vae.conv_in", "frozen": True}]
    x, c = "vae.conv_in", vae[0]
    for level, channels in enumerate(vae):
        for j in range(2):
            x, c = _resnet(out, f"vae.down{level}.res{j}", x, c, channels, None, True), channels
        if level < len(vae) - 1:
            out.append({"type": "conv2d", "out_channels": c, "kernel": 3, "stride": 2, "padding": 1,
                        "name": f"vae.down{level}.downsample", "frozen": True})
            x = f"vae.down{level}.downsample"
    x = _resnet(out, "vae.mid.res0", x, c, c, None, True)
    frozen = {"frozen": True}
    out += [{"type": "groupnorm", "groups": GROUPS, "name": "vae.mid.attn.norm", **frozen},
            {"type": "to_sequence", "name": "vae.mid.attn.flatten", **frozen},
            {"type": "multihead_attention", "heads": 1, "name": "vae.mid.attn.core", **frozen},
            {"type": "to_feature_map", "inputs": ["vae.mid.attn.core", x], "name": "vae.mid.attn.unflatten", **frozen},
            {"type": "add", "from": x, "name": "vae.mid.attn", **frozen}]
    x = _resnet(out, "vae.mid.res1", "vae.mid.attn", c, c, None, True)
    out += [{"type": "groupnorm", "groups": GROUPS, "name": "vae.norm_out", **frozen},
            {"type": "silu", "name": "vae.act_out", **frozen},
            {"type": "conv2d", "out_channels": 2 * LATENT_CHANNELS, "kernel": 3, "padding": 1, "name": "vae.conv_out",
             **frozen},
            {"type": "conv2d", "out_channels": 2 * LATENT_CHANNELS, "kernel": 1, "name": "vae.quant_conv", **frozen},
            # the posterior's mean and log-variance; the step samples latents from them (tiny)
            {"type": "chunk", "chunks": 2, "index": 0, "name": "vae.latents", **frozen}]
    return out


def text_encoder_layers(encoder: TextEncoder, prefix: str, vocab: int) -> tuple[list[Layer], str]:
    """Return a frozen CLIP text transformer over the caption's 77 tokens and the name of the states the U-Net
    reads (the last block's normed output, or SDXL's second-to-last block's)."""
    frozen = {"frozen": True}
    out: list[Layer] = [
        {"type": "embedding", "vocab": vocab, "dim": encoder.hidden, "length": TOKENS, "name": f"{prefix}.embed",
         **frozen},
        {"type": "position_embedding", "max_positions": TOKENS, "name": f"{prefix}.positions", **frozen},
        *({"type": "transformer_block", "heads": encoder.heads, "ffn": encoder.ffn, "causal": True, "dropout": 0.0,
           "name": f"{prefix}.block{i}", **frozen} for i in range(encoder.blocks)),
        {"type": "layernorm", "name": f"{prefix}.final_norm", **frozen}]
    if encoder.projection:  # the end-of-text token's normed state, projected: the pooled text embedding
        out += [{"type": "select", "index": 0, **frozen},
                {"type": "dense", "out_features": encoder.hidden, "bias": False, "name": f"{prefix}.pooled", **frozen}]
    return out, f"{prefix}.block{encoder.blocks - 2}" if encoder.penultimate else f"{prefix}.final_norm"


def sd_layers(name: str, *, cached: bool = False) -> list[Layer]:
    """Return one training step's layers for a Stable Diffusion preset (module docstring); `cached`: its U-Net alone
    over latents and text states computed before training."""
    return diffusion_step_layers(SD_CONFIGS[name], cached=cached)


def diffusion_step_layers(cfg: UNetConfig, vae: tuple[int, ...] = VAE_CHANNELS, vocab: int = 49_408,
                          time_ids: int = 256, *, cached: bool = False) -> list[Layer]:
    """Return the layers of one text-to-image training step of a U-Net of this config (the measurement harness
    narrows `vae`, `vocab` and SDXL's `time_ids`, addition_time_embed_dim: each of six numbers' sinusoid). `cached`:
    the latents are the model's input [4, h, w] and the text states a further input, both computed before training
    (MosaicML's and MLPerf's recipes, diffusers' train_text_to_image_sdxl.py): no VAE, no text encoder."""
    if cached:
        width = sum(encoder.hidden for encoder in cfg.encoders)
        out: list[Layer] = [{"type": "model_input", "shape": [TOKENS, width], "name": "text"}]
        if cfg.size_conditioning:
            out.append({"type": "model_input", "shape": [cfg.encoders[-1].hidden], "name": "text2.pooled"})
        memory, latents = "text", "input"
    else:
        out = vae_encoder_layers(vae)
        memory, latents = _text_encoders(out, cfg, vocab), "vae.latents"
    c0, temb_width = cfg.channels[0], 4 * cfg.channels[0]
    out += [{"type": "model_input", "shape": [c0], "name": "timestep"},  # its sinusoidal embedding
            {"type": "dense", "out_features": temb_width, "name": "time.linear_1"},
            {"type": "silu", "name": "time.act"},
            {"type": "dense", "out_features": temb_width, "name": "time.linear_2"}]
    temb = "time.linear_2"
    if cfg.size_conditioning:  # SDXL: the pooled text and six size/crop numbers' sinusoids (256 each)
        out += [{"type": "model_input", "shape": [6 * time_ids], "name": "time_ids"},
                {"type": "concat", "inputs": ["text2.pooled", "time_ids"], "name": "add_embedding.input"},
                {"type": "dense", "out_features": temb_width, "name": "add_embedding.linear_1"},
                {"type": "silu", "name": "add_embedding.act"},
                {"type": "dense", "out_features": temb_width, "name": "add_embedding.linear_2"},
                {"type": "add", "inputs": [temb, "add_embedding.linear_2"], "name": "time.sum"}]
        temb = "time.sum"
    out.append({"type": "silu", "inputs": [temb], "name": "temb"})
    out.append({"type": "conv2d", "out_channels": c0, "kernel": 3, "padding": 1, "inputs": [latents],
                "name": "unet.conv_in"})
    return out + _unet_body(cfg, memory)


def _text_encoders(out: list[Layer], cfg: UNetConfig, vocab: int) -> str:
    """Append the frozen text encoder(s); return the name of the states the U-Net's cross-attention reads."""
    states = []
    for i, encoder in enumerate(cfg.encoders):
        layers, read = text_encoder_layers(encoder, f"text{i + 1}" if len(cfg.encoders) > 1 else "text_encoder",
                                           vocab)
        out += layers
        states.append(read)
    if len(states) == 1:
        return states[0]
    # SDXL: both encoders' states side by side, 768 + 1280 features a token
    out.append({"type": "concat", "inputs": states, "axis": 1, "name": "text", "frozen": True})
    return "text"


def _unet_body(cfg: UNetConfig, memory: str) -> list[Layer]:
    """Return the U-Net from conv_in's output to its noise prediction [4, h, w]."""
    out: list[Layer] = []
    x, c = "unet.conv_in", cfg.channels[0]
    skips = [(x, c)]
    levels = len(cfg.channels)
    for level, channels in enumerate(cfg.channels):
        for j in range(2):  # layers_per_block
            x, c = _resnet(out, f"unet.down{level}.res{j}", x, c, channels, "temb", False), channels
            if cfg.attention[level]:
                x = _transformer(out, f"unet.down{level}.attn{j}", x, c, cfg.heads[level], cfg.attention[level],
                                 cfg.linear_projection, memory)
            skips.append((x, c))
        if level < levels - 1:
            out.append({"type": "conv2d", "out_channels": c, "kernel": 3, "stride": 2, "padding": 1,
                        "name": f"unet.down{level}.downsample", "inputs": [x]})
            x = f"unet.down{level}.downsample"
            skips.append((x, c))
    x = _resnet(out, "unet.mid.res0", x, c, c, "temb", False)
    x = _transformer(out, "unet.mid.attn", x, c, cfg.heads[-1], max(cfg.attention[-1], 1), cfg.linear_projection,
                     memory)
    x = _resnet(out, "unet.mid.res1", x, c, c, "temb", False)
    for level in reversed(range(levels)):
        channels = cfg.channels[level]
        for j in range(3):  # layers_per_block + 1, each reading one skip
            skip, skip_c = skips.pop()
            out.append({"type": "concat", "inputs": [x, skip], "name": f"unet.up{level}.cat{j}"})
            x, c = _resnet(out, f"unet.up{level}.res{j}", f"unet.up{level}.cat{j}", c + skip_c, channels, "temb",
                           False), channels
            if cfg.attention[level]:
                x = _transformer(out, f"unet.up{level}.attn{j}", x, c, cfg.heads[level], cfg.attention[level],
                                 cfg.linear_projection, memory)
        if level > 0:
            out += [{"type": "upsample", "scale": 2, "inputs": [x], "name": f"unet.up{level}.interpolate"},
                    {"type": "conv2d", "out_channels": c, "kernel": 3, "padding": 1,
                     "name": f"unet.up{level}.upsample"}]
            x = f"unet.up{level}.upsample"
    out += [{"type": "groupnorm", "groups": GROUPS, "inputs": [x], "name": "unet.norm_out"},
            {"type": "silu", "name": "unet.act_out"},
            {"type": "conv2d", "out_channels": LATENT_CHANNELS, "kernel": 3, "padding": 1, "name": "unet.conv_out"}]
    return out


def _input_rule(cfg: UNetConfig, channels: int) -> str:
    """Return the shapes a preset's layers take: images whose sides are a multiple of 8 x 2 ^ (levels - 1) pixels (the
    VAE's 8, then each of the U-Net's downsamplings), or latents of 2 ^ (levels - 1)."""
    side = 2 ** (len(cfg.channels) - 1) * (8 if channels == 3 else 1)
    what = "images [3, H, W]" if channels == 3 else "latents [4, h, w]"
    return f"this U-Net takes {what} with sides a multiple of {side} (diffusers would resample its skips)"


def diffusion_presets(preset: type, published: type) -> list[Any]:
    """Return the Stable Diffusion presets as registry.Preset values (the registry passes its classes): each as
    train_text_to_image.py runs it, and its `-unet` twin over latents and text states computed before training."""
    out = []
    for name, cfg in SD_CONFIGS.items():
        label = "Stable Diffusion XL base 1.0" if name == "sdxl" else name.replace("-", " ").title()
        texts = " and ".join(f"{e.blocks}-block CLIP text encoder ({e.hidden})" for e in cfg.encoders)
        count = published(SD_COUNTS[name], None, DIFFUSERS + " [measured here 2026-12-07]")
        recipe = (16, "diffusers' train_text_to_image.py: --train_batch_size default")
        readme = (1, "diffusers' text-to-image READMEs launch --train_batch_size=1, LoRA and full fine-tune alike; "
                     "the script's own default is 16")
        out.append(preset(
            name, f"{label} fine-tuned as diffusers' train_text_to_image.py does, {cfg.image}x{cfg.image} images: "
                  f"the U-Net trained ({SD_COUNTS[name] / 1e6:,.0f}M), the VAE encoder and the {texts} frozen, "
                  "run every step; loss mse on the predicted noise",
            partial(sd_layers, name), count, input_shape=(3, cfg.image, cfg.image), aliases=SD_ALIASES[name],
            loss="mse", recipe_batch=readme, input_rule=_input_rule(cfg, 3)))
        side = cfg.image // 8
        out.append(preset(
            f"{name}-unet", f"{label}'s U-Net alone ({SD_COUNTS[name] / 1e6:,.0f}M), trained over latents "
                            f"[4, {side}, {side}] and text states computed before training (MosaicML's and MLPerf's "
                            "recipes, diffusers' SDXL script): no VAE, no text encoder; loss mse",
            partial(sd_layers, name, cached=True), count, input_shape=(4, side, side),
            aliases=tuple(f"{alias}-unet" for alias in SD_ALIASES[name] if "/" not in alias), loss="mse",
            recipe_batch=recipe, input_rule=_input_rule(cfg, 4)))
    return out
