"""How a slash command sizes a Stable Diffusion fine-tune said without its recipe: as diffusers' text-to-image
scripts run it (huggingface/diffusers@000280f5 examples/text_to_image/train_text_to_image.py and
train_text_to_image_lora.py, and that folder's README.md, read 2026-12-07).

- batch 16 a GPU: --train_batch_size's default (the preset's recipe_batch, workers/slack/defaults.py default_batch);
- 100 epochs: --num_train_epochs's default;
- fp16 autocast: the script's --mixed_precision defaults to the accelerate config, and every command of its README
  launches `accelerate launch --mixed_precision="fp16"`;
- torch.optim.AdamW (foreach on CUDA), gradients clipped to --max_grad_norm 1.0 before each update;
- with LoRA, rank 4 (--rank's default) on every attention's to_q, to_k, to_v and to_out, self- and cross-attention.
"""

from __future__ import annotations

from typing import Any

from workers.sizing.presets.diffusion import SD_CONFIGS
from workers.sizing.presets.registry import Preset

SCRIPT = "diffusers' train_text_to_image.py"
EPOCHS = 100  # --num_train_epochs default
LORA_RANK = 4  # train_text_to_image_lora.py --rank default
LORA_TARGETS = ["q", "k", "v", "o"]  # its LoRAAttnProcessor on every attention: to_q, to_k, to_v, to_out


def is_diffusion(found: Preset | None) -> bool:
    """Say whether the preset is a Stable Diffusion U-Net's training step, with its frozen encoders or its `-unet`
    twin over latents computed before training (diffusers' train_text_to_image_sdxl.py precomputes them, with the
    same --num_train_epochs, --train_batch_size and --max_grad_norm defaults)."""
    return found is not None and found.name.removesuffix("-unet") in SD_CONFIGS


def diffusion_epochs(spec: dict[str, Any]) -> str:
    """Set the script's epochs; return the words told back."""
    spec["training"]["epochs"] = EPOCHS
    return f"epochs={EPOCHS} ({SCRIPT}: --num_train_epochs default; say e.g. `10 epochs`)"


def diffusion_precision(spec: dict[str, Any]) -> str:
    """Set fp16 autocast as the scripts' README launches them; return the words told back."""
    spec["training"]["precision"] = "fp16-mixed"
    return ("precision=fp16 (the diffusers text-to-image README launches `accelerate launch --mixed_precision=fp16`; "
            "say `fp32` or `bf16` for yours)")


def diffusion_step(spec: dict[str, Any]) -> list[str]:
    """Set the script's optimizer and, for LoRA, its rank and targets, where not said; return the words told back."""
    training, told = spec["training"], []
    if (said := spec["model"].get("preset", "")).endswith("-unet"):  # "sdxl unet": the U-Net alone, said back
        told.append(f"{said}: the U-Net alone, over latents and text states computed before training (as "
                    "MosaicML's and MLPerf's recipes and diffusers' train_text_to_image_sdxl.py do); say "
                    f"`{said.removesuffix('-unet')}` to size the VAE and text encoder run every step, as "
                    "train_text_to_image.py does")
    if "optimizer" not in training:
        training.update(optimizer="adamw", gradient_clipping="global")
        told.append(f"optimizer=adamw, gradients clipped to norm 1.0 ({SCRIPT}: torch.optim.AdamW, "
                    "--max_grad_norm 1.0)")
    adapter = training.get("parallelism", {}).get("adapter")
    if adapter is not None and "rank" not in adapter and "targets" not in adapter:
        adapter.update(rank=LORA_RANK, targets=list(LORA_TARGETS))
        told.append(f"LoRA rank {LORA_RANK} on every attention's to_q, to_k, to_v and to_out "
                    "(train_text_to_image_lora.py: --rank default)")
    return told
