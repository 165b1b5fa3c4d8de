#!/usr/bin/env bash
# Install gpugauge with its test tools and run the whole suite: ruff, mypy, pytest (Redis started if absent).
# dev,measure: the step-measurement harness and `gpugauge probe` tests need torch==2.13.0 (CPU, local disk)
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" dev,measure
bash scripts/ensure-redis.sh
bash scripts/ensure-chromium.sh  # the page's browser test (tests/test_page_browser.py)
echo "== ruff"; .venv/bin/ruff check .
echo "== mypy"; .venv/bin/mypy catalog workers service
echo "== pytest"; .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
