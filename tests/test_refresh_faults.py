"""`catalog refresh` when AWS misbehaves: a missing profile, an HTML page where XML was due, a Price List
that keeps failing. One line naming the provider, region and cause; exit 2 for configuration, 1 for a
failed fetch; one bad region skipped and reported while the others refresh.

The bad endpoints are a loopback HTTP server that real boto3 clients talk to (so botocore's own parsing
and retries run); the good regions are botocore Stubbers fed the fixtures of test_catalog_aws.py.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import boto3
import pytest

from catalog.fetchers import aws
from catalog.fetchers.result import CredentialsError
from catalog.refresh import RefreshError, refresh_catalog
from catalog.store import FileCatalogStore
from service.cli import main
from tests.test_catalog_aws import NOW, FakeAws, aws_env, fixture  # noqa: F401  (aws_env: a fixture)

pytestmark = pytest.mark.usefixtures("aws_env")  # fake keys, no ~/.aws files, no instance metadata
NGINX_502 = (b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1>"
             b"</center><hr><center>nginx</center><br></body></html>")  # <br> unclosed: not XML


class HtmlEndpoint:
    """A loopback endpoint answering every request with an HTML page and a fixed status, counting requests."""

    def __init__(self, status: int) -> None:
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests += 1
                self.send_response(status)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(NGINX_502)))
                self.end_headers()
                self.wfile.write(NGINX_502)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def client(self, service: str) -> object:
        return boto3.client(service, region_name="us-east-1", endpoint_url=self.url, config=aws.client_config())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def html_200() -> Iterator[HtmlEndpoint]:
    endpoint = HtmlEndpoint(200)  # an HTML page with a 200: botocore's XML parser raises ResponseParserError
    yield endpoint
    endpoint.close()


@pytest.fixture()
def html_503() -> Iterator[HtmlEndpoint]:
    endpoint = HtmlEndpoint(503)
    yield endpoint
    endpoint.close()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_missing_aws_profile_is_one_line_and_exit_2(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    code, _, err = run_cli(capsys, "catalog", "refresh", "--provider", "aws", "--data-dir", str(tmp_path))
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "aws" in err and "no-such-profile" in err and "AWS_PROFILE" in err


def test_an_html_page_from_one_region_skips_that_region_and_refreshes_the_others(
        html_200: HtmlEndpoint, tmp_path: Path) -> None:
    fake = FakeAws(("us-east-1", "us-west-2"))
    fake.queue_types()
    fake.queue_region("us-east-1", prices=["get_products_us-east-1", "get_products_us-east-1_page2"])
    fake.ec2["us-west-2"] = html_200.client("ec2")  # type: ignore[assignment]
    del fake.ec2_stub["us-west-2"]
    result = fake.fetch()
    assert result.fetched_regions == ("us-east-1",)
    (region, reason), = result.failed_regions
    assert region == "us-west-2" and "ResponseParserError" in reason and "\n" not in reason
    assert any(o.region == "us-east-1" for o in result.offers)


def test_a_price_list_that_keeps_failing_fails_fast_and_is_asked_once(
        html_503: HtmlEndpoint, tmp_path: Path) -> None:
    fake = FakeAws(("us-east-1", "us-west-2"))
    fake.queue_types()
    fake.ec2_stub["us-east-1"].add_response(
        "describe_instance_type_offerings", fixture("describe_instance_type_offerings_us-east-1"))
    fake.pricing = html_503.client("pricing")  # type: ignore[assignment]
    fake.pricing_stub.activate()  # nothing queued on the stubbed one, which is no longer used
    started = time.monotonic()
    with pytest.raises(RefreshError) as failure:
        refresh_catalog("aws", store=FileCatalogStore(tmp_path), regions=("us-east-1", "us-west-2"),
                        fetcher=lambda **kwargs: fake.fetch(), now=NOW)
    elapsed_s = time.monotonic() - started
    message = str(failure.value)
    assert "aws" in message and "us-east-1" in message and "us-west-2" in message and "Price List" in message
    assert "\n" not in message
    # One call's attempts, not one call per region.
    assert html_503.requests == aws.client_config().retries["total_max_attempts"]
    assert elapsed_s < 15, elapsed_s  # 4 attempts' backoff is ~3.5 s on average, 7 s at most
    assert FileCatalogStore(tmp_path).current() is None  # nothing written


def test_refused_credentials_are_a_configuration_error() -> None:
    fake = FakeAws(("us-east-1",))
    fake.ec2_stub["us-east-1"].add_client_error("describe_instance_types", service_error_code="AuthFailure",
                                                service_message="AWS was not able to validate the credentials",
                                                http_status_code=401)
    with pytest.raises(CredentialsError, match="us-east-1: the credentials were refused"):
        fake.fetch()


def test_the_cli_reports_a_failed_fetch_in_one_line_with_exit_1(
        html_503: HtmlEndpoint, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", html_503.url)  # every AWS client of the fetch: the failing endpoint
    monkeypatch.setattr(aws, "client_config", lambda: aws.Config(retries={"mode": "standard", "total_max_attempts": 1}))
    code, out, err = run_cli(capsys, "catalog", "refresh", "--provider", "aws", "--data-dir", str(tmp_path),
                             "--region", "us-east-1", "--region", "eu-west-1")
    assert code == 1, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "catalog refresh failed" in err and "aws" in err and "us-east-1" in err and "eu-west-1" in err
    assert json.dumps(err)  # printable
