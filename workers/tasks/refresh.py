"""The daily catalog refresh: a Celery task over each provider in turn, and the beat schedule that runs it.

Settings (environment: the GPUGAUGE_ prefix):
    CATALOG_REFRESH_PROVIDERS   providers to refresh, comma-separated (default: every fetched provider); empty: none
    CATALOG_REFRESH_AT          when, each day, as HH:MM in UTC (default 03:17)

One provider failing (no credentials, a throttled API, a validation refusal) is logged and reported,
and the others still run; `catalog.refresh.refresh_catalog` leaves the current version unchanged on
any failure, so the API keeps ranking against the last good catalog.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.schedules import crontab
from flask import current_app

from catalog.refresh import refresh_catalog
from catalog.store import store_from_settings

log = logging.getLogger(__name__)

REFRESH_TASK = "gpugauge.refresh_catalog"
# A full AWS price read takes minutes (pricing pages of 100 items); the broker's visibility timeout
# (workers/tasks/celery_app.py, 3600 s) must stay above the hard limit or the task would run twice.
REFRESH_TIME_LIMIT_S = 1800
REFRESH_SOFT_TIME_LIMIT_S = 1700
_REASON_MAX_CHARS = 300
# At DEBUG, botocore logs each request's headers: the access key id and the session token
# (ecosystem-notes §6.1). These loggers stay at INFO whatever the root level; lower one on purpose only.
SDK_LOGGERS = ("botocore", "boto3", "s3transfer", "urllib3")


def quiet_sdk_loggers() -> None:
    """Keep the cloud SDKs' loggers at INFO or above, so credentials in request headers are never logged."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level < logging.INFO:  # NOTSET (0) or DEBUG
            logger.setLevel(logging.INFO)


quiet_sdk_loggers()  # at import: the app factory imports this module in every process


@shared_task(name=REFRESH_TASK, time_limit=REFRESH_TIME_LIMIT_S,  # type: ignore[untyped-decorator]
             soft_time_limit=REFRESH_SOFT_TIME_LIMIT_S)
def refresh_catalogs(providers: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Refresh each provider's rows in the configured catalog store; one failing never stops the next."""
    config = current_app.config
    names = providers if providers is not None else provider_names(
        config["CATALOG_REFRESH_PROVIDERS"])
    store = store_from_settings(redis_url=config.get("REDIS_URL"), data_dir=config.get("CATALOG_DIR"))
    outcomes: dict[str, dict[str, Any]] = {}
    if store is None:
        log.warning("catalog refresh skipped: neither REDIS_URL nor GPUGAUGE_CATALOG_DIR says where to write")
        return {name: {"status": "skipped", "reason": "no catalog store configured"} for name in names}
    for index, name in enumerate(names):
        try:
            report = refresh_catalog(name, store=store)
        except SoftTimeLimitExceeded:
            for left in names[index:]:
                outcomes[left] = {"status": "failed", "reason": "the refresh ran past its time limit"}
            log.warning("catalog refresh stopped at its time limit before %s", ", ".join(names[index:]))
            break
        except Exception as error:  # any fault of one provider: the catalog is unchanged, go on
            reason = f"{type(error).__name__}: {error}"[:_REASON_MAX_CHARS]
            log.warning("catalog refresh of %s failed, its current rows are kept: %s", name, reason)
            outcomes[name] = {"status": "failed", "reason": reason}
        else:
            log.info("catalog refresh of %s wrote version %s (%d instances, %d offers)",
                     name, report.version, report.instances, report.offers)
            outcomes[name] = {"status": "ok", "version": report.version, "instances": report.instances,
                              "offers": report.offers,
                              "failed_regions": [region for region, _ in report.failed_regions]}
    return outcomes


def provider_names(setting: str | list[str] | None) -> list[str]:
    """Return the provider names of a setting (comma-separated string or list), in order, once each."""
    items = setting.split(",") if isinstance(setting, str) else list(setting or [])
    return list(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))


def refresh_time(setting: str) -> tuple[int, int]:
    """Return (hour, minute) of an HH:MM setting; raise ValueError naming the setting otherwise."""
    hour_text, _, minute_text = str(setting).partition(":")
    try:
        hour, minute = int(hour_text), int(minute_text)
    except ValueError:
        hour, minute = -1, -1
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ValueError(f"GPUGAUGE_CATALOG_REFRESH_AT must be HH:MM in UTC, not {setting!r}")
    return hour, minute


def beat_schedule(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return Celery beat's schedule: the catalog refresh daily at CATALOG_REFRESH_AT (UTC), the lost-job sweep."""
    from workers.tasks.reconcile import REQUEUE_TASK

    hour, minute = refresh_time(config["CATALOG_REFRESH_AT"])
    every_s = float(config["JOB_REQUEUE_EVERY_S"])
    return {"catalog-refresh": {"task": REFRESH_TASK, "schedule": crontab(hour=hour, minute=minute)},
            "lost-job-sweep": {"task": REQUEUE_TASK, "schedule": every_s}}
