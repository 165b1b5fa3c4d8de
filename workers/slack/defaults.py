"""What a slash command takes from the preset it names: the precision, batch and context it assumes where the
user said nothing (each told back in the acknowledgement), and the channels of an image size said without them.

The job spec's own default precision is fp32 (CONTRACT.md). A model of 1B parameters or more is trained in 16 bits
almost always (advice.fp32_large_model_warning's sources): named without a precision it is sized in bf16-mixed, or
fp16-mixed where every GPU named lacks bf16, told back; a preset whose recipe runs fp16 autocast (AMP_RECIPES) so.
A fine-tune of a language model said without seq= or a batch is sized as its usual recipe runs it
(workers/sizing/sequence_advice.py: TRL's 1,024 tokens at the Trainer's batch 8 for a decoder, BERT's GLUE 128 for an
encoder's classifier), not at the model's whole context, which a pre-training run packs its samples to; a decoder's
with TRL's SFTConfig's bf16, gradient checkpointing and chunked loss (sft_step).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

from workers.sizing.advice import LARGE_MODEL_PARAMETERS
from workers.sizing.errors import SpecError
from workers.sizing.image_input import CIFAR_SIDE, MOSAIC_PIPELINE_MS, MOSAIC_PIPELINE_SOURCE
from workers.sizing.layers.loss import Loss, as_fused, with_loss
from workers.sizing.presets.clip import CLIP_CONFIGS, CLIP_EPOCHS
from workers.sizing.presets.detect import ULTRALYTICS_EPOCHS, YOLO_NAMES
from workers.sizing.presets.hf_seq2seq import WHISPER_SIZES
from workers.sizing.presets.names import match_preset_name
from workers.sizing.presets.registry import Preset, find_preset, preset_stats
from workers.sizing.sequence_advice import HF_TRAINER_EPOCHS, SFT_BATCH
from workers.slack.datasets import DATASET_ALIASES
from workers.slack.diffusion import diffusion_epochs, diffusion_precision, diffusion_step, is_diffusion
from workers.slack.preference import preference_step
from workers.slack.sequences import as_fine_tune, bert_pretrain_epochs, found_preset, seq2seq_step

DEFAULT_PRECISION = "fp32"  # the job spec's own default (workers/schemas/spec.py), told back when not said


def _is_decoder(found: Preset | None) -> bool:
    """Return whether a preset is a decoder language model (a context, no encoder heads)."""
    return found is not None and found.sequence_length is not None and not found.heads and not found.target


def preset_context(preset: object) -> int | None:
    """Return a language-model preset's default sequence length (its context), None for the rest."""
    found = found_preset(preset)
    return None if found is None else found.sequence_length


def image_size(text: str) -> list[int]:
    """Parse `input=` ("1024x1024", or "3x1024x1024" with its channels; one side, as Ultralytics' `imgsz=1280`, is a
    square): [channels or 0, height, width]."""
    parts = text.lower().split("x")
    if len(parts) > 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError("say the image size as HxW or CxHxW, or one side for a square, e.g. input=1024x1024")
    sizes = [int(p) for p in parts]
    return sizes if len(sizes) == 3 else [0, *sizes] if len(sizes) == 2 else [0, *sizes, *sizes]


def finite_number(text: str) -> float:
    """Parse a plain number (epochs=, lr=, co2=): finite."""
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def choice(kind: str, valid: Mapping[str, str]) -> Callable[[str], str]:
    """Return a parser of one of `valid`'s words (its value), whose error names the closest word or all of them."""
    def parse(text: str) -> str:
        if text in valid:
            return valid[text]
        close = difflib.get_close_matches(text, list(valid), n=1)
        hint = f"; did you mean {close[0]}?" if close else f" (one of {', '.join(valid)})"
        raise ValueError(f"unknown {kind} {text!r}{hint}")
    return parse


def comma_list(text: str) -> list[str]:
    """Parse a comma-separated list (region=, targets=)."""
    return [r for r in text.split(",") if r]


def owned_cards(text: str) -> list[dict[str, Any]]:
    """Parse `owned=` ("4xrtx-3090", as phrases write "our 4 3090s"): constraints.owned_gpus."""
    count, _, slug = text.partition("x")
    if not (count.isdigit() and int(count) > 0 and slug):
        raise ValueError("say the cards as NxGPU, e.g. owned=4xrtx-3090")
    return [{"gpu": slug, "count": int(count)}]


