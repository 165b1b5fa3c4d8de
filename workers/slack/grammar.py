"""The words of `/gpugauge ...` turned into a job spec dict; pure, with the closest valid word for a typo.

    /gpugauge resnet50 batch=64 epochs=90 data=150GB samples=1.28M budget=$500 deadline=2d spot
    /gpugauge fit resnet50 v100-16gb batch=64
    /gpugauge llama3-8b qlora rank=16 bf16 batch=4 seq=2048 samples=20k epochs=2     (and /gpugauge help)

Defaults (told to the user in the help text): batch 32 when no `batch=` is given (Keras' `Model.fit` default,
keras.io/api/models/model_training_apis), or a preset's own recipe's (Preset.recipe_batch: DCGAN, the MNIST MLP and
VAE 128; told back in the ack, as is the spec's fp32 precision when none is said, bf16-mixed for 1B parameters or
more or any decoder), epochs 1 (told; a recipe's on its data set, a fine-tune's 3), a fine-tune's seq and
batch (defaults.py), objective cost (balanced where a count of GPUs is said alone, counted_gpus), every provider and
pricing kind; the rest are the job spec's (CONTRACT.md).
`spot`/`ondemand` choose the cloud pricing; owned on-prem cards stay in unless providers are named."""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal

from catalog.gpu_names import gpu_name_matches
from catalog.providers import PROVIDER_NAMES
from catalog.units import parse_bytes, parse_duration_hours, parse_usd
from workers.schemas.humanize import parse_count, sequence_count
from workers.sizing.presets.names import match_preset_name
from workers.sizing.presets.registry import PRESET_WORDS, find_preset
from workers.slack.corpus import TOKENS_NEED_SEQ, TOKENS_SAID
from workers.slack.defaults import (
    choice,
    comma_list,
    counted_gpus,
    default_batch,
    default_epochs,
    default_precision,
    family_stand_in,
    fill_channels,
    finite_number,
    generic_alias,
    image_input,
    image_size,
    owned_cards,
    preset_context,
    resized_input,
    samples_from_tokens,
    sft_step,
    unrented_as_owned,
)
from workers.slack.fitting import as_fit, owned_as_fit_cards
from workers.slack.phrases import normalize
from workers.slack.sequences import fine_tune_kind, fine_tune_sequence
from workers.slack.stand_in import size_stand_in, size_words
from workers.slack.twins import twin_of
from workers.slack.typed import PINNED_STRATEGIES, PRICING_WORDS, plain_text, unsized

DEFAULT_BATCH_SIZE = 32  # Keras Model.fit's default batch_size (keras.io/api/models/model_training_apis)
MAX_TEXT_CHARS = 1000  # a command longer than this is not typed by a person
MAX_FIT_GPUS = 16  # "v100 and h100" is seven; "a 8gb gpu" fifteen cards

CommandKind = Literal["help", "recommend", "fit"]


