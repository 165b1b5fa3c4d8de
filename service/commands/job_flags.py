"""One-liners: a preset name or a spec file, with flags for the common spec fields merged over it.

    gpugauge estimate resnet50 --batch 64 --gpu all
    gpugauge recommend bert-base --batch 32 --seq 128 --samples 392702 --epochs 3 --budget 50 \\
        --deadline 12h --provider aws
    gpugauge recommend llama3-8b --adapter qlora --rank 16 --targets q,k,v,o --precision bf16-mixed \\
        --batch 4 --seq 2048 --samples 20k
A flag given wins over the file's field; a field neither gives keeps its documented default. The
values go through the same human units and schema as a spec file, so a bad one is named the same way.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from marshmallow import ValidationError

from service.commands.common import FLAG_NAMES, CliError, first_error, read_spec_file, shape_parts
from workers.schemas.humanize import apply_human_units
from workers.schemas.specs import load_job
from workers.sizing.presets.registry import PRESETS, preset_names, preset_word
from workers.sizing.presets.transformer import ENCODER_HEADS
from workers.sizing.spec import JobSpec

# flag -> (section, field); None as section: the spec's top level
_FIELDS: dict[str, tuple[str | None, str]] = {
    "batch": ("training", "batch_size"),
    "seq": ("training", "sequence_length"),
    "target": ("training", "target_length"),
    "epochs": ("training", "epochs"),
    "precision": ("training", "precision"),
    "optimizer": ("training", "optimizer"),
    "optimizer_impl": ("training", "optimizer_implementation"),
    "loss": ("training", "loss"),
    "preference": ("training", "preference"),
    "framework": ("training", "framework"),
    "checkpoint_every": ("training", "checkpoint_every_hours"),
    "samples": ("dataset", "samples"),
    "tokens": ("dataset", "tokens"),
    "data_size": ("dataset", "bytes"),
    "preprocess_ms": ("dataset", "preprocess_ms_per_sample"),
    "workers": ("dataset", "loader_workers"),
    "budget": ("constraints", "budget_usd"),
    "deadline": ("constraints", "deadline_hours"),
    "max_gpus": ("constraints", "max_gpus"),
    "objective": (None, "objective"),
    "limit": (None, "limit"),
}
_LISTS = {"provider": "providers", "region": "regions", "pricing": "pricing"}
_HUMAN = {"budget", "deadline", "samples", "tokens", "data_size", "seq"}  # left as text for the human-unit parser


def add_job_flags(p: argparse.ArgumentParser) -> None:
    """Add SPEC (a file or a preset name) and the flags for the common spec fields."""
    p.add_argument("spec", help="a job spec file (JSON or YAML) or a preset name (see `gpugauge presets`)")
    g = p.add_argument_group("job fields (merged over the spec file)")
    g.add_argument("--batch", type=int, metavar="N", help="samples per GPU per iteration (training.batch_size)")
    g.add_argument("--seq", metavar="N", help="tokens per sample, e.g. 2048 or 4k (4,096) (training.sequence_length)")
    g.add_argument("--target", type=int, metavar="N", help="an encoder-decoder's (T5, FLAN-T5) target tokens per "
                   "sample, which its decoder reads (training.target_length)")
    g.add_argument("--input-shape", metavar="CxHxW", help="an image preset's input, e.g. 3x32x32 for CIFAR "
                   "(model.input_shape)")
    g.add_argument("--head", choices=ENCODER_HEADS,
                   help="a BERT-style encoder's head (model.head): classifier, a sentence classifier (fine-tuning); "
                        "masked_lm, logits over the vocabulary at every position (pre-training; the default with "
                        "--from-scratch)")
    g.add_argument("--epochs", type=float, metavar="N")
    g.add_argument("--precision", choices=("fp32", "fp16-mixed", "bf16-mixed", "fp8-mixed"))
    g.add_argument("--optimizer", choices=("sgd", "momentum", "adam", "adamw", "rmsprop", "adamw_8bit"),
                   help="adamw_8bit: bitsandbytes' AdamW8bit, two 1-byte states (the HF Trainer's adamw_bnb_8bit)")
    g.add_argument("--optimizer-impl", choices=("foreach", "per_tensor", "fused"),
                   help="how the update runs (training.optimizer_implementation): foreach, torch.optim's CUDA "
                        "default; fused, torch's fused=True (the HF Trainer's default on torch 2.8 and later), apex "
                        "or DeepSpeed FusedAdam; per_tensor, a Python loop over tensors")
    g.add_argument("--framework", choices=("pytorch", "tensorflow", "jax", "cntk"))
    g.add_argument("--loss", choices=("cross_entropy", "mse", "none", "fused_linear_cross_entropy",
                                      "fused_cross_entropy"),
                   help="the loss over the model's output (training.loss); fused_linear_cross_entropy: the output "
                        "projection and the loss as one chunked kernel that never holds the logits (Liger Kernel, "
                        "HF Trainer use_liger_kernel=True); fused_cross_entropy: the logits in their own dtype, "
                        "no fp32 copy (flash-attn's CrossEntropyLoss, llm-foundry's default)")
    start = g.add_mutually_exclusive_group()
    start.add_argument("--from-scratch", dest="from_pretrained", action="store_const", const=False,
                       help="pre-training: the model starts from random weights, so adapters are no option "
                            "(training.from_pretrained: false)")
    start.add_argument("--pretrained", dest="from_pretrained", action="store_const", const=True,
                       help="fine-tuning a pretrained model (training.from_pretrained: true)")
    g.add_argument("--adapter", choices=("lora", "qlora"), help="fine-tune adapters only: LoRA, or QLoRA on a 4-bit "
                   "base (training.parallelism.adapter.kind)")
    g.add_argument("--rank", type=int, metavar="N", help="the adapters' rank (default 8)")
    g.add_argument("--targets", metavar="LIST", help="projections the adapters train, among q, k, v, o and mlp, "
                   "e.g. q,k,v,o (default q,v)")
    g.add_argument("--ema", action="store_true", help="keep an exponential moving average of the weights, one fp32 "
                   "copy updated every step (training.ema; diffusers' --use_ema, timm's --model-ema)")
    g.add_argument("--preference", choices=("dpo", "orpo"), help="preference tuning as TRL's trainers: --batch and "
                   "--samples count pairs of a chosen and a rejected sequence; dpo adds a reference model's forward "
                   "each step (training.preference)")
    g.add_argument("--checkpoint-every", type=float, metavar="HOURS", help="hours between checkpoints")
    g.add_argument("--samples", metavar="N", help="training samples, e.g. 1.28M (dataset.samples)")
    g.add_argument("--tokens", metavar="N", help="training tokens instead of samples, e.g. 100B (dataset.tokens)")
    g.add_argument("--data-size", metavar="BYTES", help="data set size, e.g. 150GB (dataset.bytes)")
    g.add_argument("--preprocess-ms", type=float, metavar="MS", help="pre-processing per sample on a reference core")
    g.add_argument("--workers", type=int, metavar="N", help="data-loader workers per GPU (dataset.loader_workers)")
    g.add_argument("--serial", action="store_true", help="pre-processing cannot be split (dataset.preprocess_serial)")
    held = g.add_mutually_exclusive_group()
    held.add_argument("--in-memory", dest="in_memory", action="store_const", const=True,
                      help="the data set is loaded into host memory (dataset.in_memory: true, the default)")
    held.add_argument("--streamed", dest="in_memory", action="store_const", const=False,
                      help="the data set is read from storage as training goes, not held in host memory "
                           "(dataset.in_memory: false)")
    g.add_argument("--data-in", metavar="WHERE", help="where the data set lives: aws:us-east-1, gcp:us-central1, "
                   "internet or anywhere (dataset.location)")
    g.add_argument("--budget", metavar="USD", help="e.g. 50 or $50 (constraints.budget_usd)")
    g.add_argument("--deadline", metavar="TIME", help="e.g. 12h or 2d (constraints.deadline_hours)")
    g.add_argument("--provider", action="append", metavar="NAME", help="aws, gcp or onprem (repeatable)")
    g.add_argument("--region", action="append", metavar="NAME",
                   help="a catalog region, or a prefix with * (eu-*: each it starts); repeatable")
    g.add_argument("--pricing", action="append", metavar="KIND",
                   help="on_demand, spot or owned (repeatable; the default), or committed_1y, committed_3y, "
                        "savings_plan_1y, savings_plan_3y")
    g.add_argument("--max-gpus", type=int, metavar="N")
    g.add_argument("--owned", action="append", metavar="NxSLUG",
                   help="cards the team owns, e.g. 4xrtx-3090 (repeatable; constraints.owned_gpus)")
    g.add_argument("--objective", choices=("cost", "time", "balanced"))
    g.add_argument("--limit", type=int, metavar="N", help="options to list")


def _base(spec: str) -> dict[str, Any]:
    """Return the spec a SPEC argument names: the file's, or a preset's model alone."""
    if Path(spec).exists():
        return read_spec_file(spec)
    name = spec.strip().lower()
    word = preset_word(spec)  # a preset, an alias, or a Hugging Face name of one ("meta-llama/Llama-2-7b-hf")
    if word is not None:
        return {"model": {"preset": word}}
    if Path(spec).suffix.lower() in (".json", ".yaml", ".yml", ".onnx"):
        raise CliError(f"{spec}: no such spec file")
    near = difflib.get_close_matches(name, [*preset_names(), *_aliases()], n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(near)}?" if near else "; `gpugauge presets` lists the presets"
    raise CliError(f"{spec}: neither a spec file nor a preset{hint}")


def _aliases() -> list[str]:
    return [alias for p in PRESETS.values() for alias in p.aliases]


def _owned(entries: list[str]) -> list[dict[str, Any]]:
    """Parse --owned NxSLUG entries; a bare slug is one card."""
    out = []
    for entry in entries:
        count, sep, slug = entry.partition("x")
        if sep and count.strip().isdigit():
            out.append({"gpu": slug.strip(), "count": int(count)})
        else:
            out.append({"gpu": entry.strip(), "count": 1})
    return out


def _shape(text: str) -> list[Any]:
    """Parse 3x32x32 (or 3,32,32) into [3, 32, 32]; a part that is not a whole number stays as given, for the
    schema to name."""
    return [int(p) if p.isdigit() else p for p in shape_parts(text)]


def merged_spec(args: argparse.Namespace, *, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the raw spec: SPEC's, with every flag given written over it."""
    raw = _base(args.spec)
    sections = {k: dict(v) if isinstance(v, dict) else v for k, v in raw.items()}
    for flag, (section, field) in _FIELDS.items():
        value = getattr(args, flag, None)
        if value is None:
            continue
        if section is None:
            sections[field] = value
        else:
            sections.setdefault(section, {})[field] = value
    if getattr(args, "input_shape", None):
        sections["model"] = {**sections.get("model", {}), "input_shape": _shape(args.input_shape)}
    if getattr(args, "head", None):
        sections["model"] = {**sections.get("model", {}), "head": args.head}
    if getattr(args, "from_pretrained", None) is not None:
        sections.setdefault("training", {})["from_pretrained"] = args.from_pretrained
    _merge_adapter(args, sections)
    if getattr(args, "in_memory", None) is not None:
        sections.setdefault("dataset", {})["in_memory"] = args.in_memory
    if getattr(args, "ema", False):
        sections.setdefault("training", {})["ema"] = True
    if getattr(args, "serial", False):
        sections.setdefault("dataset", {})["preprocess_serial"] = True
    for flag, field in _LISTS.items():
        values = getattr(args, flag, None)
        if values:
            sections.setdefault("constraints", {})[field] = list(values)
    if getattr(args, "owned", None):
        sections.setdefault("constraints", {})["owned_gpus"] = _owned(args.owned)
    if getattr(args, "only_gpus", None):  # recommend --gpu: the GPUs the ranking may use
        sections.setdefault("constraints", {})["gpus"] = [g.strip() for entry in args.only_gpus
                                                          for g in entry.split(",") if g.strip()]
    if getattr(args, "data_in", None):
        provider, _, region = args.data_in.strip().partition(":")
        sections.setdefault("dataset", {})["location"] = {"provider": provider, **({"region": region} if region
                                                                                  else {})}
    if "training" not in sections or "batch_size" not in sections.get("training", {}):
        raise CliError("training.batch_size: give --batch N (samples per GPU per iteration) or a spec file with it")
    return {**sections, **(extra or {})}


