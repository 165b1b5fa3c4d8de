"""The Swagger UI files for GET /docs, served from the flask-swagger-ui wheel (no CDN)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import flask
import flask_smorest
from flask import Response, send_from_directory
from werkzeug.exceptions import NotFound

ASSETS_URL = "/docs/assets/"  # = DEFAULTS["OPENAPI_SWAGGER_UI_URL"] (service/config.py)
blp = flask_smorest.Blueprint("docs_assets", __name__, description="Swagger UI files for /docs")


def asset(filename: str) -> Response:
    """Serve one Swagger UI file."""
    return send_from_directory(_assets_dir(), filename, max_age=86400)


# A page's files, not the API: registered with Flask's own add_url_rule, so the document leaves them out.
flask.Blueprint.add_url_rule(blp, ASSETS_URL + "<path:filename>", view_func=asset, methods=["GET"])


def _assets_dir() -> Path:
    try:
        return Path(str(files("flask_swagger_ui") / "dist"))
    except ModuleNotFoundError:
        raise NotFound("the docs page needs the flask-swagger-ui package") from None
