"""The page in a real browser: Debian's chromium, headless, driven by Playwright.

The app is served embedded (jobs on its own threads) by werkzeug on a free port; the browser loads
the page, submits a preset job, waits for the answer, and finds the options table, the chart's
points and the rejected families, with nothing on the console. A screenshot is kept as a CI
artefact in $GPUGAUGE_ARTIFACTS (default: artifacts/ at the repository root).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from flask import Flask
from werkzeug.serving import make_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(os.environ.get("GPUGAUGE_ARTIFACTS", Path(__file__).resolve().parent.parent / "artifacts"))

pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(),
                                reason="Debian's chromium is not installed (scripts/ensure-chromium.sh installs it)")


@pytest.fixture()
def served(make_app: Callable[..., Flask]) -> Iterator[str]:
    """Serve an embedded app on a free local port; yield its base URL."""
    app = make_app(RATE_LIMIT_ENABLED=False)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)
        server.server_close()


def test_a_person_submits_a_preset_job_and_sees_options_chart_and_rejections(served: str) -> None:
    from playwright.sync_api import sync_playwright

    console: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning")
                    else None)
            page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            page.goto(served + "/")
            page.select_option("#preset", "resnet50")
            page.fill("#batch_size", "64")
            page.fill("#epochs", "5")
            page.fill("#samples", "1281167")
            page.fill("#dataset_gb", "150")
            page.fill("#deadline_hours", "200")
            page.select_option("#objective", "cost")
            page.click("#submit")
            page.wait_for_selector("#status:text('done')", timeout=120_000)
            rows = page.locator("#options tbody tr")
            assert rows.count() >= 1
            first = rows.nth(0).locator("td")
            assert first.nth(0).inner_text().startswith("1")
            assert "$" in first.nth(7).inner_text()  # the cost column
            price = first.nth(8)  # the hourly price, with the day its source gives or "undated"
            assert re.search(r"^\$[\d.]+/h, (as of \d{4}-\d{2}-\d{2}|undated)$", price.inner_text())
            assert (price.get_attribute("title") or "").strip()  # its source on hover
            assert page.locator("#chart circle.option").count() == rows.count()
            assert page.locator("#rejected tbody tr").count() >= 1
            assert "curl -si" in page.inner_text("#curl")
            assert "gpugauge recommend job.json" in page.inner_text("#cli")
            href = page.get_attribute("#json_link", "href") or ""
            assert href.startswith("/v1/recommendations/")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "page.png"), full_page=True)
        finally:
            browser.close()
    assert console == []
    assert (ARTIFACTS / "page.png").stat().st_size > 10_000
