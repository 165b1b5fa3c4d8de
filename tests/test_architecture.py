"""The import arrows of STYLE.md: catalog <- workers <- service, and a pure sizing core."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"catalog": 0, "workers": 1, "service": 2}
# The pure core may import only the standard library and our own catalog types.
PURE = ("workers/sizing", "workers/ranking.py", "workers/candidates.py", "workers/catalog_index.py",
        "workers/costing.py", "workers/plan_options.py", "workers/reasons.py", "workers/recommend.py",
        "workers/scope.py", "workers/shapes.py", "workers/recommendation.py", "workers/budget.py",
        "workers/sweeps.py", "workers/ownership.py", "workers/totals.py")
FRAMEWORKS = {"flask", "celery", "redis", "marshmallow", "boto3", "botocore", "google", "onnx", "kombu",
              "slack_sdk", "flask_smorest", "yaml", "rich", "matplotlib", "numpy"}


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
    for target in PURE:
        paths = [ROOT / target] if target.endswith(".py") else _python_files(target)
        for path in paths:
            if not path.exists():
                continue
            for name in _imports(path):
                if name.split(".")[0] in FRAMEWORKS:
                    wrong.append(f"{path.relative_to(ROOT)} imports {name}")
    assert wrong == []


def test_the_architecture_check_sees_a_wrong_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from service.app import create_app\nimport flask\n")
    assert _imports(bad) == ["service.app", "flask"]
