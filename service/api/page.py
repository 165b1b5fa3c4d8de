"""GET /: a small page for people (server-rendered form, a little JavaScript from the package, no CDN)."""

from __future__ import annotations

from pathlib import Path

import flask
import flask_smorest
from flask import Response, current_app, render_template, send_from_directory

from service.auth import EXTENSION as API_KEYS_EXTENSION
from workers.sizing.presets.registry import PRESETS
from workers.tasks.runtime import runtime

STATIC_DIR = Path(__file__).resolve().parent.parent / "static"
ASSETS_URL = "/page/assets/"
OBJECTIVES = ("balanced", "cost", "time", "carbon")
blp = flask_smorest.Blueprint("page", __name__, description="A page for people")


def index() -> str:
    """Render the form: presets, objectives, the catalog in use, whether the API wants a key."""
    catalog = runtime().catalog.get()
    return render_template(
        "index.html", presets=sorted(PRESETS), objectives=OBJECTIVES, catalog=catalog,
        keys_required=bool(current_app.extensions[API_KEYS_EXTENSION]), assets=ASSETS_URL,
        gpu_count=len(catalog.gpus))


def asset(filename: str) -> Response:
    """Serve the page's script and style sheet."""
    return send_from_directory(STATIC_DIR, filename, max_age=3600)


# A page, not the API: Flask's own add_url_rule keeps these routes out of the OpenAPI document.
flask.Blueprint.add_url_rule(blp, "/", view_func=index, methods=["GET"])
flask.Blueprint.add_url_rule(blp, ASSETS_URL + "<path:filename>", view_func=asset, methods=["GET"])
