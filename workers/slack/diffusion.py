"""How a slash command sizes a Stable Diffusion fine-tune said without its recipe: as diffusers' text-to-image
READMEs launch its scripts (huggingface/diffusers@0356e18b examples/text_to_image/README.md and @09f80e10
README_sdxl.md, read 2026-12-08; the scripts train_text_to_image.py and train_text_to_image_lora.py @000280f5, read
2026-12-07). What people run is the README's command, not the scripts' argparse defaults (batch 16, which sized
"fine-tune sdxl with lora on 1000 images" at 96.5 GiB, an H100 first, 100 epochs where the README runs 2).

- batch 1 a GPU: every README command's --train_batch_size=1 (the preset's recipe_batch, workers/slack/defaults.py
  default_batch); the U-Net alone (`-unet`, a pre-training recipe over cached latents) keeps the script's 16;
- epochs: 100, the script's --num_train_epochs default and the SD 1.x LoRA command's; 2 for SDXL's LoRA
  (README_sdxl.md's train_text_to_image_lora_sdxl.py command);
- a full fine-tune as the READMEs run it: 4 accumulation steps over the batch of 1 and gradient checkpointing, with
  the EMA of the U-Net for SD 1.x/2.x (--use_ema) and 8-bit Adam for SDXL (--use_8bit_adam); not where the words say
  their own accumulation (DreamBooth's recipe, workers/slack/recipes.py, says accum=1);
- fp16 autocast: every command of the READMEs launches with --mixed_precision="fp16";
- torch.optim.AdamW (foreach on CUDA), gradients clipped to --max_grad_norm 1.0 before each update;
- with LoRA, rank 4 (--rank's default) on every attention's to_q, to_k, to_v and to_out, self- and cross-attention.
"""

from __future__ import annotations

from typing import Any

from workers.sizing.presets.diffusion import SD_CONFIGS
from workers.sizing.presets.registry import Preset
from workers.slack.sequences import found_preset

SCRIPT = "diffusers' train_text_to_image.py"
EPOCHS = 100  # --num_train_epochs default
SDXL_LORA_EPOCHS = 2  # README_sdxl.md: train_text_to_image_lora_sdxl.py ... --num_train_epochs=2
README_ACCUMULATION = 4  # the full fine-tune's --gradient_accumulation_steps=4 over --train_batch_size=1
LORA_RANK = 4  # train_text_to_image_lora.py --rank default
LORA_TARGETS = ["q", "k", "v", "o"]  # its LoRAAttnProcessor on every attention: to_q, to_k, to_v, to_out


def is_diffusion(found: Preset | None) -> bool:
    """Say whether the preset is a Stable Diffusion U-Net's training step, with its frozen encoders or its `-unet`
    twin over latents computed before training (diffusers' train_text_to_image_sdxl.py precomputes them, with the
    same --num_train_epochs, --train_batch_size and --max_grad_norm defaults)."""
    return found is not None and found.name.removesuffix("-unet") in SD_CONFIGS


def _base(spec: dict[str, Any]) -> str:
    """Return the Stable Diffusion preset the spec names, by its own name ("sd-xl" is "sdxl"; `-unet`: the U-Net)."""
    said = spec["model"].get("preset", "")
    found = found_preset(said)
    return found.name if found is not None else str(said)


def _adapted(spec: dict[str, Any]) -> bool:
    return spec["training"].get("parallelism", {}).get("adapter") is not None


def diffusion_epochs(spec: dict[str, Any]) -> str:
    """Set the README's epochs; return the words told back."""
    if _adapted(spec) and _base(spec) == "sdxl":
        spec["training"]["epochs"] = SDXL_LORA_EPOCHS
        return (f"epochs={SDXL_LORA_EPOCHS} (diffusers' README_sdxl.md launches train_text_to_image_lora_sdxl.py with "
                f"--num_train_epochs={SDXL_LORA_EPOCHS}; say e.g. `10 epochs`)")
    spec["training"]["epochs"] = EPOCHS
    return f"epochs={EPOCHS} ({SCRIPT}: --num_train_epochs default; say e.g. `10 epochs`)"


def _full_fine_tune(training: dict[str, Any], sdxl: bool) -> str:
    """Set the README's full fine-tune where the words say no accumulation of their own; return the words told back."""
    if "update_interval" in training:
        return ""
    parts = []
    if training.get("batch_size") == 1:
        training["update_interval"] = README_ACCUMULATION
        parts.append(f"accum={README_ACCUMULATION}")
    if "recompute" not in training:
        training["recompute"] = True
        parts.append("gradient checkpointing")
    if not sdxl and "ema" not in training:
        training["ema"] = True
        parts.append("an EMA of the U-Net")
    if sdxl and "optimizer" not in training:
        training.update(optimizer="adamw_8bit", gradient_clipping="global")
        parts.append("8-bit AdamW, gradients clipped to norm 1.0")
    if not parts:
        return ""
    flags = ("README_sdxl.md launches train_text_to_image_sdxl.py with --gradient_accumulation_steps=4 "
             "--gradient_checkpointing --use_8bit_adam" if sdxl else "README.md launches train_text_to_image.py with "
             "--gradient_accumulation_steps=4 --gradient_checkpointing --use_ema")
    return f"{', '.join(parts)} (diffusers' {flags}; say `no-checkpointing` to size without)"


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
    base = _base(spec)
    if not _adapted(spec) and not base.endswith("-unet") and (full := _full_fine_tune(training, base == "sdxl")):
        told.append(full)
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
