"""CLIP (Radford et al. 2021) as a layer list: an image tower and a text tower trained together, as OpenAI's
checkpoints and OpenCLIP's ViT models are built (openai/CLIP clip/model.py; mlfoundations/open_clip model configs
ViT-B-32.json, ViT-B-16.json, ViT-L-14.json; public copies read 2026-12-07).

- Image tower: a ViT without biases on its patch convolution, a class token, learned positions, a LayerNorm before
  the blocks (ln_pre) and after (ln_post), pre-norm blocks (one packed in-projection, GELU MLP of 4x), the class
  token's state projected to the shared embedding without a bias.
- Text tower: token and learned position embeddings over the 77-token context, causal pre-norm blocks, a final
  LayerNorm, the end-of-text token's state projected to the shared embedding without a bias.
- Loss: the symmetric contrastive loss over the batch's image-text similarities. Its logits are batch x batch (x the
  GPUs' batches gathered), a few MB at the recipes' batches: sized as `mse` on the two embeddings side by side, which
  keeps a tensor of their size; the learned temperature (one weight) is left out.

The parameters are OpenAI's checkpoints' counts exactly (less the temperature): 151,277,313 (ViT-B/32), 149,620,737
(ViT-B/16), 427,616,513 (ViT-L/14), the sums of the modules above.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

Layer = dict[str, object]
CONTEXT, VOCAB = 77, 49_408  # the text tower's context and BPE vocabulary
CLIP_EPOCHS = 32  # open_clip's --epochs default (src/open_clip_train/params.py, public copy read 2026-12-07)
SOURCE = "openai/CLIP clip/model.py and its checkpoints' shapes (public copies read 2026-12-07): {} parameters"


class ClipConfig(NamedTuple):
    """The towers' shapes: image (patch, width, blocks, heads), text (width, blocks, heads), the shared embedding."""

    patch: int
    width: int
    blocks: int
    heads: int
    text_width: int
    text_blocks: int
    text_heads: int
    embed: int
    parameters: int  # OpenAI's checkpoint, the temperature included
    mlp: int = 0  # the image tower's MLP width; 0: 4 x width (ViT-g/14's is 6,144 at 1,408)


CLIP_CONFIGS = {
    "clip-vit-b32": ClipConfig(32, 768, 12, 12, 512, 12, 8, 512, 151_277_313),
    "clip-vit-b16": ClipConfig(16, 768, 12, 12, 512, 12, 8, 512, 149_620_737),
    "clip-vit-l14": ClipConfig(14, 1024, 24, 16, 768, 12, 12, 768, 427_616_513),
}
ALIASES = {"clip-vit-b32": ("clip", "clip-b32", "clip-vit-b-32", "vit-b-32-clip", "openai/clip-vit-base-patch32"),
           "clip-vit-b16": ("clip-b16", "clip-vit-b-16", "openai/clip-vit-base-patch16"),
           "clip-vit-l14": ("clip-l14", "clip-vit-l-14", "openai/clip-vit-large-patch14")}


def _blocks(prefix: str, count: int, heads: int, width: int, *, causal: bool, mlp: int = 0) -> list[Layer]:
    return [{"type": "transformer_block", "name": f"{prefix}.block{i}", "heads": heads, "ffn": mlp or 4 * width,
             "qkv_projections": 1, "norm": "pre", "activation": "gelu", "dropout": 0.0, "causal": causal}
            for i in range(count)]


def clip_layers(c: ClipConfig) -> list[Layer]:
    """Return one CLIP training step's layers: both towers and the two embeddings the contrastive loss reads."""
    return [
        {"type": "conv2d", "name": "visual.conv1", "out_channels": c.width, "kernel": c.patch, "stride": c.patch,
         "bias": False},
        {"type": "to_sequence", "name": "visual.patches"},
        {"type": "class_token", "name": "visual.class_embedding"},
        {"type": "position_embedding", "name": "visual.positions"},
        {"type": "layernorm", "name": "visual.ln_pre"},
        *_blocks("visual", c.blocks, c.heads, c.width, causal=False, mlp=c.mlp),
        {"type": "layernorm", "name": "visual.ln_post"},
        {"type": "select", "name": "visual.cls", "index": 0},
        {"type": "dense", "name": "visual.proj", "out_features": c.embed, "bias": False},
        {"type": "embedding", "name": "text.token_embedding", "vocab": VOCAB, "dim": c.text_width, "length": CONTEXT},
        {"type": "position_embedding", "name": "text.positions", "max_positions": CONTEXT},
        *_blocks("text", c.text_blocks, c.text_heads, c.text_width, causal=True),
        {"type": "layernorm", "name": "text.ln_final"},
        {"type": "select", "name": "text.eot", "index": 0},  # the end-of-text token's state (its place: one row)
        {"type": "dense", "name": "text.projection", "out_features": c.embed, "bias": False},
        {"type": "concat", "name": "embeddings", "axis": 0, "inputs": ["visual.proj", "text.projection"]},
    ]


def clip_presets(preset: type, published: type) -> list[Any]:
    """Return the CLIP presets as registry.Preset values (the registry passes its classes: no import cycle)."""
    out = []
    for name, c in CLIP_CONFIGS.items():
        size = name.removeprefix("clip-vit-").upper()
        tokens = (224 // c.patch) ** 2 + 1
        out.append(preset(
            name, f"CLIP ViT-{size[0]}/{size[1:]} (Radford et al. 2021): a {c.blocks}-block ViT over 224x224 images "
                  f"({tokens} tokens) and a {c.text_blocks}-block causal text transformer over 77 tokens, trained "
                  "together with a contrastive loss over the batch",
            partial(clip_layers, c), published(c.parameters, None, SOURCE.format(f"{c.parameters:,}")),
            input_shape=(3, 224, 224), aliases=ALIASES[name], loss="mse",
            # open_clip's training script (src/open_clip_train/params.py, public copy read 2026-12-07)
            recipe_batch=(64, "open_clip's --batch-size default, per GPU"),
            input_rule="CLIP's image tower takes 3 x 224 x 224 at the checkpoints' positions"))
    return out
