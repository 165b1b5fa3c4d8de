"""The deploy files parse, validate without a daemon, and stay in step with the code (commands, settings)."""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from service.cli import build_parser
from service.config import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
ENV_EXAMPLE = ROOT / "deploy" / "env.example"
K8S = ROOT / "deploy" / "k8s"
APP_SERVICES = ("api", "worker", "beat")
# Read by the SDKs, not by our code: the catalog refresh's credentials (boto3, google-auth).
SDK_VARIABLES = frozenset({"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                           "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"})
# Config keys that hold Python objects (tests inject them); no environment variable can set them.
OBJECT_SETTINGS = frozenset({"CATALOG_LOADER", "SLACK_CLOCK", "SLACK_WEBHOOK_FACTORY", "SLACK_ANSWERER", "TESTING"})
CELERY_PATTERN = "GPUGAUGE_CELERY__"


def compose() -> dict[str, Any]:
    """Return docker-compose.yml as data (YAML merge keys resolved)."""
    data: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return data


def k8s_documents() -> Iterator[tuple[Path, dict[str, Any]]]:
    """Yield every Kubernetes object of deploy/k8s, the Secret template included."""
    for path in sorted([*K8S.glob("*.yaml"), *K8S.glob("*.yaml.example")]):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc:
                yield path, doc


def k8s_containers(kind: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (object name, container) of every workload in deploy/k8s."""
    for _, doc in k8s_documents():
        if doc["kind"] in ("Deployment", "StatefulSet") and kind in (None, doc["kind"]):
            for container in doc["spec"]["template"]["spec"]["containers"]:
                yield doc["metadata"]["name"], container


def env_example_names() -> set[str]:
    """Return every variable deploy/env.example names, set or commented out."""
    names = re.findall(r"^#?([A-Za-z][A-Za-z0-9_]*)=", ENV_EXAMPLE.read_text(encoding="utf-8"), re.MULTILINE)
    return set(names)


def settings_the_code_reads() -> set[str]:
    """Return the environment variables our code reads: GPUGAUGE_<config key>, REDIS_URL and os.environ names."""
    keys = set(DEFAULTS)
    names: set[str] = set()
    for package in ("service", "catalog", "workers"):
        for path in (ROOT / package).rglob("*.py"):
            source = path.read_text(encoding="utf-8")
            keys |= set(re.findall(r"config(?:\.get\(|\.setdefault\(|\[)\s*\"([A-Z][A-Z0-9_]*)\"", source))
            names |= set(re.findall(r"\"(GPUGAUGE_[A-Z0-9_]*[A-Z0-9])\"", source))
            names |= set(re.findall(r"environ(?:\.get\(|\[)\s*\"([A-Z][A-Z0-9_]*)\"", source))
            names |= set(re.findall(r"getenv\(\s*\"([A-Z][A-Z0-9_]*)\"", source))
    keys -= OBJECT_SETTINGS | {"CELERY"}  # CELERY: one variable per Celery setting, GPUGAUGE_CELERY__<name>
    names |= {key if key == "REDIS_URL" else "GPUGAUGE_" + key for key in keys}
    return names - TERMINAL_VARIABLES


# The terminal's own variables, read by the CLI as every command-line tool reads them: not settings.
TERMINAL_VARIABLES = frozenset({"COLUMNS"})


def cli_accepts(argv: list[str]) -> None:
    """Parse a `gpugauge ...` command line with the real parser; fail the test if it is refused."""
    try:
        build_parser().parse_args(argv[1:])
    except SystemExit as exit_:
        pytest.fail(f"`{' '.join(argv)}` is not a gpugauge command line (exit {exit_.code})")


def check_command(argv: list[str]) -> None:
    """Check a process command of the deploy files against the code it names."""
    if argv[0] == "gpugauge":
        cli_accepts(argv)
    elif argv[0] in ("sh", "/bin/sh") and argv[1] == "-c":
        check_command(shlex.split(argv[2]))
    elif argv[0] == "celery":
        # `celery -A module:attribute`: the module defines that attribute (read, not imported: importing
        # it would build an app, and a new app becomes Celery's default for the rest of the session).
        module, _, attribute = argv[argv.index("-A") + 1].partition(":")
        tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                    if isinstance(t, ast.Name)}
        assert attribute in assigned, f"{module} defines no {attribute}"
    elif argv[0] in ("python", "redis-cli", "redis-server"):
        pass
    else:
        pytest.fail(f"unexpected command {argv}")


def test_compose_runs_redis_with_aof_and_noeviction_and_a_ping_healthcheck() -> None:
    redis = compose()["services"]["redis"]
    command = redis["command"]
    options = dict(zip(command[1::2], command[2::2], strict=False))
    assert command[0] == "redis-server"
    assert options["--appendonly"] == "yes" and options["--maxmemory-policy"] == "noeviction"
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert any(volume.endswith(":/data") for volume in redis["volumes"])  # the AOF outlives the container


def test_compose_runs_api_worker_and_beat_from_one_image_with_health_checks_after_redis() -> None:
    services = compose()["services"]
    images = {services[name]["image"] for name in APP_SERVICES}
    assert len(images) == 1
    for name in APP_SERVICES:
        service = services[name]
        assert service["build"]["dockerfile"] == "deploy/Dockerfile" and DOCKERFILE.exists()
        assert service["healthcheck"]["test"], name
        assert service["depends_on"]["redis"]["condition"] == "service_healthy", name
        assert service["env_file"] == "${GPUGAUGE_ENV_FILE:-deploy/env.example}", name
        assert service["environment"]["REDIS_URL"].startswith("redis://redis:6379/"), name


def test_every_process_command_in_compose_k8s_and_the_dockerfile_exists_in_the_code() -> None:
    services = compose()["services"]
    commands = [services[name]["command"] for name in APP_SERVICES]
    commands += [services[name]["healthcheck"]["test"] for name in APP_SERVICES]
    commands += [c["command"] for _, c in k8s_containers() if "command" in c]
    commands += [c[probe]["exec"]["command"] for _, c in k8s_containers()
                 for probe in ("livenessProbe", "readinessProbe") if "exec" in c.get(probe, {})]
    dockerfile = DOCKERFILE.read_text(encoding="utf-8")
    commands.append(ast.literal_eval(re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1)))  # type: ignore[union-attr]
    checked = 0
    for command in commands:
        argv = {"CMD-SHELL": lambda c: shlex.split(c[1]), "CMD": lambda c: c[1:]}.get(command[0], list)(command)
        check_command(argv)
        checked += 1
    assert checked >= 10
    assert {"serve", "worker", "beat"} <= {c[1] for c in commands if c and c[0] == "gpugauge"}


def test_the_compose_file_passes_docker_compose_config() -> None:
    binary = shutil.which("docker-compose")
    if binary is None:
        pytest.skip("docker-compose (Debian's 1.29) is not installed; the structural tests above still ran")
    run = subprocess.run([binary, "-f", str(COMPOSE), "config", "-q"], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr


def test_the_dockerfile_builds_one_non_root_image_with_a_healthz_healthcheck() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim", text, re.MULTILINE)
    assert "pip install --prefix=/install ." in text
    user = re.findall(r"^USER (\S+)", text, re.MULTILINE)
    assert user and not user[-1].startswith(("root", "0"))
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", text, re.MULTILINE)


def test_every_kubernetes_manifest_validates_against_the_kubernetes_schemas() -> None:
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    kinds = set()
    for path, doc in k8s_documents():
        try:
            kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{path.name}: {doc['kind']} {doc['metadata']['name']}: {error}")
        kinds.add((doc["kind"], doc["metadata"]["name"]))
    assert {("Deployment", "gpugauge-api"), ("Deployment", "gpugauge-worker"), ("Service", "gpugauge-api"),
            ("ConfigMap", "gpugauge-config"), ("Secret", "gpugauge-secrets")} <= kinds


def test_the_api_probes_healthz_for_liveness_and_readyz_for_readiness() -> None:
    [api] = [c for name, c in k8s_containers() if name == "gpugauge-api"]
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"


def test_every_kubernetes_container_has_resources_a_probe_and_runs_as_non_root() -> None:
    for name, container in k8s_containers():
        assert {"cpu", "memory"} <= set(container["resources"]["requests"]), name
        assert {"cpu", "memory"} <= set(container["resources"]["limits"]), name
        assert "livenessProbe" in container, name
        assert container["securityContext"]["allowPrivilegeEscalation"] is False, name
    for _, doc in k8s_documents():
        if doc["kind"] in ("Deployment", "StatefulSet"):
            assert doc["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"] is True


def test_the_kubernetes_workloads_read_the_configmap_and_secret_the_manifests_define() -> None:
    defined = {(doc["kind"], doc["metadata"]["name"]) for _, doc in k8s_documents()}
    for name, container in k8s_containers("Deployment"):
        refs = container["envFrom"]
        assert ("ConfigMap", "gpugauge-config") in {("ConfigMap", r["configMapRef"]["name"]) for r in refs
                                                    if "configMapRef" in r}, name
        for ref in refs:
            kind, key = ("ConfigMap", "configMapRef") if "configMapRef" in ref else ("Secret", "secretRef")
            assert (kind, ref[key]["name"]) in defined, name


def test_the_secret_template_holds_placeholders_only() -> None:
    for path, doc in k8s_documents():
        if doc["kind"] == "Secret":
            assert path.name.endswith(".example")  # kubectl apply -f deploy/k8s/ skips it
            for key, value in doc["stringData"].items():
                if key != "REDIS_URL":
                    assert value.startswith("<") and value.endswith(">"), key


def test_env_example_documents_every_setting_the_code_reads() -> None:
    documented = env_example_names()
    missing = settings_the_code_reads() - documented
    assert not missing, f"read by the code, not in deploy/env.example: {sorted(missing)}"
    assert any(name.startswith(CELERY_PATTERN) for name in documented)


def test_every_variable_in_env_example_is_read_by_the_code_or_a_cloud_sdk() -> None:
    read = settings_the_code_reads() | SDK_VARIABLES | {"WEB_CONCURRENCY"}
    unknown = {n for n in env_example_names() if n not in read and not n.startswith(CELERY_PATTERN)}
    assert not unknown, f"in deploy/env.example but read by nothing: {sorted(unknown)}"


def test_the_settings_given_in_compose_and_kubernetes_are_documented_in_env_example() -> None:
    documented = env_example_names()
    given = {name for service in APP_SERVICES for name in compose()["services"][service]["environment"]}
    for _, doc in k8s_documents():
        if doc["kind"] == "ConfigMap":
            given |= set(doc["data"])
        if doc["kind"] == "Secret" and doc["metadata"]["name"] == "gpugauge-secrets":
            given |= set(doc["stringData"])
    given |= {e["name"] for _, c in k8s_containers() for e in c.get("env", [])}
    assert given and not given - documented, sorted(given - documented)


def test_env_example_sets_no_secret_value() -> None:
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        if re.match(r"^#?(GPUGAUGE_API_KEYS|GPUGAUGE_SLACK_SIGNING_SECRET|AWS_\w+)=", line):
            assert line.endswith("="), line