def fill_channels(spec: dict[str, Any], preset: object) -> str:
    """Give a said image size (input=HxW) the preset's channels; return a problem, "" where none."""
    shape = spec["model"].get("input_shape")
    if not shape or shape[0]:
        return ""
    found = found_preset(preset)
    own = None if found is None else (found.images or found.input_shape)  # a DCGAN's 64x64: its images
    if own is None or len(own) != 3:
        return "input= sizes an image model's input: name an image preset (e.g. unet, resnet50)"
    spec["model"]["input_shape"] = [own[0], *shape[1:]]
    return ""


def default_batch(preset: object, keras_default: int, kind: str = "") -> tuple[int, str]:
    """Return the batch to size where none is said, and the words the acknowledgement says of it: the preset's own
    recipe's (Preset.recipe_batch: DCGAN 128, the MNIST MLP and VAE 128, DQN 32), a decoder's or an encoder-decoder's
    fine-tune transformers' Trainer's (SFT_BATCH; `kind`: fine_tune_kind's), else Keras' default."""
    found = found_preset(preset)
    recipe = None if found is None else found.recipe_batch
    if recipe is not None:
        return recipe[0], f"batch={recipe[0]} ({recipe[1]})"
    if (_is_decoder(found) or (found is not None and found.target)) and kind:
        return SFT_BATCH, (f"batch={SFT_BATCH} ({as_fine_tune(kind)}, as transformers' Trainer: "
                           "per_device_train_batch_size)")
    return keras_default, f"batch={keras_default}"


def default_epochs(spec: dict[str, Any], preset: object, kind: str) -> str:
    """Set the epochs of a run said without them whose samples are known: a language model's fine-tune at
    transformers' Trainer's num_train_epochs, 3 (`kind`: fine_tune_kind's), and an image model's said fine-tune the
    same (transformers' image-classification guide fine-tunes ViT with the Trainer's 3; one pass is no fine-tune
    anyone runs); else the spec's one pass. Return the words told back ("" where epochs are said or there are no
    samples to count them over). A preset's own recipe on its own data set ("resnet50 imagenet": torchvision's 90)
    is set by the phrases before this."""
    if "epochs" in spec["training"] or not spec.get("dataset", {}).get("samples"):
        return ""
    found = found_preset(preset)
    if is_diffusion(found):  # a Stable Diffusion fine-tune: diffusers' script's own
        return diffusion_epochs(spec)
    if found is not None and found.name in CLIP_CONFIGS:  # open_clip's params.py: --epochs 32
        spec["training"]["epochs"] = CLIP_EPOCHS
        return f"epochs={CLIP_EPOCHS} (open_clip's --epochs default, whatever the data)"
    if found is not None and found.name in YOLO_NAMES:  # "fine-tune yolov8m on 5k images": not 3 epochs
        spec["training"]["epochs"] = ULTRALYTICS_EPOCHS
        return f"epochs={ULTRALYTICS_EPOCHS} (Ultralytics' default, whatever the data: default.yaml, train.py --epochs)"
    if said := bert_pretrain_epochs(spec, found, kind):  # the paper's 42.6B tokens, not one pass of its corpus
        return said
    if found is not None and ((found.sequence_length and kind) or kind == "said"):
        spec["training"]["epochs"] = HF_TRAINER_EPOCHS
        return f"epochs={HF_TRAINER_EPOCHS} ({as_fine_tune(kind)}, as transformers' Trainer: num_train_epochs)"
    return "epochs=1 (one pass over the data; say e.g. `90 epochs`)"


# Presets whose recipe trains in torchvision's `--amp` (fp16 autocast with a GradScaler): pytorch/vision
# references/classification/README.md, "vit_b_16: ... --amp ..." (stored copy id 422110021, read 2026-12-07)
AMP_RECIPES = {"vit-b16": "torchvision's vit_b_16 recipe trains with --amp, 16-bit autocast",
               # ultralytics/cfg/default.yaml amp: True; yolov5's train.py AMP on CUDA (public copies, 2026-12-07)
               **dict.fromkeys(YOLO_NAMES, "Ultralytics trains YOLO with AMP, 16-bit autocast"),
               **dict.fromkeys(WHISPER_SIZES, "the Hugging Face Whisper fine-tuning blog trains with fp16=True")}


