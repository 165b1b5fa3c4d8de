"""Measure diffusers' own text-to-image training step: `python -m validation.measure.diffusion_check`.

The Stable Diffusion presets (workers/sizing/presets/diffusion.py) are built from unet/config.json fields; this
measures diffusers' UNet2DConditionModel, AutoencoderKL and Transformers' CLIPTextModel from such configs, narrowed
to fit this CPU: the three layouts (SD 1.x: 1x1-convolution projections, 8 heads a level; SD 2.x: linear
projections, heads of a fixed width; SDXL: no attention at the first level, two transformer blocks a level, two
text encoders and the size conditioning) at 64 to 128 channels, 256 x 256 images (32 x 32 latents), a VAE of 32 to
64 channels, CLIP text encoders of 2 blocks over 77 tokens with a 4,096-token vocabulary. One step as
diffusers' examples/text_to_image/train_text_to_image.py runs it: the frozen VAE encodes the images and the frozen
text encoder the captions (no gradient: requires_grad_(False)), noise is added at a random timestep, the U-Net
predicts it, F.mse_loss(pred.float(), noise.float()); AdamW over the U-Net alone; fp32 and bf16 autocast, measured
as run.py measures its cases (two warm-up steps, the profiler's memory timeline and the storage tracker). The
frozen parts stay in fp32 here, as the core counts frozen weights (the script casts them to the mixed-precision
dtype). diffusers' attention runs F.scaled_dot_product_attention (sized `efficient`). It needs `diffusers` and
`transformers` beside torch 2.13.0, which no extra pins (here diffusers 0.42.1 from PyPI, transformers 5.18.0). The
committed results are validation/diffusion_steps.json, which tests/test_diffusion.py compares with the core.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from validation.measure.hf_transformers_check import measure_all, measured
from validation.measure.measure import measure
from validation.measure.step import Supervised

OUT = Path(__file__).resolve().parents[2] / "validation" / "diffusion_steps.json"
IMAGE, BATCH, VOCAB, TOKENS = 256, 4, 4096, 77
VAE = (32, 64, 64, 64)
TEXT = {"hidden": 64, "blocks": 2, "heads": 4, "ffn": 256}
# name: (block_out_channels, transformer blocks a level, heads a level, linear projection, text encoders, SDXL)
LAYOUTS: dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], bool, int, bool]] = {
    "sd1-tiny": ((64, 128, 128, 128), (1, 1, 1, 0), (4, 4, 4, 4), False, 1, False),
    "sd2-tiny": ((64, 128, 128, 128), (1, 1, 1, 0), (2, 4, 4, 4), True, 1, False),
    "sdxl-tiny": ((64, 128, 128), (0, 2, 2), (2, 4, 4), True, 2, True),
}
CASES = [(name, precision) for name in LAYOUTS for precision in ("fp32", "bf16-mixed")]


def unet_config(name: str) -> dict[str, Any]:
    """Return the UNet2DConditionModel config of a narrowed layout."""
    channels, depth, heads, linear, encoders, xl = LAYOUTS[name]
    down = ["CrossAttnDownBlock2D" if d else "DownBlock2D" for d in depth]
    up = ["CrossAttnUpBlock2D" if d else "UpBlock2D" for d in reversed(depth)]
    config: dict[str, Any] = {
        "sample_size": IMAGE // 8, "block_out_channels": list(channels), "down_block_types": down,
        "up_block_types": up, "layers_per_block": 2, "attention_head_dim": list(heads),
        "transformer_layers_per_block": [max(d, 1) for d in depth], "use_linear_projection": linear,
        "cross_attention_dim": TEXT["hidden"] * encoders}
    if xl:
        config.update(addition_embed_type="text_time", addition_time_embed_dim=32,
                      projection_class_embeddings_input_dim=TEXT["hidden"] + 6 * 32)
    return config


class TextToImageStep(nn.Module):
    """Images in, the U-Net's noise prediction out (the noise it should predict kept on the module for the loss)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        from diffusers import AutoencoderKL, UNet2DConditionModel
        from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

        self.xl = LAYOUTS[name][5]
        self.unet = UNet2DConditionModel(**unet_config(name))
        self.vae = AutoencoderKL(block_out_channels=list(VAE), down_block_types=["DownEncoderBlock2D"] * 4,
                                 up_block_types=["UpDecoderBlock2D"] * 4, layers_per_block=2, latent_channels=4)
        text = CLIPTextConfig(vocab_size=VOCAB, hidden_size=TEXT["hidden"], intermediate_size=TEXT["ffn"],
                              num_hidden_layers=TEXT["blocks"], num_attention_heads=TEXT["heads"],
                              max_position_embeddings=TOKENS, projection_dim=TEXT["hidden"],
                              bos_token_id=1, eos_token_id=2, pad_token_id=0)
        self.encoders = nn.ModuleList([CLIPTextModel(text)] if not self.xl else
                                      [CLIPTextModel(text), CLIPTextModelWithProjection(text)])
        del self.vae.decoder, self.vae.post_quant_conv  # a training step encodes only (the preset counts no decoder)
        self.vae.requires_grad_(False)
        self.encoders.requires_grad_(False)
        generator = torch.Generator().manual_seed(BATCH)
        self.ids = torch.randint(1, VOCAB, (BATCH, TOKENS), generator=generator)
        self.noise = torch.randn((BATCH, 4, IMAGE // 8, IMAGE // 8), generator=generator)
        self.timesteps = torch.randint(0, 1000, (BATCH,), generator=generator)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        latents = self.vae.encode(images).latent_dist.sample() * 0.18215
        noisy = 0.9 * latents + 0.43 * self.noise  # the scheduler's add_noise: two scaled terms
        if not self.xl:
            states = self.encoders[0](self.ids)[0]
            return self.unet(noisy, self.timesteps, states).sample
        first = self.encoders[0](self.ids, output_hidden_states=True)
        second = self.encoders[1](self.ids, output_hidden_states=True)
        states = torch.cat([first.hidden_states[-2], second.hidden_states[-2]], dim=-1)
        time_ids = torch.tensor([[IMAGE, IMAGE, 0, 0, IMAGE, IMAGE]] * BATCH, dtype=torch.float32)
        extra = {"text_embeds": second.text_embeds, "time_ids": time_ids}
        return self.unet(noisy, self.timesteps, states, added_cond_kwargs=extra).sample


def measure_case(name: str, precision: str) -> dict[str, Any]:
    """Build the narrowed pipeline, measure one step, and return the record."""
    torch.manual_seed(0)
    net = TextToImageStep(name)
    images = torch.randn((BATCH, 3, IMAGE, IMAGE), generator=torch.Generator().manual_seed(1))

    def loss(out: torch.Tensor, _: Any) -> torch.Tensor:
        return F.mse_loss(out.float(), net.noise.float())

    step = measure(Supervised(net, images, None, loss, optimizer="adamw", precision=precision))
    return {"id": f"diffusers-{name}-b{BATCH}-{IMAGE}px-{precision}", "model": name, "unet_config": unet_config(name),
            "vae_channels": list(VAE), "text_encoder": TEXT, "vocab": VOCAB, "batch_size": BATCH, "image": IMAGE,
            "precision": precision, "optimizer": "adamw", "attention": "efficient",
            "trainable_parameters": sum(p.numel() for p in net.unet.parameters()),
            "frozen_parameters": sum(p.numel() for m in (net.vae.encoder, net.vae.quant_conv, net.encoders)
                                     for p in m.parameters()),
            "measured": measured(step)}


def main() -> int:
    import diffusers

    return measure_all(OUT, "UNet2DConditionModel and AutoencoderKL and Transformers' CLIPTextModel from narrowed "
                            "configs; train_text_to_image.py's step (frozen VAE and text encoder, MSE on the noise)",
                       CASES, measure_case, library="diffusers'", versions={"diffusers": diffusers.__version__})


if __name__ == "__main__":
    sys.exit(main())
