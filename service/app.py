"""The Flask app factory: settings, Celery, the job store, the API blueprints, problem+json errors.

Settings, later ones winning: DEFAULTS below; the environment (REDIS_URL, and every GPUGAUGE_*
variable with the prefix dropped, values parsed as JSON where they parse: GPUGAUGE_RESULT_TTL_S=600
sets RESULT_TTL_S); then the mapping passed to create_app. With REDIS_URL, jobs go through Redis to
`gpugauge worker` processes; without it the app runs embedded: jobs run on a thread pool of this
process and live in its memory (workers/tasks/queues.py), so serve it as one process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from celery import Celery, Task
from flask import Flask
from flask.json.provider import DefaultJSONProvider
from flask_smorest import Api
from redis import Redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from service.api import catalog as catalog_api
from service.api import docs, ops
from service.api import estimate as estimate_api
from service.api import page as page_api
from service.api import recommendations as recommendations_api
from service.api import reports as reports_api
from service.api import runs as runs_api
from service.api import slack as slack_api
from service.auth import EXTENSION as API_KEYS_EXTENSION
from service.auth import api_key_hashes
from service.config import DEFAULTS
from service.limits import init_limits
from service.openapi_rules import declare_rules
from service.problems import PROBLEM_MEDIA_TYPE, register_error_handlers
from workers.schemas import ProblemSchema
from workers.tasks import recommend as recommend_tasks
from workers.tasks import reconcile as reconcile_tasks
from workers.tasks import refresh as refresh_tasks
from workers.tasks import review as review_tasks
from workers.tasks import slack as slack_tasks
from workers.tasks.catalog_source import CatalogSource, catalog_source, default_copy_path
from workers.tasks.celery_app import celery_settings, embedded_settings
from workers.tasks.jobs import MemoryJobStore, RedisJobStore
from workers.tasks.outage import patch_kombu_restore_unacked
from workers.tasks.queues import CeleryQueue, ThreadQueue
from workers.tasks.runs import FileRunStore, default_runs_file
from workers.tasks.runs_redis import RedisRunStore
from workers.tasks.runtime import EXTENSION, CatalogCache, Runtime

# Every Celery task, registered by importing its module here (each is a @shared_task).
TASK_MODULES = (recommend_tasks, review_tasks, refresh_tasks, slack_tasks, reconcile_tasks)
ROUTES = (estimate_api, recommendations_api, catalog_api, reports_api, ops, docs, slack_api, page_api, runs_api)


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON, refusing to write NaN or Infinity (not JSON, RFC 8259) instead of sending them."""

    sort_keys = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        """Serialise `obj`; raise ValueError on a non-finite float."""
        kwargs.setdefault("allow_nan", False)
        return super().dumps(obj, **kwargs)


class ProblemApi(Api):  # type: ignore[misc]  # flask-smorest ships no types
    """flask-smorest's Api, documenting every error as application/problem+json.

    Its own {code, status, message} handler is replaced by service/problems.py's, registered after it.
    """

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        for status in HTTPStatus:
            if status >= 400:
                self.spec.components.response(status.name, _problem_doc(status.phrase), lazy=True)
        self.spec.components.response("DEFAULT_ERROR", _problem_doc("Default error response"), lazy=True)


def create_app(config: Mapping[str, object] | None = None) -> Flask:
    """Build the app: settings, Celery, job store, queue, catalog, blueprints and error handlers."""
    app = Flask(__name__, static_folder=None)
    app.json = StrictJSONProvider(app)
    app.config.from_mapping(DEFAULTS)
    if os.environ.get("REDIS_URL"):
        app.config["REDIS_URL"] = os.environ["REDIS_URL"]
    app.config.from_prefixed_env("GPUGAUGE")
    app.config.from_mapping(config or {})
    app.extensions[API_KEYS_EXTENSION] = api_key_hashes(app.config["API_KEYS"])

    celery = celery_init_app(app)
    app.extensions[EXTENSION] = _runtime(app, celery)

    api = ProblemApi(app)
    if app.extensions[API_KEYS_EXTENSION]:
        api.spec.components.security_scheme("bearerAuth", {"type": "http", "scheme": "bearer"})
        api.spec.options["security"] = [{"bearerAuth": []}]  # ops routes say `security: []`
    for module in ROUTES:  # every route, one way: flask-smorest's register_blueprint
        api.register_blueprint(module.blp)
    # Slack's form route is plain Flask (flask-smorest would parse its body); its operation is written out.
    slack_rule = next(rule for rule in app.url_map.iter_rules() if rule.rule == slack_api.PATH)
    api.spec.path(rule=slack_rule, operations=slack_api.OPENAPI_OPERATIONS)
    declare_rules(api.spec)  # service/openapi_rules.py: rules between fields, known names, what 422 is for
    register_error_handlers(app)
    init_limits(app)  # service/limits.py: per-key rate limits, 429 problem+json
    return app