def _merge_adapter(args: argparse.Namespace, sections: dict[str, Any]) -> None:
    """Write --adapter, --rank and --targets over the file's training.parallelism.adapter."""
    given = {"kind": getattr(args, "adapter", None), "rank": getattr(args, "rank", None),
             "targets": [t.strip() for t in args.targets.split(",") if t.strip()]
             if getattr(args, "targets", None) else None}
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return
    training = sections["training"] = dict(sections.get("training") or {})
    parallelism = training["parallelism"] = dict(training.get("parallelism") or {})
    adapter = {**(parallelism.get("adapter") or {}), **given}
    if "kind" not in adapter:
        flags = " and ".join(f"--{k}" for k in ("rank", "targets") if k in given)
        raise CliError(f"training.parallelism.adapter: {flags} set an adapter; add --adapter lora or --adapter qlora")
    parallelism["adapter"] = adapter


def load_job_from_args(args: argparse.Namespace, *, schema: Any = None,
                       extra: dict[str, Any] | None = None) -> tuple[dict[str, Any], JobSpec]:
    """Build the job from SPEC and the flags; CliError names the first bad field."""
    raw = merged_spec(args, extra=extra)
    try:
        return load_job(apply_human_units(raw), schema=schema)
    except ValidationError as exc:
        flags = {key: FLAG_NAMES.get(key, "--" + key.replace("_", "-")) for key in extra or {}}
        raise CliError(first_error(exc.messages, names=flags)) from None
