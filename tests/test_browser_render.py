"""/docs and an HTML budget review in a real headless Chromium: non-blank screenshots, no console messages,
every chart drawn, nothing fetched from outside this server.

The app is served on loopback (werkzeug, threaded); Chromium goes through a recording proxy, so any
request to another host is seen (loopback bypasses proxies). Chromium's own background calls to Google
(updates, time, sign-in) are not the page's and are left out. .ci/run installs Debian's chromium when it is
missing (scripts/ensure-chromium.sh, run by scripts/test.sh); without one the tests skip, except under
GPUGAUGE_CI (.ci/run sets it), where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from matplotlib import image
from werkzeug.serving import make_server

from service.api.reports import INLINE_MAX_JOBS
from service.app import create_app
from workers.tasks.runtime import runtime

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "budget-review.json"
CHROMIUMS_OWN = ("google.com", "googleapis.com", "gvt1.com")  # updates, time, sign-in: the browser's, not the page's

if CHROMIUM is None and os.environ.get("GPUGAUGE_CI"):
    pytest.fail("CI needs a headless chromium (scripts/ensure-chromium.sh installs Debian's)", pytrace=False)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="no headless browser here (apt-get install chromium)")]


class RecordingProxy:
    """An HTTP proxy that refuses everything and records what was asked of it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests.append(self.path)
                self.send_response(502)
                self.end_headers()

            do_POST = do_CONNECT = do_HEAD = do_GET

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def pages_requests(self) -> list[str]:
        return [r for r in self.requests if not any(host in r.split("/")[2 if "://" in r else 0]
                                                    for host in CHROMIUMS_OWN)]


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    app = create_app({"TESTING": True, "REDIS_URL": None, "API_KEYS": ""})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    runtime(app).queue.close()


@pytest.fixture()
def proxy() -> Iterator[RecordingProxy]:
    recording = RecordingProxy()
    yield recording
    recording.server.shutdown()
    recording.server.server_close()


def chromium(url: str, *, tmp_path: Path, proxy: RecordingProxy, action: list[str]) -> tuple[str, list[str]]:
    """Load `url` headless (JavaScript given 10 s of virtual time); return stdout and the console lines."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0",
             f"--proxy-server={proxy.url}", "--virtual-time-budget=10000", "--window-size=1280,2000",
             f"--user-data-dir={tmp_path / 'profile'}"]
    done = subprocess.run([str(CHROMIUM), *flags, *action, url], capture_output=True, text=True, timeout=120,
                          check=True)
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def assert_not_blank(png: Path) -> None:
    pixels = image.imread(str(png))[..., :3]
    inked = (pixels.mean(axis=2) < 0.9).mean()  # share of pixels darker than near-white
    assert pixels.std() > 0.05 and inked > 0.01, (pixels.std(), inked)


def test_the_docs_page_renders_every_operation_from_this_server_alone(
        served: str, tmp_path: Path, proxy: RecordingProxy) -> None:
    dom, console = chromium(f"{served}/docs", tmp_path=tmp_path, proxy=proxy, action=["--dump-dom"])
    shot = tmp_path / "docs.png"
    _, more = chromium(f"{served}/docs", tmp_path=tmp_path, proxy=proxy, action=[f"--screenshot={shot}"])
    operations = dom.count('class="opblock-summary-path"') + dom.count("opblock-summary-path ")
    assert operations >= 10, dom[:2000]
    assert console == [] and more == [], console + more
    assert proxy.pages_requests() == []
    assert_not_blank(shot)


def test_an_html_review_renders_its_table_and_every_chart_from_nothing_outside(
        served: str, tmp_path: Path, proxy: RecordingProxy) -> None:
    import http.client

    host, port = served.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    review = json.loads(EXAMPLE.read_text())
    body = {**review, "jobs": review["jobs"][:INLINE_MAX_JOBS], "format": "html"}  # an inline answer
    connection.request("POST", "/v1/reports", body=json.dumps(body), headers={"Content-Type": "application/json"})
    answer = connection.getresponse()
    page = answer.read().decode()
    connection.close()
    assert answer.status == 200 and answer.getheader("Content-Type", "").startswith("text/html")
    path = tmp_path / "review.html"
    path.write_text(page, encoding="utf-8")
    charts = page.count("<svg")
    dom, console = chromium(path.as_uri(), tmp_path=tmp_path, proxy=proxy, action=["--dump-dom"])
    shot = tmp_path / "review.png"
    _, more = chromium(path.as_uri(), tmp_path=tmp_path, proxy=proxy, action=[f"--screenshot={shot}"])
    assert charts >= 1 and dom.count("<svg") == charts
    for svg in dom.split("<svg")[1:]:
        drawn = svg.split("</svg>")[0]
        assert "<path" in drawn or "<rect" in drawn or "<polyline" in drawn
    assert console == [] and more == [], console + more
    assert proxy.pages_requests() == []
    assert_not_blank(shot)