class CommandError(Exception):
    """The command's words do not make a job; `problems` holds one line per bad word."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Command:
    """A parsed command: what to do, the raw job spec, and (for `fit`) the GPUs to try."""

    kind: CommandKind
    spec: dict[str, Any] = field(default_factory=dict)
    gpus: tuple[str, ...] = ()
    gpu_count: int = 1
    defaults_used: tuple[str, ...] = ()  # e.g. ("batch=32",), told back to the user in the ack


_PRECISIONS = {"fp32": "fp32", "fp16": "fp16-mixed", "bf16": "bf16-mixed", "fp8": "fp8-mixed",
               "fp16-mixed": "fp16-mixed", "bf16-mixed": "bf16-mixed", "fp8-mixed": "fp8-mixed"}
_OPTIMIZERS = {name: name for name in ("sgd", "momentum", "adam", "adamw", "rmsprop", "adamw_8bit")}
_FRAMEWORKS = {name: name for name in ("pytorch", "tensorflow", "jax", "cntk")}

# word= -> (section, field, parser); section "" is the top level, "stats" is model.stats
KEYS: dict[str, tuple[str, str, Callable[[str], Any]]] = {
    "batch": ("training", "batch_size", parse_count),
    "epochs": ("training", "epochs", finite_number),
    "seq": ("training", "sequence_length", sequence_count),  # "4k": 4,096, as contexts are said
    "lr": ("training", "learning_rate", finite_number), "accum": ("training", "update_interval", parse_count),
    "target": ("training", "target_length", sequence_count),  # an encoder-decoder's target tokens (T5)
    "precision": ("training", "precision", choice("precision", _PRECISIONS)),
    "optimizer": ("training", "optimizer", choice("optimizer", _OPTIMIZERS)),
    "framework": ("training", "framework", choice("framework", _FRAMEWORKS)),
    "data": ("dataset", "bytes", parse_bytes),
    "loader": ("dataset", "preprocess_ms_per_sample", finite_number),  # ms a sample on one reference core
    "samples": ("dataset", "samples", parse_count),
    "budget": ("constraints", "budget_usd", parse_usd),
    "co2": ("constraints", "max_co2e_kg", finite_number),  # kg CO2e, e.g. co2=50
    "deadline": ("constraints", "deadline_hours", parse_duration_hours),
    "gpus": ("constraints", "max_gpus", parse_count),
    "region": ("constraints", "regions", comma_list),
    "owned": ("constraints", "owned_gpus", owned_cards),  # cards the team has: "on my 1080 ti", owned=4xrtx-3090
    "top": ("", "limit", parse_count),
    "rank": ("adapter", "rank", parse_count),  # with lora or qlora (training.parallelism.adapter)
    "targets": ("adapter", "targets", comma_list),  # projections among q, k, v, o, mlp, e.g. targets=q,k,v,o
    "neurons": ("stats", "neurons", parse_count),
    "params": ("stats", "parameters", parse_count),
    "madds": ("stats", "multiply_adds", parse_count),
    "imgsz": ("model", "input_shape", image_size),  # Ultralytics' word: "train yolov8m on coco imgsz=1280"
    "input": ("model", "input_shape", image_size),  # an image model's input, HxW (its channels) or CxHxW
    "strategy": ("parallelism", "data_parallel", choice("strategy", PINNED_STRATEGIES)),  # "with deepspeed zero 3"
}

# bare word -> (group, value); a group may be named once (providers and pricing collect)
FLAGS: dict[str, tuple[str, Any]] = {
    **{name: ("providers", name) for name in PROVIDER_NAMES},
    "spot": ("pricing", "spot"), "ondemand": ("pricing", "on_demand"), "on-demand": ("pricing", "on_demand"),
    "fp32": ("precision", "fp32"), "fp16": ("precision", "fp16-mixed"), "bf16": ("precision", "bf16-mixed"),
    "fp8": ("precision", "fp8-mixed"), "clipping": ("clipping", "global"), "ema": ("ema", True),  # training.*
    "recompute": ("recompute", True), "checkpointing": ("recompute", True),  # activation checkpointing: full
    "gradient_checkpointing": ("recompute", True), "no-checkpointing": ("recompute", False),
    # whether the job starts from a pretrained model (training.from_pretrained); from scratch: no adapters
    "pretrain": ("pretrain/finetune", False), "scratch": ("pretrain/finetune", False),
    "continued-pretrain": ("pretrain/finetune", False),  # sized as pre-training, from the published weights (below)
    "finetune": ("pretrain/finetune", True), "fine-tune": ("pretrain/finetune", True),
    # fine-tuning with adapters (training.parallelism.adapter): LoRA, or QLoRA on a 4-bit base
    "lora": ("adapter", "lora"), "qlora": ("adapter", "qlora"),
    "cost": ("objective", "cost"), "time": ("objective", "time"), "balanced": ("objective", "balanced"),
    "carbon": ("objective", "carbon"), "dpo": ("preference", "dpo"), "orpo": ("preference", "orpo"),  # pairs
    # the output projection and its loss as one chunked kernel (liger); the loss alone on 16-bit logits (flash-attn's)
    "liger": ("loss", "fused_linear_cross_entropy"), "fused-cross-entropy": ("loss", "fused_cross_entropy"),
    "cross-entropy": ("loss", "cross_entropy"),  # "with a plain cross entropy loss": the logits held in fp32
    **{name: ("optimizer", name) for name in _OPTIMIZERS}, **PRICING_WORDS,
    **{name: ("framework", name) for name in _FRAMEWORKS},
}
_COLLECTING = {"providers", "pricing"}
_FLAG_FIELDS = {"precision": ("training", "precision"), "recompute": ("training", "recompute"),
                "optimizer": ("training", "optimizer"), "framework": ("training", "framework"),
                "objective": ("", "objective"), "pretrain/finetune": ("training", "from_pretrained"),
                "loss": ("training", "loss"), "clipping": ("training", "gradient_clipping"), "ema": ("training", "ema"),
                "preference": ("training", "preference")}
_GROUP_KEYS = {"precision": "precision", "optimizer": "optimizer", "framework": "framework"}


def _field_path(section: str, name: str) -> str:
    prefix = {"stats": "model.stats", "adapter": "training.parallelism.adapter",
              "parallelism": "training.parallelism"}.get(section, section)
    return f"{prefix}.{name}" if prefix else name


# Spec field path -> the word a Slack user typed, to name schema errors in the user's words.
FIELD_WORDS: dict[str, str] = {
    **{_field_path(section, name): f"{word}=" for word, (section, name, _) in KEYS.items()},
    "model": "the model", "model.preset": "the preset", "training.recompute": "recompute",
    "training.from_pretrained": "pretrain/finetune", "constraints.providers": "aws/gcp/onprem",
    "constraints.pricing": "spot/ondemand", "objective": "cost/time/balanced/carbon",
    "training.parallelism.adapter": "lora/qlora", "training.parallelism.adapter.kind": "lora/qlora",
    "training.loss": "liger", "training.preference": "dpo", "constraints.owned_gpus": "owned= (my/our GPU)",
}


def _tokens(text: str) -> list[str]:
    text = plain_text(html.unescape(text)).lower()  # Slack escapes &, < and >; phones type "‑" and “ ”
    text = re.sub(r"\s*=\s*", "=", text)
    return text.split()


def _suggest(word: str, candidates: Collection[str]) -> list[str]:
    # A model size ("1b", "7b") suggests the names of that size ("a 1b llama": llama3.2-1b, not 13b's spelling).
    if re.fullmatch(r"\d+(\.\d+)?b", word):
        sized = sorted({find_preset(c).name for c in candidates if c.endswith(f"-{word}") and c in PRESET_WORDS})
        if sized:
            return sized[:3]
    # 0.7 keeps "batchsize" -> batch= and "resnt50" -> resnet50 but drops far-fetched guesses; a preset's aliases
    # are said once, by its name ("resnet50", not "resnet50 or resnet_50 or resnet-50").
    close = difflib.get_close_matches(word, list(candidates), n=6, cutoff=0.7)
    named = [find_preset(c).name if c in PRESET_WORDS else c for c in close]
    return list(dict.fromkeys(named))[:3]


def _did_you_mean(options: list[str]) -> str:
    return f"; did you mean {' or '.join(options)}?" if options else "; see `/gpugauge help`"


class _Builder:
    """Collects words into a spec, remembering what was set and every problem found."""

    def __init__(self, *, presets: Collection[str], gpus: Collection[str], fit: bool,
                 said_on: Collection[str] = ()) -> None:
        self.presets, self.gpus, self.fit, self.said_on = presets, gpus, fit, said_on  # said_on: words after "on"
        self.spec: dict[str, Any] = {"model": {}, "training": {}, "dataset": {}, "constraints": {}}
        self.seen: set[str] = set()
        self.collected: dict[str, list[Any]] = {"providers": [], "pricing": []}
        self.named_gpus: list[str] = []
        self.problems: list[str] = []
        self.adapter: dict[str, Any] = {}  # training.parallelism.adapter, from lora/qlora, rank=, targets=
        self.tokens = 0  # the run's tokens said without a sequence length: made samples by the model's context
        self.corpus = False  # a count of tokens said (made samples or not): the data is a pre-training corpus

    def once(self, name: str, word: str) -> bool:
        if name in self.seen:  # "compare llama 3 8b vs mistral 7b": one model a command, a review compares jobs
            first = self.spec["model"].get("preset") if name == "preset" else None
            self.problems.append(f"{word}: one model a command ({first} is named first); ask for each, or compare "
                                 "jobs in a budget review (POST /v1/reports)" if first else
                                 f"{word}: {name} is given twice")
            return False
        self.seen.add(name)
        return True

    def put(self, section: str, name: str, value: Any) -> None:
        nested = {"stats": ("model", "stats"), "parallelism": ("training", "parallelism")}
        if section == "adapter":
            self.adapter[name] = value
        elif section in nested:
            self.spec[nested[section][0]].setdefault(nested[section][1], {})[name] = value
        elif section:
            self.spec[section][name] = value
        else:
            self.spec[name] = value

    def key_value(self, word: str) -> None:
        key, _, value = word.partition("=")
        if key not in KEYS:
            close = [f"{k}=" for k in _suggest(key, KEYS)]
            self.problems.append(f"unknown word '{key}'{_did_you_mean(close)}")
            return
        section, name, parse = KEYS[key]
        if key == "gpus" and self.fit:
            section, name = "", "gpu_count"
        if key == "region" and key in self.seen and value:  # "in us-east-1 or us-west-2": each one more region
            return self.put(section, name, [*self.spec["constraints"]["regions"], *parse(value)])
        if not self.once(_GROUP_KEYS.get(key, key), word):
            return
        if not value:
            self.problems.append(f"{key}= needs a value, e.g. {key}={EXAMPLES.get(key, '1')}")
            return
        try:
            self.put(section, name, parse(value))
        except ValueError as exc:
            self.problems.append(f"{word}: {exc}")

    def bare(self, word: str) -> None:
        if word == TOKENS_SAID or (word.startswith(f"{TOKENS_NEED_SEQ}:") and word.partition(":")[2].isdigit()):
            self.tokens, self.corpus = int(word.partition(":")[2] or 0), True  # phrases' markers: a corpus said
            return
        if word in FLAGS:
            group, value = FLAGS[word]
            if group in _COLLECTING:
                if value not in self.collected[group]:
                    self.collected[group].append(value)
            elif group == "adapter":
                if self.once(group, word):
                    self.adapter["kind"] = value
            elif self.once(group, word):
                section, name = _FLAG_FIELDS[group]
                self.put(section, name, value)
        elif (preset := match_preset_name(word, self.presets)) is not None:  # "meta-llama/llama-2-7b-hf" too
            twin = twin_of(self.spec["model"].get("preset"), preset, self.presets)  # "unet of sdxl": sdxl-unet
            if twin or self.once("preset", word):
                self.spec["model"]["preset"] = twin or preset
        elif (slugs := gpu_name_matches(word, self.gpus)):
            # fit: the GPUs to fit on; a recommendation: the only GPUs it may use (constraints.gpus).
            # "a100" is each A100; "1080ti" is gtx-1080-ti.
            self.named_gpus.extend(slugs)
        else:
            self.unknown(word)

    def unknown(self, word: str) -> None:
        names = [*FLAGS, *self.presets, *self.gpus, *(f"{k}=" for k in KEYS)]
        close = _suggest(word, names)
        best = close[0] if close else None
        if (instead := unsized(word, self.problems)) is not None:  # "dpo llama 3 8b", "yolov8n": what is sized
            self.problems.extend([instead] if instead else [])
        elif best in self.presets or (best is None and "preset" not in self.seen):
            close = _suggest(word, self.presets)  # none close: "t5", "whisper" are sized by their statistics
            hint = ("; no preset of that name (`/gpugauge help` lists them): give a language model's size, e.g. "
                    "params=780m, or any model's statistics, params= neurons= madds=")
            said = any("params=780m" in p for p in self.problems)  # "t5 base": said once
            self.problems.append(f"unknown preset '{word}'" + (_did_you_mean(close) if close else "" if said else hint))
        elif re.fullmatch(r"\d+(\.\d+)?gi?b", word):  # "will bert-large fit in 20gb": no card has 20 GB
            self.problems.append(f"'{word}' is an amount of memory no card has: name the card, e.g. `rtx-3060`, or a "
                                 "size cards have (`a 24gb gpu`), or drop it for the memory the job needs")
        elif self.fit and (best in self.gpus or (best is None and not self.named_gpus)):
            self.problems.append(f"unknown GPU '{word}'{_did_you_mean(_suggest(word, self.gpus))}")
        elif not close and word in self.said_on and "preset" in self.seen:  # "pretrain bert base on wikipedia"
            self.problems.append(f"unknown word '{word}'; a data set gpugauge does not know by name is said by its "
                                 "size: `3b tokens` or `1m samples` (`/gpugauge help` lists the ones it knows)")
        else:
            self.problems.append(f"unknown word '{word}'{_did_you_mean(close)}")

    def finish(self) -> dict[str, Any]:
        providers, pricing = self.collected["providers"], self.collected["pricing"]
        if providers:
            self.spec["constraints"]["providers"] = providers
        if pricing:
            # Owned cards have no spot or on-demand price; keep them unless on-prem was left out.
            if "onprem" in (providers or ["onprem"]):
                pricing = [*pricing, "owned"]
            self.spec["constraints"]["pricing"] = pricing
        if self.adapter and "kind" not in self.adapter:
            said = " and ".join(f"{k}=" for k in ("rank", "targets") if k in self.adapter)
            self.problems.append(f"{said} sets an adapter: add `lora` or `qlora`, e.g. `lora rank=16`")
        elif self.adapter:
            self.spec["training"].setdefault("parallelism", {})["adapter"] = self.adapter
        if not self.spec["model"] and not any(p.startswith("unknown preset") for p in self.problems):
            self.problems.append("name a model: a preset such as resnet50, or neurons= params= madds=")
        return {k: v for k, v in self.spec.items() if v != {} or k in ("model", "training")}


EXAMPLES = {"batch": "64", "epochs": "90", "data": "150GB", "samples": "1.28M", "budget": "$500", "co2": "50",
             "deadline": "2d", "seq": "512", "lr": "0.1", "gpus": "4", "precision": "bf16",
             "optimizer": "adamw", "region": "us-east-1", "top": "5", "rank": "16", "targets": "q,k,v,o",
             "owned": "4xrtx-3090", "input": "1024x1024", "imgsz": "1280", "loader": "20"}


def parse_command(text: str, *, presets: Collection[str], gpus: Collection[str],
                  no_bf16: Collection[str] = (), unrented: Collection[str] = ()) -> Command:
    """Parse the text after `/gpugauge`; raise CommandError listing every bad word with suggestions.

    `no_bf16`: the GPU slugs without bf16 arithmetic; a model defaulted to 16 bits on such cards alone is fp16;
    `unrented`: those no cloud rents, read as the team's own where a recommendation names them alone.
    """
    if len(text) > MAX_TEXT_CHARS:
        raise CommandError([f"the command is over {MAX_TEXT_CHARS} characters; say less"])
    words = _tokens(text)
    if words and words[0] in ("recommend", "estimate"):  # the CLI's verbs, which users carry over: the default here
        words = words[1:]
    if not words or words[0] in ("?", "-h", "--help") or (words[0] == "help" and len(words) < 3):  # "help me"
        return Command(kind="help")
    asked = [w.rstrip("?!.,") for w in words]
    words = as_fit(words, asked)  # "does llama-7b fit on a t4?", "what batch size can i use for resnet50 on a v100"
    fit = words[0] == "fit"
    builder = _Builder(presets=presets, gpus=gpus, fit=fit, said_on={b for a, b in pairwise(asked) if a == "on"})
    said, image, assumed = normalize(words[1:] if fit else words, presets=presets, gpus=gpus, flags=FLAGS)
    said = size_words(said, presets)  # "a 34b model": a size no preset is called, its parameter count
    for word in said:
        if "=" in word:
            builder.key_value(word)
        else:
            builder.bare(word)
    spec = builder.finish()
    if "stats" in spec["model"] and builder.problems and all(p.startswith("unknown preset") for p in builder.problems):
        builder.problems, assumed = [], (*assumed, "the model by its statistics (its name is no preset)")  # "whisper"
    assumed = size_stand_in(spec, builder.problems, assumed, presets=presets, image_said=image is not None)
    if stand_in := family_stand_in(spec["model"].get("preset"), builder.problems):  # "falcon 7b": a 7B decoder's
        builder.problems, assumed = [], (*assumed, stand_in)
    preset = spec["model"].get("preset")
    if problem := fill_channels(spec, preset):
        builder.problems.append(problem)
    said_input = "input_shape" in spec["model"]  # "unet 1024x1024" wins over a data set's size
    shape = image_input(preset, image) if image is not None and preset and not said_input else None
    if shape is not None:
        spec["model"]["input_shape"] = shape  # "resnet18 cifar10": 32 x 32 images, not the preset's 224
        assumed = (*assumed, f"input {'x'.join(map(str, shape))}")
    elif image is not None and preset and (resized := resized_input(preset, image)):
        assumed = (*assumed, resized)  # "vit-b16 cifar10": the ViT's 224 x 224, the images resized
    tuned = fine_tune_kind(spec["training"], tokens=builder.corpus)
    if said_seq := fine_tune_sequence(spec, preset, tuned):  # "fine-tune llama 3 8b": TRL's 1,024 tokens, not 8,192
        assumed = (*assumed, said_seq)
    if builder.tokens:  # "gpt2 on 10B tokens": made samples by the sequence it is sized at
        if (told := samples_from_tokens(builder.tokens, spec, preset)) is None:
            builder.problems.append("a count of training tokens (e.g. 10B tokens) is made samples by the tokens "
                                    "per sample: add seq= (e.g. seq=2048), or say samples=")
        else:
            assumed = (*assumed, told)
    builder.named_gpus = builder.named_gpus or (owned_as_fit_cards(spec) if fit else [])  # "largest batch on my 3090"
    if fit and not builder.named_gpus and not builder.problems:
        builder.problems.append(f"name a GPU to fit on, e.g. `/gpugauge fit resnet50 v100-16gb` "
                                f"(GPUs: {', '.join(sorted(gpus))})")
    if fit and len(builder.named_gpus) > MAX_FIT_GPUS:
        builder.problems.append(f"name at most {MAX_FIT_GPUS} GPUs to fit on")
    if not fit and builder.named_gpus:  # "llama-7b lora on a100": rank the A100 machines only
        spec.setdefault("constraints", {})["gpus"] = list(dict.fromkeys(builder.named_gpus))
    if builder.problems:
        raise CommandError(builder.problems)
    defaults: list[str] = [*generic_alias(preset), *assumed]  # "a 7b model": which 7B model it is sized as
    if "batch_size" not in spec["training"]:  # the preset's own recipe's, else Keras' default
        spec["training"]["batch_size"], said_batch = default_batch(preset, DEFAULT_BATCH_SIZE, tuned)
        defaults.append(said_batch)
    if said_epochs := default_epochs(spec, preset, tuned):  # said: one pass of ImageNet is not a training run
        defaults.append(said_epochs)
    if "precision" not in spec["training"]:  # said: an LLM in fp32 needs about twice bf16's memory
        defaults.append(default_precision(spec, preset, builder.named_gpus, no_bf16, pretrain=not tuned))
    defaults += [*sft_step(spec, preset, tuned), *([] if fit else [*counted_gpus(spec), *unrented_as_owned(
        spec, unrented)])]  # TRL's step; "on 8 v100s"; "on an rtx 4090", which no cloud rents: the asker's own
    context = preset_context(preset) if "sequence_length" not in spec["training"] else None
    if context is not None:  # a language model's default is its whole context: time and memory follow it
        defaults.append(f"seq={context} (the model's context)")
    if "continued-pretrain" in said:  # the pre-training run's defaults; its weights are read first (storage, host)
        spec["training"].update(from_pretrained=True, **({"sequence_length": context} if context else {}))
    gpu_count = spec.pop("gpu_count", 1)
    return Command(kind="fit" if fit else "recommend", spec=spec,
                   gpus=tuple(dict.fromkeys(builder.named_gpus)) if fit else (),
                   gpu_count=gpu_count, defaults_used=tuple(defaults))
