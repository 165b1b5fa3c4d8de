"""schemathesis against the app's own /openapi.json, in-process, every check on (short runs; bench/fuzz_api.py
runs thousands of requests against gunicorn).

The app runs embedded (jobs on its own threads) with API keys, so `ignored_auth` has a scheme to test.
schemathesis.toml (the checkout's, which a plain `schemathesis run` reads too) and bench/fuzz_checks.py say
which 422s positive_data_acceptance takes, from which four operations, and what checks those 422s instead.
Every run is seeded or derandomized, with no example database: the same requests on every run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from celery import _state as celery_state
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis.stateful import run_state_machine_as_test
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema
from werkzeug.serving import make_server

from bench import fuzz_checks  # registers positive_422s_are_unstated_rules
from service.openapi_rules import UNSTATED_RULES
from workers.tasks.queues import ThreadQueue

ROOT = Path(__file__).resolve().parent.parent
API_KEY = "schemathesis-test-key"
# A few examples per operation keeps this test near 20 s; the bench runs >= 5,000 requests.
MAX_EXAMPLES = 12
# Derandomized: the same examples on every run, so that CI never fails by chance (a failure found by
# bench/fuzz_api.py's random runs becomes a test case here, not a flaky run).
SETTINGS = settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
# The key as schemathesis' own auth (not headers passed to each call, which put the key back into the
# negative cases that leave it out on purpose, so that they were accepted).
AUTH_CONFIG = f'''
[auth.openapi.bearerAuth]
bearer = "{API_KEY}"
'''


@pytest.fixture()
def fuzzed_app(make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> Iterator[Flask]:
    """The embedded app with an API key, whose jobs are accepted and stay queued; Celery's default app is given back.

    These runs check the HTTP contract (every answer against the document). A fuzzed spec that is valid
    would start a real ranking, and some take minutes (llama-2-70b at batch 261,420, fp32: the strategy
    search's step walk), which the teardown would wait for: here no job runs (reviews included, none
    inline), waits are capped at 0 s. Finished jobs' answers are checked by tests/test_generated_client.py.
    """
    monkeypatch.setattr(ThreadQueue, "_run", staticmethod(lambda *args: None))
    saved = celery_state.default_app
    yield make_app(API_KEYS=API_KEY, REPORT_INLINE_MAX_JOBS=0, JOB_WAIT_MAX_S=0, EMBEDDED_THREADS=1)
    if saved is not None:
        saved.set_default()


@pytest.fixture()
def api_schema(fuzzed_app: Flask) -> Any:
    """The app's OpenAPI document as schemathesis reads it, with the bench's check settings."""
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzzed_app, config=_config())


def _config(extra: str = "") -> SchemathesisConfig:
    """The checkout's schemathesis.toml, the key as schemathesis' auth, and `extra` settings on top."""
    toml = extra + (ROOT / "schemathesis.toml").read_text(encoding="utf-8") + AUTH_CONFIG
    return SchemathesisConfig.from_str(toml)


def test_every_operation_passes_every_check_on_valid_and_invalid_input(api_schema: Any) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 10
    statuses: dict[str, set[int]] = {}
    for operation in operations:
        inputs = len(operation.path_parameters) + len(operation.query) + len(operation.headers) + len(operation.body)
        # Negative data needs an input to break; the probes take none.
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if inputs else (GenerationMode.POSITIVE,):
            @given(case=operation.as_strategy(generation_mode=mode))
            @SETTINGS
            def run(case: Any) -> None:
                response = case.call_and_validate(checks=ALL_CHECKS)
                statuses.setdefault(case.operation.label, set()).add(response.status_code)

            run()
    # The key reached the app: every operation answered something besides 401, the catalog 200. (Slack's
    # command is 401 without Slack's signature, which a fuzzer cannot make.)
    assert all(seen - {401} for label, seen in statuses.items() if "/slack/" not in label), statuses
    assert 200 in statuses["GET /v1/catalog/instances"], statuses


def test_a_stateful_run_passes_every_check(api_schema: Any, fuzzed_app: Flask) -> None:
    machine = api_schema.as_state_machine()
    runs_file = Path(fuzzed_app.config["RUNS_FILE"])

    class Machine(machine):  # type: ignore[misc, valid-type]
        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=ALL_CHECKS, transport_kwargs=kwargs or None,
                                   recorder=getattr(self, "recorder", None))

        def teardown(self) -> None:
            # Each example starts with no stored runs: hypothesis replays an example to check it, and
            # GET /v1/runs answering with an earlier example's runs made the replay draw other data.
            super().teardown()
            runs_file.unlink(missing_ok=True)

    run_state_machine_as_test(Machine, settings=settings(max_examples=MAX_EXAMPLES, stateful_step_count=5,
                                                         deadline=None, derandomize=True, database=None,
                                                         suppress_health_check=list(HealthCheck)))


def _all_checks() -> list[Any]:
    from schemathesis import checks

    checks.load_all_checks()
    return list(checks.CHECKS.get_all())


ALL_CHECKS = _all_checks()  # every built-in check, and the one of bench/fuzz_checks.py


def test_the_run_uses_every_built_in_check_and_the_agreement_check() -> None:
    names = {check.__name__ for check in ALL_CHECKS}
    assert {"not_a_server_error", "response_schema_conformance", "negative_data_rejection",
            "positive_data_acceptance", "ignored_auth", "use_after_free", "unsupported_method"} <= names
    assert fuzz_checks.positive_422s_are_unstated_rules.__name__ in names


# What a plain `schemathesis run --checks all URL` does from the checkout, in-process: every phase (examples,
# coverage, fuzzing, stateful), every check at its defaults plus schemathesis.toml's one allowance, a fixed
# seed, few examples per operation (the coverage phase's boundary cases do not depend on it).
PLAIN_RUN = """seed = 20261201
workers = 1
[generation]
max-examples = 6
database = "none"
"""


@pytest.fixture()
def served_url(fuzzed_app: Flask) -> Iterator[str]:
    """The fuzzed app served over HTTP on a free loopback port (werkzeug, threaded), as the CLI reaches it."""
    server = make_server("127.0.0.1", 0, fuzzed_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=10)


# A plain run prints warnings; here every warning is an error (pyproject.toml), and hypothesis warns when a
# generated body's repr is large, which the engine would report as an error of the run.
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
def test_a_plain_run_of_every_phase_and_check_finds_no_failure(served_url: str) -> None:
    # Over HTTP, as the CLI runs: schemathesis 4.32's WSGI transport passes max_redirects to werkzeug,
    # which refuses it, on the engine's path.
    schema = schemathesis.openapi.from_url(served_url + "/openapi.json", config=_config(PLAIN_RUN))
    failures: list[str] = []
    phases: dict[str, str] = {}
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished | events.FuzzScenarioFinished):
            for nodes in event.recorder.checks.values():
                failures += [f"{event.recorder.label} {node.name}: {node.failure_info.failure.title}: "
                             f"{node.failure_info.failure.message[:600]}\n"
                             f"{node.failure_info.code_sample[:400]}"
                             for node in nodes if node.failure_info is not None]
        elif isinstance(event, events.NonFatalError | events.FatalError):
            failures.append(f"error: {event}")
        elif isinstance(event, events.PhaseFinished):
            phases[event.phase.name.value] = event.status.value
    assert not failures, "\n".join(failures)
    # Every testing phase ran (stateful needs the document's links).
    assert {"examples", "coverage", "fuzzing", "stateful"} <= set(phases), phases


def test_only_four_operations_may_answer_422_to_valid_input_each_for_its_listed_rules(
        fuzzed_app: Flask, api_schema: Any) -> None:
    config = _config().projects.default
    allowed = {op.label for op in (result.ok() for result in api_schema.get_all_operations())
               if "422" in config.checks_config_for(operation=op).positive_data_acceptance.expected_statuses}
    assert allowed == {f"{method.upper()} {path}" for path, method in UNSTATED_RULES}
    assert "422" not in config.checks.positive_data_acceptance.expected_statuses
    document = fuzzed_app.test_client().get("/openapi.json").get_json()
    described = document["paths"]["/v1/reports"]["post"]["responses"]["422"]["description"]
    assert all(rule.text in described for rule in UNSTATED_RULES[("/v1/reports", "post")])
