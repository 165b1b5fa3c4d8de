"""`gpugauge model SPEC`: the per-layer statistics table, with a bar per layer for its memory share."""

from __future__ import annotations

import argparse
import difflib
from typing import Any

from marshmallow import ValidationError

from service.commands.common import CliError, fail, first_error, print_json, read_spec_file
from service.commands.common import console as make_console
from service.commands.tables import Column, fitted_table, left_out_note
from workers.modelimport.models import resolve_model
from workers.render import bar, fmt_bytes, fmt_count
from workers.schemas.results import ModelStatsSchema
from workers.schemas.spec import ModelSchema
from workers.schemas.specs import flatten_errors
from workers.sizing.errors import SizingError
from workers.sizing.layers.loss import Loss, with_loss
from workers.sizing.presets.registry import PRESETS, preset_names, preset_word
from workers.sizing.presets.transformer import ENCODER_HEADS
from workers.sizing.stats import ModelStats


def register(subparsers: Any) -> None:
    """Add the `model` subcommand."""
    p = subparsers.add_parser("model", help="per-layer statistics of a model (a spec file or a preset name)")
    p.add_argument("spec", help="a job spec (JSON/YAML), a file holding just the model, or a preset name")
    p.add_argument("--sequence-length", type=int, help="tokens per sample, for sequence models")
    p.add_argument("--target", type=int, metavar="N", help="an encoder-decoder's target tokens per sample "
                   "(training.target_length)")
    p.add_argument("--head", choices=ENCODER_HEADS,
                   help="a BERT-style encoder's head (model.head): classifier or masked_lm")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.add_argument("--wide", action="store_true", help="every column, whatever the terminal's width")
    p.set_defaults(func=run)


def _is_preset(name: str) -> bool:
    return preset_word(name) is not None


def model_stats_from_arg(spec: str, *, sequence_length: int | None, head: str | None = None,
                         target_length: int | None = None) -> ModelStats:
    """Resolve a spec file or preset name to statistics; raise CliError on bad input."""
    from pathlib import Path

    if not Path(spec).exists() and _is_preset(spec):
        raw: dict[str, Any] = {"model": {"preset": preset_word(spec)}}
    elif not Path(spec).exists() and Path(spec).suffix.lower() not in (".json", ".yaml", ".yml", ".onnx"):
        names = [*preset_names(), *(a for p in PRESETS.values() for a in p.aliases)]
        near = difflib.get_close_matches(spec.strip().lower(), names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(near)}?" if near else "; `gpugauge presets` lists the presets"
        raise CliError(f"{spec}: neither a spec file nor a preset{hint}")
    else:
        raw = read_spec_file(spec)
    model_raw = raw.get("model", raw)
    if head is not None and isinstance(model_raw, dict):
        model_raw = {**model_raw, "head": head}
    training_raw = raw.get("training")
    training: dict[str, Any] = training_raw if isinstance(training_raw, dict) else {}
    seq = sequence_length or training.get("sequence_length")
    try:
        model = ModelSchema().load(model_raw)
    except ValidationError as exc:
        raise CliError(first_error(flatten_errors(exc.messages, "model"))) from None
    if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 1):
        raise CliError("training.sequence_length: must be a positive integer")
    target = target_length or training.get("target_length")
    if target is not None and (not isinstance(target, int) or isinstance(target, bool) or target < 1):
        raise CliError("training.target_length: must be a positive integer")
    if "onnx" in model:
        import base64

        model["onnx"] = base64.b64decode(model["onnx"])
    batch = training.get("batch_size")
    loss = training.get("loss")
    if loss is not None and loss not in [kind.value for kind in Loss]:
        raise CliError(f"training.loss: must be one of {', '.join(kind.value for kind in Loss)}")
    try:
        pretrained = training.get("from_pretrained")
        stats = resolve_model(model, sequence_length=seq,
                              batch_size=batch if isinstance(batch, int) and not isinstance(batch, bool)
                              and batch >= 1 else None,
                              from_pretrained=pretrained if isinstance(pretrained, bool) else None,
                              target_length=target)
    except SizingError as exc:
        raise CliError(f"{exc.field}: {exc.reason}") from None
    return stats if loss is None else with_loss(stats, Loss(loss))


def run(args: argparse.Namespace) -> int:
    """Print the model's statistics table (or JSON)."""
    try:
        stats = model_stats_from_arg(args.spec, sequence_length=args.sequence_length, head=args.head,
                                     target_length=args.target)
    except CliError as exc:
        return fail(str(exc))
    if args.json:
        print_json(ModelStatsSchema().dump(stats))
        return 0
    print_table(stats, wide=args.wide)
    return 0


def print_table(stats: ModelStats, *, wide: bool = False) -> None:
    """Print the per-layer table the way a network editor's statistics panel shows it.

    At a narrow width the least needed columns are left out and named (tables.py); layer names,
    types and output shapes are never cut.
    """
    console = make_console()
    saved_total = sum(layer.saved_values for layer in stats.layers) or 1
    saved_max = max((layer.saved_values for layer in stats.layers), default=0) or 1
    patterns = any(layer.pattern for layer in stats.layers)  # ONNX nodes of a fused op written as several
    columns: list[Column] = [("#", "right", 1), ("layer", "left", 0), ("type", "left", 0)]
    if patterns:
        columns.append(("pattern", "left", 2))
    columns += [("output", "right", 0), ("neurons", "right", 2), ("parameters", "right", 1),
                ("multiply-adds", "right", 2), ("activation memory share (bar: vs largest)", "left", 3)]
    rows = [[str(i), layer.name, layer.type, *([layer.pattern] if patterns else []),
             "x".join(map(str, layer.output_shape)),
             fmt_count(layer.neurons), fmt_count(layer.parameters), fmt_count(layer.multiply_adds),
             f"{bar(layer.saved_values / saved_max)} {layer.saved_values / saved_total:5.1%}"]
            for i, layer in enumerate(stats.layers)]
    total = ["", "total", "", *([""] if patterns else []), "", fmt_count(stats.neurons),
             fmt_count(stats.parameters), fmt_count(stats.multiply_adds), ""]
    table, left_out = fitted_table(f"{stats.name}: per-sample statistics", columns, [*rows, total],
                                   width=console.width, wide=wide)
    if len(table.rows) > 1:
        table.rows[-2].end_section = True  # a rule above the totals
    console.print(table)
    if left_out:
        console.print(left_out_note(left_out))
    console.print(f"neurons {stats.neurons:,}  parameters {stats.parameters:,}  "
                  f"multiply-adds {stats.multiply_adds:,}  "
                  f"(fp32 weights {fmt_bytes(stats.parameters * 4)})")
    if stats.frozen_parameters:
        console.print(f"frozen parameters (no gradient, no optimizer state): {stats.frozen_parameters:,}")
    if stats.unknown_operators:
        console.print(f"[yellow]unknown operators, not counted: {', '.join(stats.unknown_operators)}[/]")
    for code, message in stats.import_warnings:
        console.print(f"[yellow]{code}: {message}[/]", markup=True, highlight=False)
