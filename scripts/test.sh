#!/usr/bin/env bash
# Install gpugauge with its test tools and run the whole suite: ruff, mypy, pytest (Redis started if absent).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" dev
bash scripts/ensure-redis.sh
bash scripts/ensure-chromium.sh  # the page's browser test (tests/test_page_browser.py)
echo "== ruff"; .venv/bin/ruff check .
echo "== mypy"; .venv/bin/mypy catalog workers service
echo "== pytest"; .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
