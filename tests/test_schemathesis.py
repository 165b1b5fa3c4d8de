"""schemathesis against the app's own /openapi.json, in-process, every check on (a short run; bench/fuzz_api.py
runs thousands of requests against gunicorn).

The app runs embedded (jobs on its own threads) with API keys, so `ignored_auth` has a scheme to test.
bench/schemathesis.toml and bench/fuzz_checks.py say why positive_data_acceptance also accepts 422 and
what checks those 422s instead.
"""

from __future__ import annotations

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

from bench import fuzz_checks  # registers positive_data_passes_the_request_schema

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
def fuzzed_app(make_app: Callable[..., Flask]) -> Iterator[Flask]:
    """The embedded app with an API key; Celery's default app is given back after."""
    saved = celery_state.default_app
    yield make_app(API_KEYS=API_KEY, REPORT_INLINE_MAX_JOBS=2)
    if saved is not None:
        saved.set_default()


@pytest.fixture()
def api_schema(fuzzed_app: Flask) -> Any:
    """The app's OpenAPI document as schemathesis reads it, with the bench's check settings."""
    toml = (ROOT / "bench" / "schemathesis.toml").read_text(encoding="utf-8") + AUTH_CONFIG
    config = SchemathesisConfig.from_str(toml)
    return schemathesis.openapi.from_wsgi("/openapi.json", fuzzed_app, config=config)


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


def test_a_stateful_run_passes_every_check(api_schema: Any) -> None:
    machine = api_schema.as_state_machine()

    class Machine(machine):  # type: ignore[misc, valid-type]
        def validate_response(self, response: Any, case: Any, additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=ALL_CHECKS, transport_kwargs=kwargs or None,
                                   recorder=getattr(self, "recorder", None))

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
    assert fuzz_checks.positive_data_passes_the_request_schema.__name__ in names
