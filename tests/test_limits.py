"""Limits: rate limits per API key (429 problem+json, Retry-After; Redis, or memory when Redis is down), the body
limit (413), NaN/Infinity and huge integers refused, and a bound on every number the API reads."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from flask import Flask
from flask.testing import FlaskClient
from marshmallow import Schema, fields, validate

from bench.fuzz_checks import REQUEST_SCHEMAS
from service.limits import EXTENSION as LIMITER
from tests.service_helpers import PrivateRedis, example_spec

SPEC = {"model": {"preset": "resnet50"}, "training": {"batch_size": 32}}
KEYS = {"alpha": "alpha-key-0001", "beta": "beta-key-0002"}
JSON_ENDPOINTS = ("/v1/estimate", "/v1/recommendations")


pytestmark = pytest.mark.usefixtures("keep_celery_default")


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {KEYS[name]}"}


def limited_app(make_app: Callable[..., Flask], limit: str = "3/minute", **config: Any) -> Flask:
    return make_app(RATE_LIMIT_ENABLED=True, RATE_LIMIT=limit, API_KEYS=",".join(KEYS.values()), **config)


def assert_rate_limited(answer: Any) -> None:
    assert answer.status_code == 429 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["status"] == 429
    assert 1 <= int(answer.headers["Retry-After"]) <= 61
    assert answer.headers["X-RateLimit-Remaining"] == "0"


# --- rate limits ------------------------------------------------------------------------------------

def test_a_key_over_its_limit_gets_429_problem_with_retry_after_and_other_keys_are_unaffected(
        make_app: Callable[..., Flask]) -> None:
    client = limited_app(make_app).test_client()
    answers = [client.post("/v1/estimate", json=SPEC, headers=bearer("alpha")) for _ in range(4)]
    assert [a.status_code for a in answers[:3]] == [200, 200, 200]
    assert_rate_limited(answers[3])
    assert answers[3].headers["X-RateLimit-Limit"] == "3"
    assert client.post("/v1/estimate", json=SPEC, headers=bearer("beta")).status_code == 200


def test_one_window_covers_every_v1_route_of_a_key(make_app: Callable[..., Flask]) -> None:
    client = limited_app(make_app).test_client()
    assert client.get("/v1/catalog", headers=bearer("alpha")).status_code == 200
    assert client.get("/v1/catalog/gpus", headers=bearer("alpha")).status_code == 200
    assert client.post("/v1/estimate", json=SPEC, headers=bearer("alpha")).status_code == 200
    assert_rate_limited(client.get("/v1/catalog", headers=bearer("alpha")))


def test_made_up_keys_count_against_the_address_so_cycling_them_buys_nothing(
        make_app: Callable[..., Flask]) -> None:
    client = limited_app(make_app).test_client()
    made_up = [client.get("/v1/catalog", headers={"Authorization": f"Bearer guess-{n}"}) for n in range(4)]
    assert [a.status_code for a in made_up[:3]] == [401, 401, 401]
    assert made_up[0].headers["WWW-Authenticate"].lower().startswith("bearer")
    assert_rate_limited(made_up[3])
    assert client.get("/v1/catalog", headers=bearer("alpha")).status_code == 200  # a real key: its own window


def test_probes_and_the_api_documents_are_never_limited(make_app: Callable[..., Flask]) -> None:
    client = limited_app(make_app, "1/minute").test_client()
    for path in ("/healthz", "/readyz", "/openapi.json", "/docs"):
        assert [client.get(path).status_code for _ in range(4)] == [200] * 4, path
    assert client.get("/v1/catalog", headers=bearer("alpha")).status_code == 200  # nothing was counted


def test_slack_has_its_own_limit_per_address(make_app: Callable[..., Flask]) -> None:
    client = limited_app(make_app, "100/minute", SLACK_RATE_LIMIT="2/minute").test_client()
    unsigned = [client.post("/slack/commands", data="text=help",
                            content_type="application/x-www-form-urlencoded") for _ in range(3)]
    assert [a.status_code for a in unsigned[:2]] == [401, 401]
    assert_rate_limited(unsigned[2])
    assert client.get("/v1/catalog", headers=bearer("alpha")).status_code == 200


def test_an_empty_limit_means_no_limit_and_limits_can_be_switched_off(make_app: Callable[..., Flask]) -> None:
    unlimited = limited_app(make_app, "").test_client()
    assert {unlimited.get("/v1/catalog", headers=bearer("alpha")).status_code for _ in range(8)} == {200}
    off = make_app(RATE_LIMIT_ENABLED=False, RATE_LIMIT="1/minute").test_client()
    assert {off.get("/v1/catalog").status_code for _ in range(4)} == {200}


def test_apps_built_for_tests_have_no_limit_unless_asked(make_app: Callable[..., Flask]) -> None:
    client = make_app(RATE_LIMIT="1/minute").test_client()  # TESTING, RATE_LIMIT_ENABLED absent
    assert {client.get("/v1/catalog").status_code for _ in range(4)} == {200}


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_window(make_app: Callable[..., Flask]) -> None:
    client = make_app(RATE_LIMIT_ENABLED=True, RATE_LIMIT="1/minute", PROXY_HOPS=1).test_client()
    first = {"X-Forwarded-For": "203.0.113.7"}
    assert client.get("/v1/catalog", headers=first).status_code == 200
    assert client.get("/v1/catalog", headers={"X-Forwarded-For": "203.0.113.8"}).status_code == 200
    assert_rate_limited(client.get("/v1/catalog", headers=first))


def test_processes_sharing_one_redis_share_one_window(
        make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    config = {"RATE_LIMIT_STORAGE_URI": private_redis.url}
    first, second = (limited_app(make_app, **config).test_client() for _ in range(2))
    assert first.get("/v1/catalog", headers=bearer("alpha")).status_code == 200
    assert second.get("/v1/catalog", headers=bearer("alpha")).status_code == 200
    assert first.get("/v1/catalog", headers=bearer("alpha")).status_code == 200
    assert_rate_limited(second.get("/v1/catalog", headers=bearer("alpha")))
    keys = redis.Redis(port=private_redis.port).keys("gpugauge:limits*")
    assert keys and all(KEYS["alpha"].encode() not in key for key in keys)  # a digest prefix, not the key


def test_when_redis_is_down_limits_fall_back_to_memory_fast_and_return_to_redis(
        make_app: Callable[..., Flask], private_redis: PrivateRedis) -> None:
    app = limited_app(make_app, "4/minute", REDIS_URL=private_redis.url)
    client = app.test_client()
    assert client.post("/v1/estimate", json=SPEC, headers=bearer("alpha")).status_code == 200  # catalog loaded
    # Fast by construction, not by a stopwatch (no timed assertion here; bench/faults.py times the drills):
    # the counters' client gives up after one 0.3 s timeout, with no retry.
    storage_client = app.extensions[LIMITER]._storage.storage
    connection = storage_client.connection_pool.connection_kwargs
    assert connection["socket_connect_timeout"] <= 0.3 and connection["socket_timeout"] <= 0.3
    assert storage_client.get_retry()._retries == 0
    private_redis.stop()
    statuses = [client.post("/v1/estimate", json=SPEC, headers=bearer("alpha")).status_code for _ in range(5)]
    # Fail-open to each process's memory: sizing still answers (it needs no Redis), still limited.
    assert statuses == [200, 200, 200, 200, 429]
    queued = client.post("/v1/recommendations", json=SPEC, headers=bearer("beta"))
    assert queued.status_code == 503 and queued.mimetype == "application/problem+json"
    assert int(queued.headers["Retry-After"]) > 0
    private_redis.start()
    # flask-limiter tries the storage again after 1 s, then 2, 4 ... 32 s, counting the checks that failed
    # while Redis was down (more under load): wait for the return, as long as its longest back-off.
    counters = redis.Redis(port=private_redis.port)
    deadline = time.monotonic() + 70
    while not counters.keys("gpugauge:limits*") and time.monotonic() < deadline:
        answer = client.post("/v1/estimate", json=SPEC, headers=bearer("beta"))
        assert answer.status_code in (200, 429)  # memory may have counted beta out meanwhile; never a 5xx
        time.sleep(0.25)
    assert counters.keys("gpugauge:limits*"), "the limits never went back to Redis"  # counting in Redis again
    assert client.post("/v1/estimate", json=SPEC, headers=bearer("alpha")).status_code == 200  # a fresh window


# --- request bodies -----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [*JSON_ENDPOINTS, "/v1/reports"])
def test_a_body_over_the_limit_gets_413_problem(embedded_client: FlaskClient, path: str) -> None:
    limit = embedded_client.application.config["MAX_CONTENT_LENGTH"]
    body = b'{"pad": "' + b"x" * limit + b'"}'
    answer = embedded_client.post(path, data=body, content_type="application/json")
    assert answer.status_code == 413 and answer.mimetype == "application/problem+json"
    assert answer.get_json()["status"] == 413


def test_the_body_limit_is_a_setting_read_from_the_environment(
        make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUGAUGE_MAX_CONTENT_LENGTH", "2048")
    client = make_app().test_client()
    small = json.dumps(SPEC).encode()
    assert client.post("/v1/estimate", data=small, content_type="application/json").status_code == 200
    padded = json.dumps({**SPEC, "pad": "x" * 2048})
    assert client.post("/v1/estimate", data=padded, content_type="application/json").status_code == 413


NON_FINITE = [
    ('{"model": {"preset": "resnet50"}, "training": {"batch_size": NaN}}', "training.batch_size"),
    ('{"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "learning_rate": Infinity}}',
     "training.learning_rate"),
    ('{"model": {"preset": "resnet50"}, "training": {"batch_size": 8, "epochs": -Infinity}}', "training.epochs"),
    ('{"model": {"preset": "resnet50"}, "training": {"batch_size": 8}, "constraints": {"budget_usd": 1e999}}',
     "constraints.budget_usd"),
    ('{"model": {"stats": {"neurons": NaN, "parameters": 10, "multiply_adds": 10}}, "training": {"batch_size": 8}}',
     "model.stats.neurons"),
    ('{"model": {"layers": [{"type": "dense", "units": NaN}], "input_shape": [10]}, "training": {"batch_size": 8}}',
     "model.layers[0].units"),
    ('{"model": {"layers": [{"type": "conv2d", "out_channels": 8, "kernel": [3, Infinity]}], '
     '"input_shape": [3, 32, 32]}, "training": {"batch_size": 8}}', "model.layers[0].kernel"),
    ('{"model": {"layers": [{"type": "dense", "units": 10, "extra": {"deep": [NaN]}}], "input_shape": [10]}, '
     '"training": {"batch_size": 8}}', "model.layers[0].extra"),
]


@pytest.mark.parametrize("path", JSON_ENDPOINTS)
@pytest.mark.parametrize(("body", "field"), NON_FINITE)
def test_nan_and_infinity_are_refused_naming_the_field(
        embedded_client: FlaskClient, path: str, body: str, field: str) -> None:
    answer = embedded_client.post(path, data=body, content_type="application/json")
    assert answer.status_code == 422 and answer.mimetype == "application/problem+json"
    assert field in answer.get_json()["errors"]


def test_a_review_refuses_nan_inside_a_job_spec(embedded_client: FlaskClient) -> None:
    review = json.dumps({"jobs": [{"name": "a", "team": "t", "spec": SPEC}]}).replace('"batch_size": 32',
                                                                                      '"batch_size": NaN')
    answer = embedded_client.post("/v1/reports", data=review, content_type="application/json")
    assert answer.status_code == 422 and "jobs[0].spec.training.batch_size" in answer.get_json()["errors"]


@pytest.mark.parametrize("path", JSON_ENDPOINTS)
def test_huge_integers_are_a_422_when_parsed_and_a_400_past_the_parser_limit(
        embedded_client: FlaskClient, path: str) -> None:
    for digits, field in ((400, "training.batch_size"), (30, "training.batch_size")):
        body = f'{{"model": {{"preset": "resnet50"}}, "training": {{"batch_size": {"9" * digits}}}}}'
        answer = embedded_client.post(path, data=body, content_type="application/json")
        assert answer.status_code == 422 and field in answer.get_json()["errors"]
    layer = f'{{"model": {{"layers": [{{"type": "dense", "units": {"9" * 400}}}], "input_shape": [10]}}, ' \
            f'"training": {{"batch_size": 8}}}}'
    answer = embedded_client.post(path, data=layer, content_type="application/json")
    assert answer.status_code == 422 and "model.layers[0].units" in answer.get_json()["errors"]
    beyond = f'{{"model": {{"preset": "resnet50"}}, "training": {{"batch_size": {"9" * 5000}}}}}'
    answer = embedded_client.post(path, data=beyond, content_type="application/json")
    assert answer.status_code == 400 and answer.mimetype == "application/problem+json"


def test_json_integers_written_as_whole_floats_are_read_as_integers(embedded_client: FlaskClient) -> None:
    whole = embedded_client.post("/v1/estimate", json={**SPEC, "training": {"batch_size": 32.0}})
    assert whole.status_code == 200
    assert whole.get_json() == embedded_client.post("/v1/estimate", json=SPEC).get_json()
    for bad in (32.5, "32", True):
        answer = embedded_client.post("/v1/estimate", json={**SPEC, "training": {"batch_size": bad}})
        assert answer.status_code == 422, bad


def test_nan_can_never_be_written_in_an_answer(embedded_client: FlaskClient) -> None:
    from workers.tasks.jobs import dumps

    with pytest.raises(ValueError):
        embedded_client.application.json.dumps({"x": float("nan")})
    with pytest.raises(ValueError):
        dumps({"id": "j", "result": {"cost": float("inf")}})


# --- every number bounded -------------------------------------------------------------------------------

def _json_numbers(node: Any, components: dict[str, Any], path: str, seen: frozenset[str]) -> Iterator[tuple[str, bool]]:
    """Yield (path, bounded) for every JSON Schema integer or number under `node`."""
    if not isinstance(node, dict):
        return
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        if name not in seen:
            yield from _json_numbers(components[name], components, path, seen | {name})
        return
    types = node.get("type")
    if {"integer", "number"} & set(types if isinstance(types, list) else [types]):
        yield path, "minimum" in node and "maximum" in node
    for key in ("anyOf", "oneOf", "allOf"):
        for index, sub in enumerate(node.get(key, [])):
            yield from _json_numbers(sub, components, f"{path}<{key}{index}>", seen)
    for name, sub in node.get("properties", {}).items():
        yield from _json_numbers(sub, components, f"{path}.{name}", seen)
    for key in ("items", "additionalProperties"):
        yield from _json_numbers(node.get(key), components, f"{path}[]", seen)


def test_every_number_the_openapi_document_lets_a_client_send_is_bounded(embedded_client: FlaskClient) -> None:
    spec = embedded_client.get("/openapi.json").get_json()
    components = spec["components"]["schemas"]
    numbers: list[tuple[str, bool]] = []
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            inputs = [(f"{p['in']}:{p['name']}", p["schema"]) for p in
                      [*operations.get("parameters", []), *operation.get("parameters", [])]]
            for media in operation.get("requestBody", {}).get("content", {}).values():
                inputs.append(("body", media["schema"]))
            for where, schema in inputs:
                numbers += _json_numbers(schema, components, f"{method.upper()} {path} {where}", frozenset())
    assert len(numbers) > 40  # the job spec alone has ~30
    assert not [path for path, bounded in numbers if not bounded]


def _fields_without_range(schema: Schema, path: str) -> list[str]:
    found = []
    for name, field in schema.load_fields.items():
        found += _field_without_range(field, f"{path}.{name}")
    return found


def _field_without_range(field: fields.Field, path: str) -> list[str]:
    if isinstance(field, fields.Nested):
        nested = field.schema
        return _fields_without_range(nested, path)
    if isinstance(field, fields.List):
        return _field_without_range(field.inner, path + "[]")
    if isinstance(field, fields.Dict) and field.value_field is not None:
        return _field_without_range(field.value_field, path + "{}")
    if isinstance(field, fields.Number):
        ranges = [v for v in field.validators if isinstance(v, validate.Range)]
        if not any(r.min is not None and r.max is not None for r in ranges):
            return [path]
    return []


def test_every_integer_and_float_field_of_the_request_schemas_has_a_range() -> None:
    unbounded = []
    for (method, route), (schema_class, _) in REQUEST_SCHEMAS.items():
        unbounded += _fields_without_range(schema_class(), f"{method} {route}")
    assert not unbounded, unbounded


def test_the_range_check_would_see_an_unbounded_field() -> None:
    class Loose(Schema):
        count = fields.Integer()
        nested = fields.List(fields.Float(validate=validate.Range(min=0)))

    assert _fields_without_range(Loose(), "Loose") == ["Loose.count", "Loose.nested[]"]


def test_the_example_specs_pass_every_bound(embedded_client: FlaskClient) -> None:
    for name in ("resnet50-imagenet", "gpt2-pretrain", "vae-mnist"):
        assert embedded_client.post("/v1/estimate", json=example_spec(name)).status_code == 200, name


def test_the_openapi_document_names_429_on_every_limited_operation_and_not_on_the_probes(
        embedded_client: FlaskClient) -> None:
    paths = embedded_client.get("/openapi.json").get_json()["paths"]
    for path, operations in paths.items():
        for method, operation in operations.items():
            if method == "parameters":
                continue
            documented = "429" in operation["responses"]
            limited = path.startswith("/v1/") or path == "/slack/commands"  # Slack: SLACK_RATE_LIMIT per address
            assert documented == limited, f"{method} {path}"
            if documented:
                assert "application/problem+json" in operation["responses"]["429"]["content"]
