"""The daily catalog refresh task (one provider failing never stops the next), its schedule, and beat's probe."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from celery.schedules import crontab
from flask import Flask

from catalog.refresh import RefreshError, RefreshReport
from service.cli import main
from service.commands import beat
from service.config import DEFAULTS
from workers.tasks import refresh as refresh_tasks

pytestmark = pytest.mark.usefixtures("keep_celery_default")


def fake_report(provider: str) -> RefreshReport:
    return RefreshReport(provider=provider, version="2026-11-29.1", prices_as_of="2026-11-29", instances=7,
                         offers=21, fetched_regions=("r1",), failed_regions=(("r2", "throttled"),), problems=())


def test_a_failing_provider_is_reported_and_the_next_still_refreshes(
        make_app: Callable[..., Flask], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []

    def refresh(provider: str, *, store: Any) -> RefreshReport:
        calls.append((provider, store))
        if provider == "aws":
            raise RefreshError("aws: every region failed (us-east-1: AccessDenied); the catalog is unchanged")
        return fake_report(provider)

    monkeypatch.setattr(refresh_tasks, "refresh_catalog", refresh)
    app = make_app(CATALOG_DIR=str(tmp_path), CATALOG_REFRESH_PROVIDERS="aws, gcp")
    with app.app_context():
        outcomes = refresh_tasks.refresh_catalogs.run()
    assert [provider for provider, _ in calls] == ["aws", "gcp"]
    assert outcomes["aws"]["status"] == "failed" and "AccessDenied" in outcomes["aws"]["reason"]
    assert outcomes["gcp"] == {"status": "ok", "version": "2026-11-29.1", "instances": 7, "offers": 21,
                               "failed_regions": ["r2"]}


def test_an_unexpected_error_is_contained_like_a_refresh_error(
        make_app: Callable[..., Flask], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refresh(provider: str, *, store: Any) -> RefreshReport:
        raise KeyError("Gpus") if provider == "gcp" else ZeroDivisionError("division by zero")

    monkeypatch.setattr(refresh_tasks, "refresh_catalog", refresh)
    with make_app(CATALOG_DIR=str(tmp_path)).app_context():
        outcomes = refresh_tasks.refresh_catalogs.run(["gcp", "aws"])
    assert outcomes == {"gcp": {"status": "failed", "reason": "KeyError: 'Gpus'"},
                        "aws": {"status": "failed", "reason": "ZeroDivisionError: division by zero"}}


def test_without_a_store_the_refresh_is_skipped_not_written_anywhere(
        make_app: Callable[..., Flask], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refresh_tasks, "refresh_catalog", lambda *a, **k: pytest.fail("must not run"))
    with make_app(CATALOG_DIR=None).app_context():
        outcomes = refresh_tasks.refresh_catalogs.run(["aws"])
    assert outcomes["aws"]["status"] == "skipped"


def test_the_beat_schedule_runs_the_refresh_daily_at_the_configured_utc_time() -> None:
    entry = refresh_tasks.beat_schedule({**DEFAULTS, "CATALOG_REFRESH_AT": "04:05"})["catalog-refresh"]
    assert entry["task"] == refresh_tasks.REFRESH_TASK
    assert entry["schedule"] == crontab(hour=4, minute=5)
    default = refresh_tasks.beat_schedule(DEFAULTS)["catalog-refresh"]["schedule"]
    assert default == crontab(hour=3, minute=17)


@pytest.mark.parametrize("setting", ["24:00", "3", "03:60", "noon", "-1:10"])
def test_a_malformed_refresh_time_is_refused_naming_the_setting(setting: str) -> None:
    with pytest.raises(ValueError, match="GPUGAUGE_CATALOG_REFRESH_AT"):
        refresh_tasks.beat_schedule({**DEFAULTS, "CATALOG_REFRESH_AT": setting})


def test_provider_names_are_trimmed_and_deduplicated_in_order() -> None:
    assert refresh_tasks.provider_names(" gcp,aws,,gcp ") == ["gcp", "aws"]
    assert refresh_tasks.provider_names("") == []


def test_the_refresh_task_is_registered_with_a_time_limit_under_the_visibility_timeout(
        make_app: Callable[..., Flask]) -> None:
    from workers.tasks.celery_app import VISIBILITY_TIMEOUT_S

    task = make_app().extensions["celery"].tasks[refresh_tasks.REFRESH_TASK]
    assert task.soft_time_limit < task.time_limit < VISIBILITY_TIMEOUT_S


def test_beat_check_passes_on_a_fresh_heartbeat_and_fails_on_a_stale_or_missing_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(beat.SCHEDULE_FILE_ENV, str(tmp_path / "schedule"))
    assert main(["beat", "--check"]) == 1  # never started
    heartbeat = beat.heartbeat_file(beat.schedule_file())
    heartbeat.touch()
    assert main(["beat", "--check"]) == 0
    stale = time.time() - beat.HEARTBEAT_MAX_AGE_S - 5
    os.utime(heartbeat, (stale, stale))
    assert main(["beat", "--check"]) == 1


def test_beat_without_redis_says_why_and_exits_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert main(["beat"]) == 2
    assert "REDIS_URL is not set" in capsys.readouterr().err
