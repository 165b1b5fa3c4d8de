"""What the CLI commands share: reading a spec file, human units, printing errors and JSON."""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

if TYPE_CHECKING:
    from workers.sizing.spec import JobSpec

MAX_SPEC_FILE_BYTES = 64 * 1024 * 1024
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux: a longer `model.onnx` cannot name a file, so it is base64
# Flags whose spec field has another name; any other flag is the field with dashes (gpu_count: --gpu-count).
FLAG_NAMES = {"gpus": "--gpu"}


class _YamlError(ValueError):
    """A YAML spec that does not parse, as a ValueError so that one handler words both kinds of file."""


def _load_yaml(text: str) -> Any:
    from service.commands.yaml_spec import YAMLError, load_yaml  # PyYAML only for a YAML file (issue 17)

    try:
        return load_yaml(text)
    except YAMLError as exc:
        raise _YamlError(str(exc)) from None


class CliError(Exception):
    """A user error the CLI reports in one line with exit code 2."""


def read_document(path: str, *, what: str = "spec") -> dict[str, Any]:
    """Read a JSON or YAML file holding one object; CliError says what is wrong with it."""
    p = Path(path)
    if not p.is_file():
        raise CliError(f"{path}: no such {what} file")
    if p.stat().st_size > MAX_SPEC_FILE_BYTES:
        raise CliError(f"{path}: {what} file over {MAX_SPEC_FILE_BYTES // 2**20} MiB")
    kind = "JSON" if p.suffix == ".json" else "YAML"
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{path}: not a UTF-8 text file; a {what} is a JSON or YAML object "
                       "(an ONNX model is given as a file ending in .onnx)") from None
    except OSError as exc:
        raise CliError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if not text.strip():
        raise CliError(f"{path}: the file is empty; a {what} is a {kind} object")
    try:
        raw = json.loads(text) if p.suffix == ".json" else _load_yaml(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and _YamlError are ValueErrors
        raise CliError(f"{path}: not valid {kind}: {' '.join(str(exc).split())}") from None
    if not isinstance(raw, dict):
        raise CliError(f"{path}: a {what} must be an object at the top level")
    return raw


def read_spec_file(path: str) -> dict[str, Any]:
    """Read a JSON or YAML job spec, or an `.onnx` file or a Hugging Face config.json as a spec of that model alone.

    Inside a spec, `model.onnx` may be a path to the file (relative to the spec) or its base64, as the API takes.
    """
    if Path(path).suffix.lower() == ".onnx":
        return {"model": {"onnx": _onnx_base64(Path(path), field="SPEC")}}
    raw = read_document(path, what="spec")
    if is_hf_config(raw):  # a model's config.json from the Hugging Face Hub: a spec of that model alone
        return {"model": {"hf_config": _named_config(raw, Path(path))}}
    return inline_onnx(raw, base=Path(path).parent, field="model.onnx")


def _named_config(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """Name a config's model as Transformers does on loading (`_name_or_path`): its folder, or the file's stem."""
    if isinstance(raw.get("_name_or_path"), str) and raw["_name_or_path"].strip():
        return raw
    folder = path.resolve().parent.name
    return {**raw, "_name_or_path": folder if path.name == "config.json" and folder else path.stem}


def is_hf_config(raw: Mapping[str, Any]) -> bool:
    """Return whether a document is a Hugging Face config.json rather than a job spec (no spec has model_type)."""
    return "model_type" in raw and not {"model", "training", "dataset"} & raw.keys()


def inline_onnx(spec: dict[str, Any], *, base: Path, field: str) -> dict[str, Any]:
    """Replace a `model.onnx` that names a file (relative to `base`) by the file's base64 text."""
    model = spec.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("onnx"), str):
        return spec
    value: str = model["onnx"]
    if not _names_a_file(value, base=base):
        return spec  # the base64 of the file, as the API takes it; the schema checks it
    return {**spec, "model": {**model, "onnx": _onnx_base64(base / value, field=field)}}


def _names_a_file(value: str, *, base: Path) -> bool:
    if value.lower().endswith(".onnx"):
        return True  # base64 has no dot: this is a path, and a missing file is an error
    if len(value) > MAX_PATH_CHARS or "\0" in value:
        return False
    try:
        return (base / value).is_file()  # an absolute path stays absolute
    except (OSError, ValueError):  # a name too long for the file system is no file
        return False


def _onnx_base64(path: Path, *, field: str) -> str:
    try:
        return base64.b64encode(path.read_bytes()).decode()
    except FileNotFoundError:
        raise CliError(f"{field}: no such file {path}") from None
    except OSError as exc:
        raise CliError(f"{field}: cannot read {path} ({exc.strerror or exc})") from None


def first_error(messages: Any, *, names: Mapping[str, str] | None = None) -> str:
    """Render flat field errors as one line: `field: reason; field: reason` (a field given by a flag: the flag)."""
    names = names or {}
    if isinstance(messages, dict):
        return "; ".join(f"{_renamed(str(k), names)}: {' '.join(map(str, v)) if isinstance(v, list) else v}"
                         for k, v in messages.items())
    return str(messages)


def _renamed(path: str, names: Mapping[str, str]) -> str:
    head, sep, rest = path.partition(".")
    bracket = head.find("[")
    key, tail = (head[:bracket], head[bracket:]) if bracket > 0 else (head, "")
    return names[key] + tail + sep + rest if key in names else path


def console() -> Console:
    """Return a console for tables: the terminal's width, $COLUMNS when set, or 160 columns when piped."""
    return Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit() else 160)


def fail(message: str) -> int:
    """Print a one-line error and return the CLI's bad-input exit code."""
    print(f"gpugauge: {message}", file=sys.stderr)
    return 2


def print_json(payload: Any) -> None:
    """Print exactly what the HTTP API returns for the same input."""
    print(json.dumps(payload, indent=2, allow_nan=False))


@contextmanager
def working(what: str) -> Iterator[Callable[[int, int], None]]:
    """Show a progress bar on stderr while `what` runs; yield `advance(done, total)` for a determinate bar.

    Without calls to advance the bar pulses with the elapsed time (work of unknown length, such as
    loading the catalog and ranking it). Nothing is drawn when stderr is not a terminal.
    """
    err = Console(stderr=True)
    if not err.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn  # a terminal's

    with Progress(TextColumn(what), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(), console=err,
                  transient=True) as bar:
        task = bar.add_task(what, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


def shape_parts(text: str) -> list[str]:
    """Split a sample's shape as the CLI takes it, 3x224x224 or 3,224,224, into its parts (stripped)."""
    return [part.strip() for part in text.lower().replace(",", "x").split("x")]


def job_title(job: JobSpec) -> str:
    """Return the heading of a job's answer: its model, its batch per GPU and the precision it is sized in."""
    t = job.training
    return f"{job.model.name}, batch {t.batch_size} per GPU, {t.precision.value}"
