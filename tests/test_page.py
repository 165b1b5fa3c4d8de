"""GET /: the page is served from the package, names the presets and objectives, and loads nothing from outside."""

from __future__ import annotations

import re
from collections.abc import Callable

from flask import Flask

from workers.sizing.presets.registry import PRESETS


def test_the_page_renders_the_form_with_every_preset_and_objective(make_app: Callable[..., Flask]) -> None:
    page = make_app().test_client().get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    for name in PRESETS:
        assert f'<option value="{name}"' in html
    for objective in ("balanced", "cost", "time", "carbon"):
        assert f'<option value="{objective}">' in html
    assert 'id="api_key"' not in html  # an open API asks for no key


def test_the_page_asks_for_a_key_when_the_api_wants_one(make_app: Callable[..., Flask]) -> None:
    html = make_app(API_KEYS="secret-key").test_client().get("/").get_data(as_text=True)
    assert 'id="api_key"' in html


def test_script_and_style_come_from_the_package_and_nothing_from_a_cdn(make_app: Callable[..., Flask]) -> None:
    client = make_app().test_client()
    html = client.get("/").get_data(as_text=True)
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith(("/", "#", "data:")) for s in sources), sources
    with client.get("/page/assets/page.js") as script, client.get("/page/assets/page.css") as style:
        assert script.status_code == 200 and "javascript" in script.mimetype
        assert style.status_code == 200 and style.mimetype == "text/css"
        assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", script.get_data(as_text=True))


def test_the_page_is_not_part_of_the_api_document(make_app: Callable[..., Flask]) -> None:
    paths = make_app().test_client().get("/openapi.json").get_json()["paths"]
    assert "/" not in paths and not any(p.startswith("/page") for p in paths)
