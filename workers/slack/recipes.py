"""A published training recipe named in a slash command ("train gpt2 like nanogpt"), said as the words the grammar
reads, and told back.

nanoGPT (karpathy/nanoGPT@3adf61e1, read 2026-12-07): config/train_gpt2.py trains GPT-2 124M on OpenWebText at
batch_size 12, block_size 1024, gradient_accumulation_steps 5 * 8 (train.py divides it by the 8 processes: 5 a GPU)
for max_iters 600,000: 600,000 x 12 x 40 = 288,000,000 samples of 1,024 tokens, about 295B tokens ("this makes total
number of tokens be 300B"); train.py's dtype bfloat16, fused AdamW, grad_clip 1.0 and torch.compile. Its README:
"running on a single 8XA100 40GB node in about 4 days of training" (the config's comment: "wait ~5 days").

DreamBooth (huggingface/diffusers examples/dreambooth/README.md @fe8cecae, read 2026-12-07): train_dreambooth.py
fine-tunes Stable Diffusion's U-Net with prior preservation, "--train_batch_size=1" instance image and one class image
a step, "--max_train_steps=800", 512 px: 800 steps of 2 images, 1,600 samples, whatever the few instance images
number (the steps set the work). Its 16 GB recipe adds gradient checkpointing and 8-bit Adam.

DreamBooth on SDXL (examples/dreambooth/README_sdxl.md @0c693ca2, read 2026-12-08): "For now, we only allow DreamBooth
fine-tuning of the SDXL UNet via LoRA" (train_dreambooth_lora_sdxl.py: rank 4 on to_q, to_k, to_v, to_out.0, as
every diffusers LoRA script), run as "--resolution=1024 --train_batch_size=1 --gradient_accumulation_steps=4
--max_train_steps=500 --mixed_precision=fp16", no prior preservation: 500 updates of 4 images, 2,000 samples; "Our
experiments were conducted on a single 40GB A100 GPU", and under 16 GB with gradient checkpointing and 8-bit Adam.
"""

from __future__ import annotations

import re

NANOGPT = re.compile(r"\b(?:(?:like|with|using|as|in|via|per)\s+)?nano-?gpt(?:'s)?(?:\s+(?:recipe|config|style))?\b",
                     re.IGNORECASE)
_OPENWEBTEXT = re.compile(r"\b(?:on\s+)?(?:openwebtext|owt)\b", re.IGNORECASE)
_GPT = re.compile(r"\bgpt", re.IGNORECASE)
DREAMBOOTH = re.compile(r"\b(?:(?:with|using|via)\s+)?dream-?\s?booth\b", re.IGNORECASE)
_FEW_IMAGES = re.compile(r"\b(?:(?:on|of|with)\s+)?(?:my\s+)?\d+\s+(?:images|photos|pictures|pics|shots)\b",
                         re.IGNORECASE)
_DIFFUSION = re.compile(r"\b(?:sd|sdxl|stable)", re.IGNORECASE)
_SDXL = re.compile(r"\b(?:sd-?\s?xl|stable[\s-]+diffusion[\s-]+xl)\b", re.IGNORECASE)
_ADAPTER = re.compile(r"\bq?lora\b", re.IGNORECASE)
DREAMBOOTH_WORDS = "fine-tune batch=2 accum=1 samples=1600 epochs=1"  # accum: not the text-to-image README's
DREAMBOOTH_TOLD = ("dreambooth: diffusers' train_dreambooth.py as its README runs it with prior preservation, 800 "
                   "steps of one instance and one class image (batch=2): samples=1,600 whatever the instance images "
                   "number, the U-Net fine-tuned at the model's resolution (512 px for SD 1.x); its 16 GB recipe adds "
                   "gradient checkpointing and 8-bit Adam (say `checkpointing 8-bit adam`)")
DREAMBOOTH_SDXL_WORDS = "fine-tune batch=1 accum=4 samples=2000 epochs=1"
DREAMBOOTH_SDXL_TOLD = ("dreambooth on sdxl: diffusers' train_dreambooth_lora_sdxl.py as its README_sdxl.md runs it "
                        "(SDXL's U-Net is DreamBooth-tuned through LoRA only there): LoRA rank 4 on the attention's "
                        "q, k, v and out, 1,024 px, batch=1 with 4 accumulation steps for 500 steps: samples=2,000 "
                        "whatever the instance images number, no prior preservation; the README ran it on one A100 "
                        "40GB and says under 16 GB with gradient checkpointing and 8-bit Adam (say `checkpointing "
                        "8-bit adam`)")
NANOGPT_WORDS = "pretrain batch=12 seq=1024 accum=5 samples=288000000 bf16"
NANOGPT_TOLD = ("nanogpt: GPT-2 on OpenWebText as karpathy/nanoGPT's config/train_gpt2.py trains it, batch 12 x 1,024 "
                "tokens, 5 accumulation steps a GPU (40 over its 8 GPUs), 600,000 iterations: samples=288,000,000 "
                "(295B tokens, about 33 passes over OpenWebText), bf16; its README says about 4 days on one 8 x A100 "
                "40GB node with torch.compile, which gpugauge does not model (sized as eager PyTorch)")


def recipe_words(text: str) -> tuple[str, tuple[str, ...]]:
    """Return the text with a named recipe ("like nanogpt", "dreambooth") said as its settings, and what was read."""
    if DREAMBOOTH.search(text):
        said = _FEW_IMAGES.sub("", DREAMBOOTH.sub("", text))  # "on 20 photos": the steps set the work, not these
        if _SDXL.search(said):  # diffusers trains SDXL's DreamBooth as LoRA adapters only
            lora = "" if _ADAPTER.search(said) else " lora"
            return " ".join(f"{said}{lora} {DREAMBOOTH_SDXL_WORDS}".split()), (DREAMBOOTH_SDXL_TOLD,)
        model = "" if _DIFFUSION.search(said) else "stable-diffusion-1.5 "
        return " ".join(f"{model}{said} {DREAMBOOTH_WORDS}".split()), (DREAMBOOTH_TOLD,)
    if not NANOGPT.search(text):
        return text, ()
    said = _OPENWEBTEXT.sub("", NANOGPT.sub("", text))  # the recipe's own data set, counted in its samples
    model = "" if _GPT.search(said) else "gpt2 "
    return " ".join(f"{model}{said} {NANOGPT_WORDS}".split()), (NANOGPT_TOLD,)