def default_precision(spec: dict[str, Any], preset: object, named_gpus: Collection[str],
                      no_bf16: Collection[str], *, pretrain: bool = False) -> str:
    """Set 16-bit mixed precision for a model of LARGE_MODEL_PARAMETERS or more, a language model pre-trained
    (`pretrain`: said or a token count without `fine-tune`, as nanoGPT and RoBERTa) or a decoder fine-tuned (as TRL),
    else keep fp32; return the words the acknowledgement says."""
    found = found_preset(preset)
    parameters = spec["model"].get("stats", {}).get("parameters") if found is None else found.published.parameters
    # "gpt2 from scratch": nanoGPT's train.py pre-trains in bfloat16 wherever the GPU has it (advice.py's source);
    # sized in fp32 it ranked 1 x H100 for 69 h and $88 where bf16 runs it in under an hour on 8 x B200 for $18
    decoder = _is_decoder(found)
    if is_diffusion(found):
        return diffusion_precision(spec)
    if found is not None and found.name in CLIP_CONFIGS:  # open_clip's --precision default amp_bf16
        spec["training"]["precision"] = "bf16-mixed"
        return "precision=bf16 (open_clip's --precision default, amp_bf16; say `fp32` to size it in full precision)"
    # an encoder's too: RoBERTa "pretrain[s] with mixed precision floating point arithmetic" (Liu et al. 2019, §3.1);
    # "pretrain bert base on 3.3b words" in fp32 took one L40S 26.4 h
    if pretrain and found is not None and found.sequence_length is not None:
        size = "a language model's pre-training runs in {} almost always"
    elif decoder:  # a decoder's fine-tune: TRL's SFTConfig sets bf16=True (see sft_step)
        size = "TRL's SFTTrainer fine-tunes in {} (SFTConfig: bf16=True)"
    elif found is not None and found.name in AMP_RECIPES:  # "vit-b/16 on imagenet-21k": fp32 took 42 days
        spec["training"]["precision"] = "fp16-mixed"
        return f"precision=fp16 ({AMP_RECIPES[found.name]}; say `fp32` to size it in full precision)"
    elif not isinstance(parameters, (int, float)) or parameters < LARGE_MODEL_PARAMETERS:
        return f"precision={DEFAULT_PRECISION}"
    else:
        size = f"a model of {parameters / 1e9:.1f}B parameters is trained in {{}} almost always"
    if named_gpus and all(slug in no_bf16 for slug in named_gpus):
        spec["training"]["precision"] = "fp16-mixed"
        named = list(dict.fromkeys(named_gpus))
        return (f"precision=fp16 ({size.format('16 bits')}; {', '.join(named)} "
                f"{'has' if len(named) == 1 else 'have'} no bf16; say `fp32` to size it in full precision)")
    spec["training"]["precision"] = "bf16-mixed"
    return f"precision=bf16 ({size.format('bf16-mixed')}; say `fp32` to size it in full precision)"


