"""What the CLI commands share: reading a spec file, human units, printing errors and JSON."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from marshmallow import Schema, ValidationError
from rich.console import Console

from workers.schemas.humanize import apply_human_units
from workers.schemas.specs import load_job
from workers.sizing.spec import JobSpec

MAX_SPEC_FILE_BYTES = 64 * 1024 * 1024


class CliError(Exception):
    """A user error the CLI reports in one line with exit code 2."""


def read_document(path: str, *, what: str = "spec") -> dict[str, Any]:
    """Read a JSON or YAML file holding one object; CliError says what is wrong with it."""
    p = Path(path)
    if not p.is_file():
        raise CliError(f"{path}: no such {what} file")
    if p.stat().st_size > MAX_SPEC_FILE_BYTES:
        raise CliError(f"{path}: {what} file over {MAX_SPEC_FILE_BYTES // 2**20} MiB")
    text = p.read_text(encoding="utf-8")
    try:
        raw = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise CliError(f"{path}: not valid {'JSON' if p.suffix == '.json' else 'YAML'}: {exc}") from None
    if not isinstance(raw, dict):
        raise CliError(f"{path}: a {what} must be an object at the top level")
    return raw


def read_spec_file(path: str) -> dict[str, Any]:
    """Read a JSON or YAML job spec; an `onnx` model may be given as a path to the file."""
    raw = read_document(path, what="spec")
    return inline_onnx(raw, base=Path(path).parent, field="model.onnx")


def inline_onnx(spec: dict[str, Any], *, base: Path, field: str) -> dict[str, Any]:
    """Replace a `model.onnx` that names a file (relative to `base`) by the file's base64 text."""
    model = spec.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("onnx"), str):
        return spec
    onnx_path = base / model["onnx"]  # an absolute path stays absolute
    if onnx_path.suffix != ".onnx" and not onnx_path.is_file():
        return spec  # already base64
    if not onnx_path.is_file():
        raise CliError(f"{field}: no such file {onnx_path}")
    encoded = base64.b64encode(onnx_path.read_bytes()).decode()
    return {**spec, "model": {**model, "onnx": encoded}}


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
