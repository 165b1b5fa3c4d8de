"""A client that this project did not write: openapi-python-client generates one from the served
/openapi.json at test time, and it makes every call of the document against the app (httpx's WSGI
transport). Every answer must parse with the generated models, and its JSON must validate against the
document's schema for its status, so a field the service sends and the document lacks (or types
loosely) fails here."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import jsonschema
import pytest
from flask import Flask
from slack_sdk.signature import SignatureVerifier

from service.api.reports import INLINE_MAX_JOBS
from tests.service_helpers import example_spec

ROOT = Path(__file__).resolve().parent.parent
SECRET = "generated-client-signing-secret"
REVIEW = {k: v for k, v in json.loads((ROOT / "examples" / "budget-review.json").read_text()).items()
          if k != "format"}
PACKAGE = "gpugauge_client"
# The example review mixes a dozen jobs; an inline answer takes at most INLINE_MAX_JOBS of them.
REVIEW = {**REVIEW, "jobs": REVIEW["jobs"][:INLINE_MAX_JOBS]}


@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    from celery import _state as celery_state

    from service.app import create_app
    from workers.tasks.runtime import runtime

    saved = celery_state.default_app
    built = create_app({"TESTING": True, "REDIS_URL": None, "API_KEYS": "", "REPORT_INLINE_MAX_JOBS": 2,
                        "SLACK_SIGNING_SECRET": SECRET})
    yield built
    runtime(built).queue.close()
    if saved is not None:
        saved.set_default()


@pytest.fixture(scope="module")
def document(app: Flask) -> dict[str, Any]:
    spec: dict[str, Any] = app.test_client().get("/openapi.json").get_json()
    return spec


@pytest.fixture(scope="module")
def client_package(document: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    work = tmp_path_factory.mktemp("generated")
    (work / "openapi.json").write_text(json.dumps(document))
    generator = Path(sys.executable).with_name("openapi-python-client")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(generator), "generate", "--path", str(work / "openapi.json"), "--meta", "none",
                           "--output-path", str(work / PACKAGE)], capture_output=True, text=True, env=env,
                          timeout=180)
    assert done.returncode == 0 and (work / PACKAGE / "client.py").exists(), done.stdout + done.stderr
    assert "could not" not in done.stdout.lower() and "skipping" not in done.stdout.lower(), done.stdout
    sys.path.insert(0, str(work))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(work))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="module")
def client(client_package: Any, app: Flask) -> Any:
    return client_package.Client(base_url="http://gpugauge.test", raise_on_unexpected_status=True,
                                 httpx_args={"transport": httpx.WSGITransport(app=app)})


class Checker:
    """Validates each answer's JSON against the document, and records which operations were called."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.called: set[tuple[str, str]] = set()

    def __call__(self, method: str, path: str, response: Any, *, statuses: tuple[int, ...]) -> Any:
        status = int(response.status_code)
        assert status in statuses, (method, path, status, response.content[:500])
        operation = self.document["paths"][path][method]
        content = operation["responses"][str(status)].get("content", {})
        media_type = response.headers.get("content-type", "").split(";")[0]
        assert media_type in content, (method, path, status, media_type, list(content))
        if media_type.endswith("json"):
            schema = {**content[media_type]["schema"], "components": self.document["components"]}
            jsonschema.Draft202012Validator(schema).validate(json.loads(response.content))
            assert response.parsed is not None, (method, path, status)
        self.called.add((method, path))
        return response.parsed


@pytest.fixture(scope="module")
def check(document: dict[str, Any]) -> Checker:
    return Checker(document)


def module(package: Any, tag: str, name: str) -> Any:
    return importlib.import_module(f"{package.__name__}.api.{tag}.{name}")


def models(package: Any) -> Any:
    return importlib.import_module(f"{package.__name__}.models")