def yolo_step(spec: dict[str, Any], name: str) -> list[str]:
    """Size a YOLO run's step as Ultralytics' trainers run it unless said otherwise; return the words told back.

    Its loader, which every YOLO run goes through (a mosaic of four decoded JPEGs a sample): without it "train yolov8
    on coco" ranked a T4 on 2 vCPUs first at 16.4 h, which that loader would take 77.6 h to feed. Its optimizer:
    YOLOv8's optimizer=auto takes SGD (momentum 0.9) past 10,000 iterations of max(batch, 64) samples, else AdamW
    (ultralytics/engine/trainer.py build_optimizer); YOLOv5's train.py SGD (momentum 0.937). And the EMA of the
    weights both keep (ModelEMA, updated every step) and the validation after every epoch (val=True)."""
    dataset, training, told = spec.setdefault("dataset", {}), spec["training"], []
    if "preprocess_ms_per_sample" not in dataset:
        dataset["preprocess_ms_per_sample"] = MOSAIC_PIPELINE_MS
        told.append(f"loader={MOSAIC_PIPELINE_MS} ms a sample on a reference core (Ultralytics' mosaic loader, "
                    f"{MOSAIC_PIPELINE_SOURCE}; say `loader=0` for images decoded on the GPU or cached decoded)")
    if "optimizer" not in training:
        steps = -(-int(dataset.get("samples", 0)) // max(int(training.get("batch_size", 16)), 64))
        v5, many = name.startswith("yolov5"), steps * float(training.get("epochs", 1)) > 10_000
        training["optimizer"] = "momentum" if v5 or many else "adamw"
        why = ("YOLOv5's train.py" if v5 else
               "Ultralytics' optimizer=auto: SGD past 10,000 iterations of 64 samples, else AdamW")
        told.append(f"optimizer={'sgd with momentum' if v5 or many else 'adamw'} ({why})")
    if "ema" not in training:
        training["ema"] = True
        told.append("an EMA of the weights (Ultralytics' ModelEMA)")
    if "eval_every_epochs" not in training:
        training["eval_every_epochs"] = 1
        told.append("validation after every epoch (Ultralytics' val=True)")
    return told


def sft_step(spec: dict[str, Any], preset: object, kind: str) -> list[str]:
    """Size a decoder's step as its usual recipe runs it unless said otherwise; return the words told back.

    A fine-tune (`kind`: fine_tune_kind's) as TRL's SFTTrainer: gradient checkpointing on and the loss chunked, never
    holding the logits (its SFTConfig's defaults, gradient_checkpointing=True and loss_type "chunked_nll":
    huggingface/trl trl/trainer/sft_config.py, read 2026-12-06), and the Trainer's optimizer, fused AdamW with the
    gradients clipped to norm 1.0 (optim "adamw_torch_fused" on torch 2.8 and later, max_grad_norm=1.0:
    huggingface/transformers@00349ae87edd src/transformers/training_args.py). Sized without them, "fine-tune llama 3
    8b with lora" held 32 blocks' activations and 128,256 fp32 logits a token: 82.7 GiB at TRL's batch 8 x 1,024; a
    full fine-tune of Phi-3 mini held foreach AdamW's fp32 copy of every weight, 76.4 GiB, over an A100's 80 GB.
    A pre-training run as nanoGPT's: fused AdamW (model.py configure_optimizers: fused=True on CUDA), grad_clip 1.0
    (train.py)."""
    found = found_preset(preset)
    training = spec["training"]
    if is_diffusion(found):
        return diffusion_step(spec)
    if found is not None and found.name in YOLO_NAMES:
        return yolo_step(spec, found.name)
    if not _is_decoder(found):
        return seq2seq_step(spec, found, kind)
    told = []
    if "optimizer" not in training:
        training.update(optimizer="adamw", optimizer_implementation="fused", gradient_clipping="global")
        told.append("optimizer=adamw, fused, gradients clipped to norm 1.0 (" + (
            "the Trainer's optim adamw_torch_fused, max_grad_norm=1.0)" if kind else
            "nanoGPT's fused AdamW and grad_clip=1.0)"))
    elif "gradient_clipping" not in training:  # an optimizer said ("with 8-bit adam"): the recipe still clips
        training["gradient_clipping"] = "global"
        told.append("gradients clipped to norm 1.0 (" + ("the Trainer's max_grad_norm=1.0)" if kind else
                                                         "nanoGPT's grad_clip=1.0)"))
    if not kind:
        return told
    if "recompute" not in training:
        training["recompute"] = True
        told.append("checkpointing (TRL's SFTConfig: gradient_checkpointing=True; say `no-checkpointing` to size "
                    "without)")
    told += preference_step(spec)  # "dpo llama 3 8b": its loss and reference (workers/slack/preference.py)
    if "loss" in training:
        return told
    if _ends_in_projection(found):
        training["loss"] = "fused_linear_cross_entropy"
        told.append("the loss in chunks, no logits held (TRL's SFTConfig: loss_type chunked_nll)")
    else:  # Gemma 2's logit softcap: a tanh after the projection, which a chunked projection-and-loss does not cover
        told.append(f"the plain loss, logits held ({found.name if found else preset}'s logits pass a softcap after its "
                    "output projection, which a chunked loss of the projection does not cover)")
    return told


def _ends_in_projection(found: Preset | None) -> bool:
    """Whether a preset's loss can be fused with its output projection, by the core's own rule (layers/loss.py)."""
    return found is not None and as_fused(with_loss(preset_stats(found.name), Loss.CROSS_ENTROPY)) is not None


def cifar_layout(word: str, presets: Collection[str], side: int) -> str:
    """Return the CIFAR-layout preset of a ResNet the word names, for images of `side` pixels; "" where none."""
    found = found_preset(match_preset_name(word, presets)) if side <= CIFAR_SIDE else None
    name = "" if found is None else f"{found.name}-cifar"
    return name if name in presets else ""


def samples_from_tokens(tokens: int, spec: dict[str, Any], preset: object) -> str | None:
    """Set the samples a run's tokens make at the sequence it is sized at (a fine-tune's default, else the preset's
    context); return the words told back, None where it has neither (the command must say seq= or samples=)."""
    sized = spec["training"].get("sequence_length")
    context = preset_context(preset) if sized is None else sized
    if context is None:
        return None
    samples = -(-tokens // context)
    spec.setdefault("dataset", {})["samples"] = samples
    whose = "the model's context" if sized is None else "the fine-tune's"
    return f"samples={samples:,} ({tokens:,} tokens / seq {context:,}, {whose})"


def recipe_epochs(out: list[str], named: str, presets: Collection[str]) -> tuple[int, str, str] | None:
    """Return the named preset's recipe epochs (Preset.recipe_epochs) where the data set said is its recipe's, the run
    trains from scratch (no fine-tune, no adapter) and no epochs are said; else None."""
    if any(w.startswith("epochs=") for w in out) or {"fine-tune", "lora", "qlora"} & set(out):
        return None
    found = next((p for w in out if (p := match_preset_name(w, presets)) is not None), None)
    try:
        recipe = None if found is None else find_preset(found).recipe_epochs
    except SpecError:  # a name the caller's list holds that is no preset here
        return None
    return recipe if recipe is not None and recipe[1] == DATASET_ALIASES.get(named, named) else None


# Presets whose input is fixed by their weights: ViT-B/16's 14 x 14 patch grid and its position embeddings are
# 224 x 224's (at CIFAR's 32 x 32 it would see 2 x 2 patches); fine-tuning one on small images resizes them to 224
# (Dosovitskiy et al. 2021 fine-tune CIFAR at 224 and up), so a data set's image size does not apply.
RESIZED_INPUT_PRESETS = frozenset({"vit-b16", "vit-b32", "vit-l16"})


def image_input(preset: object, image: tuple[int, int, int]) -> list[int] | None:
    """Return a named data set's image input for a preset that reads 3-channel images at any size, else None."""
    found = found_preset(preset)
    shape = found.input_shape if found is not None and found.name not in RESIZED_INPUT_PRESETS else None
    return list(image) if shape is not None and len(shape) == 3 and shape[0] == image[0] else None


def resized_input(preset: object, image: tuple[int, int, int]) -> str:
    """Return the acknowledgement's words where a data set's images are resized to the preset's input, else ""."""
    found = found_preset(preset)
    if found is None or found.name not in RESIZED_INPUT_PRESETS or found.input_shape is None:
        return ""
    size = "x".join(map(str, found.input_shape))
    return f"input {size} ({found.name}'s own: the {image[1]} x {image[2]} images resized to it)"


SIZE_NAME = re.compile(r"\d+(\.\d+)?[bm]")  # "7b", "1b", "125m": a model said by its size, or beside its family


# A family's word that one preset stands for ("a gan": the DCGAN), told back which one so that the user can name theirs
GENERIC_NAMES = frozenset({"gan", "mobilenet", "efficientnet", "effnet", "cnn", "convnet", "transformer", "mlp",
                           "resnet", "autoencoder", "t5", "flan-t5", "bart", "yolo", "yolov8", "yolov5",
                           "yolo11", "yolov11", "clip", "vae"})


def generic_alias(preset: object) -> list[str]:
    """Return the acknowledgement's line where a model was said by a generic word ("a 7b model", "a gan"), which names
    one preset of that kind: which one it is sized as, so that the user can name theirs."""
    found = found_preset(preset)
    if found is None or not isinstance(preset, str) or not (SIZE_NAME.fullmatch(preset) or preset in GENERIC_NAMES):
        return []
    return [f"{preset}: sized as {found.name}, {found.description}; name your model for its own"]


def family_stand_in(preset: object, problems: list[str]) -> str:
    """Return the words told back where a model is said as a family the presets lack and a size they have ("falcon
    7b", "olmo 7b", "bloom 7b": the 7B decoder preset stands in, told by generic_alias); "" where the size is no
    preset's ("yi 34b") or anything else was refused. The caller drops the family's refusal."""
    found = found_preset(preset)
    unknown = [p.split("'")[1] for p in problems if p.startswith("unknown preset '")]
    if (found is None or not isinstance(preset, str) or not SIZE_NAME.fullmatch(preset) or not unknown
            or len(unknown) != len(problems) or not all(word.replace("-", "").isalnum() for word in unknown)):
        return ""
    return (f"{' '.join(unknown)}: no preset of that family, sized by its size (above; its vocabulary and attention "
            "may differ); the API's model.hf_config sizes its own")


def sized_family(first: str, second: str, presets: Collection[str]) -> str | None:
    """Return the one preset two words name as a size and a family, in either order ("a 1b llama": llama3.2-1b, "qwen
    7b": qwen2.5-7b, "a 350m gpt": gpt2-medium), None where they name none or several (the grammar then says so)."""
    size, family = (first, second) if SIZE_NAME.fullmatch(first) else (second, first)
    if not SIZE_NAME.fullmatch(size) or SIZE_NAME.fullmatch(family) or not family.isalpha():
        return None
    if family in ("transformer", "llm") and (found := found_preset(match_preset_name(size, presets))):  # "125m llm"
        return found.name  # the decoder "125m" alone is sized as
    if (direct := match_preset_name(f"{family}-{size}", presets)) is not None:
        return direct
    named = {found.name for word in presets if word.startswith(family) and word.endswith(f"-{size}")
             and (found := found_preset(word)) is not None}
    return named.pop() if len(named) == 1 else None


def counted_gpus(spec: dict[str, Any]) -> list[str]:
    """Rank by the knee of cost and time where a recommendation names a count of GPUs ("train resnet50 on imagenet on
    8 v100s", "on 2 nodes") and neither an objective, a deadline nor a budget: the count is at most that many
    (max_gpus), and by cost the first option was one V100 for 104 h where the question was the time on eight; by time
    it was eight on demand for $272 where spot runs them as fast for $55. Return the words told back."""
    count, constraints = spec.get("constraints", {}).get("max_gpus"), spec.get("constraints", {})
    if not isinstance(count, int) or count < 2 or "objective" in spec or {"deadline_hours", "budget_usd"} & set(
            constraints):
        return []
    spec["objective"] = "balanced"
    return [f"ranked by cost and time together (up to {count} GPUs, as said; say `cheapest` or `fastest` for one)"]


def unrented_as_owned(spec: dict[str, Any], unrented: Collection[str]) -> list[str]:
    """Read cards a recommendation runs "on" as the team's own where no cloud in the catalog rents any of them ("fine-
    tune gemma 2 9b with qlora on an rtx 4090" is asked by someone who has one; ranked only on the clouds it was
    "Nothing fits"), unless the question is what to buy or own cards are said: constraints.owned_gpus, as "on my rtx
    4090" says it, at the count said ("on 2 rtx 4090s") or one. Return the words told back."""
    constraints = spec.get("constraints", {})
    named = constraints.get("gpus") or []
    if not named or not set(named) <= set(unrented) or "providers" in constraints or "owned_gpus" in constraints:
        return []
    count = constraints.get("max_gpus") if isinstance(constraints.get("max_gpus"), int) else 1
    constraints["owned_gpus"] = [{"gpu": slug, "count": count} for slug in named]
    del constraints["gpus"]
    cards = ", ".join(f"{count} x {slug}" for slug in named)
    return [f"{cards} read as your own (no cloud in the catalog rents {'it' if len(named) == 1 else 'them'}): ranked "
            "at its power cost beside the clouds' machines; say `buy` to price buying instead"]

