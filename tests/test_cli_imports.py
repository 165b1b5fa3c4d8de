"""The CLI imports only what the subcommand it runs uses (issue 17: `--help` <= 0.3 s, estimate <= 0.8 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import build_parser
from service.commands import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("flask", "celery", "kombu", "redis", "matplotlib", "onnx", "numpy", "boto3", "gunicorn")
# What `gpugauge estimate` on a JSON spec leaves unimported (issue 17): the offers' validation and
# plausibility checks (the estimate reads the catalog's summary), PyYAML, and rich's progress bar when piped.
LAZY = ("catalog.validate", "catalog.plausibility", "yaml", "rich.progress")


def _modules_after(argv: list[str], *, watched: tuple[str, ...] = HEAVY) -> set[str]:
    """Run the CLI's main on argv in a fresh interpreter; return which of the watched modules it imported."""
    code = (
        "import sys\n"
        "from service.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(' '.join(m for m in {watched!r} if m in sys.modules), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # the embedded default: no Redis
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    return set(done.stderr.strip().splitlines()[-1].split()) if done.stderr.strip() else set()


def test_help_lines_in_the_registry_match_what_each_module_registers() -> None:
    eager = build_parser()._subparsers._group_actions[0]  # type: ignore[union-attr]
    lazy = build_parser([], lazy=True)._subparsers._group_actions[0]  # type: ignore[union-attr]
    eager_help = {a.dest: a.help for a in eager._choices_actions}
    lazy_help = {a.dest: a.help for a in lazy._choices_actions}
    assert eager_help == lazy_help == {name: help_line for name, (_, help_line) in COMMANDS.items()}


def test_help_imports_no_subcommand_and_nothing_heavy() -> None:
    assert _modules_after(["--help"]) == set()


def test_estimate_on_a_preset_imports_neither_the_service_nor_charts_nor_onnx(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}))
    assert _modules_after(["estimate", str(spec), "--json"]) == set()


@pytest.mark.parametrize("flags", [["--json"], [], ["--gpu", "t4", "--gpu", "a100-80gb"]])
def test_estimate_on_a_json_spec_validates_no_offer_and_imports_no_yaml(tmp_path: Path, flags: list[str]) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"model": {"preset": "resnet50"}, "training": {"batch_size": 64}}))
    assert _modules_after(["estimate", str(spec), *flags], watched=LAZY) == set()


def test_a_yaml_spec_still_imports_yaml_and_recommend_still_validates_the_offers(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("model: {preset: resnet50}\ntraining: {batch_size: 64}\n")
    assert "yaml" in _modules_after(["estimate", str(spec), "--json"], watched=LAZY)
    assert {"catalog.validate", "catalog.plausibility"} <= _modules_after(["recommend", str(spec), "--json"],
                                                                           watched=LAZY)


@pytest.mark.parametrize("argv", [["estimate", "--help"], ["catalog", "info", "--json"]])
def test_a_lazily_built_parser_parses_the_chosen_subcommand_as_the_eager_one_does(argv: list[str]) -> None:
    eager = build_parser()
    lazy = build_parser(argv, lazy=True)
    if "--help" in argv:
        assert lazy._subparsers is not None
        with pytest.raises(SystemExit):
            lazy.parse_args(argv)
        return
    assert vars(lazy.parse_args(argv)).keys() == vars(eager.parse_args(argv)).keys()
