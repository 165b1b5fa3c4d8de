"""Budget review reports: the dumped review rendered as JSON, CSV, Markdown or a self-contained HTML page."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from service.reports.csv_report import render_csv
from service.reports.html import render_html
from service.reports.markdown import render_markdown

MEDIA_TYPES = {
    "json": "application/json",
    "csv": "text/csv; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/html; charset=utf-8",
}
FILE_SUFFIXES = {"json": ".json", "csv": ".csv", "markdown": ".md", "html": ".html"}


def render_json(payload: Mapping[str, Any]) -> str:
    """Render a dumped review as the API's JSON (strict: no NaN)."""
    return json.dumps(payload, indent=2, allow_nan=False) + "\n"


RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "json": render_json, "csv": render_csv, "markdown": render_markdown, "html": render_html,
}


def render_review(payload: Mapping[str, Any], fmt: str) -> str:
    """Render a dumped review (ReviewResultSchema) in one of FORMATS."""
    return RENDERERS[fmt](payload)


__all__ = ["FILE_SUFFIXES", "MEDIA_TYPES", "RENDERERS", "render_review"]