def celery_init_app(app: Flask) -> Celery:
    """Create the app's Celery, whose tasks run inside the Flask app context (Flask docs pattern)."""

    class FlaskTask(Task):  # type: ignore[misc]
        def __call__(self, *args: object, **kwargs: object) -> object:
            with app.app_context():
                return self.run(*args, **kwargs)

    patch_kombu_restore_unacked()  # a kombu 5.7 bug stops a worker's consumer for good on a broker outage
    url = app.config["REDIS_URL"]
    overrides = app.config["CELERY"]
    settings = (embedded_settings(overrides) if not url else celery_settings(
        url, time_limit_s=float(app.config["TASK_TIME_LIMIT_S"]),
        soft_time_limit_s=float(app.config["TASK_SOFT_TIME_LIMIT_S"]), overrides=overrides))
    celery = Celery(app.name, task_cls=FlaskTask)
    celery.config_from_object(settings)
    celery.set_default()
    app.extensions["celery"] = celery
    return celery


def _runtime(app: Flask, celery: Celery) -> Runtime:
    url = app.config["REDIS_URL"]
    source = (CatalogSource(load=app.config["CATALOG_LOADER"]) if app.config["CATALOG_LOADER"] else
              _catalog_source(url, data_dir=app.config["CATALOG_DIR"], copy_path=app.config["CATALOG_COPY_PATH"]))
    catalog = CatalogCache(source.load, fallback=source.fallback, reload_s=float(app.config["CATALOG_RELOAD_S"]),
                           retry_s=float(app.config["CATALOG_RETRY_S"]), current_name=source.current_name)
    if not url:
        runs_file = app.config["RUNS_FILE"] or default_runs_file()
        return Runtime(jobs=MemoryJobStore(), catalog=catalog, embedded=True,
                       queue=ThreadQueue(celery, threads=int(app.config["EMBEDDED_THREADS"])),
                       runs=FileRunStore(runs_file))
    probe = _redis(url, timeout_s=float(app.config["READY_TIMEOUT_S"]))
    # Waits block a connection for up to JOB_WAIT_MAX_S: their own client, with a socket timeout past it.
    waiter = _redis(url, timeout_s=float(app.config["JOB_WAIT_MAX_S"]) + 2.0)
    jobs = RedisJobStore(_redis(url, timeout_s=2.0), prefix=str(app.config["JOB_KEY_PREFIX"]), waiter=waiter)
    return Runtime(jobs=jobs, catalog=catalog, embedded=False,
                   queue=CeleryQueue(celery, redis_probe=probe, same_redis_as_jobs=celery.conf.broker_url == url),
                   runs=RedisRunStore(_redis(url, timeout_s=0.5), key=str(app.config["RUNS_KEY"]),
                                       revision_check_s=float(app.config["RUNS_REVISION_CHECK_S"])))


def _redis(url: str, *, timeout_s: float) -> Redis:
    # One quick retry, not redis-py's ten with backoff: a request must fail fast when Redis is down.
    return Redis.from_url(url, socket_connect_timeout=min(timeout_s, 1.0), socket_timeout=timeout_s,
                          retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1),
                          health_check_interval=25)


def _catalog_source(redis_url: str | None, *, data_dir: str | None, copy_path: str | None) -> CatalogSource:
    """Load the current version from Redis (copied locally) or the catalog directory, else the bundled snapshot."""
    if not redis_url:
        return catalog_source(data_dir=data_dir)
    if copy_path is None:
        copy_path = str(default_copy_path(redis_url))
    return catalog_source(redis=_redis(redis_url, timeout_s=2.0), copy_path=copy_path or None)


def _problem_doc(description: str) -> dict[str, Any]:
    return {"description": description, "content": {PROBLEM_MEDIA_TYPE: {"schema": ProblemSchema}}}
