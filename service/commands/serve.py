"""`gpugauge serve [--host H] [--port P]`: the HTTP API on gunicorn, embedded or through Redis."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Any

from gunicorn.app.base import BaseApplication

from service import gunicorn_errors
from service.app import create_app
from workers.tasks.runtime import settle

log = logging.getLogger("gpugauge.serve")

EMBEDDED_THREADS = 8  # request threads of the one embedded process


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand."""
    p = subparsers.add_parser("serve", help="serve the HTTP API (embedded jobs unless REDIS_URL is set)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--workers", type=int, default=None,
                   help="gunicorn processes with REDIS_URL (default: WEB_CONCURRENCY or 2 x cores + 1, <= 8)")
    p.set_defaults(func=run)


class _Gunicorn(BaseApplication):  # type: ignore[misc]
    """gunicorn run from code; each worker process builds its own app (no preload, no shared state)."""

    def __init__(self, options: dict[str, Any]) -> None:
        self._options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            if key in self.cfg.settings:  # control_socket_disable is gunicorn >= 25.1 only
                self.cfg.set(key, value)

    def load(self) -> Any:
        app = create_app()
        settle(app)  # load the catalog now, not on the first request, and freeze the heap (no GC scans it)
        return app


def gunicorn_options(*, host: str, port: int, embedded: bool, workers: int | None) -> dict[str, Any]:
    """Return the gunicorn settings for the chosen mode."""
    options: dict[str, Any] = {
        "bind": f"{host}:{port}",
        "timeout": 30,  # API handlers are quick; the slow work is the workers'
        "graceful_timeout": 30,
        "accesslog": "-",
        # gunicorn's maximum (default 4094): the catalog filters' longest documented query string
        # (six 64-character values, percent-encoded) must reach the app, whose answers are problem+json.
        "limit_request_line": 8190,
        # gunicorn 25+ opens a control socket at one fixed path per user; two servers would collide.
        "control_socket_disable": True,
        # What gunicorn refuses itself (a longer request line: 414) is answered as problem+json too.
        "post_worker_init": gunicorn_errors.install,
    }
    if os.path.isdir("/dev/shm"):
        options["worker_tmp_dir"] = "/dev/shm"  # gunicorn FAQ: heartbeats on a disk-backed /tmp can block
    if embedded:
        # Jobs and their results live in the process's memory: exactly one process, never recycled.
        options.update(workers=1, worker_class="gthread", threads=EMBEDDED_THREADS)
    else:
        default = int(os.environ.get("WEB_CONCURRENCY", min(2 * (os.cpu_count() or 1) + 1, 8)))
        options.update(workers=workers or default, max_requests=1000, max_requests_jitter=100)
    return options


def run(args: argparse.Namespace) -> int:
    """Serve the API until interrupted."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    embedded = not os.environ.get("REDIS_URL")
    if embedded:
        log.info("embedded mode (no REDIS_URL): jobs run in this process; set REDIS_URL and start "
                 "`gpugauge worker` to queue them through Redis")
    else:
        log.info("queue mode: jobs go through Redis to `gpugauge worker` processes")
    if not os.environ.get("GPUGAUGE_API_KEYS"):
        log.warning("the API is open: GPUGAUGE_API_KEYS is not set, so no key is asked for")
    log.info("API on http://%s:%d (docs at /docs)", args.host, args.port)
    _Gunicorn(gunicorn_options(host=args.host, port=args.port, embedded=embedded, workers=args.workers)).run()
    return 0
