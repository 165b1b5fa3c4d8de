"""What the CLI commands share: reading a spec file, human units, printing errors and JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from marshmallow import Schema, ValidationError
from rich.console import Console

from service.humanize import apply_human_units
from service.specs import load_job
from workers.sizing.spec import JobSpec

MAX_SPEC_FILE_BYTES = 64 * 1024 * 1024


class CliError(Exception):
    """A user error the CLI reports in one line with exit code 2."""


def read_spec_file(path: str) -> dict[str, Any]:
    """Read a JSON or YAML spec file; an `onnx` model may be given as a path to the file."""
    p = Path(path)
    if not p.is_file():
        raise CliError(f"{path}: no such spec file")
    if p.stat().st_size > MAX_SPEC_FILE_BYTES:
        raise CliError(f"{path}: spec file over {MAX_SPEC_FILE_BYTES // 2**20} MiB")
    text = p.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise CliError(f"{path}: not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {exc}") from None
    if not isinstance(raw, dict):
        raise CliError(f"{path}: a job spec must be an object at the top level")
    return _inline_onnx(raw, base=p.parent)


def _inline_onnx(raw: dict[str, Any], *, base: Path) -> dict[str, Any]:
    import base64

    model = raw.get("model")
    if isinstance(model, dict) and isinstance(model.get("onnx"), str):
        onnx_path = (base / model["onnx"]) if not Path(model["onnx"]).is_absolute() else Path(model["onnx"])
        if onnx_path.suffix == ".onnx" or onnx_path.is_file():
            if not onnx_path.is_file():
                raise CliError(f"model.onnx: no such file {onnx_path}")
            model = {**model, "onnx": base64.b64encode(onnx_path.read_bytes()).decode()}
            raw = {**raw, "model": model}
    return raw


def load_spec(path: str, *, schema: Schema | None = None,
              extra: dict[str, Any] | None = None) -> tuple[dict[str, Any], JobSpec]:
    """Read, humanise and validate a spec file; CliError names the first bad field."""
    raw = read_spec_file(path)
    if extra:
        raw = {**raw, **extra}
    try:
        return load_job(apply_human_units(raw), schema=schema)
    except ValidationError as exc:
        raise CliError(first_error(exc.messages)) from None


def first_error(messages: Any) -> str:
    """Render flat field errors as one line: `field: reason; field: reason`."""
    if isinstance(messages, dict):
        return "; ".join(f"{k}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                         for k, v in messages.items())
    return str(messages)


def console() -> Console:
    """Return a console for tables: the terminal's width, or 160 columns when piped."""
    return Console(width=None if sys.stdout.isatty() else 160)


def fail(message: str) -> int:
    """Print a one-line error and return the CLI's bad-input exit code."""
    print(f"gpugauge: {message}", file=sys.stderr)
    return 2


def print_json(payload: Any) -> None:
    """Print exactly what the HTTP API returns for the same input."""
    print(json.dumps(payload, indent=2, allow_nan=False))
