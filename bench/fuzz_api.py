"""Fuzz the served API with schemathesis, every check on: thousands of requests, 0 server errors, 0 violations.

Run by hand (redis-server on the PATH; nothing else is needed, the bench starts its own):

    PYTHONPATH=. .venv/bin/python bench/fuzz_api.py [--max-examples 450] [--workers 2] [--seed N]

It starts a redis-server of its own on a free port, `gpugauge worker` and `gpugauge serve` (gunicorn, queue
mode, 2 processes) with an API key and no rate limit, then runs `schemathesis run` against
http://127.0.0.1:<port>/openapi.json with `--checks all`, every phase (examples, coverage, fuzzing,
stateful), the key as a header, schemathesis.toml and bench/fuzz_checks.py. It counts the HTTP
requests the server answered from gunicorn's access log (schemathesis' own probes included) and prints:
requests, answers by status, 5xx answers, schemathesis failures by check, and the spec-valid inputs the
core refused (422 for a rule the document lists as unstated). Exit code 0 only with >= --min-requests requests, no 5xx
and no failure.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
API_KEY = "fuzz-bench-key"
# gunicorn's access log line: ... "POST /v1/estimate HTTP/1.1" 422 ...
ACCESS_LINE = re.compile(r'"([A-Z]+) (\S+) HTTP/[\d.]+" (\d{3}) ')


def free_port() -> int:
    """Return a TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(url: str, *, timeout_s: float) -> None:
    """Wait until `url` answers 200."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{url} did not answer 200 within {timeout_s} s")
        time.sleep(0.2)


def main() -> int:
    """Start Redis, a worker and gunicorn, fuzz them, and report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=450, help="schemathesis cases per operation and phase")
    parser.add_argument("--workers", type=int, default=2, help="schemathesis' concurrent workers")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--min-requests", type=int, default=5000)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gpugauge-fuzz-"))
    redis_port, api_port = free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
           "GPUGAUGE_API_KEYS": API_KEY, "GPUGAUGE_RATE_LIMIT_ENABLED": "false", "WEB_CONCURRENCY": "2"}
    python = sys.executable
    processes: list[subprocess.Popen[bytes]] = []
    access_log = work / "server.log"
    try:
        processes.append(subprocess.Popen(
            ["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with (work / "worker.log").open("wb") as worker_log:
            processes.append(subprocess.Popen([python, "-m", "service.cli", "worker", "--concurrency", "1",
                                               "--loglevel", "WARNING"], cwd=ROOT, env=env,
                                              stdout=worker_log, stderr=subprocess.STDOUT))
        with access_log.open("wb") as server_log:
            processes.append(subprocess.Popen([python, "-m", "service.cli", "serve", "--port", str(api_port)],
                                              cwd=ROOT, env=env, stdout=server_log, stderr=subprocess.STDOUT))
        base = f"http://127.0.0.1:{api_port}"
        wait_until(base + "/readyz", timeout_s=60)
        command = [shutil.which("schemathesis") or str(Path(python).with_name("schemathesis")),
                   "--config-file", str(ROOT / "schemathesis.toml"), "run", base + "/openapi.json",
                   "--checks", "all", "--header", f"Authorization: Bearer {API_KEY}",
                   "--max-examples", str(args.max_examples), "--workers", str(args.workers),
                   "--report", "json", "--report-dir", str(work / "report"), "--output-truncate", "true"]
        if args.seed is not None:
            command += ["--seed", str(args.seed)]
        semantic_file = work / "semantic.json"
        started = time.monotonic()
        run = subprocess.run(command, cwd=work, env={**env, "SCHEMATHESIS_HOOKS": "bench.fuzz_checks",
                                                     "GPUGAUGE_FUZZ_SEMANTIC_FILE": str(semantic_file)},
                             capture_output=True, text=True, check=False)
        elapsed_s = time.monotonic() - started
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()

    (work / "schemathesis.out").write_text(run.stdout + run.stderr, encoding="utf-8")
    statuses: collections.Counter[int] = collections.Counter()
    server_error_lines: list[str] = []
    by_operation: collections.Counter[str] = collections.Counter()
    fuzzing = False  # from schemathesis' first fetch of the document on; before it, the bench's own waits
    for line in access_log.read_text(encoding="utf-8", errors="replace").splitlines():
        found = ACCESS_LINE.search(line)
        fuzzing = fuzzing or bool(found and found.group(2) == "/openapi.json")
        if fuzzing and found and found.group(2) != "/openapi.json":
            statuses[int(found.group(3))] += 1
            if int(found.group(3)) >= 500:
                server_error_lines.append(line)
            path = re.sub(r"/(recommendations|reports)/[^/?]+", r"/\1/{id}", found.group(2).split("?")[0])
            by_operation[f"{found.group(1)} {path}"] += 1
    reports = sorted(glob.glob(str(work / "report" / "*.json")))
    report = json.loads(Path(reports[-1]).read_text(encoding="utf-8")) if reports else {}
    failures = {f["title"]: f["count"] for f in report.get("failures", [])}
    errors = report.get("errors", [])
    semantic = json.loads(semantic_file.read_text(encoding="utf-8")) if semantic_file.exists() else {}
    requests = sum(statuses.values())
    server_errors = sum(n for status, n in statuses.items() if status >= 500)

    print(f"schemathesis {report.get('schemathesis_version', '?')}, --checks all, phases "
          f"{', '.join(k for k, v in report.get('phases', {}).items() if v.get('status') != 'skip')}; "
          f"seed {report.get('seed')}; {elapsed_s:.0f} s")
    print(f"test cases: {report.get('test_cases', {}).get('generated', '?')} generated")
    print(f"HTTP requests answered: {requests}")
    print("  by status: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    print("  by operation: " + ", ".join(f"{op}: {n}" for op, n in sorted(by_operation.items())))
    print(f"server errors (5xx): {server_errors}" + "".join(f"\n  {line}" for line in server_error_lines[:10]))
    print(f"schemathesis failures: {sum(failures.values())}" + "".join(f"\n  {t}: {n}" for t, n in failures.items()))
    print(f"schemathesis errors: {len(errors)}")
    print("spec-valid inputs the core refused (422, rules the document lists as unstated): "
          + (", ".join(f"{op}: {n}" for op, n in sorted(semantic.items())) or "none"))
    ok = requests >= args.min_requests and server_errors == 0 and not failures and not errors
    print("PASS" if ok else f"FAIL (need >= {args.min_requests} requests, 0 server errors, 0 failures); "
          f"schemathesis' output and the server logs are in {work}")
    if ok:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
