"""The import arrows of STYLE.md: catalog <- workers <- service, and a pure sizing core."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"catalog": 0, "workers": 1, "service": 2}
# The pure core: every module under these packages may import only the standard library and our own
# catalog and core types (STYLE.md). Model import (workers/modelimport: onnx), the shared schemas
# (marshmallow), Slack and the Celery tasks are the impure parts of workers/.
PURE_PACKAGES = ("workers/sizing", "workers/ranking", "workers/review", "workers/accuracy")
FRAMEWORKS = {"flask", "celery", "redis", "marshmallow", "boto3", "botocore", "google", "onnx", "kombu",
              "slack_sdk", "flask_smorest", "yaml", "rich", "matplotlib", "numpy"}
# Named exceptions, each with its reason. The step walk's peak for models of 1,000+ rows is array arithmetic
# over a declared dependency (numpy, which onnx and matplotlib already pull in), imported inside the
# function that needs it, so the CLI on a preset never loads it; walk_step stays the plain-Python model.
# The ranking's shapes judged over arrays (judge_arrays.py: ~600 per job) and the costs of their ~6,000
# offers (candidates.py) are the same kind of array arithmetic, imported the same way; shapes._judge_all
# and _costed_one_by_one stay the plain-Python paths. (The Pareto test stays pareto_test's sorted scan:
# its NumPy form cost a 1,000-job review 30% more worker CPU.)
ALLOWED = {("workers/sizing/walk_arrays.py", "numpy"), ("workers/sizing/walk_arrays.py", "numpy.typing"),
           ("workers/ranking/judge_arrays.py", "numpy"), ("workers/ranking/candidates.py", "numpy"),
           ("workers/ranking/machine_table.py", "numpy"), ("workers/ranking/ranked_arrays.py", "numpy"),
           ("workers/ranking/rejected_arrays.py", "numpy")}


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _python_files(top: str) -> list[Path]:
    return sorted((ROOT / top).rglob("*.py"))


def test_packages_import_only_downstream_layers() -> None:
    wrong = []
    for top, level in LAYERS.items():
        for path in _python_files(top):
            for name in _imports(path):
                root = name.split(".")[0]
                if root in LAYERS and LAYERS[root] > level:
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_sizing_core_and_ranking_import_no_framework_or_sdk() -> None:
    wrong = []
    for package in PURE_PACKAGES:
        paths = _python_files(package)
        assert paths, f"{package} holds no modules"
        for path in paths:
            for name in _imports(path):
                if name.split(".")[0] in FRAMEWORKS and (str(path.relative_to(ROOT)), name) not in ALLOWED:
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_every_workers_module_lives_in_a_package_by_job() -> None:
    loose = sorted(p.name for p in (ROOT / "workers").glob("*.py") if p.name not in {"__init__.py", "render.py"})
    assert loose == []


def test_the_architecture_check_sees_a_wrong_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from service.app import create_app\nimport flask\n")
    assert _imports(bad) == ["service.app", "flask"]
