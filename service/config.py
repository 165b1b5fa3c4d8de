"""Every setting of the service and its workers with its default, in one place.

The app factory (service/app.py) loads DEFAULTS, then REDIS_URL and the GPUGAUGE_-prefixed environment,
then the config it is given; tasks read the same app config, so no module keeps a default of its own.
deploy/env.example documents each key (tests/test_deploy.py keeps the two in step).
"""

from __future__ import annotations

from typing import Any

from catalog.providers import FETCHED_PROVIDERS

DEFAULTS: dict[str, Any] = {
    # -- the app, jobs and queue --
    "REDIS_URL": None,  # absent: the embedded default
    "API_KEYS": "",  # comma-separated keys or their sha256; empty: the API is open
    "RUNS_WRITE_KEYS": "",  # keys with the "runs:write" scope (POST/DELETE /v1/runs); empty: every API key
    "RUNS_KEY": "gpugauge:runs",  # the Redis hash of reported runs
    # how long a process keeps the runs' revision it read from Redis: a run reported through another
    # process calibrates this one's estimates within this many seconds (its own at once)
    "RUNS_REVISION_CHECK_S": 1.0,
    "RUNS_FILE": None,  # the embedded mode's runs file; None: workers.tasks.runs.default_runs_file()
    "RESULT_TTL_S": 3600,  # a job and its result live this long
    "JOB_KEY_PREFIX": "gpugauge:job:",  # Redis keys of the job registry
    "MAX_CONTENT_LENGTH": 8 * 1024 * 1024,  # request bodies; a spec with an inline ONNX graph fits
    "READY_TIMEOUT_S": 0.5,  # how long /readyz waits for a worker's pong
    "EMBEDDED_THREADS": 4,  # tasks at once in the embedded mode
    # -- waiting for a job (Prefer: wait=N, RFC 7240) --
    "JOB_WAIT_MAX_S": 20,  # the longest wait a request may ask for; under gunicorn's 30 s timeout
    "RECOMMENDATION_EXPECTED_S": 0.05,  # what Retry-After is worked out from (bench/bench_api.py: ~10-30 ms)
    "REVIEW_EXPECTED_S_PER_JOB": 0.01,  # a review's jobs, before its progress says more
    # A review's jobs per chunk (workers/tasks/review.py): a chunk is a few hundred ms of work, so two
    # workers share a 1,000-job review evenly (40 chunks) and a killed worker loses little.
    "REVIEW_CHUNK_JOBS": 25,
    "CATALOG_RELOAD_S": 300,  # how often a running app looks for a refreshed catalog
    "CATALOG_DIR": None,  # where `catalog refresh` keeps versions when there is no Redis
    "CATALOG_RETRY_S": 5,  # how often, while Redis is down since the start, to try its catalog again
    "STALE_PRICES_DAYS": 90,  # answers built on prices older than this carry a stale-prices warning
    # With REDIS_URL, a local copy of the last catalog read from Redis, served when a process starts
    # while Redis is down. None: ~/.cache/gpugauge/catalog-<hash of the URL>.json; "": no copy.
    "CATALOG_COPY_PATH": None,
    "CATALOG_LOADER": None,  # a zero-argument callable returning a Catalog (tests); None: the store's
    "TASK_TIME_LIMIT_S": 120,
    "TASK_SOFT_TIME_LIMIT_S": 100,
    "CELERY": {},  # overrides of workers.tasks.celery_app's settings
    "API_TITLE": "gpugauge",
    "API_VERSION": "1",
    "OPENAPI_VERSION": "3.1.0",
    "OPENAPI_URL_PREFIX": "/",
    "OPENAPI_JSON_PATH": "openapi.json",
    "OPENAPI_SWAGGER_UI_PATH": "docs",
    "OPENAPI_SWAGGER_UI_URL": "/docs/assets/",  # service/api/docs.py serves these files
    # -- rate limits (service/limits.py) --
    # A sizing call is ~10 ms of CPU; 600 a minute lets a procurement script sweep a catalog, and
    # stops one key from taking a gunicorn process for itself.
    "RATE_LIMIT": "600/minute",
    "SLACK_RATE_LIMIT": "120/minute",
    "RATE_LIMIT_ENABLED": None,
    "RATE_LIMIT_STORAGE_URI": None,
    "PROXY_HOPS": 0,
    # -- the daily catalog refresh (workers/tasks/refresh.py) --
    "CATALOG_REFRESH_PROVIDERS": ",".join(FETCHED_PROVIDERS),
    "CATALOG_REFRESH_AT": "03:17",  # off the hour, when many schedules fire at once
    # -- the lost-job sweep (workers/tasks/reconcile.py) --
    "JOB_REQUEUE_AFTER_S": 900,  # a job untouched this long is enqueued again
    "JOB_REQUEUE_EVERY_S": 60,  # how often beat runs the sweep
}