def poll(call: Callable[[], Any], *, done: Callable[[Any], bool], timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        response = call()
        if done(response) or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def test_the_probes_and_the_catalog(client_package: Any, client: Any, check: Checker) -> None:
    for tag, name, path in (("ops", "get_healthz", "/healthz"), ("ops", "get_readyz", "/readyz"),
                            ("catalog", "get_v1_catalog", "/v1/catalog"),
                            ("catalog", "get_v1_catalog_gpus", "/v1/catalog/gpus")):
        check("get", path, module(client_package, tag, name).sync_detailed(client=client), statuses=(200,))
    instances = module(client_package, "catalog", "get_v1_catalog_instances")
    found = check("get", "/v1/catalog/instances", instances.sync_detailed(client=client, gpu="v100-16gb"),
                  statuses=(200,))
    assert found.instances and all(i.gpu == "v100-16gb" for i in found.instances)
    none = check("get", "/v1/catalog/instances", instances.sync_detailed(client=client, gpu="0"), statuses=(200,))
    assert none.instances == [] and none.notes


def test_an_estimate_and_a_recommendation_job(client_package: Any, client: Any, check: Checker) -> None:
    spec = example_spec()
    estimate = module(client_package, "estimate", "post_v1_estimate")
    body = models(client_package).EstimateRequest.from_dict({**spec, "gpus": ["t4"]})
    requirements = check("post", "/v1/estimate", estimate.sync_detailed(client=client, body=body), statuses=(200,))
    assert requirements.storage_bytes.max_ >= requirements.storage_bytes.min_ > 0
    submit = module(client_package, "recommendations", "post_v1_recommendations")
    job = check("post", "/v1/recommendations",
                submit.sync_detailed(client=client, body=models(client_package).JobSpec.from_dict(spec)),
                statuses=(200, 202))
    get = module(client_package, "recommendations", "get_v1_recommendations_job_id")
    final = poll(lambda: get.sync_detailed(client=client, job_id=job.id),
                 done=lambda r: r.parsed.status in ("done", "failed"))
    result = check("get", "/v1/recommendations/{job_id}", final, statuses=(200,))
    assert result.status == "done" and result.result.catalog.version and result.result.options


def test_a_review_inline_and_as_a_job(client_package: Any, client: Any, check: Checker) -> None:
    post = module(client_package, "reports", "post_v1_reports")
    request_model = models(client_package).ReviewRequest
    small = {**REVIEW, "jobs": REVIEW["jobs"][:2]}
    review = check("post", "/v1/reports", post.sync_detailed(client=client, body=request_model.from_dict(small)),
                   statuses=(200,))
    assert review.catalog.version and review.jobs
    queued = check("post", "/v1/reports", post.sync_detailed(client=client, body=request_model.from_dict(REVIEW)),
                   statuses=(202,))
    get = module(client_package, "reports", "get_v1_reports_job_id")
    final = poll(lambda: get.sync_detailed(client=client, job_id=queued.id),
                 done=lambda r: r.parsed.status in ("done", "failed"))
    done = check("get", "/v1/reports/{job_id}", final, statuses=(200,))
    assert done.status == "done" and done.progress.done == done.progress.total
    # The documents other than JSON: Accept picks them (this generator parses only JSON, so raw httpx here).
    raw = client.get_httpx_client().get(f"/v1/reports/{queued.id}", headers={"Accept": "text/csv"})
    assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/csv")


def test_the_slack_command_and_the_runs(client_package: Any, client: Any, check: Checker) -> None:
    form = {"command": "/gpugauge", "text": "help", "response_url": "https://hooks.slack.com/commands/T/1/x",
            "team_id": "T1", "user_id": "U1", "channel_id": "C1", "trigger_id": "t1"}
    slack = module(client_package, "slack", "post_slack_commands")
    body = slack.PostSlackCommandsBody.from_dict(form)
    timestamp = str(int(time.time()))  # signed over the form as the client encodes it (its field order)
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=timestamp, body=urlencode(body.to_dict()))
    answer = check("post", "/slack/commands", slack.sync_detailed(
        client=client, body=body, x_slack_request_timestamp=timestamp, x_slack_signature=signature or ""),
        statuses=(200,))
    assert answer.response_type == "ephemeral"
    runs = module(client_package, "runs", "get_v1_runs")
    check("get", "/v1/runs", runs.sync_detailed(client=client), statuses=(200,))
    report = models(client_package).RunReport.from_dict(
        {"spec": example_spec(), "gpu": "t4", "iteration_ms": 250.0, "source": "generated-client test"})
    posted = module(client_package, "runs", "post_v1_runs").sync_detailed(client=client, body=report)
    run = check("post", "/v1/runs", posted, statuses=(200, 201, 422))
    if posted.status_code in (200, 201):
        delete = module(client_package, "runs", "delete_v1_runs_run_id")
        deleted = delete.sync_detailed(client=client, run_id=run.id)
        assert deleted.status_code in (200, 204), deleted.content[:300]
        check.called.add(("delete", "/v1/runs/{run_id}"))


def test_every_operation_of_the_document_was_called(document: dict[str, Any], check: Checker) -> None:
    operations = {(method, path) for path, item in document["paths"].items() for method in item
                  if method in ("get", "post", "put", "patch", "delete")}
    missing = operations - check.called
    assert missing <= {("delete", "/v1/runs/{run_id}")}, sorted(missing)  # a run the API refused has none
