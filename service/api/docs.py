"""The Swagger UI files for GET /docs, served from the flask-swagger-ui wheel (no CDN)."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from flask import Blueprint, Response, send_from_directory
from werkzeug.exceptions import NotFound

ASSETS_URL = "/docs/assets/"
blp = Blueprint("docs_assets", __name__)


@blp.get(ASSETS_URL + "<path:filename>")
def asset(filename: str) -> Response:
    """Serve one Swagger UI file."""
    return send_from_directory(_assets_dir(), filename, max_age=86400)


def _assets_dir() -> Path:
    try:
        return Path(str(files("flask_swagger_ui") / "dist"))
    except ModuleNotFoundError:
        raise NotFound("the docs page needs the flask-swagger-ui package") from None
